package sandbox

import (
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
	"github.com/airlockhq/airlock/sandbox/internal/linux/seccomp"
)

// The create guard: a protected path absent at the start cannot be
// created by the sandbox where the host can see it, and no writable
// tree's mode or owner can change during the run.
//
// Host git run in a directory the sandbox writes (a shell prompt, an
// IDE, the agent's next command) reads sub/.git, a repository's hooks
// directory, an include target, and runs what they name. The view holds
// what exists at the start read-only, and placeholders hold the
// top-level names (placeholders.go); a name made later beneath them is
// refused here, when the sandbox makes it. The connect notifier
// (seccomp.NotifierOptions.CreateGuard) stops every call that gives a
// path a new entry: mkdir, mknod, symlink, link, rename (the new name;
// both with RENAME_EXCHANGE), open and openat with O_CREAT, creat; every
// call that writes through an existing name: open and openat with
// O_WRONLY, O_RDWR or O_TRUNC, truncate; and every chmod and chown. The supervisor reads the call's paths once from
// the caller's memory and hands them, with the caller's directory
// descriptors (pidfd_getfd, or /proc/TID/cwd for AT_FDCWD), to the guard
// proxy in the sandbox (sandbox/internal/linux/guardproxy.go), which
// walks them as the caller's lookup would, refuses a protected final
// name (.git outside the sandbox's own tmpfs; the names absent at the
// start in directories that existed, GuardConfig.Absent) and a chmod or
// chown of a writable tree's root, and carries out the rest. What it
// opens comes back to the caller through SECCOMP_IOCTL_NOTIF_ADDFD. No
// call goes on as it stands (SECCOMP_USER_NOTIF_FLAG_CONTINUE), which
// would let the kernel read paths a second thread can rewrite after the
// check.
//
// A write through an existing name is refused where the name is one
// host git reads (a git directory's config, hooks or info, found by what
// the directory holds when the call comes) or one of the profile's
// protected names: so a repository anywhere in the workspace is held
// without the start searching for it.
//
// Cost: a stopped call takes a round trip through the supervisor and the
// proxy; read-only opens never stop (BenchmarkCreateGuard).

// createGuardOff turns the guard off, for a benchmark only
// (export_test.go).
var createGuardOff bool

// createGuardHold holds each stopped call this long before the guard
// carries it out, for a test only (export_test.go): a signal sent
// meanwhile must not interrupt the call.
var createGuardHold atomic.Int64

// createGuard is one run's side of the guard proxy.
type createGuard struct {
	proxy int // SOCK_SEQPACKET to the proxy
	// gone: the proxy ended while a caller lived on, so later calls
	// need not wait to see whether theirs die.
	gone atomic.Bool
	refusals
}

// proxyGoneWait bounds how long a call whose proxy is gone waits for its
// own process to die with the run (the kernel's SIGKILL of the pid
// namespace takes microseconds; a loaded host, longer).
const proxyGoneWait = 2 * time.Second

// callerDies reports whether the process of the stop n dies (its stop
// turns invalid) within proxyGoneWait, or the broker stops meanwhile.
func (b *connectBroker) callerDies(n *seccompNotif) bool {
	for waited := time.Duration(0); waited < proxyGoneWait; waited += 5 * time.Millisecond {
		if !b.valid(n) || b.stopped(5*time.Millisecond) {
			return true
		}
	}
	return false
}

// guardCalls names the calls the notifier stops for the guard, by
// number on this architecture.
var guardCalls = seccomp.Numbers(runtime.GOARCH, append([]string{"open", "openat"}, seccomp.CreateGuarded...)...)

// callShape says where a call keeps what the proxy needs: argument
// indexes, -1 for none (a directory of -1 is the working directory).
type callShape struct {
	op                uint32
	dir1, path1       int
	dir2, path2       int
	mode, flags, dev  int
	uid, gid          int
	fixedFlags        uint32
	umask, text, onFD bool // mode passes the umask; path1 is a symlink's text; acts on dir1 itself
}

func shapeOf(name string) (callShape, bool) {
	s := callShape{dir1: -1, path1: -1, dir2: -1, path2: -1, mode: -1, flags: -1, dev: -1, uid: -1, gid: -1}
	switch name {
	case "mkdir":
		s.op, s.path1, s.mode, s.umask = linux.GuardMkdir, 0, 1, true
	case "mkdirat":
		s.op, s.dir1, s.path1, s.mode, s.umask = linux.GuardMkdir, 0, 1, 2, true
	case "mknod":
		s.op, s.path1, s.mode, s.dev, s.umask = linux.GuardMknod, 0, 1, 2, true
	case "mknodat":
		s.op, s.dir1, s.path1, s.mode, s.dev, s.umask = linux.GuardMknod, 0, 1, 2, 3, true
	case "symlink":
		s.op, s.path1, s.path2, s.text = linux.GuardSymlink, 0, 1, true
	case "symlinkat":
		s.op, s.path1, s.dir2, s.path2, s.text = linux.GuardSymlink, 0, 1, 2, true
	case "link":
		s.op, s.path1, s.path2 = linux.GuardLink, 0, 1
	case "linkat":
		s.op, s.dir1, s.path1, s.dir2, s.path2, s.flags = linux.GuardLink, 0, 1, 2, 3, 4
	case "rename":
		s.op, s.path1, s.path2 = linux.GuardRename, 0, 1
	case "renameat":
		s.op, s.dir1, s.path1, s.dir2, s.path2 = linux.GuardRename, 0, 1, 2, 3
	case "renameat2":
		s.op, s.dir1, s.path1, s.dir2, s.path2, s.flags = linux.GuardRename, 0, 1, 2, 3, 4
	case "creat":
		s.op, s.path1, s.mode, s.umask = linux.GuardOpen, 0, 1, true
		s.fixedFlags = unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
	case "open":
		s.op, s.path1, s.flags, s.mode, s.umask = linux.GuardOpen, 0, 1, 2, true
	case "openat":
		s.op, s.dir1, s.path1, s.flags, s.mode, s.umask = linux.GuardOpen, 0, 1, 2, 3, true
	case "truncate":
		// The length rides in the device field (64 bits).
		s.op, s.path1, s.dev = linux.GuardTruncate, 0, 1
	case "chmod":
		s.op, s.path1, s.mode = linux.GuardChmod, 0, 1
	case "fchmodat":
		s.op, s.dir1, s.path1, s.mode = linux.GuardChmod, 0, 1, 2
	case "fchmodat2":
		s.op, s.dir1, s.path1, s.mode, s.flags = linux.GuardChmod, 0, 1, 2, 3
	case "fchmod":
		s.op, s.dir1, s.mode, s.onFD = linux.GuardChmod, 0, 1, true
	case "chown":
		s.op, s.path1, s.uid, s.gid = linux.GuardChown, 0, 1, 2
	case "lchown":
		s.op, s.path1, s.uid, s.gid, s.fixedFlags = linux.GuardChown, 0, 1, 2, unix.AT_SYMLINK_NOFOLLOW
	case "fchownat":
		s.op, s.dir1, s.path1, s.uid, s.gid, s.flags = linux.GuardChown, 0, 1, 2, 3, 4
	case "fchown":
		s.op, s.dir1, s.uid, s.gid, s.onFD = linux.GuardChown, 0, 1, 2, true
	default:
		return s, false
	}
	return s, true
}

// answerCreate answers one stop of the create guard's calls, itself:
// an open that succeeded is answered with its descriptor.
func (b *connectBroker) answerCreate(n *seccompNotif) {
	shape, ok := shapeOf(guardCalls[n.nr])
	if !ok || b.guard == nil {
		b.reply(n, unix.ENOSYS)
		return
	}
	req, dirs, errno := b.guardRequest(n, shape)
	if errno != 0 {
		guard.CloseAll(dirs)
		b.reply(n, errno)
		return
	}
	if d := createGuardHold.Load(); d > 0 {
		time.Sleep(time.Duration(d))
	}
	ans, fd, err := b.guard.call(req, dirs, b.stop)
	// Closed before the caller goes on, like the proxy's copies.
	guard.CloseAll(dirs)
	if err != nil {
		// The proxy lives in the sandbox's pid namespace, which the
		// kernel empties when the command's init ends: a call still on
		// its way then meets a proxy that is gone while its own process
		// is being killed. That one sees no refusal, and none is
		// reported; a caller that outlives the proxy gets EIO and a
		// denial.
		if !b.guard.gone.Load() && b.callerDies(n) {
			return
		}
		b.guard.gone.Store(true)
		b.guard.deny("(create guard)", "the guard proxy is gone: "+err.Error()+"; the call was refused")
		b.reply(n, unix.EIO)
		return
	}
	if ans.Refused {
		target := string(ans.Name)
		if target == "" {
			target = "(a descriptor of a writable tree)"
		}
		b.guard.deny(target, refusalReason(shape.op, req.Flags))
		b.reply(n, unix.EPERM)
		return
	}
	if fd < 0 && unix.Errno(ans.Errno) == unix.ENXIO {
		fd = b.controllingTTY(n, req)
	}
	if fd < 0 {
		b.reply(n, unix.Errno(ans.Errno))
		return
	}
	var fdFlags uint32
	if req.Flags&unix.O_CLOEXEC != 0 {
		fdFlags = unix.O_CLOEXEC
	}
	// The file goes in first and the answer after, so that this copy is
	// closed before the caller goes on (ADDFD_FLAG_SEND would answer at
	// once). A caller killed in between leaves the descriptor to its
	// dying process.
	add := seccompNotifAddfd{id: n.id, srcfd: uint32(fd), newfdFlags: fdFlags}
	newfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(b.listener), uintptr(unix.SECCOMP_IOCTL_NOTIF_ADDFD), uintptr(unsafe.Pointer(&add)))
	unix.Close(fd)
	if errno != 0 {
		b.reply(n, unix.EMFILE)
		return
	}
	resp := seccompNotifResp{id: n.id, val: int64(newfd)}
	b.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// createGuardNote adds to the protected-paths line what the create
// guard costs a program on a kernel whose wait is killable once the
// supervisor has the call: before that, a handled signal can still fail
// it (notifyrecv.go). A kernel without that flag has it among the
// Report's silent refusals instead.
func createGuardNote(st GuaranteeStatus, h HostInfo) GuaranteeStatus {
	if st.Status == Enforced && h.CreateGuard && h.KillableWait {
		st.Mechanism += "; note: a call the create guard stops can still fail with EINTR when a signal the program handles without SA_RESTART lands before the supervisor has taken the call (the kernel waits killable only from then on; rare but for a flood of signals, see docs/PROFILES.md)"
	}
	return st
}

func refusalReason(op, flags uint32) string {
	if op == linux.GuardChmod || op == linux.GuardChown {
		return "the mode and owner of a writable tree, of what host git or a host tool reads (a git directory's config and hooks, the profile's protected names), and of a file hard-linked before the run (whose mode says whether it is a secret), are held for the run; not changed"
	}
	if op == linux.GuardTruncate || op == linux.GuardOpen && flags&unix.O_CREAT == 0 {
		return "protected file: host git or a host tool reads it (a git directory's config, commondir, gitdir, hooks or info, a .git file, the profile's protected names); not written"
	}
	return "protected name: host git would read it (a new .git, a HEAD outside the repositories there at the start, which would make a git directory of any name, a git directory's config or hooks, or a path a repository's config names that was absent at the start); not created"
}

// reply answers a stop with errno (0: success, value 0).
func (b *connectBroker) reply(n *seccompNotif, errno unix.Errno) {
	resp := seccompNotifResp{id: n.id, error: -int32(errno)}
	b.ioctl(unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
}

// guardRequest reads one stopped call: its paths from the caller's
// memory, its umask and ids, and copies of its directory descriptors.
func (b *connectBroker) guardRequest(n *seccompNotif, s callShape) (*linux.GuardRequest, []int, unix.Errno) {
	tid := int(n.pid)
	arg := func(i int) uint64 { return n.args[i] }
	req := &linux.GuardRequest{Op: s.op, Flags: s.fixedFlags, UID: ^uint32(0), GID: ^uint32(0)}
	if s.flags >= 0 {
		req.Flags |= uint32(arg(s.flags))
	}
	if s.mode >= 0 {
		req.Mode = uint32(arg(s.mode))
	}
	if s.dev >= 0 {
		req.Dev = arg(s.dev)
	}
	if s.uid >= 0 {
		req.UID, req.GID = uint32(arg(s.uid)), uint32(arg(s.gid))
	}
	if s.op == linux.GuardLink && req.Flags&^uint32(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return nil, nil, unix.EINVAL
	}
	var errno unix.Errno
	if s.path1 >= 0 {
		if req.Path1, errno = readPath(tid, arg(s.path1)); errno != 0 {
			return nil, nil, errno
		}
	}
	if s.path2 >= 0 {
		if req.Path2, errno = readPath(tid, arg(s.path2)); errno != 0 {
			return nil, nil, errno
		}
	}
	status, err := readStatus(tid)
	if err != nil {
		return nil, nil, unix.ESRCH
	}
	if s.umask {
		v, _ := procField(status, "Umask")
		mask, err := strconv.ParseUint(v, 8, 32)
		if err != nil {
			mask = 0o022
		}
		req.Mode &^= uint32(mask)
	}
	req.PID, req.TID = lastID(status, "NStgid"), lastID(status, "NSpid")
	var dirs []int
	take := func(argIdx int, path []byte, bit uint32) unix.Errno {
		if !s.onFD && len(path) > 0 && path[0] == '/' {
			return 0 // absolute: the proxy starts at its root, the caller's
		}
		if !s.onFD && len(path) == 0 && req.Flags&unix.AT_EMPTY_PATH == 0 {
			return 0 // ENOENT, which the proxy answers
		}
		var fd int
		if s.onFD && int32(arg(argIdx)) < 0 {
			return unix.EBADF
		}
		if argIdx < 0 || int32(arg(argIdx)) == unix.AT_FDCWD {
			var err error
			fd, err = unix.Open("/proc/"+strconv.Itoa(tid)+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != nil {
				return unix.ENOENT
			}
		} else {
			var errno unix.Errno
			if fd, errno = b.socketOf(n, int(int32(arg(argIdx)))); errno != 0 {
				return errno
			}
		}
		dirs = append(dirs, fd)
		req.Dirs |= bit
		return 0
	}
	if !s.text {
		if errno := take(s.dir1, req.Path1, linux.GuardHasDir1); errno != 0 {
			return nil, dirs, errno
		}
	}
	if s.path2 >= 0 {
		if errno := take(s.dir2, req.Path2, linux.GuardHasDir2); errno != 0 {
			return nil, dirs, errno
		}
	}
	if s.onFD {
		req.Dirs |= linux.GuardOnFD
	}
	// Everything read above came from the process that stopped: its
	// thread has neither died nor had its id reused since.
	if !b.valid(n) {
		return nil, dirs, unix.ESRCH
	}
	return req, dirs, 0
}

// readStatus reads /proc/TID/status in one read: the kernel makes the
// whole file at the first read, and os.ReadFile would read it in four.
func readStatus(tid int) ([]byte, error) {
	fd, err := unix.Open("/proc/"+strconv.Itoa(tid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	buf := make([]byte, 8192)
	n, err := unix.Read(fd, buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// lastID is the innermost pid namespace's id of a /proc status line
// (NStgid, NSpid): the sandbox's.
func lastID(status []byte, key string) int32 {
	v, _ := procField(status, key)
	f := strings.Fields(v)
	if len(f) == 0 {
		return 0
	}
	id, _ := strconv.Atoi(f[len(f)-1])
	return int32(id)
}

// readPath reads the NUL-terminated path at ptr of thread tid, a page at
// a time (the string may end just before an unmapped page).
func readPath(tid int, ptr uint64) ([]byte, unix.Errno) {
	if ptr == 0 {
		return nil, unix.EFAULT
	}
	out := make([]byte, 0, 256)
	page := uint64(os.Getpagesize())
	for len(out) < linux.GuardMaxPath {
		chunk := page - ptr%page
		if left := uint64(linux.GuardMaxPath - len(out)); chunk > left {
			chunk = left
		}
		buf := make([]byte, chunk)
		local := []unix.Iovec{{Base: &buf[0], Len: chunk}}
		remote := []unix.RemoteIovec{{Base: uintptr(ptr), Len: int(chunk)}}
		if n, err := unix.ProcessVMReadv(tid, local, remote, 0); err != nil || n != len(buf) {
			return nil, unix.EFAULT
		}
		if i := indexByte(buf, 0); i >= 0 {
			return append(out, buf[:i]...), 0
		}
		out = append(out, buf...)
		ptr += chunk
	}
	return nil, unix.ENAMETOOLONG
}

// call sends one request to the proxy and waits for its answer (or the
// broker's close); fd is what an open answered, else -1.
func (g *createGuard) call(req *linux.GuardRequest, dirs []int, stop int) (linux.GuardAnswer, int, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return linux.GuardAnswer{}, -1, err
	}
	defer unix.Close(pair[0])
	err = unix.Sendmsg(g.proxy, req.Marshal(), unix.UnixRights(append([]int{pair[1]}, dirs...)...), nil, 0)
	unix.Close(pair[1])
	if err != nil {
		return linux.GuardAnswer{}, -1, err
	}
	fds := []unix.PollFd{{Fd: int32(pair[0]), Events: unix.POLLIN}, {Fd: int32(stop), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return linux.GuardAnswer{}, -1, err
		}
		if fds[1].Revents != 0 {
			return linux.GuardAnswer{}, -1, errors.New("the run is ending")
		}
		break
	}
	buf := make([]byte, 8+linux.GuardMaxPath)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(pair[0], buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return linux.GuardAnswer{}, -1, err
	}
	got := rightsIn(oob[:oobn])
	if n == 0 {
		guard.CloseAll(got)
		return linux.GuardAnswer{}, -1, errors.New("no answer")
	}
	ans, err := linux.UnmarshalGuardAnswer(buf[:n])
	if err != nil || len(got) > 1 || (len(got) == 1 && (req.Op != linux.GuardOpen || ans.Errno != 0)) {
		guard.CloseAll(got)
		return linux.GuardAnswer{}, -1, errors.New("malformed answer")
	}
	fd := -1
	if len(got) == 1 {
		fd = got[0]
	} else if req.Op == linux.GuardOpen && ans.Errno == 0 && !ans.Refused {
		return linux.GuardAnswer{}, -1, errors.New("an open answered without a descriptor")
	}
	// The proxy closes its end once it has closed every copy of the
	// caller's files it held: only then may the caller go on (exec of a
	// file it just wrote must not meet ETXTBSY).
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); errors.Is(err, unix.EINTR) {
			continue
		}
		if fds[1].Revents != 0 {
			break
		}
		if n, _, _, _, err := unix.Recvmsg(pair[0], buf, nil, 0); n == 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
			break
		}
	}
	return ans, fd, nil
}

func rightsIn(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for i := range msgs {
		if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// takeDenials is refusals.takeDenials for a run that may have no guard.
func (g *createGuard) takeDenials() []Denial {
	if g == nil {
		return nil
	}
	return g.refusals.takeDenials()
}

func (g *createGuard) close() {
	if g != nil {
		unix.Close(g.proxy)
	}
}
