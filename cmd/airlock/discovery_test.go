package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunFromSubdirectory: run from a subdirectory of a git checkout, the
// workspace is the checkout (a write at its top level arrives on the host)
// and the command starts in the same subdirectory. The control directory
// without .git shows the write could be refused: there the workspace is
// the subdirectory alone and the write stays in the private HOME.
func TestRunFromSubdirectory(t *testing.T) {
	bin := buildAirlock(t)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(root, "home")
	for _, d := range []string{"home/proj/.git", "home/proj/src/pkg", "home/plain/src/pkg"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(dir string) (int, string, string) {
		cmd := exec.Command(bin, "run", "--", "sh", "-c", "pwd; echo x > ../../top.txt")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+home)
		return runCmd(t, cmd)
	}
	sub := filepath.Join(home, "proj/src/pkg")
	code, out, errOut := run(sub)
	if code != 0 || strings.TrimSpace(out) != sub {
		t.Fatalf("from %s: exit %d, stdout %q, stderr %q; want 0 and the same directory inside", sub, code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(home, "proj/top.txt")); err != nil {
		t.Fatalf("the write at the project's top level did not arrive: %v", err)
	}
	plain := filepath.Join(home, "plain/src/pkg")
	// Outside the workspace the home directory is the sandbox's private
	// one: the write may succeed there, but must not reach the host.
	_, out, _ = run(plain)
	if strings.TrimSpace(out) != plain {
		t.Errorf("control without .git: stdout %q; want the same directory inside", out)
	}
	if _, err := os.Stat(filepath.Join(home, "plain/top.txt")); err == nil {
		t.Errorf("control: the write outside the workspace arrived")
	}
}
