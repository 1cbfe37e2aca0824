package linux

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// stagingDir is where the new root is assembled before pivot_root. Any
// existing directory works: the tmpfs mounted on it exists only in this
// mount namespace, and bind sources are opened before it hides anything.
const stagingDir = "/tmp"

// buildMountView replaces the root with a fresh tmpfs holding only the
// mounts listed, then pivots into it and drops the old root. Masks are
// mode 000, or with readableMasks (the supervisor refuses and reports
// every open of them, maskwatch.go) empty and readable: the kernel checks
// the mode before the supervisor is asked, and would refuse unseen.
func buildMountView(mounts []Mount, readableMasks bool) error {
	// Nothing done here may propagate back to the host.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make / private: %w", err)
	}
	// Clone every bind source now, while host paths are still reachable;
	// the clones are detached mount trees held by file descriptors.
	trees := make([]int, len(mounts))
	for i, m := range mounts {
		trees[i] = -1
		if m.Kind != MountBind {
			continue
		}
		if m.TreeFD > 0 {
			trees[i] = m.TreeFD
			continue
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, m.Source, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			if m.Optional && errors.Is(err, unix.ENOENT) {
				continue
			}
			return fmt.Errorf("clone %s: %w", m.Source, err)
		}
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_NOSUID}
		if m.ReadOnly {
			attr.Attr_set |= unix.MOUNT_ATTR_RDONLY
		}
		if m.NoExec {
			attr.Attr_set |= unix.MOUNT_ATTR_NOEXEC
		}
		if err := unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("set flags on %s: %w", m.Source, err)
		}
		trees[i] = fd
	}

	scratch, err := mountScratch(mounts)
	if err != nil {
		return fmt.Errorf("scratch tmpfs: %w", err)
	}
	defer scratch.close()
	if err := unix.Mount("tmpfs", stagingDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("new root tmpfs: %w", err)
	}
	root, err := unix.Open(stagingDir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open new root: %w", err)
	}
	defer unix.Close(root)
	// An empty, unreadable file and directory to bind over masked paths.
	maskFile, maskDir := stagingDir+"/.mask-file", stagingDir+"/.mask-dir"
	fileMode, dirMode := uint32(0), uint32(0)
	if readableMasks {
		fileMode, dirMode = 0o444, 0o555
	}
	if err := writeFile(maskFile, nil, fileMode); err != nil {
		return fmt.Errorf("mask file: %w", err)
	}
	if err := unix.Mkdir(maskDir, 0); err != nil {
		return fmt.Errorf("mask dir: %w", err)
	}
	// Chmod, not the umask-filtered mode above.
	if err := unix.Chmod(maskDir, dirMode); err != nil {
		return fmt.Errorf("mask dir: %w", err)
	}

	masks := masker{file: maskFile, dir: maskDir, placed: [2]int{-1, -1}}
	defer masks.close()
	for i, m := range mounts {
		if m.Kind == MountBind && trees[i] < 0 {
			continue // optional source missing
		}
		var err error
		if m.Kind == MountScratch {
			err = scratch.bind(root, m)
		} else {
			err = applyMount(root, m, trees[i], &masks)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", m.Kind, m.Target, err)
		}
		if trees[i] >= 0 {
			unix.Close(trees[i])
		}
	}
	if err := unix.Unlink(maskFile); err != nil {
		return fmt.Errorf("remove mask source: %w", err)
	}
	if err := unix.Rmdir(maskDir); err != nil {
		return fmt.Errorf("remove mask source: %w", err)
	}

	// pivot_root(".", ".") stacks the old root beneath the new one; a lazy
	// unmount then drops it, and the scratch tmpfs beneath the new root's
	// with it, so no path leads back to the host tree.
	scratch.close()
	if err := unix.Chdir(stagingDir); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("chdir /: %w", err)
	}
	// The root itself holds only mount points: make it read-only so the
	// command cannot litter it.
	ro := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &ro); err != nil {
		return fmt.Errorf("read-only root: %w", err)
	}
	return nil
}

// applyMount performs one step of the view. Targets are resolved inside
// the new root (RESOLVE_IN_ROOT), so a symlink planted in the workspace
// cannot redirect a mount onto the host's tree.
func applyMount(root int, m Mount, tree int, masks *masker) error {
	rel := strings.TrimPrefix(path.Clean(m.Target), "/")
	switch m.Kind {
	case MountSymlink:
		if err := mkdirAllIn(root, path.Dir(rel)); err != nil {
			return err
		}
		return unix.Symlinkat(m.Source, root, rel)
	case MountDir:
		return mkdirAllIn(root, rel)
	case MountReadOnly:
		return readOnlyInPlace(root, rel, m.Optional)
	case MountPin:
		return cloneInPlace(root, rel, m.Optional, false)
	case MountFile:
		return fileMount(root, rel, m)
	}

	var target int
	switch m.Kind {
	case MountBind:
		var st unix.Stat_t
		if err := unix.Fstat(tree, &st); err != nil {
			return err
		}
		target, err := targetIn(root, rel, st.Mode&unix.S_IFMT == unix.S_IFDIR)
		if err != nil {
			return err
		}
		defer unix.Close(target)
		return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	case MountMask:
		// Masks land on paths that exist in the view; their type decides
		// which placeholder hides them.
		target, err := openIn(root, rel)
		if err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil
			}
			return err
		}
		defer unix.Close(target)
		var st unix.Stat_t
		if err := unix.Fstat(target, &st); err != nil {
			return err
		}
		return masks.mask(target, st.Mode&unix.S_IFMT == unix.S_IFDIR)
	default:
		var err error
		if target, err = targetIn(root, rel, true); err != nil {
			return err
		}
		defer unix.Close(target)
	}
	at := fmt.Sprintf("/proc/self/fd/%d", target)

	switch m.Kind {
	case MountTmpfs:
		mode := m.Mode
		if mode == 0 {
			mode = 0o755
		}
		opts := fmt.Sprintf("mode=%o", mode)
		if m.Size > 0 {
			opts += fmt.Sprintf(",size=%d", m.Size)
		}
		if m.Inodes > 0 {
			opts += fmt.Sprintf(",nr_inodes=%d", m.Inodes)
		}
		flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV)
		if m.NoExec {
			flags |= unix.MS_NOEXEC
		}
		return unix.Mount("tmpfs", at, "tmpfs", flags, opts)
	case MountProc:
		return unix.Mount("proc", at, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	case MountDevpts:
		return unix.Mount("devpts", at, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

// masker places masks: the empty file or directory bound, read-only,
// nosuid and nodev, over a target.
type masker struct {
	file, dir string
	// placed holds, for the file [0] and the directory [1], the first
	// mask placed, or -1.
	placed [2]int
}

// mask binds the file or, if dir, the directory mask over target. The
// first of each kind is a clone of its source that gets its flags while
// detached and is then moved into place, so no lookup between the bind
// and the flags could land elsewhere and no syscall is spent finding the
// new mount again. Every later one is a clone of that first mask, by its
// descriptor (no lookup), which carries its flags: one open_tree and one
// move_mount a mask.
func (m *masker) mask(target int, dir bool) error {
	kind, src := 0, m.file
	if dir {
		kind, src = 1, m.dir
	}
	if first := m.placed[kind]; first >= 0 {
		tree, err := unix.OpenTree(first, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH)
		if err != nil {
			return fmt.Errorf("clone mask: %w", err)
		}
		defer unix.Close(tree)
		return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
	}
	tree, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("clone mask: %w", err)
	}
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH, &attr); err != nil {
		unix.Close(tree)
		return fmt.Errorf("set read-only: %w", err)
	}
	if err := unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH); err != nil {
		unix.Close(tree)
		return err
	}
	// Moved, the descriptor is the mask's mount in the view.
	m.placed[kind] = tree
	return nil
}

func (m *masker) close() {
	for i, fd := range m.placed {
		if fd >= 0 {
			unix.Close(fd)
		}
		m.placed[i] = -1
	}
}

// remountReadOnly makes the mount now on top of rel read-only. It reopens
// rel so that the lookup lands on the new mount, not the one beneath.
func remountReadOnly(root int, rel string) error {
	fd, err := openIn(root, rel)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
	return unix.MountSetattr(fd, "", unix.AT_EMPTY_PATH, &attr)
}

func openIn(root int, rel string) (int, error) {
	if rel == "" {
		rel = "."
	}
	return unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// targetIn returns a descriptor on rel inside root, the mount point of
// one step, making rel first (a directory, or an empty file) with its
// parents where it is missing. The caller closes it. It is the lookup
// that found rel, or the new file's own descriptor (created with O_EXCL
// and O_NOFOLLOW, so the file is the one made here), so the step mounts
// on what was checked without looking rel up again. A missing rel is
// made beneath its directory's descriptor (the root's own for a name at
// the top), not by a walk that opens each component again.
func targetIn(root int, rel string, dir bool) (int, error) {
	if fd, err := openIn(root, rel); err == nil {
		return fd, nil
	}
	parent := root
	if d := path.Dir(rel); d != "." {
		fd, err := dirIn(root, d)
		if err != nil {
			return -1, err
		}
		defer unix.Close(fd)
		parent = fd
	}
	name := path.Base(rel)
	if dir {
		if err := unix.Mkdirat(parent, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("create mount point %s: %w", rel, err)
		}
		return openIn(root, rel)
	}
	fd, err := unix.Openat(parent, name, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return -1, fmt.Errorf("create mount point: %w", err)
	}
	return fd, nil
}

// dirIn opens the directory rel inside root (as openDirIn), making it
// and its missing parents first.
func dirIn(root int, rel string) (int, error) {
	fd, err := openDirIn(root, rel)
	if !errors.Is(err, unix.ENOENT) {
		return fd, err
	}
	if err := mkdirAllIn(root, rel); err != nil {
		return -1, err
	}
	return openDirIn(root, rel)
}

func openDirIn(root int, rel string) (int, error) {
	if rel == "" || rel == "." {
		return unix.Openat(root, ".", unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_RDONLY, 0)
	}
	return unix.Openat2(root, rel, &unix.OpenHow{
		Flags:   unix.O_DIRECTORY | unix.O_CLOEXEC | unix.O_RDONLY,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
}

// mkdirAllIn creates every missing directory of rel inside root, one
// component at a time and without following symlinks out of root.
func mkdirAllIn(root int, rel string) error {
	if rel == "" || rel == "." {
		return nil
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		sub := strings.Join(parts[:i+1], "/")
		if fd, err := openIn(root, sub); err == nil {
			unix.Close(fd)
			continue
		}
		parent, err := openDirIn(root, strings.Join(parts[:i], "/"))
		if err != nil {
			return fmt.Errorf("open %s: %w", strings.Join(parts[:i], "/"), err)
		}
		err = unix.Mkdirat(parent, parts[i], 0o755)
		unix.Close(parent)
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("create mount point %s: %w", sub, err)
		}
	}
	return nil
}

// readOnlyInPlace clones the mount tree at rel (inside the new root) and
// moves the clone, read-only, on top of the same place.
func readOnlyInPlace(root int, rel string, optional bool) error {
	return cloneInPlace(root, rel, optional, true)
}

// cloneInPlace clones the mount tree at rel and moves the clone on top
// of the same place, read-only if ro.
func cloneInPlace(root int, rel string, optional, ro bool) error {
	target, err := openIn(root, rel)
	if err != nil {
		if optional && errors.Is(err, unix.ENOENT) {
			return nil
		}
		return err
	}
	defer unix.Close(target)
	tree, err := unix.OpenTree(target, "", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_EMPTY_PATH|unix.AT_RECURSIVE)
	if err != nil {
		return fmt.Errorf("clone: %w", err)
	}
	defer unix.Close(tree)
	if ro {
		attr := unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV}
		if err := unix.MountSetattr(tree, "", unix.AT_EMPTY_PATH|unix.AT_RECURSIVE, &attr); err != nil {
			return fmt.Errorf("set read-only: %w", err)
		}
	}
	return unix.MoveMount(tree, "", target, "", unix.MOVE_MOUNT_F_EMPTY_PATH|unix.MOVE_MOUNT_T_EMPTY_PATH)
}

// fileMount binds a read-only file holding m.Content at rel. The content
// is written on the new root's tmpfs and unlinked once bound, so it exists
// only as the mount. An Optional file is skipped when its mount point
// cannot be made (a read-only parent without the file).
func fileMount(root int, rel string, m Mount) error {
	target, err := targetIn(root, rel, false)
	if err != nil {
		if m.Optional {
			return nil
		}
		return err
	}
	defer unix.Close(target)
	src := stagingDir + "/.file-content"
	if err := writeFile(src, []byte(m.Content), 0o444); err != nil {
		return err
	}
	defer unix.Unlink(src)
	if err := unix.Mount(src, fmt.Sprintf("/proc/self/fd/%d", target), "", unix.MS_BIND, ""); err != nil {
		return err
	}
	return remountReadOnly(root, rel)
}

// writeFile makes the file name, which must not exist yet, holding data,
// with mode exactly (not filtered by the umask). It goes without package
// os, whose first file starts the runtime's poller (epoll_create1,
// eventfd2 and a refused epoll_ctl) and takes four fcntl calls a file.
func writeFile(name string, data []byte, mode uint32) error {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	for len(data) > 0 {
		n, err := unix.Write(fd, data)
		if err != nil {
			return err
		}
		data = data[n:]
	}
	return unix.Fchmod(fd, mode)
}
