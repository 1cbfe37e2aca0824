package rules

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// appendBeneath is Append for a Writer with a Root: it walks from Root to
// the rule file's directory one name at a time (creating what is missing)
// and opens every file relative to that directory, never following a
// symlink, so nothing it reads or writes is outside Root.
func (w Writer) appendBeneath(recs []NewRecord) error {
	rel, err := filepath.Rel(w.Root, w.Path)
	if err != nil || !filepath.IsLocal(rel) {
		return fmt.Errorf("rules: %s is not inside %s; not writing there", w.Path, w.Root)
	}
	dir, err := openDirBeneath(w.Root, filepath.Dir(rel))
	if err != nil {
		return fmt.Errorf("rules: %s: %w", w.Path, err)
	}
	defer dir.Close()
	dfd := int(dir.Fd())
	base := filepath.Base(rel)

	lockFD, err := unix.Openat(dfd, base+".lock", unix.O_CREAT|unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("rules: lock %s: %w", w.Path, beneathError(err))
	}
	lock := os.NewFile(uintptr(lockFD), w.Path+".lock")
	defer lock.Close()
	if err := flock(lock); err != nil {
		return fmt.Errorf("rules: lock %s: %w", w.Path, err)
	}

	var old []byte
	switch fd, err := unix.Openat(dfd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); {
	case err == nil:
		f := os.NewFile(uintptr(fd), w.Path)
		old, err = io.ReadAll(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("rules: read %s: %w", w.Path, err)
		}
	case errors.Is(err, unix.ENOENT):
	default:
		return fmt.Errorf("rules: read %s: %w", w.Path, beneathError(err))
	}
	content, err := merged(w.Path, old, recs)
	if err != nil || content == nil {
		return err
	}

	suffix := make([]byte, 8)
	if _, err := rand.Read(suffix); err != nil {
		return err
	}
	tmpName := "." + base + ".tmp" + hex.EncodeToString(suffix)
	tfd, err := unix.Openat(dfd, tmpName, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("rules: write %s: %w", w.Path, err)
	}
	tmp := os.NewFile(uintptr(tfd), tmpName)
	defer unix.Unlinkat(dfd, tmpName, 0) // after a successful rename this finds nothing
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: write %s: %w", w.Path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("rules: sync %s: %w", w.Path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("rules: write %s: %w", w.Path, err)
	}
	// renameat replaces the name itself: a symlink at base would be
	// replaced, never followed.
	if err := unix.Renameat(dfd, tmpName, dfd, base); err != nil {
		return fmt.Errorf("rules: replace %s: %w", w.Path, err)
	}
	if err := dir.Sync(); err != nil {
		return fmt.Errorf("rules: sync %s: %w", filepath.Dir(w.Path), err)
	}
	return nil
}

// openDirBeneath opens root, then each name of rel below it, creating a
// missing directory (0700) and refusing a symlink anywhere on the way.
func openDirBeneath(root, rel string) (*os.File, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, beneathError(err))
	}
	at := root
	if rel != "." {
		for _, name := range strings.Split(rel, string(filepath.Separator)) {
			if name == "" || name == "." || name == ".." {
				unix.Close(fd)
				return nil, fmt.Errorf("%q is not a plain name under %s", name, at)
			}
			at = filepath.Join(at, name)
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return nil, fmt.Errorf("create %s: %w", at, err)
			}
			next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			unix.Close(fd)
			if err != nil {
				return nil, fmt.Errorf("open %s: %w", at, beneathError(err))
			}
			fd = next
		}
	}
	return os.NewFile(uintptr(fd), at), nil
}

// beneathError says what a refused symlink means.
func beneathError(err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%w (a symlink, or not a directory: the writer does not follow symlinks out of the workspace; replace it with a real directory or file)", err)
	}
	return err
}
