package provider

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWorkdir: what a run can leave under a name, and what moving a
// file in or out over it does. Host-side evidence: the file outside,
// behind a link or a hard link, keeps its content.
func TestWorkdir(t *testing.T) {
	for _, tc := range []struct {
		name  string
		leave func(t *testing.T, dir, outside string) // what the run left under "f"
		write string                                  // "" = written; else the refusal says this
		read  string                                  // "" = read back; else the refusal says this
	}{
		{"nothing", func(*testing.T, string, string) {}, "", "no such file"},
		{"regular", func(t *testing.T, dir, _ string) {
			must(t, os.WriteFile(filepath.Join(dir, "f"), []byte("old"), 0o644))
		}, "", ""},
		{"symlink", func(t *testing.T, dir, outside string) { must(t, os.Symlink(outside, filepath.Join(dir, "f"))) }, "a symbolic link", "symbolic link"},
		{"dangling symlink", func(t *testing.T, dir, outside string) {
			must(t, os.Symlink(outside+".absent", filepath.Join(dir, "f")))
		}, "a symbolic link", "symbolic link"},
		{"fifo", func(t *testing.T, dir, _ string) { must(t, syscall.Mkfifo(filepath.Join(dir, "f"), 0o644)) }, "a FIFO", "a FIFO"},
		{"directory", func(t *testing.T, dir, _ string) { must(t, os.Mkdir(filepath.Join(dir, "f"), 0o755)) }, "a directory", "a directory"},
		{"hard link", func(t *testing.T, dir, outside string) { must(t, os.Link(outside, filepath.Join(dir, "f"))) }, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			outside := filepath.Join(root, "outside")
			must(t, os.WriteFile(outside, []byte("outside"), 0o644))
			must(t, os.Mkdir(filepath.Join(root, "ws"), 0o755))
			tc.leave(t, filepath.Join(root, "ws"), outside)
			rootf, err := os.Open(root)
			must(t, err)
			defer rootf.Close()
			wd, err := openWorkdir(rootf, "ws")
			must(t, err)
			defer wd.Close()

			data, err := wd.ReadFile(context.Background(), "f", 1<<20)
			switch {
			case tc.read == "" && (err != nil || string(data) != map[bool]string{true: "outside", false: "old"}[tc.name == "hard link"]):
				t.Errorf("read: %q %v", data, err)
			case tc.read != "" && (err == nil || !strings.Contains(err.Error(), tc.read)):
				t.Errorf("read: %q %v, want an error saying %q", data, err, tc.read)
			}

			err = wd.WriteFile(context.Background(), "f", []byte("new"))
			if tc.write == "" {
				if b, rerr := os.ReadFile(filepath.Join(root, "ws", "f")); err != nil || string(b) != "new" {
					t.Errorf("write: %v; the file holds %q (%v)", err, b, rerr)
				}
			} else if err == nil || !strings.Contains(err.Error(), tc.write) {
				t.Errorf("write: %v, want an error saying %q", err, tc.write)
			}
			if b, _ := os.ReadFile(outside); string(b) != "outside" {
				t.Errorf("the file outside was written: %q", b)
			}
			if left, _ := filepath.Glob(filepath.Join(root, "ws", ".airlock-input-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestWorkdirLimitsAndDeadline(t *testing.T) {
	root := t.TempDir()
	must(t, os.Mkdir(filepath.Join(root, "ws"), 0o755))
	must(t, os.WriteFile(filepath.Join(root, "ws", "big"), make([]byte, 3*copyChunk), 0o644))
	// The workspace itself swapped for a link is refused.
	must(t, os.Symlink("ws", filepath.Join(root, "swapped")))
	rootf, err := os.Open(root)
	must(t, err)
	defer rootf.Close()
	if _, err := openWorkdir(rootf, "swapped"); err == nil {
		t.Error("a workspace that is a link was opened")
	}
	wd, err := openWorkdir(rootf, "ws")
	must(t, err)
	defer wd.Close()
	if _, err := wd.ReadFile(context.Background(), "big", copyChunk); err == nil || !strings.Contains(err.Error(), "max_output") {
		t.Errorf("over max: %v", err)
	}
	if data, err := wd.ReadFile(context.Background(), "big", 3*copyChunk); err != nil || len(data) != 3*copyChunk {
		t.Errorf("control, at max: %d bytes, %v", len(data), err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := wd.ReadFile(ctx, "big", 1<<30); !errors.Is(err, context.Canceled) {
		t.Errorf("read after the deadline: %v", err)
	}
	if err := wd.WriteFile(ctx, "new", make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("write after the deadline: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(root, "ws", "new")); err == nil {
		t.Error("a write cut by the deadline left its file")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
