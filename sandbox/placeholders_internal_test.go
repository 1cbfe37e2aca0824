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
// and never an entry that is not that empty directory.
func TestPlaceholderJournalStates(t *testing.T) {
	newJournal := func(t *testing.T) (*runJournal, string) {
		root := t.TempDir()
		var s unix.Stat_t
		if err := unix.Stat(root, &s); err != nil {
			t.Fatal(err)
		}
		j := &runJournal{RunID: "r1", Workspace: root,
			Roots:        []rootState{{Path: root, Ino: [2]uint64{s.Dev, s.Ino}, Mode: s.Mode & 0o7777, UID: s.Uid, GID: s.Gid}},
			Placeholders: []placeholder{{Root: 0, Name: ".vscode", Temp: ".vscode.airlock-placeholder-r1"}}}
		return j, root
	}
	inode := func(t *testing.T, path string) [2]uint64 {
		var s unix.Stat_t
		if err := unix.Lstat(path, &s); err != nil {
			t.Fatal(err)
		}
		return [2]uint64{s.Dev, s.Ino}
	}
	for _, tc := range []struct {
		name    string
		setup   func(t *testing.T, j *runJournal, root string)
		left    []string // entries that must still be there
		wantErr string
	}{
		{name: "journaled-not-made"},
		{name: "made-not-journaled", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, j.Placeholders[0].Temp))
		}},
		{name: "made-not-journaled-then-written", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, j.Placeholders[0].Temp))
			write(t, filepath.Join(root, j.Placeholders[0].Temp, "f"))
		}, left: []string{".vscode.airlock-placeholder-r1/f"}, wantErr: "no longer empty"},
		{name: "journaled-not-renamed", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, j.Placeholders[0].Temp))
			j.Placeholders[0].Ino = inode(t, filepath.Join(root, j.Placeholders[0].Temp))
		}},
		{name: "in-place", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, ".vscode"))
			j.Placeholders[0].Ino = inode(t, filepath.Join(root, ".vscode"))
		}},
		{name: "in-place-written", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, ".vscode"))
			j.Placeholders[0].Ino = inode(t, filepath.Join(root, ".vscode"))
			write(t, filepath.Join(root, ".vscode", "settings.json"))
		}, left: []string{".vscode/settings.json"}, wantErr: "no longer empty"},
		{name: "replaced", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, ".vscode"))
			j.Placeholders[0].Ino = inode(t, filepath.Join(root, ".vscode"))
			if err := os.Remove(filepath.Join(root, ".vscode")); err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(root, ".vscode"))
		}, left: []string{".vscode"}, wantErr: "replaced"},
		{name: "temp-name-taken-by-the-run", setup: func(t *testing.T, j *runJournal, root string) {
			mkdir(t, filepath.Join(root, ".vscode"))
			j.Placeholders[0].Ino = inode(t, filepath.Join(root, ".vscode"))
			write(t, filepath.Join(root, j.Placeholders[0].Temp))
		}, left: []string{".vscode.airlock-placeholder-r1"}},
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
