package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"golang.org/x/sys/unix"
)

// walkEntry is what walkTree tells visit about one entry: its path, its
// type from the directory listing, and its lstat, read on demand
// relative to the open directory that lists it.
type walkEntry struct {
	path  string
	typ   fs.FileMode
	dirFD int
	name  string
}

// lstat is fstatat(dirfd, name, AT_SYMLINK_NOFOLLOW): one component to
// resolve, not the whole path, which is what makes this walk about twice
// as fast as filepath.WalkDir with DirEntry.Info on a large workspace
// (docs/BENCHMARKS.md).
func (e walkEntry) lstat() (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(e.dirFD, e.name, &st, unix.AT_SYMLINK_NOFOLLOW)
	if err != nil {
		err = &fs.PathError{Op: "lstat", Path: e.path, Err: err}
	}
	return st, err
}

// walkTree visits root and everything beneath it in the order and with
// the calls of filepath.WalkDir (depth first, each directory's entries
// in lexical order; a directory is visited with a nil error before it is
// read, then again with the error if it cannot be opened or read; a nil
// return from that second visit goes on with what was read; SkipDir
// from the first skips it; symbolic links are not followed). Directories
// are opened relative to their parent's descriptor, without following a
// symbolic link that replaced one meanwhile (that is an error for the
// visit, as an unreadable directory).
func walkTree(root string, visit func(e walkEntry, err error) error) error {
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return visit(walkEntry{path: root}, &fs.PathError{Op: "lstat", Path: root, Err: err})
	}
	// The root is opened by its whole path (AT_FDCWD): its parent may be
	// searchable but not readable (a home directory of mode 0711).
	e := walkEntry{path: root, typ: modeType(st.Mode), dirFD: unix.AT_FDCWD, name: root}
	err := walkEntryTree(e, visit)
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func walkEntryTree(e walkEntry, visit func(e walkEntry, err error) error) error {
	if err := visit(e, nil); err != nil || !e.typ.IsDir() {
		return err
	}
	fd, err := unix.Openat(e.dirFD, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return visit(e, &fs.PathError{Op: "open", Path: e.path, Err: err})
	}
	dir := os.NewFile(uintptr(fd), e.path)
	defer dir.Close()
	entries, rerr := dir.ReadDir(-1)
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	if rerr != nil {
		if err := visit(e, rerr); err != nil {
			if err == filepath.SkipDir && e.typ.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, d := range entries {
		child := walkEntry{path: filepath.Join(e.path, d.Name()), typ: d.Type(), dirFD: fd, name: d.Name()}
		if err := walkEntryTree(child, visit); err != nil {
			if err == filepath.SkipDir {
				if d.IsDir() {
					continue // that directory is skipped
				}
				return nil // the rest of this directory is skipped
			}
			return err
		}
	}
	return nil
}

// modeType is the fs.FileMode type bits of a stat mode.
func modeType(m uint32) fs.FileMode {
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	}
	return 0
}
