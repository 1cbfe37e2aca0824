package sandbox

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// walkTree makes the calls filepath.WalkDir makes, in the same order,
// with the same types, on a tree with nested directories, a symlink to a
// directory (not followed), a socket, a FIFO, names that sort around
// each other ("a", "a.b", "a0"), and each way of skipping.
func TestWalkTreeMatchesWalkDir(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/b/c", "a.b", "a0/x", "skip/deep", "z"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/f1", "a/b/f2", "a/b/c/f3", "a.b/g", "a0/x/h", "skip/deep/k", "z/1", "z/2", "z/stop", "z/3", "top"} {
		if err := os.WriteFile(filepath.Join(root, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("a", filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(filepath.Join(root, "top"), filepath.Join(root, "a", "hard")); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(root, "a", "sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := unix.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}

	// skip: a directory skipped at its first visit, and "stop" ends
	// its directory (SkipDir from a file).
	decide := func(path string, isDir bool) error {
		switch filepath.Base(path) {
		case "skip":
			return filepath.SkipDir
		case "stop":
			return filepath.SkipDir
		}
		return nil
	}
	var want, got []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		want = append(want, fmt.Sprintf("%s %v %v", strings.TrimPrefix(path, root), d.Type(), err != nil))
		if err != nil {
			return nil
		}
		if d.Type().IsRegular() {
			fi, _ := d.Info()
			want = append(want, fmt.Sprintf("  size %d", fi.Size()))
		}
		return decide(path, d.IsDir())
	})
	if err != nil {
		t.Fatal(err)
	}
	err = walkTree(root, func(e walkEntry, err error) error {
		got = append(got, fmt.Sprintf("%s %v %v", strings.TrimPrefix(e.path, root), e.typ, err != nil))
		if err != nil {
			return nil
		}
		if e.typ.IsRegular() {
			st, _ := e.lstat()
			got = append(got, fmt.Sprintf("  size %d", st.Size))
		}
		return decide(e.path, e.typ.IsDir())
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("walkTree visits\n%s\n\nfilepath.WalkDir visits\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(want) < 20 {
		t.Fatalf("the walk saw too little to compare: %q", want)
	}

	// A missing root is the visit's error, as WalkDir's.
	missing := filepath.Join(root, "missing")
	err = walkTree(missing, func(e walkEntry, err error) error { return err })
	if !os.IsNotExist(err) {
		t.Errorf("missing root: %v, want a not-exist error", err)
	}
}
