package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriterRootNeverLeaves: with a Root, a symlinked ROOT/.airlock (or
// rule file, or a symlinked directory above it) is refused and the
// project it points to is untouched; a real directory is written
// (positive control).
func TestWriterRootNeverLeaves(t *testing.T) {
	rec := NewRecord{Effect: Allow, Match: "Bash(git push origin main)"}
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, ws, other string)
		ok    bool
	}{
		{"real directory", func(t *testing.T, ws, other string) {}, true},
		{"symlinked .airlock", func(t *testing.T, ws, other string) {
			mustSymlink(t, filepath.Join(other, ".airlock"), filepath.Join(ws, ".airlock"))
		}, false},
		{"symlinked rule file", func(t *testing.T, ws, other string) {
			if err := os.Mkdir(filepath.Join(ws, ".airlock"), 0o700); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(other, ".airlock", "policy.local.toml"), filepath.Join(ws, ".airlock", "policy.local.toml"))
		}, false},
		{"symlinked lock file", func(t *testing.T, ws, other string) {
			if err := os.Mkdir(filepath.Join(ws, ".airlock"), 0o700); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(other, "planted"), filepath.Join(ws, ".airlock", "policy.local.toml.lock"))
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, other := t.TempDir(), t.TempDir()
			if err := os.MkdirAll(filepath.Join(other, ".airlock"), 0o700); err != nil {
				t.Fatal(err)
			}
			const theirs = "# project B's own rules\n"
			if err := os.WriteFile(filepath.Join(other, ".airlock", "policy.local.toml"), []byte(theirs), 0o600); err != nil {
				t.Fatal(err)
			}
			tc.setup(t, ws, other)
			err := Writer{Root: ws, Path: LocalPath(ws)}.Append(rec)
			if data, _ := os.ReadFile(filepath.Join(other, ".airlock", "policy.local.toml")); string(data) != theirs {
				t.Fatalf("project B's rules changed: %q", data)
			}
			if _, err := os.Lstat(filepath.Join(other, "planted")); !os.IsNotExist(err) {
				t.Fatalf("a file appeared in project B: %v", err)
			}
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), "symlink") {
					t.Fatalf("Append = %v, want a refusal naming the symlink", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(LocalPath(ws))
			if err != nil || fi.Mode().Perm() != 0o600 || !fi.Mode().IsRegular() {
				t.Fatalf("the rule file: %v %v", fi, err)
			}
			data, _ := os.ReadFile(LocalPath(ws))
			if !strings.Contains(string(data), "Bash(git push origin main)") {
				t.Fatalf("the rule file holds %q", data)
			}
			// A second append of the same rule adds nothing.
			if err := (Writer{Root: ws, Path: LocalPath(ws)}).Append(rec); err != nil {
				t.Fatal(err)
			}
			again, _ := os.ReadFile(LocalPath(ws))
			if string(again) != string(data) {
				t.Fatalf("the same rule twice: %q", again)
			}
		})
	}
	if err := (Writer{Root: t.TempDir(), Path: "/etc/x.toml"}).Append(rec); err == nil {
		t.Fatal("a Path outside Root was written")
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}
