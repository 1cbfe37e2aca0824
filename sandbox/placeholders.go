package sandbox

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

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
// Each one is made under a name of this run first, journaled with its
// inode, then renamed into place, so a supervisor that dies at any point
// has it removed by the next start (checkProtected). It is removed only
// while it is the same inode and type and still empty; anything else
// fails the check and is left for the user to look at.

// placeholder is one name made for the run, journaled.
type placeholder struct {
	Root int    `json:"root"`
	Name string `json:"name"`
	// Temp is the name it is made under before it is renamed to Name.
	Temp string `json:"temp"`
	// Ino is its device and inode once made; zero when it was not
	// (the name appeared on the host meanwhile, or cannot be made).
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
// top-level names to hold that do not exist now.
func placeholderNames(pl protectPlan, protected []string, readOnlyWorkspace bool) map[string][]string {
	out := map[string][]string{}
	for _, root := range pl.roots {
		var names []string
		if root == pl.ws && !readOnlyWorkspace {
			names = topNames(protected)
		} else {
			names = []string{".git"}
		}
		for _, n := range names {
			if !lexists(filepath.Join(root, n)) {
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

// placePlaceholders makes the journal's placeholders, records their
// inodes in it, and renames them into place. The journal holds their
// temporary names before anything is made.
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
			err = unix.Mknodat(fd, ph.Temp, unix.S_IFSOCK|0o644, 0)
		} else {
			err = unix.Mkdirat(fd, ph.Temp, 0o755)
		}
		if err != nil {
			if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
				continue // the run, as this user or less, cannot make it either
			}
			return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Temp), err)
		}
		var s unix.Stat_t
		if err := unix.Fstatat(fd, ph.Temp, &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Temp), err)
		}
		ph.Ino = [2]uint64{s.Dev, s.Ino}
	}
	if err := j.rewrite(); err != nil {
		return err
	}
	changed := false
	for i := range j.Placeholders {
		ph := &j.Placeholders[i]
		if ph.Ino == ([2]uint64{}) {
			continue
		}
		fd := fds[ph.Root]
		err := unix.Renameat2(fd, ph.Temp, fd, ph.Name, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EEXIST) {
			// Made on the host since the compile: it exists now, and the
			// view holds it read-only like any other.
			if err := unix.Unlinkat(fd, ph.Temp, unlinkFlag(ph.Socket)); err != nil {
				return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Temp), err)
			}
			ph.Ino, changed = [2]uint64{}, true
			continue
		}
		if err != nil {
			return fmt.Errorf("placeholder %s: %w", filepath.Join(j.Roots[ph.Root].Path, ph.Name), err)
		}
	}
	if changed {
		return j.rewrite()
	}
	return nil
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
// are all gone. It returns the names it had to leave (changed on the
// host during the run, or unreadable), which the check must not treat
// as the run's, and the errors that fail the check.
func removePlaceholders(j *runJournal, rootFDs []int) (map[string]bool, []error) {
	left := map[string]bool{}
	var errs []error
	for _, ph := range j.Placeholders {
		if ph.Root >= len(rootFDs) || rootFDs[ph.Root] < 0 {
			continue // its root failed the check already
		}
		fd, rootPath := rootFDs[ph.Root], j.Roots[ph.Root].Path
		if err := removePlaceholder(fd, ph.Temp, ph.Ino, ph.Socket, true); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", filepath.Join(rootPath, ph.Temp), err))
		}
		if ph.Ino == ([2]uint64{}) {
			continue // never renamed into place: what is there is not ours
		}
		if err := removePlaceholder(fd, ph.Name, ph.Ino, ph.Socket, false); err != nil {
			left[fmt.Sprint(ph.Root, "/", ph.Name)] = true
			errs = append(errs, fmt.Errorf("placeholder %s: %w; it was left in place", filepath.Join(rootPath, ph.Name), err))
		}
	}
	return left, errs
}

// removePlaceholder removes name beneath root if it is the empty
// directory (or the socket) ino. At the temporary name (temp), an entry that is not the
// placeholder is left alone: it is a plain file of the run's, not a
// protected one; with no inode journaled, the supervisor died before the
// helper started, so an empty directory there is the placeholder.
func removePlaceholder(root int, name string, ino [2]uint64, socket, temp bool) error {
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
	mine := s.Mode&unix.S_IFMT == want && (ino == [2]uint64{s.Dev, s.Ino} ||
		temp && ino == [2]uint64{} && s.Uid == uint32(unix.Geteuid()))
	if !mine {
		if temp {
			return nil
		}
		return errors.New("replaced during the run (not the directory airlock made)")
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
