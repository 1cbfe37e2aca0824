package sandbox

import (
	"encoding/binary"
	"net/netip"
	"os"
	"slices"
	"time"

	"golang.org/x/sys/unix"
)

// The broker's host TCP sockets end with the run, whoever runs it. A
// command that queued data on one and ended used to leave it to the
// kernel as an orphan, retrying to send for minutes to a peer that does
// not read, on the host's memory. So the broker keeps its own copy of
// every socket it hands the sandbox (sockhold.go): the sandbox's last
// close then leaves no orphan, since the broker's copy still holds the
// socket, and the broker carries out what that close would have done
// (releaseHostConn). Once every process of the run is gone, it aborts
// each copy it still holds: SO_LINGER 0 and close, so the peer gets a
// reset and the queue is freed at once. That needs no privilege. As
// root it also aborts, through sock_diag SOCK_DESTROY (as `ss -K` does,
// which needs CAP_NET_ADMIN in the host's network namespace), every
// socket it made that still exists: one it could not copy (the
// supervisor's descriptors ran out), or one a copy on its way between
// two processes (SCM_RIGHTS) kept alive past the broker's close.

// hostConn is one host socket the broker made: its addresses, and its
// cookie, so that no other socket that later has the same addresses is
// ever ended; fd is the broker's own copy (-1: none), ino the socket's
// inode, by which the sandbox's descriptors are told apart.
type hostConn struct {
	local, remote netip.AddrPort
	cookie        uint64
	fd            int
	ino           uint64
	// unseen counts the looks in a row that found no process of the
	// run holding the socket; shut: it was released by shutdown and is
	// kept until the connection is over; released: it is over.
	unseen   int
	shut     bool
	released bool
}

// maxHostConns bounds how many of a run's connections are remembered to
// be ended; a run that makes more has its oldest left to the kernel.
const maxHostConns = 1 << 16

// remember records the host socket s, just handed to the sandbox,
// connected or connecting to dst, and keeps a copy of it.
func (b *connectBroker) remember(s int, dst netip.AddrPort) {
	sa, err := unix.Getsockname(s)
	if err != nil {
		return
	}
	cookie, err := unix.GetsockoptUint64(s, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		return
	}
	var local netip.AddrPort
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		local = netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		local = netip.AddrPortFrom(netip.AddrFrom16(a.Addr), uint16(a.Port))
	default:
		return
	}
	c := hostConn{local: local, remote: dst, cookie: cookie, fd: -1}
	var st unix.Stat_t
	if unix.Fstat(s, &st) != nil {
		return
	}
	b.connsMu.Lock()
	defer b.connsMu.Unlock()
	for i := range b.conns {
		if old := &b.conns[i]; old.fd >= 0 && old.ino == st.Ino {
			// Connecting again: the copy held is this socket's.
			old.local, old.remote, old.unseen, old.shut = local, dst, 0, false
			return
		}
	}
	if fd, err := unix.FcntlInt(uintptr(s), unix.F_DUPFD_CLOEXEC, 0); err == nil {
		c.fd, c.ino = fd, st.Ino
		b.holdCopies()
	}
	if len(b.conns) >= maxHostConns {
		if b.conns[0].fd >= 0 {
			unix.Close(b.conns[0].fd)
		}
		b.conns = b.conns[1:]
	}
	b.conns = append(b.conns, c)
}

// endHostConns aborts every socket the broker made that still exists:
// its own copies by SO_LINGER 0 and close, and (as root) all of them by
// SOCK_DESTROY. Errors are ignored: most are gone already (closed
// cleanly), and without CAP_NET_ADMIN SOCK_DESTROY ends none.
func (b *connectBroker) endHostConns() {
	b.connsMu.Lock()
	conns := b.conns
	b.conns = nil
	b.connsMu.Unlock()
	drainHostConns(conns)
	for _, c := range conns {
		if c.fd >= 0 {
			abortHostConn(c.fd)
		}
	}
	if len(conns) == 0 || os.Geteuid() != 0 {
		return
	}
	nl, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return
	}
	defer unix.Close(nl)
	buf := make([]byte, 4096)
	for i, c := range conns {
		if unix.Sendto(nl, destroyRequest(uint32(i+1), c), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}) != nil {
			return
		}
		unix.Recvfrom(nl, buf, 0) // the ack (or ENOENT): one answer per request
	}
}

// endGrace bounds how long the end of a run waits for what its last
// writes queued to reach peers that read: a command that writes and
// exits at once (echo > /dev/tcp/...) expects its data delivered, as
// the kernel would deliver it. A peer that does not read gets its reset
// after this, with the rest.
const endGrace = time.Second

// drainHostConns sends a FIN after what each held socket still has
// queued and waits, up to endGrace in all, for the queues to empty.
func drainHostConns(conns []hostConn) {
	var queued []int
	for _, c := range conns {
		if n, err := unix.IoctlGetInt(c.fd, unix.SIOCOUTQ); c.fd >= 0 && err == nil && n > 0 {
			unix.Shutdown(c.fd, unix.SHUT_WR)
			queued = append(queued, c.fd)
		}
	}
	for deadline := time.Now().Add(endGrace); len(queued) > 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		queued = slices.DeleteFunc(queued, func(fd int) bool {
			n, err := unix.IoctlGetInt(fd, unix.SIOCOUTQ)
			return err != nil || n == 0
		})
	}
}

// abortHostConn closes the last copy of a socket with a reset: the
// kernel drops what is queued and sends RST rather than FIN.
func abortHostConn(fd int) {
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	unix.Close(fd)
}

// destroyRequest is a SOCK_DESTROY netlink message for the TCP socket c
// (struct inet_diag_req_v2, any state, its cookie).
func destroyRequest(seq uint32, c hostConn) []byte {
	family := byte(unix.AF_INET6)
	if c.local.Addr().Is4() {
		family = unix.AF_INET
	}
	req := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+56)
	req = append(req, family, unix.IPPROTO_TCP, 0, 0)
	req = binary.NativeEndian.AppendUint32(req, 0xffffffff) // every state
	req = binary.BigEndian.AppendUint16(req, c.local.Port())
	req = binary.BigEndian.AppendUint16(req, c.remote.Port())
	req = append(req, addr16(c.local.Addr())...)
	req = append(req, addr16(c.remote.Addr())...)
	req = binary.NativeEndian.AppendUint32(req, 0) // any interface
	req = binary.NativeEndian.AppendUint32(req, uint32(c.cookie))
	req = binary.NativeEndian.AppendUint32(req, uint32(c.cookie>>32))
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], unix.SOCK_DESTROY)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_ACK)
	binary.NativeEndian.PutUint32(req[8:], seq)
	return req
}

// addr16 is an address as inet_diag_sockid holds it: an IPv4 address in
// the first four bytes, an IPv6 one in all sixteen.
func addr16(a netip.Addr) []byte {
	out := make([]byte, 16)
	if a.Is4() || a.Is4In6() {
		b := a.Unmap().As4()
		copy(out, b[:])
		return out
	}
	b := a.As16()
	copy(out, b[:])
	return out
}
