package linux

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// scratchDir is where the scratch tmpfs is mounted on the new root while
// the view is built; detach removes it, and the binds keep the tmpfs.
const scratchDir = stagingDir + "/.scratch"

// scratchTmpfs is the one tmpfs behind the private HOME, /tmp and
// /dev/shm. One filesystem makes one bound: separate ones would each
// take their size, and without a memory cgroup nothing else counts what
// a tmpfs holds (RLIMIT_AS sees only mappings).
type scratchTmpfs struct {
	mounted bool
}

// bind creates the scratch tmpfs on first use, then binds its directory
// m.Source, made with mode m.Mode, at m.Target inside root.
func (s *scratchTmpfs) bind(root int, m Mount) error {
	if !s.mounted {
		if err := unix.Mkdir(scratchDir, 0o700); err != nil {
			return err
		}
		opts := "mode=0755"
		if m.Size > 0 {
			opts += fmt.Sprintf(",size=%d", m.Size)
		}
		if m.Inodes > 0 {
			opts += fmt.Sprintf(",nr_inodes=%d", m.Inodes)
		}
		if err := unix.Mount("tmpfs", scratchDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
			return fmt.Errorf("mount: %w", err)
		}
		s.mounted = true
	}
	name := path.Clean(m.Source)
	if name == "." || strings.Contains(name, "/") || name == ".." {
		return fmt.Errorf("scratch directory %q is not a plain name", m.Source)
	}
	src := scratchDir + "/" + name
	if err := unix.Mkdir(src, 0o700); err != nil {
		return err
	}
	// Mkdir's mode passes through the umask; the sticky bit of /tmp
	// does not pass at all.
	if err := unix.Chmod(src, m.Mode); err != nil {
		return err
	}
	rel := strings.TrimPrefix(path.Clean(m.Target), "/")
	target, err := targetIn(root, rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(target)
	if err := unix.Mount(src, fmt.Sprintf("/proc/self/fd/%d", target), "", unix.MS_BIND, ""); err != nil {
		return err
	}
	if m.NoExec {
		fd, err := openIn(root, rel)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOEXEC}
		return unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr)
	}
	return nil
}

// detach takes the scratch tmpfs off the new root, leaving only its
// binds, so nothing in the view reaches the other directories.
func (s *scratchTmpfs) detach() error {
	if !s.mounted {
		return nil
	}
	if err := unix.Unmount(scratchDir, unix.MNT_DETACH); err != nil {
		return err
	}
	if err := unix.Rmdir(scratchDir); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}
