package sandbox

import (
	"encoding/binary"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// The broker's host TCP sockets end with the run. A command that queued
// data on one and ended left it to the kernel as an orphan, retrying to
// send for minutes to a peer that does not read, on the host's memory.
// Once every process of the run is gone, the broker aborts each socket
// it made that still exists (sock_diag SOCK_DESTROY, as `ss -K` does):
// the peer gets a reset and the queue is freed. That needs CAP_NET_ADMIN
// in the host's network namespace, so only a root supervisor can; others
// leave the orphans to the kernel's own limits (tcp_max_orphans,
// tcp_orphan_retries).

// hostConn is one host socket the broker made: its addresses, and its
// cookie, so that no other socket that later has the same addresses is
// ever ended.
type hostConn struct {
	local, remote netip.AddrPort
	cookie        uint64
}

// maxHostConns bounds how many of a run's connections are remembered to
// be ended; a run that makes more has its oldest left to the kernel.
const maxHostConns = 1 << 16

// remember records the host socket s, connected or connecting to dst.
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
	b.connsMu.Lock()
	defer b.connsMu.Unlock()
	if len(b.conns) >= maxHostConns {
		b.conns = b.conns[1:]
	}
	b.conns = append(b.conns, hostConn{local: local, remote: dst, cookie: cookie})
}

// endHostConns aborts every remembered socket that still exists. Errors
// are ignored: most are gone already (closed cleanly), and without
// CAP_NET_ADMIN none can be ended.
func (b *connectBroker) endHostConns() {
	b.connsMu.Lock()
	conns := b.conns
	b.conns = nil
	b.connsMu.Unlock()
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
