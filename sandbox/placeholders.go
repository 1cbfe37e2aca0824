package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Placeholders keep a protected name that is absent at the start from
// being made by the run. Before the helper starts, the supervisor makes
// an inert entry at each such name at the top of a writable tree (the
// profile's protected names at the workspace, .git at every other
// writable tree); the view mounts it read-only like any protected path
// that exists, so the run can neither create inside it nor rename,
// remove or replace it (EROFS, EBUSY).
//
// Every placeholder but .git (a socket, placeholderMode) is an empty
// directory, for file names too (.mcp.json, .envrc): git neither lists
// an empty directory as untracked nor adds it, so a `git add -A` in the
// run (or on the host meanwhile) commits nothing of it, and no host tool
// reads an empty file as its (empty) configuration.
//
// A placeholder is known by what it is, not by who made it: the sticky
// bit (placeholderMark) on an empty directory or a socket at a
// top-level protected name. Any run in the workspace, by any user, takes
// one it finds for a name absent at its start, shares it, and removes it
// when it is the last run there. Runs of one writable tree share it
// under a lock on the tree's directory (lockRoots): each run holds it
// shared from before its placeholders are made until its end-of-run
// check, and removes placeholders only when it gets it exclusively,
// that is, when no other run of the tree is going. So two overlapping
// runs never take each other's placeholder away, in either order of
// ending, and one whose supervisor died (SIGKILL) leaves placeholders
// that the next run there, by anyone, removes.
//
// It is removed only while it is still empty and marked; anything else
// fails the check and is left for the user to look at.

// placeholderMark tells a placeholder from an entry of the user's: no
// editor, package manager or git makes a sticky directory or a socket
// at these names.
const placeholderMark = unix.S_ISVTX

// placeholder is one name held for the run, journaled.
type placeholder struct {
	Root int    `json:"root"`
	Name string `json:"name"`
	// Ino is its device and inode once made or taken over from another
	// run; zero when it was not (the name appeared on the host
	// meanwhile, or cannot be made).
	Ino [2]uint64 `json:"ino,omitempty"`
	// Socket: a socket inode (.git), not a directory.
	Socket bool `json:"socket,omitempty"`
}

// placeholderMode is the file type of the placeholder for name. .git is
// a socket inode (mknod, nothing listens): git's discovery skips a .git
// that is neither a directory nor a regular file and goes on upward, as
// it does a .git directory that is not a repository; but go build takes
// any .git directory for a repository and fails to stamp it, and an
// empty .git file makes git fail. Everything else is a directory.
func placeholderMode(name string) uint32 {
	if name == ".git" {
		return unix.S_IFSOCK
	}
	return unix.S_IFDIR
}

// placeholderNames lists, for each writable tree of the plan, the
// top-level names to hold that do not exist now. With guarded, the
// create guard holds them (each is an absent name of the plan, refused
// when the run makes it): only placeholders already there (another
// run's, or one a killed supervisor left) are listed, so this run shares
// them and the last run removes them, and none is made.
func placeholderNames(pl protectPlan, look *nameLook, protected []string, readOnlyWorkspace, guarded bool) map[string][]string {
	out := map[string][]string{}
	for _, root := range pl.roots {
		var names []string
		if root == pl.ws && !readOnlyWorkspace {
			names = topNames(protected)
		} else {
			names = []string{".git"}
		}
		for _, n := range names {
			path := filepath.Join(root, n)
			if guarded && !look.lexists(path) {
				continue
			}
			if look.heldAbsent(path) {
				out[root] = append(out[root], n)
			}
		}
	}
	return out
}

// topNames are the first components of the protected entries that hold
// no wildcard there (.git for .git/hooks and .git/modules/*/config).
func topNames(protected []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, rel := range protected {
		top, _, _ := strings.Cut(filepath.ToSlash(filepath.Clean(rel)), "/")
		if top == "" || top == "." || top == ".." || hasGlob(top) || seen[top] {
			continue
		}
		seen[top] = true
		out = append(out, top)
	}
	return out
}

// nameLook answers, for one plan, whether a name exists and whether it
// is held absent (heldAbsent). planProtection and placeholderNames ask
// about each top-level name up to three times; one lstat answers them
// all, as it would a moment later.
type nameLook struct {
	exists, held map[string]bool
}

func newNameLook() *nameLook {
	return &nameLook{exists: map[string]bool{}, held: map[string]bool{}}
}

func (l *nameLook) lexists(path string) bool {
	v, ok := l.exists[path]
	if !ok {
		v = lexists(path)
		l.exists[path] = v
	}
	return v
}

// heldAbsent reports whether the top-level name path is absent for the
// run's protection: missing, or another run's placeholder, which this
// run takes over (placePlaceholders) and judges as absent at its start.
func (l *nameLook) heldAbsent(path string) bool {
	v, ok := l.held[path]
	if !ok {
		v = !l.lexists(path) || isPlaceholder(path)
		l.held[path] = v
	}
	return v
}

// isPlaceholder reports whether path is a placeholder (isPlaceholderAt).
func isPlaceholder(path string) bool {
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return isPlaceholderAt(fd, filepath.Base(path))
}

// isPlaceholderAt reports whether name beneath dir is a placeholder: a
// marked socket, or a marked directory with nothing in it.
func isPlaceholderAt(dir int, name string) bool {
	var s unix.Stat_t
	if unix.Fstatat(dir, name, &s, unix.AT_SYMLINK_NOFOLLOW) != nil || s.Mode&placeholderMark == 0 {
		return false
	}
	switch s.Mode & unix.S_IFMT {
	case unix.S_IFSOCK:
		return true
	case unix.S_IFDIR:
		fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return false
		}
		defer unix.Close(fd)
		buf := make([]byte, 4096)
		for {
			n, err := unix.Getdents(fd, buf)
			if err != nil {
				return false
			}
			if n <= 0 {
				return true
			}
			var names []string
			_, _, names = unix.ParseDirent(buf[:n], -1, names)
			if len(names) > 0 {
				return false
			}
		}
	}
	return false
}

// lockRoots takes the shared lock of every writable tree for the run
// (the package comment): a run that is removing placeholders holds it
// exclusively for a moment, so this waits for that, but not for ever, as
// anything that can open the directory can lock it.
func lockRoots(roots []string) ([]int, error) {
	var fds []int
	for _, r := range roots {
		fd, err := unix.Open(r, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			closeAll(fds)
			return nil, fmt.Errorf("open %s: %w", r, err)
		}
		fds = append(fds, fd)
		for i := 0; ; i++ {
			err = unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB)
			if err == nil {
				break
			}
			if !errors.Is(err, unix.EWOULDBLOCK) || i == lockTries {
				closeAll(fds)
				return nil, fmt.Errorf("lock %s: %w (something holds an exclusive flock on the directory; airlock holds one only for a moment, while it removes placeholders)", r, err)
			}
			time.Sleep(lockWait)
		}
	}
	return fds, nil
}

// sameRoots checks that the locked directories are the trees the
// snapshot recorded (none was replaced in between).
func sameRoots(fds []int, roots []rootState) error {
	for i, fd := range fds {
		var s unix.Stat_t
		if err := unix.Fstat(fd, &s); err != nil || i >= len(roots) || [2]uint64{s.Dev, s.Ino} != roots[i].Ino {
			return fmt.Errorf("a writable tree was replaced while the run started")
		}
	}
	return nil
}

const (
	lockTries = 3000
	lockWait  = 10 * time.Millisecond
)

// placePlaceholders makes the journal's placeholders, or takes over the
// ones another run made, records their inodes and journals them. The
// roots must be locked (lockRoots). Each is made at its name in one
// call, already marked, so one left by a supervisor that died at any
// point is known as a placeholder by the next run there.
func placePlaceholders(j *runJournal) error {
	if len(j.Placeholders) == 0 {
		return nil
	}
	fds := map[int]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for i := range j.Placeholders {
		ph := &j.Placeholders[i]
		fd, ok := fds[ph.Root]
		if !ok {
			var err error
			fd, err = openRootAs(j.Roots[ph.Root])
			if err != nil {
				return err
			}
			fds[ph.Root] = fd
		}
		var err error
		if ph.Socket {
			err = unix.Mknodat(fd, ph.Name, unix.S_IFSOCK|placeholderMark|0o644, 0)
		} else {
			err = unix.Mkdirat(fd, ph.Name, placeholderMark|0o755)
			if err == nil {
				// Past the umask: any user's run must be able to see it is
				// empty.
				err = unix.Fchmodat(fd, ph.Name, placeholderMark|0o755, 0)
			}
		}
		switch {
		case errors.Is(err, unix.EEXIST) && !isPlaceholderAt(fd, ph.Name):
			// Made on the host since the compile: it exists now, and the
			// view holds it read-only like any other.
			continue
		case errors.Is(err, unix.EEXIST):
			// Another run's, or one a dead supervisor left: shared.
		case errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS):
			continue // the run, as this user or less, cannot make it either
		case err != nil:
			return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Name), err)
		}
		var s unix.Stat_t
		if err := unix.Fstatat(fd, ph.Name, &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Name), err)
		}
		ph.Ino = [2]uint64{s.Dev, s.Ino}
	}
	return j.rewrite()
}

// openRootAs opens a writable tree for making or removing placeholders,
// if it is still the directory the run started with.
func openRootAs(r rootState) (int, error) {
	fd, err := unix.Open(r.Path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open %s: %w", r.Path, err)
	}
	var s unix.Stat_t
	if err := unix.Fstat(fd, &s); err != nil || s.Dev != r.Ino[0] || s.Ino != r.Ino[1] {
		unix.Close(fd)
		return -1, fmt.Errorf("%s is no longer the directory the run started with", r.Path)
	}
	return fd, nil
}

// removePlaceholders removes the placeholders of a run whose processes
// are all gone, in each tree where no other run is going. It returns the
// names it left (still another run's, changed on the host during the
// run, or unreadable), which the check must not treat as the run's, and
// the errors that fail the check. rootFDs are the check's descriptors of
// the trees (checkRoot); the run's own shared locks, when it still holds
// them (j.locks), are what it turns exclusive.
func removePlaceholders(j *runJournal, rootFDs []int) (map[string]bool, []error) {
	left := map[string]bool{}
	var errs []error
	alone := map[int]bool{}
	for ri := range j.Roots {
		if ri >= len(rootFDs) || rootFDs[ri] < 0 {
			continue
		}
		fd := rootFDs[ri]
		if ri < len(j.locks) && j.locks[ri] >= 0 {
			fd = j.locks[ri]
		}
		// A conversion that fails drops the shared lock (flock(2)); the
		// run is over, and the run still going removes them.
		alone[ri] = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil
	}
	for _, ph := range j.Placeholders {
		if ph.Root >= len(rootFDs) || rootFDs[ph.Root] < 0 {
			continue // its root failed the check already
		}
		key := fmt.Sprint(ph.Root, "/", ph.Name)
		if ph.Ino == ([2]uint64{}) {
			continue // never made: what is there is not ours
		}
		if !alone[ph.Root] {
			left[key] = true // another run of the tree still holds it
			continue
		}
		fd, rootPath := rootFDs[ph.Root], j.Roots[ph.Root].Path
		if err := removePlaceholder(fd, ph.Name, ph.Socket); err != nil {
			left[key] = true
			errs = append(errs, fmt.Errorf("placeholder %s: %w; it was left in place", filepath.Join(rootPath, ph.Name), err))
		}
	}
	return left, errs
}

// removePlaceholder removes name beneath root if it is a placeholder of
// its kind.
func removePlaceholder(root int, name string, socket bool) error {
	var s unix.Stat_t
	err := unix.Fstatat(root, name, &s, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	want := uint32(unix.S_IFDIR)
	if socket {
		want = unix.S_IFSOCK
	}
	if s.Mode&unix.S_IFMT != want || s.Mode&placeholderMark == 0 {
		return errors.New("replaced during the run (not the placeholder airlock made)")
	}
	err = unix.Unlinkat(root, name, unlinkFlag(socket))
	if errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST) {
		return errors.New("written into on the host during the run (no longer empty)")
	}
	return err
}

func lexists(path string) bool {
	var s unix.Stat_t
	return !errors.Is(unix.Lstat(path, &s), unix.ENOENT)
}

func unlinkFlag(socket bool) int {
	if socket {
		return 0
	}
	return unix.AT_REMOVEDIR
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}
