package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestPlaceholderJournalStates: whatever point the supervisor died at,
// the check that finishes its journal removes the placeholder it made,
// and never an entry that is not a placeholder; while another run of the
// tree holds its lock, it removes nothing.
func TestPlaceholderJournalStates(t *testing.T) {
	newJournal := func(t *testing.T) (*runJournal, string) {
		root := t.TempDir()
		var s unix.Stat_t
		if err := unix.Stat(root, &s); err != nil {
			t.Fatal(err)
		}
		j := &runJournal{RunID: "r1", Workspace: root,
			Roots:        []rootState{{Path: root, Ino: [2]uint64{s.Dev, s.Ino}, Mode: s.Mode & 0o7777, UID: s.Uid, GID: s.Gid}},
			Placeholders: []placeholder{{Root: 0, Name: ".vscode"}}}
		return j, root
	}
	inode := func(t *testing.T, path string) [2]uint64 {
		var s unix.Stat_t
		if err := unix.Lstat(path, &s); err != nil {
			t.Fatal(err)
		}
		return [2]uint64{s.Dev, s.Ino}
	}
	// made is what placePlaceholders leaves: the marked directory, journaled.
	made := func(t *testing.T, j *runJournal, root string) {
		path := filepath.Join(root, ".vscode")
		mkdir(t, path)
		if err := os.Chmod(path, os.ModeSticky|0o755); err != nil {
			t.Fatal(err)
		}
		j.Placeholders[0].Ino = inode(t, path)
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, j *runJournal, root string)
		left    []string // entries that must still be there
		wantErr string
	}{
		{name: "journaled-not-made"},
		{name: "in-place", setup: made},
		{name: "in-place-written", setup: func(t *testing.T, j *runJournal, root string) {
			made(t, j, root)
			write(t, filepath.Join(root, ".vscode", "settings.json"))
		}, left: []string{".vscode/settings.json"}, wantErr: "no longer empty"},
		{name: "replaced-by-a-file", setup: func(t *testing.T, j *runJournal, root string) {
			made(t, j, root)
			if err := os.Remove(filepath.Join(root, ".vscode")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(root, ".vscode"))
		}, left: []string{".vscode"}, wantErr: "replaced"},
		{name: "replaced-by-an-unmarked-directory", setup: func(t *testing.T, j *runJournal, root string) {
			made(t, j, root)
			if err := os.Remove(filepath.Join(root, ".vscode")); err != nil {
				t.Fatal(err)
			}
			mkdir(t, filepath.Join(root, ".vscode"))
		}, left: []string{".vscode"}, wantErr: "replaced"},
		{name: "made-again-by-a-later-run", setup: func(t *testing.T, j *runJournal, root string) {
			made(t, j, root)
			if err := os.Remove(filepath.Join(root, ".vscode")); err != nil {
				t.Fatal(err)
			}
			mkdir(t, filepath.Join(root, ".vscode"))
			if err := os.Chmod(filepath.Join(root, ".vscode"), os.ModeSticky|0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "another-run-holds-the-tree", setup: func(t *testing.T, j *runJournal, root string) {
			made(t, j, root)
			locks, err := lockRoots([]string{root})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { closeAll(locks) })
		}, left: []string{".vscode"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j, root := newJournal(t)
			if tc.setup != nil {
				tc.setup(t, j, root)
			}
			_, err := checkProtected(j)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("check: %v, want %q", err, tc.wantErr)
			}
			for _, rel := range tc.left {
				if _, err := os.Lstat(filepath.Join(root, rel)); err != nil {
					t.Errorf("%s was removed: %v", rel, err)
				}
			}
			if len(tc.left) == 0 {
				if entries, _ := os.ReadDir(root); len(entries) != 0 {
					t.Errorf("left after the check: %v", entries)
				}
			}
		})
	}
}

// TestIsPlaceholderAt: only a marked empty directory or a marked socket
// is a placeholder; a user's empty directory is not.
func TestIsPlaceholderAt(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name string
		make func(path string) error
		want bool
	}{
		{"marked-empty", func(p string) error { return unix.Mkdir(p, 0o1755) }, true},
		{"marked-socket", func(p string) error { return unix.Mknod(p, unix.S_IFSOCK|0o1644, 0) }, true},
		{"plain-empty", func(p string) error { return unix.Mkdir(p, 0o755) }, false},
		{"plain-socket", func(p string) error { return unix.Mknod(p, unix.S_IFSOCK|0o644, 0) }, false},
		{"marked-not-empty", func(p string) error {
			if err := unix.Mkdir(p, 0o1755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
		}, false},
		{"marked-file", func(p string) error { return os.WriteFile(p, nil, os.ModeSticky|0o644) }, false},
		{"missing", func(string) error { return nil }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.make(filepath.Join(root, tc.name)); err != nil {
				t.Fatal(err)
			}
			if tc.name == "marked-file" {
				if err := os.Chmod(filepath.Join(root, tc.name), os.ModeSticky|0o644); err != nil {
					t.Fatal(err)
				}
			}
			fd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if got := isPlaceholderAt(fd, tc.name); got != tc.want {
				t.Errorf("isPlaceholderAt(%s) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

func mkdir(t *testing.T, path string) {
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

func write(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The plan's look at a top-level name: missing and another run's
// placeholder are held absent, anything else is present, and the answer
// is the first look's for the whole plan (one lstat per name).
func TestNameLook(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(unix.Mkdir(filepath.Join(root, "placeholder"), 0o1755))
	must(unix.Mkdir(filepath.Join(root, "dir"), 0o755))
	must(os.WriteFile(filepath.Join(root, "file"), nil, 0o644))
	look := newNameLook()
	for _, tc := range []struct {
		name           string
		exists, absent bool
	}{
		{"missing", false, true},
		{"placeholder", true, true},
		{"dir", true, false},
		{"file", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, tc.name)
			for range 2 {
				if got := look.lexists(path); got != tc.exists {
					t.Errorf("lexists(%s) = %v, want %v", tc.name, got, tc.exists)
				}
				if got := look.heldAbsent(path); got != tc.absent {
					t.Errorf("heldAbsent(%s) = %v, want %v", tc.name, got, tc.absent)
				}
			}
		})
	}
	// Made after the first look: the plan keeps what it saw, a fresh
	// look sees it.
	must(unix.Mkdir(filepath.Join(root, "missing"), 0o755))
	if look.lexists(filepath.Join(root, "missing")) {
		t.Error("the plan's look changed its answer within the plan")
	}
	if newNameLook().heldAbsent(filepath.Join(root, "missing")) {
		t.Error("a fresh look does not see the directory made since")
	}
}
