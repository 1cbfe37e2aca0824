package linux

import (
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The guard proxy's calls that act on an existing name: truncate(2),
// chmod and chown, and what it refuses of them and of a link's or a
// rename's old name (a held file is neither written, made executable,
// given a second name nor moved away).

// truncate carries out truncate(2): the path is opened for writing as
// an open would be (and checked the same way), then cut to length.
func (w *walker) truncate(dir int, path []byte, length uint64) GuardAnswer {
	if int64(length) < 0 {
		return GuardAnswer{Errno: int32(unix.EINVAL)}
	}
	// Opened for writing, so the open meets every check a write does
	// (the supervisor's hard-link check refuses one of a file that may
	// have names outside the workspace). open refuses what is not a
	// regular file before opening it; O_NONBLOCK is for a FIFO put in
	// its place meanwhile, which must not wait for a reader (and which
	// ftruncate refuses with EINVAL, as truncate(2) would).
	ans, fd := w.open(dir, path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0, true)
	if fd < 0 {
		if unix.Errno(ans.Errno) == unix.ENXIO {
			ans.Errno = int32(unix.EINVAL) // such a FIFO without a reader
		}
		return ans
	}
	defer unix.Close(fd)
	return GuardAnswer{Errno: errnoOf(unix.Ftruncate(fd, int64(length)))}
}

// attr carries out a chmod or chown, which no writable tree's root may
// undergo, on the inode it checked.
func (w *walker) attr(r *GuardRequest, dir1 int) GuardAnswer {
	onFD := r.Dirs&GuardOnFD != 0 || (r.Flags&unix.AT_EMPTY_PATH != 0 && len(r.Path1) == 0)
	obj := dir1
	if !onFD {
		var e int32
		var held bool
		obj, held, e = w.object(dir1, r.Path1, r.Flags&unix.AT_SYMLINK_NOFOLLOW == 0, w.p.attrRefused)
		if held {
			return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: r.Path1}
		}
		if e != 0 {
			return GuardAnswer{Errno: e}
		}
		defer unix.Close(obj)
	} else if obj < 0 {
		return GuardAnswer{Errno: int32(unix.EBADF)}
	} else if w.p.fdRefused(obj, w.p.attrRefused) {
		return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: r.Path1}
	}
	var st unix.Stat_t
	if err := unix.Fstat(obj, &st); err != nil {
		return GuardAnswer{Errno: errnoOf(err)}
	}
	if w.p.roots[[2]uint64{st.Dev, st.Ino}] || w.p.heldLink(obj) {
		return GuardAnswer{Errno: int32(unix.EPERM), Refused: true, Name: r.Path1}
	}
	var err error
	switch {
	case r.Op == GuardChown && r.Dirs&GuardOnFD != 0:
		err = unix.Fchown(obj, int(int32(r.UID)), int(int32(r.GID)))
	case r.Op == GuardChown:
		err = unix.Fchownat(obj, "", int(int32(r.UID)), int(int32(r.GID)), unix.AT_EMPTY_PATH)
	case r.Dirs&GuardOnFD != 0:
		err = unix.Fchmod(obj, r.Mode)
	case st.Mode&unix.S_IFMT == unix.S_IFLNK:
		err = unix.EOPNOTSUPP // a symlink's mode cannot change
	default:
		err = chmodPath(obj, r.Mode)
	}
	return GuardAnswer{Errno: errnoOf(err)}
}

// chmodPath changes the mode of the inode the O_PATH descriptor obj
// holds: fchmodat2 with AT_EMPTY_PATH (Linux 6.6), else through
// /proc/self/fd, which a process that is not dumpable may follow only
// as the namespace's root (an unprivileged run's chmod then fails with
// EACCES on older kernels; it never reaches another inode).
func chmodPath(obj int, mode uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(obj), uintptr(unsafe.Pointer(&emptyPath[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
	if errno != unix.ENOSYS && errno != unix.EINVAL {
		if errno == 0 {
			return nil
		}
		return errno
	}
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(obj), mode)
}

var emptyPath = [1]byte{0}

// object opens (O_PATH) what path names, following a final symlink when
// follow is set; held: refuse says no to the name it reached (or to a
// symlink's on the way).
func (w *walker) object(dir int, path []byte, follow bool, refuse func(parent int, name string) bool) (fd int, held bool, errno int32) {
	last := -1
	defer func() {
		if last >= 0 {
			unix.Close(last)
		}
	}()
	for {
		parent, name, e := w.parent(dir, path)
		if last >= 0 {
			unix.Close(last)
		}
		last = parent
		if e != 0 {
			return -1, false, e
		}
		fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, false, errnoOf(err)
		}
		var st unix.Stat_t
		if !follow || unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
			if refuse(parent, name) {
				unix.Close(fd)
				return -1, true, 0
			}
			return fd, false, 0
		}
		unix.Close(fd)
		if onProc(parent) {
			fd, err := unix.Openat(parent, name, unix.O_PATH|unix.O_CLOEXEC, 0)
			return fd, false, errnoOf(err)
		}
		target, err := readlink(parent, name)
		if err != nil {
			return -1, false, errnoOf(err)
		}
		if w.links++; w.links > maxLinks {
			return -1, false, int32(unix.ELOOP)
		}
		dir, path = parent, target
	}
}

// writeRefused reports whether a write through the existing name in
// parent is refused.
func (p *guardProxy) writeRefused(parent int, name string) bool {
	return p.refused(parent, name, false)
}

// attrRefused reports whether a chmod or chown of name in parent is
// refused: what host git or a host tool reads (a hook made executable
// runs), but not a .git itself, whose mode git does not read.
func (p *guardProxy) attrRefused(parent int, name string) bool {
	n := strings.TrimRight(name, "/")
	var st unix.Stat_t
	if unix.Fstat(parent, &st) != nil {
		return true
	}
	if p.private[st.Dev] || readOnlyMount(parent) {
		return false
	}
	return p.names[n] || p.globbed(parent, n) || p.heldAbove(parent, n) || gitFileOf(parent, n)
}

// fdRefused reports whether refuse says no to the file fd holds, judged
// at the name the view shows for it (a pipe or socket has none).
func (p *guardProxy) fdRefused(fd int, refuse func(parent int, name string) bool) bool {
	path, ok := viewPath(fd)
	if !ok {
		return true
	}
	i := strings.LastIndexByte(path, '/')
	if i < 0 || i == len(path)-1 {
		return false // no name, or the root
	}
	dir := path[:i]
	if dir == "" {
		dir = "/"
	}
	d, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return true
	}
	defer unix.Close(d)
	var a, b unix.Stat_t
	if unix.Fstat(fd, &a) != nil || unix.Fstatat(d, path[i+1:], &b, unix.AT_SYMLINK_NOFOLLOW) != nil || a.Dev != b.Dev || a.Ino != b.Ino {
		return true // renamed meanwhile: refuse rather than judge another name
	}
	return refuse(d, path[i+1:])
}
