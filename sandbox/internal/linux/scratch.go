package linux

import (
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// scratchTmpfs is the one tmpfs behind the private HOME, /tmp and
// /dev/shm. One filesystem makes one bound: separate ones would each
// take their size, and without a memory cgroup nothing else counts what
// a tmpfs holds (RLIMIT_AS sees only mappings).
//
// It is mounted on stagingDir beneath the new root's tmpfs, so it hangs
// off the old root: it is reached only through its descriptor, and the
// old root's one detach after pivot_root takes it away, leaving only its
// binds. An unmount of its own would wait for a second RCU grace period
// (namespace_unlock), and its mount point would need a mkdir and an rmdir
// on the new root.
type scratchTmpfs struct {
	fd int // O_PATH on the tmpfs's root, or -1 without one
}

// mountScratch mounts the scratch tmpfs with the size and inode bounds of
// the first scratch mount, if there is one, on stagingDir. It has to come
// before the new root's tmpfs, which then covers it.
func mountScratch(mounts []Mount) (scratchTmpfs, error) {
	for _, m := range mounts {
		if m.Kind != MountScratch {
			continue
		}
		opts := "mode=0755"
		if m.Size > 0 {
			opts += fmt.Sprintf(",size=%d", m.Size)
		}
		if m.Inodes > 0 {
			opts += fmt.Sprintf(",nr_inodes=%d", m.Inodes)
		}
		if err := unix.Mount("tmpfs", stagingDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return scratchTmpfs{fd: -1}, fmt.Errorf("mount: %w", err)
		}
		fd, err := unix.Open(stagingDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return scratchTmpfs{fd: -1}, fmt.Errorf("open: %w", err)
		}
		return scratchTmpfs{fd: fd}, nil
	}
	return scratchTmpfs{fd: -1}, nil
}

// bind makes the scratch tmpfs's directory m.Source, with mode m.Mode,
// and moves a clone of it (nosuid and nodev as the tmpfs, noexec if
// m.NoExec, flagged while detached) to m.Target inside root.
func (s *scratchTmpfs) bind(root int, m Mount) error {
	if s.fd < 0 {
		return fmt.Errorf("no scratch tmpfs")
	}
	name := path.Clean(m.Source)
	if name == "." || strings.Contains(name, "/") || name == ".." {
		return fmt.Errorf("scratch directory %q is not a plain name", m.Source)
	}
	if err := unix.Mkdirat(s.fd, name, 0o700); err != nil {
		return err
	}
	// Mkdir's mode passes through the umask; the sticky bit of /tmp
	// does not pass at all.
	if err := unix.Fchmodat(s.fd, name, m.Mode, 0); err != nil {
		return err
	}
	tree, err := unix.OpenTree(s.fd, name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	defer unix.Close(tree)
	if m.NoExec {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOEXEC}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
			return fmt.Errorf("noexec: %w", err)
		}
	}
	rel := strings.TrimPrefix(path.Clean(m.Target), "/")
	target, err := targetIn(root, rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

func (s *scratchTmpfs) close() {
	if s.fd >= 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}
