package sandbox_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
	"github.com/airlockhq/airlock/sandbox"
)

// topEntries lists the names at the top of dir, for before/after checks.
func topEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	must(t, err)
	var names []string
	for _, e := range entries {
		if e.Name() != "ready" {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// startReady starts script (which must touch ready) and waits for it.
func startReady(t *testing.T, sb *sandboxtest.Sandbox, script string, args ...string) *sandbox.Process {
	t.Helper()
	proc, err := sb.Executor.Prepare(t.Context(), sandbox.Cmd{Args: sandboxtest.Sh(script, args...), Timeout: time.Minute})
	must(t, err)
	must(t, proc.Start())
	ready := filepath.Join(sb.Workspace, "ready")
	for i := 0; i < 1200 && !sandboxtest.Exists(ready); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	if !sandboxtest.Exists(ready) {
		proc.Kill()
		res, err := proc.Wait()
		t.Fatalf("the run never got ready: %v %+v", err, res)
	}
	return proc
}

// TestAttackPlaceholders: a protected name absent at the start cannot be
// made by the run while it goes on (host tools see an empty directory
// without the create guard, nothing with it; never what the run wrote),
// and its placeholder is gone once the run ended; a placeholder the host
// changed during the run is never removed.
func TestAttackPlaceholders(t *testing.T) {
	withAndWithoutGuard(t, placeholders)
}

func placeholders(t *testing.T, guard bool) {
	const plant = `printf '[filesystem]\nwrite = ["%s"]\n' "$1" > p.toml; echo '{"mcpServers":{}}' > m.json; ` +
		`mkdir -p .airlock; cp p.toml .airlock/profile.toml; mv .airlock .a; rmdir .airlock; rm -rf .airlock; mkdir .airlock; cp p.toml .airlock/profile.toml; ` +
		`cp m.json .mcp.json; rmdir .mcp.json; mv m.json .mcp.json; mkdir -p .vscode && echo '{}' > .vscode/tasks.json; ln -s /etc .claude; `
	t.Run("planted-profile", func(t *testing.T) {
		sandboxtest.PlantSecrets(t)
		ws, outside := sandboxtest.Workspace(t), sandboxtest.OutsideDir(t)
		before := topEntries(t, ws)
		sb := sandboxtest.New(t, preset, ws, nil)
		proc := startReady(t, sb, plant+`rm -f p.toml m.json; touch ready; sleep 30`, outside)
		// Host-side, while the run goes on: the names hold empty
		// directories (with the guard: nothing), nothing the run wrote.
		for _, name := range []string{".airlock", ".mcp.json", ".vscode", ".claude"} {
			fi, err := os.Lstat(filepath.Join(ws, name))
			if guard {
				if !os.IsNotExist(err) {
					t.Errorf("ATTACK SUCCEEDED: %s exists on the host during the run: %v %v", name, fi, err)
				}
				continue
			}
			if err != nil || !fi.IsDir() {
				t.Errorf("placeholder %s during the run: %v %v", name, fi, err)
				continue
			}
			if entries, _ := os.ReadDir(filepath.Join(ws, name)); len(entries) > 0 {
				t.Errorf("ATTACK SUCCEEDED: the run wrote into %s during the run: %v", name, entries)
			}
		}
		proc.Kill()
		res, err := proc.Wait()
		if err != nil {
			t.Fatalf("the run's check failed: %v", err)
		}
		if after := topEntries(t, ws); strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("workspace top level after the run %v, before %v; denials %+v", after, before, res.Denials)
		}
		// Control: the same script on the host plants the profile.
		os.Remove(filepath.Join(ws, "ready"))
		sb.Host(t, sandboxtest.Probe{Args: sandboxtest.Sh(plant, outside)})
		if !sandboxtest.Exists(filepath.Join(ws, ".airlock", "profile.toml")) || !sandboxtest.Exists(filepath.Join(ws, ".vscode", "tasks.json")) {
			t.Fatal("positive control failed: the script on the host did not plant .airlock/profile.toml")
		}
	})
	t.Run("host-wrote-into-placeholder", func(t *testing.T) {
		if guard {
			t.Skip("no placeholder is made under the create guard")
		}
		ws := sandboxtest.Workspace(t)
		sb := sandboxtest.New(t, preset, ws, nil)
		proc := startReady(t, sb, `touch ready; sleep 30`)
		mine := filepath.Join(ws, ".vscode", "settings.json")
		must(t, os.WriteFile(mine, []byte("{}"), 0o644))
		// Replaced by a directory of the host's (a new inode: made
		// before the placeholder is removed).
		must(t, os.Mkdir(filepath.Join(ws, ".claude.new"), 0o755))
		must(t, os.Remove(filepath.Join(ws, ".claude")))
		must(t, os.Rename(filepath.Join(ws, ".claude.new"), filepath.Join(ws, ".claude")))
		proc.Kill()
		res, err := proc.Wait()
		t.Cleanup(func() { sandbox.FinishInterruptedRuns() })
		if !errors.Is(err, sandbox.ErrProtectCheck) || res.Status == sandbox.StatusSucceeded {
			t.Errorf("a placeholder changed on the host did not fail the run: %v, %s", err, res.Status)
		}
		for _, msg := range []string{".vscode: written into on the host", ".claude: replaced during the run"} {
			if err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("the error does not say %q: %v", msg, err)
			}
		}
		if data, rerr := os.ReadFile(mine); rerr != nil || string(data) != "{}" {
			t.Errorf("the host's file in a placeholder was removed: %v", rerr)
		}
		if !sandboxtest.Exists(filepath.Join(ws, ".claude")) {
			t.Error("a directory the host put in a placeholder's place was removed")
		}
		// Once the user looked and removed their own entries, the next
		// start finishes the check, and the .vscode placeholder goes.
		must(t, os.Remove(mine))
		must(t, os.Remove(filepath.Join(ws, ".claude")))
		if _, err := sandbox.FinishInterruptedRuns(); err != nil {
			t.Errorf("the next start: %v", err)
		}
		if sandboxtest.Exists(filepath.Join(ws, ".vscode")) {
			t.Error("the .vscode placeholder is left once it was empty again")
		}
	})
}

// TestAttackPlaceholderHostGit: the .git placeholder (a socket inode) leaves
// host git as it was: in a plain workspace git still finds no repository, in a
// workspace inside a parent repository git works at the parent and from
// the workspace. In the run, git init says what is in the way.
func TestAttackPlaceholderHostGit(t *testing.T) {
	parent := sandboxtest.GitWorkspace(t)
	ws := filepath.Join(parent, "sub")
	must(t, os.Mkdir(ws, 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "file"), []byte("x\n"), 0o644))
	gitSetup(t, parent, "add", "sub/file")
	gitSetup(t, parent, "commit", "-q", "-m", "sub")
	plain := sandboxtest.Workspace(t)
	before := map[string]string{}
	for _, dir := range []string{parent, ws, plain} {
		before[dir] = hostGit(dir, "status", "--porcelain", "--untracked-files=no") + hostGit(dir, "rev-parse", "--show-toplevel")
	}
	if !strings.Contains(before[plain], "not a git repository") || !strings.Contains(before[ws], parent) {
		t.Fatalf("positive control failed: host git before the run: %q", before)
	}
	for _, dir := range []string{ws, plain} {
		sb := sandboxtest.New(t, preset, dir, nil)
		build := "false"
		if dir == plain {
			build = "go version"
		}
		proc := startReady(t, sb, `git init -q . 2>err; if `+build+` >/dev/null 2>&1; then printf 'module x\ngo 1.20\n' > go.mod && printf 'package main\nfunc main() {}\n' > m.go && { go build -o /dev/null . 2>goerr || echo failed >> goerr; }; fi; touch ready; sleep 30`)
		// The create guard holds .git itself; without it, a socket
		// placeholder does.
		if fi, err := os.Lstat(filepath.Join(dir, ".git")); sb.Executor.Report().Host.CreateGuard && !os.IsNotExist(err) {
			t.Errorf(".git in %s during the run, under the create guard: %v %v", dir, fi, err)
		} else if !sb.Executor.Report().Host.CreateGuard && (err != nil || fi.Mode().Type() != os.ModeSocket) {
			t.Errorf("no .git placeholder in %s during the run: %v", dir, err)
		}
		for _, d := range []string{parent, ws, plain} {
			if got := hostGit(d, "status", "--porcelain", "--untracked-files=no") + hostGit(d, "rev-parse", "--show-toplevel"); got != before[d] {
				t.Errorf("host git in %s during a run in %s: %q, before %q", d, dir, got, before[d])
			}
		}
		proc.Kill()
		if _, err := proc.Wait(); err != nil {
			t.Fatal(err)
		}
		msg, _ := os.ReadFile(filepath.Join(dir, "err"))
		// Refused by the placeholder (fatal) or by the create guard.
		if !(strings.Contains(string(msg), "fatal") || strings.Contains(string(msg), "not permitted")) || !strings.Contains(string(msg), ".git") {
			t.Errorf("git init in the run did not fail naming .git: %q", msg)
		}
		// go build takes any .git directory for a repository: with the
		// socket placeholder it builds as in a tree without one.
		if sandboxtest.Exists(filepath.Join(dir, "go.mod")) {
			if goerr, _ := os.ReadFile(filepath.Join(dir, "goerr")); len(goerr) > 0 {
				t.Errorf("go build in the run failed beside the placeholder: %s", goerr)
			}
		} else if dir == plain {
			t.Log("go is not in the sandbox's PATH: the go build check did not run")
		}
		for _, f := range []string{"err", "go.mod", "m.go", "goerr"} {
			os.Remove(filepath.Join(dir, f))
		}
		os.Remove(filepath.Join(dir, "ready"))
		if sandboxtest.Exists(filepath.Join(dir, ".git")) {
			t.Errorf("%s/.git is left after the run", dir)
		}
	}
}

// hostGit runs git on the host in dir and returns what it printed.
func hostGit(dir string, args ...string) string {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, _ := cmd.CombinedOutput()
	return string(out)
}
