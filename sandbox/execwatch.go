package sandbox

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/airlockhq/airlock/profile"
)

// The exec watch: with a profile that names its exec paths (strict), the
// kernel refuses an exec outside them with EACCES (a noexec mount, or
// Landlock's EXECUTE right), which no program explains. So the connect
// notifier also stops execve and execveat (seccomp.NotifierOptions
// ExecWatch), and the supervisor, before it answers CONTINUE, reads the
// path, resolves it in the sandbox's root and, when the exec boundary
// will refuse it, says so on the run's stderr and records an "exec"
// Denial.
//
// It observes and never decides: CONTINUE lets the kernel carry out the
// call with whatever the thread's memory holds by then, and the kernel's
// own checks refuse it or not. A command that rewrites the path between
// the stop and the exec can make the line wrong, never the exec allowed.
// The dynamic loader's mmap of a file on a noexec mount (ld.so /tmp/x)
// is refused without an exec, and is not reported.

// execWatch records the execs the exec boundary refuses, once per path.
type execWatch struct {
	exec []string   // the profile's exec paths
	deny []denyGlob // the profile's deny entries, when they mask programs (execmask.go)
	note func(Denial)

	mu      sync.Mutex
	seen    map[string]bool
	denials []Denial
	dropped int
}

// newExecWatch returns the watch for a profile with exec paths or with
// deny entries that mask programs, else nil.
func newExecWatch(s profile.Spec, note func(Denial)) *execWatch {
	w := &execWatch{exec: s.Filesystem.Exec, note: note, seen: map[string]bool{}}
	if masksPrograms(s) {
		w.deny = resolvedGlobs(s.Filesystem.Deny)
	}
	if len(w.exec) == 0 && len(w.deny) == 0 {
		return nil
	}
	return w
}

// execWatched reports whether runs of s have the exec watch.
func execWatched(s profile.Spec) bool { return len(s.Filesystem.Exec) > 0 || masksPrograms(s) }

func isExecCall(nr int32) bool {
	return nr == int32(unix.SYS_EXECVE) || nr == int32(unix.SYS_EXECVEAT)
}

// observe looks at one stopped exec; the caller answers CONTINUE.
func (w *execWatch) observe(n *seccompNotif) {
	if w == nil {
		return
	}
	tid := int(n.pid)
	dirfd, ptr, flags := int32(unix.AT_FDCWD), n.args[0], uint64(0)
	if n.nr == int32(unix.SYS_EXECVEAT) {
		dirfd, ptr, flags = int32(n.args[0]), n.args[1], n.args[4]
	}
	path, ok := readCString(tid, ptr)
	if !ok {
		return
	}
	fd, ok := openExecTarget(tid, dirfd, path, flags)
	if !ok {
		return // not found: the command's own error says so
	}
	defer unix.Close(fd)
	if view, reason := w.maskedExec(fd); reason != "" {
		w.record(view, reason)
		return
	}
	if len(w.exec) == 0 {
		return
	}
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o111 == 0 {
		return // not a program: refused whatever the profile
	}
	var buf [unix.PathMax]byte
	k, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err != nil || k >= len(buf) {
		return
	}
	view := strings.TrimSuffix(string(buf[:k]), " (deleted)")
	var fs unix.Statfs_t
	noexec := unix.Fstatfs(fd, &fs) == nil && fs.Flags&unix.ST_NOEXEC != 0
	if !noexec && withinAny(w.exec, view) {
		return
	}
	w.record(view, "exec refused: outside the profile's exec paths ("+strings.Join(w.exec, ", ")+")")
}

// openExecTarget opens, O_PATH in the thread's root, the file an exec
// names: path from the thread's cwd or dirfd, or with AT_EMPTY_PATH and
// an empty path the descriptor itself.
func openExecTarget(tid int, dirfd int32, path string, flags uint64) (int, bool) {
	proc := "/proc/" + strconv.Itoa(tid)
	if path == "" {
		if flags&unix.AT_EMPTY_PATH == 0 || dirfd < 0 {
			return -1, false
		}
		fd, err := unix.Open(proc+"/fd/"+strconv.Itoa(int(dirfd)), unix.O_PATH|unix.O_CLOEXEC, 0)
		return fd, err == nil
	}
	if !strings.HasPrefix(path, "/") {
		base := proc + "/cwd"
		if dirfd != unix.AT_FDCWD {
			base = proc + "/fd/" + strconv.Itoa(int(dirfd))
		}
		dir, err := os.Readlink(base)
		if err != nil || !strings.HasPrefix(dir, "/") || strings.HasSuffix(dir, " (deleted)") {
			return -1, false
		}
		path = dir + "/" + path
	}
	root, err := unix.Open(proc+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, false
	}
	defer unix.Close(root)
	fd, err := unix.Openat2(root, path, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	return fd, err == nil
}

// readCString reads the NUL-terminated string at ptr of thread tid, up to
// PATH_MAX, a page at a time (the string may end before an unmapped one).
func readCString(tid int, ptr uint64) (string, bool) {
	const page = 4096
	var out []byte
	for len(out) < unix.PathMax {
		n := page - int(ptr%page)
		buf := make([]byte, n)
		local := []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}
		remote := []unix.RemoteIovec{{Base: uintptr(ptr), Len: n}}
		if got, err := unix.ProcessVMReadv(tid, local, remote, 0); err != nil || got != n {
			return "", false
		}
		if i := strings.IndexByte(string(buf), 0); i >= 0 {
			return string(append(out, buf[:i]...)), true
		}
		out = append(out, buf...)
		ptr += uint64(n)
	}
	return "", false
}

func (w *execWatch) record(path, reason string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.seen[path]:
		return
	case len(w.denials) >= maxDistinctDenials:
		w.dropped++
		return
	}
	w.seen[path] = true
	d := Denial{Kind: "exec", Target: path, Reason: reason, Live: w.note != nil}
	w.denials = append(w.denials, d)
	if w.note != nil {
		w.note(d)
	}
}

// take returns the denials recorded; safe on a nil watch.
func (w *execWatch) take() []Denial {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.denials
	if w.dropped > 0 {
		out = append(out, Denial{Kind: "exec", Target: "*", Reason: strconv.Itoa(w.dropped) + " more distinct execs refused, not listed", Live: w.note != nil})
	}
	w.denials, w.dropped = nil, 0
	return out
}
