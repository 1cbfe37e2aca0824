package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox"
)

// TestProtectedPaths: agent-persistence paths cannot be written, swapped
// or created by a run; what a run creates there is moved aside and
// reported, and a repository the run initialises beneath the top stays
// usable.
func TestProtectedPaths(t *testing.T) {
	ex, ws := newExecutor(t, nil)
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	config := filepath.Join(ws, ".git/config")
	origConfig, _ := os.ReadFile(config)
	hook := filepath.Join(ws, ".git/hooks/pre-commit")

	t.Run("write hook and config", func(t *testing.T) {
		// Positive control: the host itself can write there.
		if err := os.WriteFile(hook+".control", []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(hook + ".control")
		res := run(t, ex, `echo 'touch /tmp/pwned' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; git config core.fsmonitor 'touch /tmp/pwned'; echo '[core] fsmonitor = evil' >> .git/config`)
		if _, err := os.Stat(hook); err == nil {
			t.Errorf("hook written on the host (status %s)", res.Status)
		}
		if now, _ := os.ReadFile(config); string(now) != string(origConfig) {
			t.Errorf(".git/config changed on the host:\n%s", now)
		}
	})
	t.Run("swap .git", func(t *testing.T) {
		res := run(t, ex, `mv .git .git-old && mkdir -p .git/hooks && cp -r .git-old/. .git/ 2>/dev/null; printf '#!/bin/sh\ntouch /tmp/pwned\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; printf '[core]\n\tfsmonitor = touch /tmp/pwned\n' > .git/config`)
		if _, err := os.Stat(hook); err == nil {
			t.Errorf("swapped .git left an executable hook on the host (status %s, denials %+v)", res.Status, res.Denials)
		}
		if now, err := os.ReadFile(config); err == nil && strings.Contains(string(now), "fsmonitor") {
			t.Errorf("swapped .git left a config with fsmonitor on the host")
		}
		// .git is a mount point in the view: the move itself fails.
		if sandboxtest.Exists(filepath.Join(ws, ".git-old")) {
			t.Errorf(".git was moved aside on the host (denials %+v)", res.Denials)
		}
	})
	t.Run("create missing", func(t *testing.T) {
		// Absent at the top of the workspace: each name holds a
		// read-only placeholder for the run, so nothing can be made there.
		res := run(t, ex, `mkdir -p .vscode; echo '{"tasks":[]}' > .vscode/tasks.json; echo '{"mcpServers":{}}' > .mcp.json; rmdir .vscode; mv .mcp.json x; ls -a`)
		// Under the create guard, the guard refuses the names (no
		// placeholder is made).
		guarded := ex.Report().Host.CreateGuard
		if guarded && (strings.Contains(string(res.Stdout), ".vscode") || !strings.Contains(string(res.Stderr), "Operation not permitted")) {
			t.Errorf("the guard did not refuse the names: status %s stdout %s stderr %s", res.Status, res.Stdout, res.Stderr)
		}
		if !guarded && (!strings.Contains(string(res.Stdout), ".vscode") || !strings.Contains(string(res.Stderr), "Read-only file system")) {
			t.Errorf("no placeholder in the run: status %s stdout %s stderr %s", res.Status, res.Stdout, res.Stderr)
		}
		for _, p := range []string{".vscode", ".mcp.json", "x"} {
			if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
				t.Errorf("%s is on the host after the run", p)
			}
		}
		if m, _ := filepath.Glob(filepath.Join(ws, "*.airlock-*")); len(m) != 0 {
			t.Errorf("left %v", m)
		}
		// The create guard refuses the names themselves (a denial each);
		// the read-only hint records the "Read-only file system" the
		// command printed (hints.go).
		for _, d := range res.Denials {
			if d.Target != ".vscode" && d.Target != ".mcp.json" && d.Target != hintTarget {
				t.Errorf("unexpected denial %+v", d)
			}
		}
	})
	t.Run("git init in a fresh workspace", func(t *testing.T) {
		ex2, ws2 := newExecutor(t, nil)
		res, err := ex2.Run(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", "git init -q . && echo made"}})
		if err != nil || res.Status == sandbox.StatusSucceeded || !strings.Contains(string(res.Stderr), ".git") {
			t.Errorf("git init at the top of a workspace without a repository did not fail naming .git: %v %s %s", err, res.Status, res.Stderr)
		}
		// A new repository beneath the top is refused by the create
		// guard (host git there would read its config during the run);
		// one in the sandbox's own /tmp is made.
		res, err = ex2.Run(context.Background(), sandbox.Cmd{Args: []string{"sh", "-c", "git init -q /tmp/r && git -C /tmp/r -c user.name=a -c user.email=a@b.c commit -q --allow-empty -m one && echo private-ok; git init -q sub"}})
		if err != nil || !strings.Contains(string(res.Stdout), "private-ok") {
			t.Fatalf("git init in the sandbox's /tmp failed: %v %s %s", err, res.Stdout, res.Stderr)
		}
		if res.Status == sandbox.StatusSucceeded || sandboxtest.Exists(filepath.Join(ws2, "sub", ".git")) || len(res.Denials) == 0 {
			t.Errorf("a nested git init in the workspace was not refused: %s %+v", res.Status, res.Denials)
		}
		if sandboxtest.Exists(filepath.Join(ws2, ".git")) {
			t.Error("the .git placeholder is left after the run")
		}
	})
}

// TestProtectedHooksPath: a hooks directory the repository's config
// names (core.hooksPath, as husky sets it) is protected like .git/hooks:
// an existing hook cannot be changed nor a new one added, and where the
// directory did not exist the run cannot create it (the create guard).
func TestProtectedHooksPath(t *testing.T) {
	for _, c := range []struct{ name, hooksPath, dir string }{
		{"relative", ".husky/_", ".husky/_"},
		{"absolute inside the workspace", "", ".githooks"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ex, ws := newExecutor(t, nil)
			if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
				t.Fatalf("git init: %v %s", err, out)
			}
			hooksPath := c.hooksPath
			if hooksPath == "" {
				hooksPath = filepath.Join(ws, c.dir)
			}
			if out, err := exec.Command("git", "-C", ws, "config", "core.hooksPath", hooksPath).CombinedOutput(); err != nil {
				t.Fatalf("git config: %v %s", err, out)
			}
			dir := filepath.Join(ws, c.dir)
			if c.hooksPath != "" {
				// The directory exists, with a hook.
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "pre-commit"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			script := `mkdir -p ` + c.dir + ` && printf '#!/bin/sh\ntouch /tmp/pwned\n' > ` + c.dir + `/pre-commit; printf '#!/bin/sh\ntouch /tmp/pwned\n' > ` + c.dir + `/post-checkout; chmod +x ` + c.dir + `/*`
			res := run(t, ex, script)
			for _, hook := range []string{"pre-commit", "post-checkout"} {
				if data, err := os.ReadFile(filepath.Join(dir, hook)); err == nil && strings.Contains(string(data), "pwned") {
					t.Errorf("%s/%s written on the host (status %s, denials %+v)", c.dir, hook, res.Status, res.Denials)
				}
			}
			if c.hooksPath == "" {
				// Absent at the start: the create guard refuses it.
				if sandboxtest.Exists(dir) || len(res.Denials) == 0 {
					t.Errorf("the run created the hooks directory: denials %+v", res.Denials)
				}
			}
			// Positive control: the same script outside the sandbox writes
			// the hook.
			if out, err := exec.Command("sh", "-c", "cd "+ws+" && "+script).CombinedOutput(); err != nil {
				t.Fatalf("control: %v %s", err, out)
			}
			if data, _ := os.ReadFile(filepath.Join(dir, "pre-commit")); !strings.Contains(string(data), "pwned") {
				t.Fatal("control: the unsandboxed script did not write the hook")
			}
		})
	}
}

// TestReportProtectedPaths: the Report says protected paths are
// enforced where the create guard runs, and degraded with its reason
// (absent names can be created during the run) where it cannot, so the
// level of such a run is never full; a read-only workspace without write
// paths does not apply it.
func TestReportProtectedPaths(t *testing.T) {
	ex, _ := newExecutor(t, nil)
	r := ex.Report()
	st := r.Status(profile.ProtectedPaths)
	switch {
	case r.Host.CreateGuard && (st.Status != sandbox.Enforced || !strings.Contains(st.Mechanism, "create guard")):
		t.Errorf("protected-paths with the create guard: %+v; want enforced", st)
	case !r.Host.CreateGuard && (st.Status != sandbox.Degraded || !strings.Contains(st.Reason, r.Host.CreateGuardReason)):
		t.Errorf("protected-paths without the create guard: %+v; want degraded naming why", st)
	}
	if st.Status != sandbox.Enforced && r.Level == sandbox.LevelFull {
		t.Errorf("level full with protected paths %s:\n%s", st.Status, r)
	}
	ro, _ := newExecutor(t, func(s *profile.Spec) { s.ReadOnlyWorkspace = true })
	if st := ro.Report().Status(profile.ProtectedPaths); st.Status != sandbox.NotApplied {
		t.Errorf("read-only workspace: protected-paths %+v; want not_applied", st)
	}
}

// TestGitWorkInTheRun: git work that makes a new repository or gitfile
// in the workspace (a linked worktree, a nested repository, a clone with
// submodules) is refused by the create guard, since host git there would
// read its config during the run; the same work in the sandbox's own
// /tmp succeeds.
func TestGitWorkInTheRun(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	src := filepath.Join(ws, "src")
	sub := sandboxtest.GitWorkspace(t)
	for _, args := range [][]string{
		{"init", "-q", src},
		{"-C", src, "-c", "protocol.file.allow=always", "submodule", "add", "-q", sub, "lib/x"},
		{"-C", src, "-c", "user.name=a", "-c", "user.email=a@b.c", "commit", "-q", "-m", "sub"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %q: %v %s", args, err, out)
		}
	}
	sb := sandboxtest.New(t, "workspace", ws, func(s *profile.Spec) { s.Filesystem.Read = append(s.Filesystem.Read, sub) })
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`set -e
git -c protocol.file.allow=always clone -q --recurse-submodules src /tmp/dst
git -C /tmp/dst/lib/x log --oneline >/dev/null
git init -q /tmp/repo
echo private-ok
set +e
git worktree add -q wt2; git init -q nested/repo; git -c protocol.file.allow=always clone -q src dst
true`)})
	if o.ExitCode != 0 || !strings.Contains(o.Stdout, "private-ok") {
		t.Fatalf("git in the sandbox's /tmp failed: %s", o)
	}
	for _, p := range []string{"wt2/.git", "nested/repo/.git", "dst/.git"} {
		if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
			t.Errorf("%s was made in the workspace", p)
		}
	}
	if len(o.Result.Denials) == 0 {
		t.Errorf("the refused repositories were not reported")
	}
}

// TestGitDirSymlink: a workspace whose .git is a symlink to a git
// directory inside it runs, and the directory it points at is protected.
func TestGitDirSymlink(t *testing.T) {
	sandboxtest.PlantSecrets(t)
	ws := sandboxtest.GitWorkspace(t)
	must(t, os.Rename(filepath.Join(ws, ".git"), filepath.Join(ws, ".repo")))
	must(t, os.Symlink(".repo", filepath.Join(ws, ".git")))
	before := sandboxtest.FileState(filepath.Join(ws, ".repo", "config"))
	sb := sandboxtest.New(t, "workspace", ws, nil)
	o := sb.Run(t, sandboxtest.Probe{Args: sandboxtest.Sh(`git config core.fsmonitor /bin/true; git status --short >/dev/null && echo status-ok`)})
	if !strings.Contains(o.Stdout, "status-ok") {
		t.Fatalf("git in a workspace with a .git symlink failed: %s", o)
	}
	if sandboxtest.FileState(filepath.Join(ws, ".repo", "config")) != before {
		t.Errorf("the config behind the .git symlink changed: %s", o)
	}
}
