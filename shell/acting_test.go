package shell

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/tool"
)

// TestOptionsThatAct runs each command for real, with bash, in a
// throwaway repository and home, and checks both sides: the program did
// write (or read, or run) what the option names, and the analysis has
// that requirement. Without the first half a table of expectations could
// be a table of guesses.
func TestOptionsThatAct(t *testing.T) {
	for _, p := range []string{"bash", "git", "sed", "go", "make"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed: %v", p, err)
		}
	}
	tests := []struct {
		name, cmd string
		// kind and path (relative to the workspace, or under "~/") of the
		// requirement; for an execution, path is the program.
		kind, path string
		// evidence is the file the real run leaves.
		evidence string
	}{
		{"git log --output", "git log --output=log.txt", tool.KindFilesystemWrite, "log.txt", "log.txt"},
		{"git log --output VALUE", "git log -p --output log2.txt", tool.KindFilesystemWrite, "log2.txt", "log2.txt"},
		{"git diff --output", "git diff --output=d.patch HEAD", tool.KindFilesystemWrite, "d.patch", "d.patch"},
		{"git show --output", "git show --output=s.txt", tool.KindFilesystemWrite, "s.txt", "s.txt"},
		{"git archive -o", "git archive -o a.tar HEAD", tool.KindFilesystemWrite, "a.tar", "a.tar"},
		{"git archive -oFILE", "git archive -oa2.tar HEAD", tool.KindFilesystemWrite, "a2.tar", "a2.tar"},
		{"git format-patch -o", "git format-patch -o pdir -1 HEAD", tool.KindFilesystemWrite, "pdir", "pdir"},
		{"git format-patch --output-directory", "git format-patch --output-directory=pdir2 -1 HEAD", tool.KindFilesystemWrite, "pdir2", "pdir2"},
		{"git bundle create", "git bundle create b.bundle HEAD", tool.KindFilesystemWrite, "b.bundle", "b.bundle"},
		{"git config", "git config core.pager cat", tool.KindFilesystemWrite, ".git/config", ""},
		{"sed w", "sed -n 'w w.txt' in.txt", tool.KindFilesystemWrite, "w.txt", "w.txt"},
		{"sed s///w", "sed 's/a/b/w sw.txt' in.txt", tool.KindFilesystemWrite, "sw.txt", "sw.txt"},
		{"sed W", "sed -n '1W W.txt' in.txt", tool.KindFilesystemWrite, "W.txt", "W.txt"},
		{"sed r", "sed '1r secret.txt' in.txt > r.out", tool.KindFilesystemRead, "secret.txt", "r.out"},
		{"go env -w", "go env -w GOPRIVATE=example.invalid", tool.KindFilesystemWrite, "~/.config/go/env", "~/.config/go/env"},
		{"go vet -vettool", "go vet -vettool=./marker ./... 2>/dev/null; true", tool.KindCommandExecute, "./marker", "ran"},
		{"go build -toolexec", "go build -toolexec=./marker . 2>/dev/null; true", tool.KindCommandExecute, "./marker", "ran"},
		{"make SHELL=", "make SHELL=./marker 2>/dev/null; true", tool.KindCommandExecute, "./marker", "ran"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, home := actingWorkspace(t)
			run := exec.Command("bash", "-c", tt.cmd)
			run.Dir = ws
			run.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1",
				"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOCACHE=" + filepath.Join(home, "gocache"),
				"GOPATH=" + filepath.Join(home, "go"), "GOPROXY=off"}
			if out, err := run.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tt.cmd, err, out)
			}
			if tt.evidence != "" {
				if _, err := os.Stat(actingPath(ws, home, tt.evidence)); err != nil {
					t.Fatalf("%s left no %s: the premise of the case is wrong: %v", tt.cmd, tt.evidence, err)
				}
			}
			want := tt.path
			if tt.kind != tool.KindCommandExecute {
				want = tool.Canonical(actingPath(ws, home, tt.path))
			}
			for _, r := range Requirements(tt.cmd, ws, home) {
				if r.Kind == tt.kind && (r.Target == want || tt.kind == tool.KindCommandExecute && r.Argv[0] == want) {
					return
				}
			}
			t.Errorf("%s: no %s %s among\n%s", tt.cmd, tt.kind, want, show(Requirements(tt.cmd, ws, home)))
		})
	}
}

// actingWorkspace makes a git repository with one commit, a Go module, a
// Makefile and a marker program that leaves "ran" behind, and a home.
func actingWorkspace(t *testing.T) (ws, home string) {
	t.Helper()
	ws, home = t.TempDir(), t.TempDir()
	files := map[string]string{
		"in.txt":     "a\nb\n",
		"secret.txt": "SECRET\n",
		"go.mod":     "module example.invalid/m\n\ngo 1.22\n",
		"main.go":    "package main\n\nfunc main() {}\n",
		"Makefile":   "all:\n\techo hi\n",
		"marker":     "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\nexit 1\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one"}} {
		c := exec.Command("git", args...)
		c.Dir, c.Env = ws, []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1"}
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return ws, home
}

func actingPath(ws, home, p string) string {
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return filepath.Join(home, rest)
	}
	return filepath.Join(ws, p)
}
