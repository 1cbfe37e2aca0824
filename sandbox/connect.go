package sandbox

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
)

// The connect broker: the fast path of the egress layer.
//
// Every byte through the gateway crosses gVisor's netstack in the
// supervisor, which on a fast link costs two thirds of the throughput
// (docs/BENCHMARKS.md). For TCP connections the gateway allows, the
// supervisor can do better: the sandbox's connect(2) stops at a seccomp
// notifier, the supervisor reads the destination, asks the gateway for
// the very decision it would make on the TAP device (Gateway.PermitsTCP),
// connects a socket of its own in the host's network namespace to that
// destination, and puts it in the place of the sandbox's socket
// (SECCOMP_IOCTL_NOTIF_ADDFD). The connection then runs on the host
// kernel at full speed.
//
// Anything else goes on as if the broker were not there
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE): refused destinations, UDP, unix
// sockets, sockets already bound or connected, anything the broker cannot
// read or check. Those calls meet the sandbox's network namespace, whose
// only way out is the gateway, which decides and records them as always.
// So the broker can make allowed connections faster, never allow one the
// gateway would refuse: it connects only to the address it read and
// checked itself, never to one the sandbox could change after the check.
//
// What the sandbox can tell: getsockname on a brokered socket shows the
// host's source address instead of the sandbox's, and socket options
// other than the common ones copied below are reset.

// connectBroker answers the connect notifier's stops for one run.
type connectBroker struct {
	listener int
	stop     int // eventfd: written once by close
	gw       *egress.Gateway
	timeout  time.Duration
	wg       sync.WaitGroup
	once     sync.Once
}

// receiveNotifier reads the helper's second message on the hand-off
// socket: the connect notifier's listener, or -1 when the helper has none
// or ended first. An error means a listener may have been lost: the
// helper's connects would then fail, so the run must not go on.
func receiveNotifier(sock *os.File) (int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, flags, _, err := unix.Recvmsg(int(sock.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	switch {
	case err != nil:
		return -1, fmt.Errorf("receive the connect notifier: %w", err)
	case flags&unix.MSG_CTRUNC != 0:
		return -1, errors.New("receive the connect notifier: control message truncated")
	case n == 0 || oobn == 0:
		return -1, nil
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("receive the connect notifier: %d control messages (%v)", len(msgs), err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("receive the connect notifier: want one descriptor, got %d (%v)", len(fds), err)
	}
	return fds[0], nil
}

// startConnectBroker serves listener until close; it takes ownership of
// listener.
func startConnectBroker(listener int, gw *egress.Gateway, timeout time.Duration) (*connectBroker, error) {
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(listener)
		return nil, fmt.Errorf("connect broker: eventfd: %w", err)
	}
	b := &connectBroker{listener: listener, stop: stop, gw: gw, timeout: timeout}
	b.wg.Add(1)
	go b.serve()
	return b, nil
}

// close stops answering, aborts connections still being made, waits for
// every goroutine of the broker and closes the listener: a sandboxed
// process still waiting then gets ENOSYS. Safe to call more than once.
func (b *connectBroker) close() {
	b.once.Do(func() {
		var one [8]byte
		binary.NativeEndian.PutUint64(one[:], 1)
		unix.Write(b.stop, one[:])
		b.wg.Wait()
		unix.Close(b.listener)
		unix.Close(b.stop)
	})
}

// seccompNotif is struct seccomp_notif (with its seccomp_data).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	id         uint64
	flags      uint32
	srcfd      uint32
	newfd      uint32
	newfdFlags uint32
}

func (b *connectBroker) serve() {
	defer b.wg.Done()
	fds := []unix.PollFd{{Fd: int32(b.listener), Events: unix.POLLIN}, {Fd: int32(b.stop), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&unix.POLLIN == 0 {
			return // POLLHUP: no process of the run is left to stop
		}
		n := new(seccompNotif)
		if err := b.ioctl(unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(n)); err != nil {
			continue // ENOENT: the caller died or was interrupted first
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			b.answer(n)
		}()
	}
}

func (b *connectBroker) ioctl(req uint, arg unsafe.Pointer) error {
	for {
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(b.listener), uintptr(req), uintptr(arg))
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return errno
		}
		return nil
	}
}

// valid reports whether the stop n is still waiting: its process has not
// died (and its pid been reused) since it was received.
func (b *connectBroker) valid(n *seccompNotif) bool {
	id := n.id
	return b.ioctl(unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// answer decides one stopped connect(fd, addr, len).
func (b *connectBroker) answer(n *seccompNotif) {
	resp := seccompNotifResp{id: n.id}
	if brokered, errno := b.broker(n); !brokered {
		resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else if errno != 0 {
		resp.error = -int32(errno)
	}
	b.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// broker connects on the sandbox's behalf when it may. It reports false
// when the call should go on as it is; else the errno the sandbox's
// connect returns: 0 with the connected socket in place of the
// sandbox's, EINPROGRESS with a socket still connecting (for a
// non-blocking one, as the kernel would), or the destination's refusal.
func (b *connectBroker) broker(n *seccompNotif) (bool, unix.Errno) {
	target := int(int32(n.args[0]))
	dst, ok := readSockaddr(int(n.pid), n.args[1], n.args[2])
	if !ok || !b.valid(n) || !b.gw.PermitsTCP(dst.Addr(), dst.Port()) {
		return false, 0
	}
	pidfd, err := openPidfd(int(n.pid))
	if err != nil {
		return false, 0
	}
	defer unix.Close(pidfd)
	// The pidfd names the stopped process only if the stop is still
	// waiting now that it is open.
	if !b.valid(n) {
		return false, 0
	}
	sock, err := unix.PidfdGetfd(pidfd, target, 0)
	if err != nil {
		return false, 0
	}
	defer unix.Close(sock)
	domain, ok := plainTCP(sock)
	if !ok {
		return false, 0
	}
	status, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return false, 0
	}
	nonblocking := status&unix.O_NONBLOCK != 0
	host, errno := b.dial(domain, dst, sock, !nonblocking)
	if host < 0 {
		return true, errno
	}
	defer unix.Close(host)
	if !nonblocking {
		if _, err := unix.FcntlInt(uintptr(host), unix.F_SETFL, 0); err != nil {
			return false, 0
		}
	}
	add := seccompNotifAddfd{
		id:         n.id,
		flags:      unix.SECCOMP_ADDFD_FLAG_SETFD,
		srcfd:      uint32(host),
		newfd:      uint32(target),
		newfdFlags: fdFlags(int(n.pid), target) & unix.O_CLOEXEC,
	}
	if err := b.ioctl(unix.SECCOMP_IOCTL_NOTIF_ADDFD, unsafe.Pointer(&add)); err != nil {
		return false, 0
	}
	return true, errno
}

// plainTCP reports whether sock is a TCP socket of family AF_INET or
// AF_INET6 that is neither bound nor connected: one the broker can
// replace without losing anything the program set up.
func plainTCP(sock int) (domain int, ok bool) {
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || (domain != unix.AF_INET && domain != unix.AF_INET6) {
		return 0, false
	}
	typ, err1 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err2 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err1 != nil || err2 != nil || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		return 0, false
	}
	if _, err := unix.Getpeername(sock); err == nil {
		return 0, false // connected: the kernel answers EISCONN
	}
	switch sa, err := unix.Getsockname(sock); s := sa.(type) {
	case *unix.SockaddrInet4:
		return domain, err == nil && s.Port == 0
	case *unix.SockaddrInet6:
		return domain, err == nil && s.Port == 0
	}
	return 0, false
}

// copiedOptions are the integer socket options a program commonly sets
// before connect; the broker's socket gets the same values.
var copiedOptions = []struct{ level, opt int }{
	{unix.SOL_SOCKET, unix.SO_KEEPALIVE},
	{unix.SOL_SOCKET, unix.SO_PRIORITY},
	{unix.SOL_SOCKET, unix.SO_OOBINLINE},
	{unix.IPPROTO_TCP, unix.TCP_NODELAY},
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT},
	{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT},
	{unix.IPPROTO_TCP, unix.TCP_SYNCNT},
}

// dial starts connecting a new host socket of the given family to dst,
// with the options of the sandbox's socket from. With wait it waits until
// the connection is made, the broker's timeout passes or the broker
// closes; without, a connection under way comes back with EINPROGRESS.
// A refusal comes back as its errno and no socket.
func (b *connectBroker) dial(domain int, dst netip.AddrPort, from int, wait bool) (int, unix.Errno) {
	s, err := unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, unix.ENOBUFS
	}
	for _, o := range copiedOptions {
		if v, err := unix.GetsockoptInt(from, o.level, o.opt); err == nil {
			unix.SetsockoptInt(s, o.level, o.opt, v)
		}
	}
	if l, err := unix.GetsockoptLinger(from, unix.SOL_SOCKET, unix.SO_LINGER); err == nil {
		unix.SetsockoptLinger(s, unix.SOL_SOCKET, unix.SO_LINGER, l)
	}
	var sa unix.Sockaddr
	if domain == unix.AF_INET {
		if !dst.Addr().Unmap().Is4() {
			unix.Close(s)
			return -1, unix.EAFNOSUPPORT
		}
		sa = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: dst.Addr().Unmap().As4()}
	} else {
		if v, err := unix.GetsockoptInt(from, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY); err == nil {
			unix.SetsockoptInt(s, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, v)
		}
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: dst.Addr().As16()}
	}
	err = unix.Connect(s, sa)
	if errors.Is(err, unix.EINPROGRESS) {
		if !wait {
			return s, unix.EINPROGRESS
		}
		err = b.await(s)
	}
	if err != nil {
		unix.Close(s)
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.ECONNABORTED
		}
		return -1, errno
	}
	return s, 0
}

// await waits for a non-blocking connect on s to finish.
func (b *connectBroker) await(s int) error {
	deadline := time.Now().Add(b.timeout)
	fds := []unix.PollFd{{Fd: int32(s), Events: unix.POLLOUT}, {Fd: int32(b.stop), Events: unix.POLLIN}}
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return unix.ETIMEDOUT
		}
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, int(left/time.Millisecond)+1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if fds[1].Revents != 0 {
			return unix.ECONNABORTED
		}
		if fds[0].Revents != 0 {
			soerr, err := unix.GetsockoptInt(s, unix.SOL_SOCKET, unix.SO_ERROR)
			if err != nil {
				return err
			}
			if soerr != 0 {
				return unix.Errno(soerr)
			}
			return nil
		}
	}
}

// readSockaddr reads the sockaddr a stopped connect passed, from the
// stopped thread's memory; ok only for AF_INET and AF_INET6.
func readSockaddr(tid int, ptr, length uint64) (netip.AddrPort, bool) {
	if length < unix.SizeofSockaddrInet4 || length > 128 {
		return netip.AddrPort{}, false
	}
	buf := make([]byte, min(length, unix.SizeofSockaddrInet6))
	local := []unix.Iovec{{Base: &buf[0], Len: uint64(len(buf))}}
	remote := []unix.RemoteIovec{{Base: uintptr(ptr), Len: len(buf)}}
	if n, err := unix.ProcessVMReadv(tid, local, remote, 0); err != nil || n != len(buf) {
		return netip.AddrPort{}, false
	}
	port := binary.BigEndian.Uint16(buf[2:4])
	switch binary.NativeEndian.Uint16(buf[0:2]) {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(buf[4:8])), port), true
	case unix.AF_INET6:
		if len(buf) < unix.SizeofSockaddrInet6 {
			return netip.AddrPort{}, false
		}
		if binary.NativeEndian.Uint32(buf[24:28]) != 0 {
			return netip.AddrPort{}, false // a scoped (link-local) address: the gateway's business
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(buf[8:24])), port), true
	}
	return netip.AddrPort{}, false
}

// openPidfd opens a pidfd for the process the thread tid belongs to.
func openPidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, 0)
	if err == nil || !errors.Is(err, unix.EINVAL) {
		return fd, err
	}
	// Not a thread-group leader: find the leader.
	status, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return -1, err
	}
	for line := range bytes.Lines(status) {
		if v, ok := bytes.CutPrefix(line, []byte("Tgid:")); ok {
			tgid, err := strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return -1, err
			}
			return unix.PidfdOpen(tgid, 0)
		}
	}
	return -1, errors.New("no Tgid in " + "/proc/" + strconv.Itoa(tid) + "/status")
}

// fdFlags returns the open flags of descriptor fd of thread tid, with
// O_CLOEXEC when the descriptor is close-on-exec, as fdinfo reports them;
// 0 when unknown.
func fdFlags(tid, fd int) uint32 {
	info, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(info) {
		if v, ok := bytes.CutPrefix(line, []byte("flags:")); ok {
			flags, err := strconv.ParseUint(string(bytes.TrimSpace(v)), 8, 32)
			if err != nil {
				return 0
			}
			return uint32(flags)
		}
	}
	return 0
}
