package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
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
// A socket of the host's namespace in the sandbox's hands must never
// connect or listen anywhere else. A TCP socket can be made to connect
// again (after connect(AF_UNSPEC), or after its connection failed), so:
//
//   - the helper's Landlock domain refuses every TCP connect the kernel
//     would carry out for the sandbox (landlock DenyTCPConnect), and the
//     broker carries out every TCP connect itself, on its own copy of the
//     sandbox's socket (pidfd_getfd), after checking which network
//     namespace that socket is in: a sandbox socket connects in the
//     sandbox's namespace, where the gateway decides as always; a host
//     socket connects only to a destination the gateway allows;
//   - listen(2) stops too, and the broker carries it out only on sockets
//     of the sandbox's namespace;
//   - TCP Fast Open sends are refused by the notifier's filter.
//
// The broker acts on the socket and the address it read and checked, so
// a thread that swaps the descriptor or rewrites the address after the
// check changes nothing. It carries out every other connect too, on its
// copy of the sandbox's socket: a unix socket's after the unix socket
// guard's check (unixguard.go), the rest (UDP, netlink, and TCP where the
// broker does not make connections) as they are. No call goes on
// unchecked (SECCOMP_USER_NOTIF_FLAG_CONTINUE), which would let the
// kernel re-read an address the sandbox can rewrite. The notifier is in
// every run, network or not; without a gateway (network "none") or
// without Landlock ABI 4 the broker makes no TCP connection of its own.
//
// What the sandbox can tell: getsockname on a brokered socket shows the
// host's source address instead of the sandbox's, and socket options
// other than the common ones copied below are reset.

// connectBroker answers the connect notifier's stops for one run.
type connectBroker struct {
	listener  int
	stop      int            // eventfd: written once by close
	gw        egress.Gateway // nil without a network
	brokerTCP bool           // connect allowed TCP destinations with host sockets
	unix      *unixGuard
	guard     *createGuard // nil without the create guard
	// maker makes the host sockets in the run's cgroup; nil without a
	// writable cgroup (the supervisor makes them, and the memory budget
	// is an rlimit that counts no socket anyway).
	maker *socketMaker
	// conns are the host sockets made, ended with the run
	// (sockdestroy.go).
	connsMu   sync.Mutex
	conns     []hostConn
	timeout   time.Duration
	sandboxNS unix.Stat_t // the sandbox's network namespace
	// tty is the master of the run's pty, once it has one (pty.go).
	tty atomic.Pointer[os.File]
	// wg counts the answers under way, receiving the receivers
	// (notifyrecv.go); closing, under closeMu, stops new answers.
	wg        sync.WaitGroup
	receiving sync.WaitGroup
	holding   sync.WaitGroup // the look at the run's sockets (sockhold.go)
	// holdPID is the sandbox's init, whose descendants the look reads,
	// once the broker may hand host sockets over (0: never); the look
	// starts with the first copy kept (holdOnce), not with the run.
	holdPID  atomic.Int64
	holdOnce sync.Once
	closeMu  sync.Mutex
	closing  bool
	once     sync.Once
}

// startConnectBroker serves listener until close; it takes ownership of
// listener and of g's sock_diag socket. sandboxNS is the sandbox's
// network namespace; gw is nil without a network, and brokerTCP says
// whether the helper's Landlock domain refuses TCP connects, so that
// host sockets may be handed over.
func startConnectBroker(listener int, sandboxNS unix.Stat_t, gw egress.Gateway, brokerTCP bool, g *unixGuard, cg *createGuard, maker *socketMaker, timeout time.Duration) (*connectBroker, error) {
	b := &connectBroker{listener: listener, stop: -1, gw: gw, brokerTCP: brokerTCP && gw != nil, unix: g, guard: cg, maker: maker, timeout: timeout, sandboxNS: sandboxNS}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(listener)
		return nil, fmt.Errorf("connect broker: eventfd: %w", err)
	}
	b.stop = stop
	// Waking the receiving thread on the caller's CPU, at once (Linux
	// 6.6), narrows the window in which a signal still interrupts a
	// stopped call (notifyrecv.go). Older kernels refuse the flag,
	// which changes nothing else.
	unix.Syscall(unix.SYS_IOCTL, uintptr(listener), unix.SECCOMP_IOCTL_NOTIF_SET_FLAGS, unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP)
	if err := b.startReceivers(); err != nil {
		unix.Close(listener)
		unix.Close(stop)
		return nil, fmt.Errorf("connect broker: start receiving: %w", err)
	}
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
		b.stopReceiving()
		b.holding.Wait()
		b.maker.close()
		b.endHostConns()
		unix.Close(b.listener)
		unix.Close(b.stop)
		b.unix.close()
		b.guard.close()
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

// answer decides one stopped call: a connect or listen here, the create
// guard's calls in createguard.go.
func (b *connectBroker) answer(n *seccompNotif) {
	resp := seccompNotifResp{id: n.id}
	var handled bool
	var errno unix.Errno
	switch {
	case isExecCall(n.nr):
		b.unix.exec.observe(n) // never handled: CONTINUE, see execwatch.go
	case n.nr == int32(unix.SYS_LISTEN):
		handled, errno = true, b.listen(n)
	case n.nr == int32(unix.SYS_CONNECT):
		handled, errno = b.connect(n)
	default:
		b.answerCreate(n) // answers itself
		return
	}
	if !handled {
		resp.flags = unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
	} else if errno != 0 {
		resp.error = -int32(errno)
	}
	b.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// socketOf takes a copy of descriptor fd of the stopped thread, or
// returns the errno the call should fail with. It checks last that the
// stop is still waiting: then its thread has neither died nor had its
// id reused, so this copy, and whatever the caller read from the thread
// before, came from the process that stopped.
func (b *connectBroker) socketOf(n *seccompNotif, fd int) (int, unix.Errno) {
	pidfd, err := openPidfd(int(n.pid))
	if err != nil {
		return -1, unix.ESRCH
	}
	defer unix.Close(pidfd)
	sock, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.EBADF
		}
		return -1, errno
	}
	if !b.valid(n) {
		unix.Close(sock)
		return -1, unix.ESRCH
	}
	return sock, 0
}

// inSandbox reports whether sock belongs to the sandbox's network
// namespace; false also when that cannot be told.
func (b *connectBroker) inSandbox(sock int) bool {
	ns, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCGSKNS, 0)
	if errno != 0 {
		return false
	}
	defer unix.Close(int(ns))
	var st unix.Stat_t
	if err := unix.Fstat(int(ns), &st); err != nil {
		return false
	}
	return st.Dev == b.sandboxNS.Dev && st.Ino == b.sandboxNS.Ino
}

// listen carries out listen(fd, backlog) on the sandbox's socket, which
// must be of the sandbox's network namespace.
func (b *connectBroker) listen(n *seccompNotif) unix.Errno {
	sock, errno := b.socketOf(n, int(int32(n.args[0])))
	if errno != 0 {
		return errno
	}
	defer unix.Close(sock)
	if _, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE); err != nil {
		return unix.ENOTSOCK
	}
	if !b.inSandbox(sock) {
		return unix.EOPNOTSUPP // a brokered socket never listens
	}
	_, _, errno = unix.Syscall(unix.SYS_LISTEN, uintptr(sock), uintptr(int32(n.args[1])), 0)
	return errno
}

// connect decides and carries out one stopped connect(fd, addr, len).
// It reports the errno the sandbox's connect returns: 0 when connected,
// EINPROGRESS for a non-blocking socket still connecting, as the kernel
// would answer, or the refusal. (handled is always true: no connect goes
// on as it stands.)
func (b *connectBroker) connect(n *seccompNotif) (bool, unix.Errno) {
	target := int(int32(n.args[0]))
	raw, errno := readMemory(int(n.pid), n.args[1], n.args[2])
	if errno != 0 {
		return true, errno
	}
	sock, errno := b.socketOf(n, target)
	if errno != 0 {
		return true, errno
	}
	defer unix.Close(sock)
	domain, bound, connected, isTCP := describe(sock)
	if domain == unix.AF_UNIX {
		return true, b.unixConnect(n, sock, raw)
	}
	if !isTCP || !b.brokerTCP {
		// UDP, netlink, and TCP the broker does not make: the socket's
		// own namespace decides, as the kernel would have.
		return true, b.connectOn(sock, raw)
	}
	dst, inet := sockaddrInet(raw)
	if !b.inSandbox(sock) {
		// A socket the broker connected before, connecting again.
		if !inet || !b.gw.CheckTCP(dst.Addr(), dst.Port()) {
			return true, unix.EACCES
		}
		errno := b.connectOn(sock, raw)
		if errno == 0 || errno == unix.EINPROGRESS {
			b.remember(sock, dst) // unless the broker holds it still
		}
		return true, errno
	}
	// inet means at least a sockaddr_in's length was read.
	if !inet || int(binary.NativeEndian.Uint16(raw[0:2])) != domain || bound || connected || !b.gw.PermitsTCP(dst.Addr(), dst.Port()) {
		// The gateway decides (and records a refusal).
		return true, b.connectOn(sock, raw)
	}
	status, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return true, b.connectOn(sock, raw)
	}
	nonblocking := status&unix.O_NONBLOCK != 0
	host, errno := b.dial(domain, dst, sock, !nonblocking)
	if host < 0 {
		return true, errno
	}
	defer unix.Close(host)
	if !nonblocking {
		if _, err := unix.FcntlInt(uintptr(host), unix.F_SETFL, 0); err != nil {
			return true, unix.ECONNABORTED
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
		return true, unix.ECONNABORTED
	}
	b.remember(host, dst)
	return true, errno
}

// connectOn carries out connect(sock, raw) on the broker's copy of the
// sandbox's socket, as the sandbox's call would have: a non-blocking
// socket returns at once (EINPROGRESS, usually); a blocking one is made
// non-blocking for the wait, so the broker's close can end it, and
// restored.
func (b *connectBroker) connectOn(sock int, raw []byte) unix.Errno {
	status, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0)
	if err != nil {
		return unix.EBADF
	}
	if status&unix.O_NONBLOCK != 0 {
		return rawConnect(sock, raw)
	}
	if _, err := unix.FcntlInt(uintptr(sock), unix.F_SETFL, status|unix.O_NONBLOCK); err != nil {
		return unix.EBADF
	}
	defer unix.FcntlInt(uintptr(sock), unix.F_SETFL, status)
	errno := rawConnect(sock, raw)
	if errno != unix.EINPROGRESS {
		return errno
	}
	if err := b.await(sock); err != nil {
		if !errors.As(err, &errno) {
			errno = unix.ECONNABORTED
		}
		return errno
	}
	return 0
}

func rawConnect(sock int, raw []byte) unix.Errno {
	var p unsafe.Pointer
	if len(raw) > 0 {
		p = unsafe.Pointer(&raw[0])
	}
	_, _, errno := unix.Syscall(unix.SYS_CONNECT, uintptr(sock), uintptr(p), uintptr(len(raw)))
	return errno
}

// describe tells a socket's family, whether it is bound to a port or
// connected, and whether it is a TCP socket of family AF_INET or
// AF_INET6.
func describe(sock int) (domain int, bound, connected, tcp bool) {
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil || (domain != unix.AF_INET && domain != unix.AF_INET6) {
		return domain, false, false, false
	}
	typ, err1 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_TYPE)
	proto, err2 := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err1 != nil || err2 != nil || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		return domain, false, false, false
	}
	_, err = unix.Getpeername(sock)
	connected = err == nil
	switch sa, err := unix.Getsockname(sock); s := sa.(type) {
	case *unix.SockaddrInet4:
		bound = err != nil || s.Port != 0
	case *unix.SockaddrInet6:
		bound = err != nil || s.Port != 0
	default:
		bound = true
	}
	return domain, bound, connected, true
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
	var s int
	var err error
	if b.maker != nil {
		s, err = b.maker.socket(domain)
	} else {
		s, err = unix.Socket(domain, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	}
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

// readMemory reads the length bytes at ptr of thread tid, the sockaddr
// of a stopped connect; what the kernel would answer for a length it
// refuses or memory it cannot read.
func readMemory(tid int, ptr, length uint64) ([]byte, unix.Errno) {
	if length > unix.SizeofSockaddrAny {
		return nil, unix.EINVAL
	}
	if length == 0 {
		return nil, 0
	}
	buf := make([]byte, length)
	local := []unix.Iovec{{Base: &buf[0], Len: length}}
	remote := []unix.RemoteIovec{{Base: uintptr(ptr), Len: int(length)}}
	if n, err := unix.ProcessVMReadv(tid, local, remote, 0); err != nil || n != len(buf) {
		return nil, unix.EFAULT
	}
	return buf, 0
}

// sockaddrInet parses an AF_INET or AF_INET6 sockaddr; ok false for any
// other family, a short one, or a scoped (link-local) IPv6 address,
// which is the gateway's business.
func sockaddrInet(raw []byte) (netip.AddrPort, bool) {
	if len(raw) < unix.SizeofSockaddrInet4 {
		return netip.AddrPort{}, false
	}
	port := binary.BigEndian.Uint16(raw[2:4])
	switch binary.NativeEndian.Uint16(raw[0:2]) {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(raw[4:8])), port), true
	case unix.AF_INET6:
		if len(raw) < unix.SizeofSockaddrInet6 || binary.NativeEndian.Uint32(raw[24:28]) != 0 {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(raw[8:24])), port), true
	}
	return netip.AddrPort{}, false
}

// openPidfd opens a pidfd for the process the thread tid belongs to.
func openPidfd(tid int) (int, error) {
	fd, err := unix.PidfdOpen(tid, 0)
	if err == nil || !(errors.Is(err, unix.ENOENT) || errors.Is(err, unix.EINVAL)) {
		return fd, err
	}
	// Not a thread-group leader (ENOENT; EINVAL before Linux 6.9): find
	// the leader.
	status, err := procFile(tid, "status")
	if err != nil {
		return -1, err
	}
	v, ok := procField(status, "Tgid")
	if !ok {
		return -1, errors.New("no Tgid in /proc/" + strconv.Itoa(tid) + "/status")
	}
	tgid, err := strconv.Atoi(v)
	if err != nil {
		return -1, err
	}
	return unix.PidfdOpen(tgid, 0)
}

// fdFlags returns the open flags of descriptor fd of thread tid, with
// O_CLOEXEC when the descriptor is close-on-exec, as fdinfo reports them;
// 0 when unknown.
func fdFlags(tid, fd int) uint32 {
	info, err := procFile(tid, "fdinfo/"+strconv.Itoa(fd))
	if err != nil {
		return 0
	}
	v, _ := procField(info, "flags")
	flags, err := strconv.ParseUint(v, 8, 32)
	if err != nil {
		return 0
	}
	return uint32(flags)
}
