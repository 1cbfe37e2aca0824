package linux

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// The guard proxy carries out, inside the sandbox, the calls the create
// guard stopped and let through: those that make a name, and those that
// write through an existing one (an open for writing, truncate, chmod,
// chown), which it refuses on what host git or a host tool reads
// (guardgit.go, guardabove.go, guardattr.go).
//
// The supervisor checks a stopped mkdir, open(O_CREAT), rename, ... on
// the path it read from the caller's memory. Letting the call go on
// (SECCOMP_USER_NOTIF_FLAG_CONTINUE) would have the kernel read that
// memory again, after another thread of the caller rewrote "sub/x" into
// "sub/.git". So the checked bytes are what is carried out, by this
// process: the helper starts it after Landlock, the capability drop,
// no_new_privs and the main seccomp filter, and before the notifier, so
// it has the command's mount view and root, Landlock domain,
// credentials and filters, and only its calls do not stop. It walks each
// path itself, one component at a time beneath descriptors (so what it
// checks is what it acts on), and refuses a protected final name in any
// directory it reaches: .git outside the sandbox's private filesystems,
// and the names the supervisor lists (GuardConfig.Absent). It follows a
// final symlink of open(O_CREAT) itself, checking each target's name
// (`ln -s sub/.git x; : > x` would otherwise make sub/.git). In /proc it
// reads "self" and "thread-self" as the caller's, and lets the kernel
// follow /proc's magic links (/dev/stdout is /proc/self/fd/1).
//
// Its surface is one socket only the supervisor writes to, a fixed
// request header (guardwire.go) it checks before anything, and
// descriptors the supervisor took from the caller. It is not dumpable,
// so the command cannot take its descriptors or write its memory. It has
// no filter of its own beyond the command's (the main filter, the exec
// guard): an allowlist would have to follow the Go runtime's own calls,
// and what it could add (no exec, no sockets) guards against a
// compromise of this process that its input, bytes the supervisor
// checked, gives no way to.

// GuardProxyArg0 is argv[0] of the guard proxy, the same binary as the
// helper; the init hook in stage2.go recognises it.
const GuardProxyArg0 = "airlock-guardproxy"

// guardProxyFD is the proxy's end of its socket to the supervisor.
const guardProxyFD = 3

// maxLinks is the kernel's limit on symlinks followed in one lookup.
const maxLinks = 40

// startGuardProxy starts the proxy and returns the supervisor's end of
// its socket. The caller must have applied every restriction the command
// gets except the notifier.
func startGuardProxy(cfg GuardConfig) (int, error) {
	arg, err := json.Marshal(cfg)
	if err != nil {
		return -1, err
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(fds[1])
	closed := ^uintptr(0)
	// stderr stays, so a crash says why on the run's stderr.
	_, err = syscall.ForkExec("/proc/self/exe", []string{GuardProxyArg0, string(arg)}, &syscall.ProcAttr{
		Env:   []string{"GOMAXPROCS=1"},
		Files: []uintptr{closed, closed, 2, uintptr(fds[1])},
	})
	if err != nil {
		unix.Close(fds[0])
		return -1, err
	}
	return fds[0], nil
}

type guardKey struct {
	dev, ino uint64
	name     string
}

type guardProxy struct {
	idle, receivers atomic.Int32
	roots           map[[2]uint64]bool
	absent          map[guardKey]bool
	held            map[guardKey]bool
	private         map[uint64]bool
	gitDirs         map[[2]uint64]bool
	names           map[string]bool
	globs           []string
	workspace, home string
	globalHooks     []string
	configs         configCache
	// linksBornBefore is GuardConfig.LinksBornBefore.
	linksBornBefore int64
}

// runGuardProxy is the proxy's main; it never returns.
func runGuardProxy() {
	var cfg GuardConfig
	if len(os.Args) != 2 || json.Unmarshal([]byte(os.Args[1]), &cfg) != nil {
		os.Exit(ExitSetupFailed)
	}
	// Not dumpable: the command, with the same uid and no capabilities,
	// can then neither pidfd_getfd nor read or write this process.
	if unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) != nil {
		os.Exit(ExitSetupFailed)
	}
	// Modes come with the caller's umask applied by the supervisor.
	unix.Umask(0)
	for _, r := range cfg.Rlimits {
		if unix.Setrlimit(r.Resource, &unix.Rlimit{Cur: r.Value, Max: r.Value}) != nil {
			os.Exit(ExitSetupFailed)
		}
	}
	p := &guardProxy{roots: map[[2]uint64]bool{}, absent: map[guardKey]bool{}, held: map[guardKey]bool{}, private: map[uint64]bool{}, gitDirs: map[[2]uint64]bool{}}
	for _, g := range cfg.GitDirs {
		p.gitDirs[g] = true
	}
	p.names = map[string]bool{}
	for _, n := range cfg.Names {
		p.names[n] = true
	}
	for _, r := range cfg.Roots {
		p.roots[r] = true
	}
	for _, a := range cfg.Absent {
		p.absent[guardKey{a.Dir[0], a.Dir[1], a.Name}] = true
	}
	for _, h := range cfg.Held {
		p.held[guardKey{h.Dir[0], h.Dir[1], h.Name}] = true
	}
	for _, d := range cfg.PrivateDevs {
		p.private[d] = true
	}
	p.globs = cfg.Globs
	p.workspace, p.home, p.globalHooks = strings.TrimSuffix(cfg.Workspace, "/"), cfg.Home, cfg.GlobalHooks
	p.linksBornBefore = cfg.LinksBornBefore
	p.receive()
}

// maxReceivers bounds the proxy's concurrent calls: one blocked (an
// open of a FIFO waits for its peer) must not stop the others.
const maxReceivers = 64

// receive reads requests and carries each out itself, so no goroutine
// waits for another to be scheduled; when it takes the last idle
// receiver's place, it starts another first.
func (p *guardProxy) receive() {
	buf := make([]byte, guardHeaderLen+2*GuardMaxPath+1)
	oob := make([]byte, unix.CmsgSpace(3*4))
	for {
		p.idle.Add(1)
		n, oobn, flags, _, err := unix.Recvmsg(guardProxyFD, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if p.idle.Add(-1) == 0 && p.receivers.Add(1) <= maxReceivers {
			go p.receive()
		}
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			os.Exit(0) // the supervisor is gone, or the run ends
		}
		fds := rightsOf(oob[:oobn])
		req, err := UnmarshalGuardRequest(buf[:n])
		want := 1
		if err == nil {
			for _, bit := range []uint32{GuardHasDir1, GuardHasDir2} {
				if req.Dirs&bit != 0 {
					want++
				}
			}
		}
		if err != nil || flags&(unix.MSG_TRUNC|unix.MSG_CTRUNC) != 0 || len(fds) != want {
			closeFDs(fds)
			continue
		}
		p.serve(req, fds)
	}
}

func rightsOf(oob []byte) []int {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	var fds []int
	for _, m := range msgs {
		if r, err := unix.ParseUnixRights(&m); err == nil {
			fds = append(fds, r...)
		}
	}
	return fds
}

func closeFDs(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// serve carries out one request and answers on its own socket.
func (p *guardProxy) serve(r *GuardRequest, fds []int) {
	// The reply socket closes last: its end tells the supervisor this
	// process holds nothing of the caller's any more (a copy of a file
	// open for writing would make the caller's exec of it ETXTBSY).
	defer func() {
		closeFDs(fds[1:])
		unix.Close(fds[0])
	}()
	reply, dir1, dir2 := fds[0], -1, -1
	rest := fds[1:]
	if r.Dirs&GuardHasDir1 != 0 {
		dir1, rest = rest[0], rest[1:]
	}
	if r.Dirs&GuardHasDir2 != 0 {
		dir2 = rest[0]
	}
	w := &walker{p: p, pid: r.PID, tid: r.TID}
	ans, fd := w.do(r, dir1, dir2)
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
		defer unix.Close(fd)
	}
	unix.Sendmsg(reply, ans.Marshal(), oob, nil, 0)
}

// walker resolves the paths of one request as the caller's lookup would.
type walker struct {
	p        *guardProxy
	pid, tid int32
	links    int
}

func errnoOf(err error) int32 {
	if e, ok := err.(unix.Errno); ok {
		return int32(e)
	}
	if err != nil {
		return int32(unix.EIO)
	}
	return 0
}

// do carries out r; fd is the descriptor an open answers, else -1.
func (w *walker) do(r *GuardRequest, dir1, dir2 int) (GuardAnswer, int) {
	switch r.Op {
	case GuardOpen:
		return w.open(dir1, r.Path1, int(r.Flags), r.Mode, false)
	case GuardChmod, GuardChown:
		return w.attr(r, dir1), -1
	case GuardTruncate:
		return w.truncate(dir1, r.Path1, r.Dev), -1
	}
	// The calls that make a name: the new name is the last path.
	newDir, newPath := dir1, r.Path1
	if r.Op == GuardSymlink || r.Op == GuardLink || r.Op == GuardRename {
		newDir, newPath = dir2, r.Path2
	}
	parent, name, e := w.parent(newDir, newPath)
	if e != 0 {
		return GuardAnswer{Errno: e}, -1
	}
	defer unix.Close(parent)
	if w.p.refused(parent, name, true) {
		return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: newPath}, -1
	}
	if held, exists := w.p.isHeld(parent, name); held {
		// What the kernel answers for an existing name, without asking
		// it: a second thread could remove the name in between.
		if exists && r.Op != GuardRename {
			return GuardAnswer{Errno: int32(unix.EEXIST)}, -1
		}
		return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: newPath}, -1
	}
	var err error
	switch r.Op {
	case GuardMkdir:
		err = unix.Mkdirat(parent, name, r.Mode)
	case GuardMknod:
		err = unix.Mknodat(parent, name, r.Mode, int(r.Dev))
	case GuardSymlink:
		err = unix.Symlinkat(string(r.Path1), parent, name)
	case GuardLink, GuardRename:
		oldDir, oldName := dir1, ""
		if !(r.Op == GuardLink && r.Flags&unix.AT_EMPTY_PATH != 0 && len(r.Path1) == 0) {
			var e int32
			oldDir, oldName, e = w.parent(dir1, r.Path1)
			if e != 0 {
				return GuardAnswer{Errno: e}, -1
			}
			defer unix.Close(oldDir)
		}
		// The old name goes (rename) or its inode gets a name the
		// guard does not hold (link): a held file can be neither moved
		// away nor written through a second name.
		if oldName == "" && w.p.fdRefused(oldDir, w.p.writeRefused) || oldName != "" && w.p.writeRefused(oldDir, oldName) {
			return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: r.Path1}, -1
		}
		if r.Op == GuardLink {
			err = unix.Linkat(oldDir, oldName, parent, name, int(r.Flags))
			break
		}
		// An exchange gives the old name the new one's entry too.
		if r.Flags&unix.RENAME_EXCHANGE != 0 && w.p.refused(oldDir, oldName, true) {
			return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: r.Path1}, -1
		}
		err = unix.Renameat2(oldDir, oldName, parent, name, uint(r.Flags))
	}
	return GuardAnswer{Errno: errnoOf(err)}, -1
}

// open carries out an open that creates (O_CREAT), writes or truncates
// (O_WRONLY, O_RDWR, O_TRUNC). A final symlink is followed here, not by
// the kernel: its target's name is checked like the path's. With
// truncating (truncate(2), carried out as an open for writing and
// ftruncate), only a regular file is opened: truncate(2) of anything
// else fails without opening it (a FIFO would wait for a reader).
func (w *walker) open(dir int, path []byte, flags int, mode uint32, truncating bool) (GuardAnswer, int) {
	makes := flags&unix.O_CREAT != 0
	// O_TMPFILE names a directory and makes no name (a later linkat
	// does, and stops): nothing is checked here.
	tmpfile := flags&unix.O_TMPFILE == unix.O_TMPFILE
	held := -1
	defer func() {
		if held >= 0 {
			unix.Close(held)
		}
	}()
	for {
		parent, name, e := w.parent(dir, path)
		if held >= 0 {
			unix.Close(held)
		}
		held = parent
		if e != 0 {
			return GuardAnswer{Errno: e}, -1
		}
		if !tmpfile && w.p.refused(parent, name, makes) {
			return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: path}, -1
		}
		if held, exists := w.p.isHeld(parent, name); held && !tmpfile {
			switch {
			case !exists && !makes:
				return GuardAnswer{Errno: int32(unix.ENOENT)}, -1
			case !exists:
				return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: path}, -1
			case flags&unix.O_EXCL != 0 && makes:
				return GuardAnswer{Errno: int32(unix.EEXIST)}, -1
			}
			flags &^= unix.O_CREAT // it exists: open it, never make it
		}
		if truncating {
			var st unix.Stat_t
			if err := unix.Fstatat(parent, strings.TrimRight(name, "/"), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return GuardAnswer{Errno: errnoOf(err)}, -1
			}
			switch st.Mode & unix.S_IFMT {
			case unix.S_IFREG, unix.S_IFLNK:
			case unix.S_IFDIR:
				return GuardAnswer{Errno: int32(unix.EISDIR)}, -1
			default:
				return GuardAnswer{Errno: int32(unix.EINVAL)}, -1
			}
		}
		fd, err := unix.Openat(parent, name, flags|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err != unix.ELOOP || flags&(unix.O_NOFOLLOW|unix.O_EXCL) != 0 {
			return GuardAnswer{Errno: errnoOf(err)}, fd
		}
		if onProc(parent) {
			// A magic link (/proc/PID/fd/N): it names an open file, not
			// a path, and the kernel follows it to that file.
			fd, err := unix.Openat(parent, name, flags|unix.O_CLOEXEC, mode)
			return GuardAnswer{Errno: errnoOf(err)}, fd
		}
		target, err := readlink(parent, name)
		if err != nil {
			return GuardAnswer{Errno: errnoOf(err)}, -1
		}
		if w.links++; w.links > maxLinks {
			return GuardAnswer{Errno: int32(unix.ELOOP)}, -1
		}
		dir, path = parent, target
	}
}

// heldLink reports whether obj is a file whose mode and owner are held
// for the supervisor's hard-link check: a regular file with more than
// one link, born before the run (or of unknown birth).
func (p *guardProxy) heldLink(obj int) bool {
	if p.linksBornBefore == 0 {
		return false
	}
	var st unix.Statx_t
	if err := unix.Statx(obj, "", unix.AT_EMPTY_PATH, unix.STATX_TYPE|unix.STATX_NLINK|unix.STATX_BTIME, &st); err != nil {
		return true
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink <= 1 {
		return false
	}
	return st.Mask&unix.STATX_BTIME == 0 || st.Btime.Sec*1e9+int64(st.Btime.Nsec) < p.linksBornBefore
}

// parent opens (O_PATH) the directory holding the last component of
// path, resolved from dir (from / when path is absolute) one component
// at a time, symlinks followed as the kernel would, and returns it with
// that component (and a trailing "/" when the path has one).
func (w *walker) parent(dir int, path []byte) (int, string, int32) {
	if len(path) == 0 {
		return -1, "", int32(unix.ENOENT)
	}
	var cur int
	var err error
	if path[0] == '/' {
		cur, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else if dir < 0 {
		return -1, "", int32(unix.EBADF)
	} else {
		cur, err = unix.FcntlInt(uintptr(dir), unix.F_DUPFD_CLOEXEC, 0)
	}
	if err != nil {
		return -1, "", errnoOf(err)
	}
	queue := components(string(path))
	if len(queue) == 0 {
		return cur, ".", 0
	}
	for len(queue) > 1 {
		c := queue[0]
		queue = queue[1:]
		if c == "." {
			continue
		}
		if (c == "self" || c == "thread-self") && isProcRoot(cur) {
			// The caller's, not this process's.
			mine := strconv.Itoa(int(w.pid))
			if c == "thread-self" {
				mine += "/task/" + strconv.Itoa(int(w.tid))
			}
			queue = append(components(mine), queue...)
			continue
		}
		next, err := unix.Openat(cur, c, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			unix.Close(cur)
			return -1, "", errnoOf(err)
		}
		var st unix.Stat_t
		if unix.Fstat(next, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(next)
			if w.links++; w.links > maxLinks {
				unix.Close(cur)
				return -1, "", int32(unix.ELOOP)
			}
			if onProc(cur) {
				next, err = unix.Openat(cur, c, unix.O_PATH|unix.O_CLOEXEC, 0)
				if err != nil {
					unix.Close(cur)
					return -1, "", errnoOf(err)
				}
			} else {
				target, err := readlink(cur, c)
				if err != nil {
					unix.Close(cur)
					return -1, "", errnoOf(err)
				}
				if len(target) == 0 {
					unix.Close(cur)
					return -1, "", int32(unix.ENOENT)
				}
				queue = append(components(string(target)), queue...)
				if target[0] == '/' {
					unix.Close(cur)
					if cur, err = unix.Open("/", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err != nil {
						return -1, "", errnoOf(err)
					}
				}
				continue
			}
		}
		unix.Close(cur)
		cur = next
	}
	name := queue[0]
	if path[len(path)-1] == '/' {
		name += "/"
	}
	return cur, name, 0
}

// refused reports whether name may not be made (makes) or written in
// the directory parent.
func (p *guardProxy) refused(parent int, name string, makes bool) bool {
	n := strings.TrimRight(name, "/")
	var st unix.Stat_t
	if unix.Fstat(parent, &st) != nil {
		return true
	}
	if p.private[st.Dev] {
		return p.absent[guardKey{st.Dev, st.Ino, n}]
	}
	if n == ".git" || p.absent[guardKey{st.Dev, st.Ino, n}] {
		return true
	}
	if readOnlyMount(parent) {
		// A protected path there at the start (.git/hooks): the kernel
		// refuses it (EROFS), and the run's stderr says why.
		return false
	}
	if p.names[n] || p.globbed(parent, n) || p.heldAbove(parent, n) {
		return true
	}
	if !makes {
		// Writing an existing HEAD, objects or refs makes no git
		// directory that was not one.
		return gitFileOf(parent, n)
	}
	switch n {
	case "HEAD":
		// Host git takes any directory with a HEAD (and objects and
		// refs, or a commondir) for a git directory, whatever its name:
		// a new one outside the repositories there at the start is a
		// bare repository whose config the run chose.
		return !p.inGitDir(parent)
	case "objects", "refs", "commondir":
		// The other half, beside a HEAD that is there already.
		var s unix.Stat_t
		if unix.Fstatat(parent, "HEAD", &s, unix.AT_SYMLINK_NOFOLLOW) == nil && !p.inGitDir(parent) {
			return true
		}
	}
	return gitFileOf(parent, n)
}

// isHeld reports whether name in parent is a held directory's place
// (GuardConfig.Held), and whether something is there now.
func (p *guardProxy) isHeld(parent int, name string) (held, exists bool) {
	n := strings.TrimRight(name, "/")
	var st unix.Stat_t
	if len(p.held) == 0 || unix.Fstat(parent, &st) != nil || !p.held[guardKey{st.Dev, st.Ino, n}] {
		return false, false
	}
	var s unix.Stat_t
	return true, unix.Fstatat(parent, n, &s, unix.AT_SYMLINK_NOFOLLOW) == nil
}

func components(path string) []string {
	var out []string
	for _, c := range strings.Split(path, "/") {
		if c != "" {
			out = append(out, c)
		}
	}
	return out
}

func readlink(dir int, name string) ([]byte, error) {
	buf := make([]byte, GuardMaxPath)
	n, err := unix.Readlinkat(dir, strings.TrimRight(name, "/"), buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

func onProc(fd int) bool {
	var fs unix.Statfs_t
	return unix.Fstatfs(fd, &fs) == nil && fs.Type == unix.PROC_SUPER_MAGIC
}

// isProcRoot reports whether fd is the root of a procfs.
func isProcRoot(fd int) bool {
	var st unix.Stat_t
	return onProc(fd) && unix.Fstat(fd, &st) == nil && st.Ino == 1
}
