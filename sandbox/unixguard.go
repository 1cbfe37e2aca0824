package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// The unix socket guard: no host unix socket is reachable unless the
// profile names it (filesystem.sockets, --allow-socket).
//
// A pathname unix socket is a door to whatever host process listens on
// it (ssh-agent, docker, tmux, systemd --user), and every directory the
// sandbox shares with the host can hold one: the workspace, read and
// write paths, whatever a host process binds there during the run.
// Landlock cannot refuse connect to a pathname socket before ABI 9
// (LANDLOCK_ACCESS_FS_RESOLVE_UNIX), and the masks of sockets present at
// the start (mask.go) miss the ones that appear later. So every run's
// connect(2) stops at the connect notifier (seccomp.BuildConnectNotifier)
// and the supervisor carries out every connect itself, on its own copy
// of the sandbox's socket (pidfd_getfd). For an AF_UNIX pathname it
// resolves the path itself, once, from the bytes it read, inside the
// sandbox's root (/proc/TID/root, openat2 RESOLVE_IN_ROOT and
// RESOLVE_NO_MAGICLINKS; a relative path from the thread's working
// directory), holds the inode it found (O_PATH), and connects only if
// that inode is
//
//   - a socket the profile names (its inode when the run started), or
//   - bound by a socket of the sandbox's own network namespace, which only
//     the sandbox's processes can create: the sandbox's sock_diag socket
//     lists them with their inodes (UDIAG_SHOW_VFS),
//
// and then through /proc/self/fd/N of the inode it checked, never the
// path again. A thread that rewrites the address or swaps the descriptor
// after the check changes nothing. An abstract address connects only in
// the sandbox's own network namespace, whose abstract names are all the
// sandbox's. Nothing is continued as it stands: the check and the act are
// the supervisor's.
//
// Datagrams: the kernel resolves a datagram's destination path at every
// sendto or sendmsg, in memory the filter cannot read, so the notifier
// refuses AF_UNIX datagram sockets (socket, socketpair) outright; stream
// and seqpacket sends never look a path up.
//
// What the sandbox can tell: a peer's SO_PEERCRED names the supervisor's
// pid (0 in the sandbox's pid namespace), with the same uid and gid.

// unixGuard is one run's view of which unix sockets may be reached.
type unixGuard struct {
	// named are the inodes of the profile's sockets when the run started.
	named map[fileID]string
	// diag is a NETLINK_SOCK_DIAG socket of the sandbox's network
	// namespace. With shared, that namespace is the host's: then no
	// socket counts as the sandbox's own.
	diag   int
	shared bool
	diagMu sync.Mutex
	// own remembers the sandbox's sockets found so far (a sock_diag dump
	// costs about 0.2 ms), each with an O_PATH descriptor that keeps its
	// inode, and so its number, from being freed and reused by another
	// file while remembered. An inode is bound by one socket in its
	// life, so the answer cannot change. Guarded by diagMu.
	own map[fileID]int

	// refusals are the refused connects, each said on the run's stderr
	// like the egress layer's refusals.
	refusals
	// exec reports refused execs; it shares the guard's notifier (one
	// listener per process) and its denials.
	exec *execWatch
}

type fileID struct{ dev, ino uint64 }

// namedSockets stats the profile's sockets on the host.
func namedSockets(paths []string) map[fileID]string {
	named := map[fileID]string{}
	for _, p := range paths {
		var st unix.Stat_t
		if unix.Stat(p, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFSOCK {
			named[fileID{st.Dev, st.Ino}] = p
		}
	}
	return named
}

// socketMounts binds each socket the profile names into the view at its
// path, read-only (connecting needs no write access to the mount), so it
// is reachable wherever it lies on the host. A path that is not a socket
// now is not bound: the field names sockets, not files to show.
func socketMounts(paths []string) []linux.Mount {
	var out []linux.Mount
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			out = append(out, linux.Mount{Kind: linux.MountBind, Source: p, Target: p, ReadOnly: true, Optional: true})
		}
	}
	return out
}

// unixConnect carries out connect(sock, raw) for an AF_UNIX socket of
// the sandbox, as decided above; the errno is the call's answer.
func (b *connectBroker) unixConnect(n *seccompNotif, sock int, raw []byte) unix.Errno {
	g := b.unix
	if len(raw) <= 2 || binary.NativeEndian.Uint16(raw[0:2]) != unix.AF_UNIX {
		// The kernel refuses it, or (AF_UNSPEC) dissolves an association.
		return b.connectOn(sock, raw)
	}
	path := raw[2:]
	if path[0] == 0 {
		if g.shared || !b.inSandbox(sock) {
			g.deny("@"+strings.TrimRight(string(path[1:]), "\x00"), "abstract socket outside the sandbox's own network namespace")
			return unix.EACCES
		}
		return b.connectOn(sock, raw)
	}
	if i := indexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	name := string(path)
	target, errno := resolveInSandbox(int(n.pid), name)
	if errno != 0 {
		return errno
	}
	defer unix.Close(target)
	if !b.valid(n) {
		return unix.ESRCH // resolved in a process that is gone
	}
	if !g.allowed(target) {
		g.deny(name, "host unix socket the profile does not name (filesystem.sockets, --allow-socket)")
		return unix.EACCES
	}
	via := make([]byte, 2, 2+32)
	binary.NativeEndian.PutUint16(via, unix.AF_UNIX)
	via = append(via, "/proc/self/fd/"+strconv.Itoa(target)...)
	via = append(via, 0)
	blocking := false
	if fl, err := unix.FcntlInt(uintptr(sock), unix.F_GETFL, 0); err == nil {
		blocking = fl&unix.O_NONBLOCK == 0
	}
	deadline := time.Now().Add(b.timeout)
	for {
		errno := b.connectOn(sock, via)
		// A full backlog answers EAGAIN even to a blocking connect made
		// non-blocking; the kernel would have waited, so wait too.
		if errno != unix.EAGAIN || !blocking || time.Now().After(deadline) || b.stopped(10*time.Millisecond) {
			return errno
		}
	}
}

// stopped waits up to d for the broker to close and reports whether it
// did.
func (b *connectBroker) stopped(d time.Duration) bool {
	fds := []unix.PollFd{{Fd: int32(b.stop), Events: unix.POLLIN}}
	n, _ := unix.Poll(fds, int(d/time.Millisecond))
	return n > 0
}

func indexByte(b []byte, c byte) int {
	for i, x := range b {
		if x == c {
			return i
		}
	}
	return -1
}

// resolveInSandbox opens (O_PATH) what path names for thread tid of the
// sandbox: inside its root, following symlinks there but never out, and
// no magic links (/proc/N/fd/M would name the supervisor's files). The
// errno is what connect would answer: ENOENT, ENOTDIR, ELOOP, and
// ECONNREFUSED for something that is not a socket.
func resolveInSandbox(tid int, path string) (int, unix.Errno) {
	proc := "/proc/" + strconv.Itoa(tid)
	if !filepath.IsAbs(path) {
		cwd, err := os.Readlink(proc + "/cwd")
		if err != nil || !filepath.IsAbs(cwd) || strings.HasSuffix(cwd, " (deleted)") {
			return -1, unix.ENOENT
		}
		path = cwd + "/" + path
	}
	root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, unix.ESRCH
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		var errno unix.Errno
		if !errors.As(err, &errno) {
			errno = unix.ENOENT
		}
		return -1, errno
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
		unix.Close(fd)
		return -1, unix.ECONNREFUSED
	}
	return fd, 0
}

// allowed reports whether the socket inode fd is one the profile names or
// one a socket of the sandbox's network namespace is bound to.
func (g *unixGuard) allowed(fd int) bool {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false
	}
	if _, ok := g.named[fileID{st.Dev, st.Ino}]; ok {
		return true
	}
	if g.shared {
		return false
	}
	id := fileID{st.Dev, st.Ino}
	g.diagMu.Lock()
	defer g.diagMu.Unlock()
	if _, ok := g.own[id]; ok {
		return true
	}
	ok, err := boundInNamespace(g.diag, st.Dev, st.Ino)
	if err != nil || !ok {
		return false
	}
	if len(g.own) < maxRemembered {
		if pin, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0); err == nil {
			if g.own == nil {
				g.own = map[fileID]int{}
			}
			g.own[id] = pin
		}
	}
	return true
}

// maxRemembered bounds how many of the sandbox's sockets a run remembers.
const maxRemembered = 256

// close releases the guard's descriptors; the broker calls it once it
// has stopped answering.
func (g *unixGuard) close() {
	unix.Close(g.diag)
	for _, fd := range g.own {
		unix.Close(fd)
	}
	g.own = nil
}

// sock_diag for AF_UNIX (<linux/unix_diag.h>), which x/sys/unix lacks.
const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	udiagShowVFS     = 0x2
	unixDiagVFS      = 1 // UNIX_DIAG_VFS attribute: ino, dev (u32 each)
	sizeofUnixDiag   = 16
)

// boundInNamespace asks the sock_diag socket diag whether a unix socket
// of its network namespace is bound to the inode (dev, ino). The kernel
// reports the inode's number in 32 bits and its device in the kernel's
// own encoding (MAJOR << 20 | MINOR).
func boundInNamespace(diag int, dev, ino uint64) (bool, error) {
	req := make([]byte, unix.SizeofNlMsghdr, unix.SizeofNlMsghdr+24)
	req = append(req, unix.AF_UNIX, 0, 0, 0)
	req = binary.NativeEndian.AppendUint32(req, 0xffffffff) // every state
	req = binary.NativeEndian.AppendUint32(req, 0)          // any socket inode
	req = binary.NativeEndian.AppendUint32(req, udiagShowVFS)
	req = append(req, make([]byte, 8)...) // cookie
	binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
	binary.NativeEndian.PutUint16(req[4:], sockDiagByFamily)
	binary.NativeEndian.PutUint16(req[6:], unix.NLM_F_REQUEST|unix.NLM_F_DUMP)
	binary.NativeEndian.PutUint32(req[8:], 1)
	if err := unix.Sendto(diag, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, err
	}
	wantDev := uint32(unix.Major(dev))<<20 | uint32(unix.Minor(dev))
	found := false
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(diag, buf, 0)
		if err != nil {
			return false, err
		}
		msgs, err := syscall.ParseNetlinkMessage(buf[:n])
		if err != nil {
			return false, err
		}
		for _, m := range msgs {
			switch m.Header.Type {
			case unix.NLMSG_DONE:
				return found, nil
			case unix.NLMSG_ERROR:
				return false, errors.New("sock_diag: error answer")
			}
			if len(m.Data) < sizeofUnixDiag {
				continue
			}
			// Attributes follow the fixed part: u16 length, u16 type,
			// value, padded to 4 bytes.
			for a := m.Data[sizeofUnixDiag:]; len(a) >= 4; {
				l := int(binary.NativeEndian.Uint16(a[0:2]))
				if l < 4 || l > len(a) {
					break
				}
				v := a[4:l]
				if binary.NativeEndian.Uint16(a[2:4]) == unixDiagVFS && len(v) >= 8 &&
					binary.NativeEndian.Uint32(v[0:4]) == uint32(ino) && binary.NativeEndian.Uint32(v[4:8]) == wantDev {
					found = true
				}
				a = a[min((l+3)&^3, len(a)):]
			}
		}
	}
}

// ipcUnixStatus lowers the ipc-isolation line when the guard cannot run,
// and names the guard as part of the mechanism when it does.
func ipcUnixStatus(st GuaranteeStatus, h HostInfo) GuaranteeStatus {
	switch {
	case st.Status != Enforced:
	case !h.UnixGuard:
		st.Status = Degraded
		st.Reason = "host unix sockets in shared directories stay reachable when they appear after the start (only those present then are hidden): " + h.UnixGuardReason
	default:
		st.Mechanism += " + unix socket connects checked by the supervisor (only the profile's sockets and the sandbox's own)"
	}
	return st
}

// errNotifierHelperGone: the helper ended before handing over its
// notifier; its own message on the error pipe says why.
var errNotifierHelperGone error = guard.HelperGone("the connect notifier")

// startNotifier receives the connect notifier and the sandbox's
// sock_diag socket and answers the notifier for the rest of the run.
func (p *Process) startNotifier(h *guard.Handoff) error {
	tag, fds, closed, err := guard.RecvRights(h.Parent, 3)
	want := 2
	if tag&linux.NotifierTagGuard != 0 {
		want = 3 // and the guard proxy's socket (createguard.go)
	}
	switch {
	case err != nil:
		return fmt.Errorf("receive the connect notifier: %w", err)
	case closed:
		return errNotifierHelperGone
	case len(fds) != want:
		guard.CloseAll(fds)
		return fmt.Errorf("receive the connect notifier: want %d descriptors, got %d", want, len(fds))
	}
	listener, diag := fds[0], fds[1]
	var cg *createGuard
	if want == 3 {
		cg = &createGuard{proxy: fds[2], refusals: refusals{kind: "filesystem", note: p.noteRefusal}}
	}
	// The diag socket was made in the sandbox's network namespace, which
	// outlives a helper that has already exec'd and exited.
	var own unix.Stat_t
	if err := unix.Stat("/proc/self/ns/net", &own); err != nil {
		guard.CloseAll(fds)
		return fmt.Errorf("connect broker: the supervisor's network namespace: %w", err)
	}
	ns, err := socketNamespace(diag)
	if errors.Is(err, unix.EPERM) {
		// A namespace of the sandbox's own user namespace would answer:
		// this is the host's (network "all" without a TUN device), seen
		// by a supervisor without CAP_NET_ADMIN there.
		ns, err = own, nil
	}
	if err != nil {
		guard.CloseAll(fds)
		return fmt.Errorf("connect broker: the sandbox's network namespace: %w", err)
	}
	g := &unixGuard{
		named:    namedSockets(p.e.profile.Spec().Filesystem.Sockets),
		diag:     diag,
		shared:   own.Dev == ns.Dev && own.Ino == ns.Ino,
		exec:     newExecWatch(p.e.profile.Spec(), p.noteRefusal),
		refusals: refusals{kind: "unix-socket", note: p.noteRefusal},
	}
	p.gwMu.Lock()
	defer p.gwMu.Unlock()
	var maker *socketMaker
	if p.cg != nil {
		maker = &socketMaker{cg: p.cg}
	}
	b, err := startConnectBroker(listener, ns, p.gw, tag&linux.NotifierTagBrokerTCP != 0, g, cg, maker, egress.DefaultDialTimeout)
	if err != nil {
		unix.Close(diag)
		cg.close()
		return err
	}
	if b.brokerTCP {
		b.holdPID.Store(int64(p.child.Process.Pid))
	}
	p.broker = b
	return nil
}

// closeBroker stops the run's connect broker, once every process of the
// run is gone, and returns what its guards refused. Safe to call more
// than once.
func (p *Process) closeBroker() []Denial {
	p.gwMu.Lock()
	b := p.broker
	p.broker = nil
	p.gwMu.Unlock()
	if b == nil {
		return nil
	}
	b.close()
	return append(append(b.unix.takeDenials(), b.unix.exec.take()...), b.guard.takeDenials()...)
}

// socketNamespace identifies the network namespace a socket belongs to
// (SIOCGSKNS: the supervisor owns the sandbox's user namespace, so it
// holds CAP_NET_ADMIN over it).
func socketNamespace(sock int) (unix.Stat_t, error) {
	var st unix.Stat_t
	ns, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(sock), unix.SIOCGSKNS, 0)
	if errno != 0 {
		return st, errno
	}
	defer unix.Close(int(ns))
	err := unix.Fstat(int(ns), &st)
	return st, err
}

// socketsMaskExempt reports whether path is a socket the profile names,
// which the start's masks must leave in place.
func socketsMaskExempt(s profile.Spec, path string) bool {
	for _, p := range s.Filesystem.Sockets {
		if p == path {
			return true
		}
	}
	return false
}
