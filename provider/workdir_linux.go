package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// workdir is a handle on a sandbox's working directory, held by airlock.
// Every file airlock moves in or out goes through it: named relative to
// the handle, never through a link, never blocking on a FIFO or a
// device, and only when it is a regular file. A run (or an earlier call
// of its scope) can leave anything under a name; a workdir never lets
// that turn into a write or a read of airlock's own elsewhere.
type workdir struct {
	f *os.File
}

// openWorkdir opens name, a directory directly under parent, as a
// handle. parent is a directory airlock made and the sandbox cannot
// write; name must not be a link.
func openWorkdir(parent *os.File, name string) (*workdir, error) {
	fd, err := openBeneath(int(parent.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return nil, fmt.Errorf("open the working directory %s: %w", name, err)
	}
	return &workdir{f: os.NewFile(uintptr(fd), name)}, nil
}

func (w *workdir) Close() error { return w.f.Close() }

// openBeneath opens name relative to dirfd without following any link
// and without blocking: openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS
// where the kernel has it (5.6), else openat with O_NOFOLLOW, which is
// the same for the one path element names are held to.
func openBeneath(dirfd int, name string, flags int, mode uint32) (int, error) {
	flags |= unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC
	for {
		fd, err := unix.Openat2(dirfd, name, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err == unix.EINTR {
			continue
		}
		if err != unix.ENOSYS {
			return fd, err
		}
		// A kernel before 5.6, or a seccomp filter that hides openat2.
		fd, err = unix.Openat(dirfd, name, flags, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// kind names what a non-regular file is, for the caller's error.
func kind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFLNK:
		return "a symbolic link"
	case unix.S_IFIFO:
		return "a FIFO"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFSOCK:
		return "a socket"
	case unix.S_IFCHR, unix.S_IFBLK:
		return "a device"
	}
	return "not a regular file"
}

// copyChunk is how much a copy moves between two looks at its context.
const copyChunk = 256 << 10

// WriteFile puts data in the working directory under name. Whatever
// is there already must be a regular file; it is replaced, never
// written through: data goes to a new file that only this call could
// have created, which is then renamed over name.
func (w *workdir) WriteFile(ctx context.Context, name string, data []byte) error {
	dirfd := int(w.f.Fd())
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG:
		return fmt.Errorf("%s in the working directory is %s (an earlier call of this scope left it); airlock writes only regular files: remove it or use another name", name, kind(st.Mode))
	case err != nil && err != unix.ENOENT:
		return fmt.Errorf("%s: %w", name, err)
	}
	tmp := ".airlock-input-" + NewID()
	fd, err := openBeneath(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("%s: create: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = copyCtx(ctx, f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, name)
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func copyCtx(ctx context.Context, f *os.File, data []byte) error {
	for len(data) > 0 {
		if err := ctx.Err(); err != nil {
			return err
		}
		n := min(len(data), copyChunk)
		if _, err := f.Write(data[:n]); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// errMissing says an output file was not there: it is left out of the
// Result without an error.
var errMissing = errors.New("no such file")

// ReadFile returns the regular file name of the working directory, at
// most max bytes of it.
func (w *workdir) ReadFile(ctx context.Context, name string, max int64) ([]byte, error) {
	fd, err := openBeneath(int(w.f.Fd()), name, unix.O_RDONLY, 0)
	switch {
	case err == unix.ENOENT:
		return nil, errMissing
	case err == unix.ELOOP || err == unix.EXDEV:
		return nil, fmt.Errorf("%s is a symbolic link; airlock returns only regular files", name)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s is %s; airlock returns only regular files", name, kind(st.Mode))
	}
	if st.Size > max {
		return nil, fmt.Errorf("%s is larger than max_output (%d bytes)", name, max)
	}
	var out []byte
	buf := make([]byte, copyChunk)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.Read(buf)
		out = append(out, buf[:n]...)
		if int64(len(out)) > max {
			return nil, fmt.Errorf("%s is larger than max_output (%d bytes)", name, max)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}
