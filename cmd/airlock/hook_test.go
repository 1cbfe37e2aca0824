package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// hookEnv is one user's setup for the hook and the shell Claude Code runs
// commands in: the same environment for both, as Claude Code gives them.
type hookEnv struct {
	bin, ws, home, grants, log string
	asNobody                   bool
}

// command builds a process run as the env's user with its environment.
func (e hookEnv) command(dir string, argv ...string) *exec.Cmd {
	if e.asNobody {
		argv = append([]string{"setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + sandboxtest.SystemPath, "HOME=" + e.home, "LANG=C.UTF-8",
		"AIRLOCK_GRANT_DIR=" + e.grants, "AIRLOCK_AUDIT_LOG=" + e.log}
	return cmd
}

func run(cmd *exec.Cmd, stdin string) (int, string, string) {
	var so, se strings.Builder
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		code = -1
		se.WriteString(err.Error())
	}
	return code, so.String(), se.String()
}

// rewrite asks the hook about a Bash call in ws and returns the command
// Claude Code would run instead.
func (e hookEnv) rewrite(t *testing.T, ws, command, toolUse string) string {
	t.Helper()
	in, _ := json.Marshal(map[string]any{
		"session_id": "sess-sandbox", "transcript_path": filepath.Join(e.home, "t.jsonl"), "cwd": ws,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command, "description": "probe"}, "tool_use_id": toolUse,
	})
	code, stdout, stderr := run(e.command(ws, e.bin, "hook", "claude-code", "--sandbox"), string(in))
	if code != 0 {
		t.Fatalf("hook: exit %d: %s", code, stderr)
	}
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision string `json:"permissionDecision"`
			UpdatedInput       struct {
				Command     string `json:"command"`
				Description string `json:"description"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("hook output %q: %v", stdout, err)
	}
	h := out.HookSpecificOutput
	if h.PermissionDecision != "allow" || h.UpdatedInput.Description != "probe" || !strings.Contains(h.UpdatedInput.Command, " run ") {
		t.Fatalf("hook answered %s", stdout)
	}
	return h.UpdatedInput.Command
}

// newHookEnv makes a workspace whose policy allows "bash probe.sh", a
// fake home holding secrets, and a grant directory, all owned by the user
// the test runs as.
func newHookEnv(t *testing.T, bin string, asNobody bool) hookEnv {
	t.Helper()
	root, err := os.MkdirTemp("", "airlock-hook-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	root, _ = filepath.EvalSymlinks(root)
	must(t, os.Chmod(root, 0o755))
	e := hookEnv{asNobody: asNobody, bin: filepath.Join(root, "airlock"),
		ws: filepath.Join(root, "ws"), home: filepath.Join(root, "home"), grants: filepath.Join(root, "state", "grants"),
		log: filepath.Join(root, "state", "audit.jsonl")}
	// With airlock-gateway: the hook's runs may have a network.
	_, err = airlockbin.CopyTo(bin, root)
	must(t, err)
	for _, d := range []string{e.ws, e.home, filepath.Dir(e.grants)} {
		must(t, os.MkdirAll(d, 0o700))
	}
	e.writeWorkspace(t, e.ws)
	must(t, os.MkdirAll(filepath.Join(e.home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(e.home, ".ssh", "id_ed25519"), []byte("SECRET-KEY-MATERIAL\n"), 0o600))
	if asNobody {
		must(t, filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
			if err != nil || p == root || p == e.bin {
				return err
			}
			return os.Lchown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID)
		}))
	}
	return e
}

// forEachHookUser runs test in a subtest for each user the hook's tests
// run as: root, and uid 65534 (setpriv drops to it), each with a fresh
// hookEnv around a copy of bin.
func forEachHookUser(t *testing.T, bin string, test func(*testing.T, hookEnv)) {
	t.Helper()
	t.Run("root", func(t *testing.T) {
		if sandboxtest.Unprivileged() {
			t.Skip("not root")
		}
		test(t, newHookEnv(t, bin, false))
	})
	t.Run("uid 65534", func(t *testing.T) {
		if sandboxtest.Unprivileged() {
			t.Skip("needs root to drop to uid 65534")
		}
		if _, err := exec.LookPath("setpriv"); err != nil {
			t.Skip("setpriv (util-linux) is not installed")
		}
		test(t, newHookEnv(t, bin, true))
	})
}

// write makes path, under the workspace, hold content, making its
// directories; for uid 65534 it owns the file and the directories made,
// so that the sandboxed run can change them as the test expects.
func (e hookEnv) write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
	if e.asNobody {
		for p := path; p != filepath.Dir(e.ws); p = filepath.Dir(p) {
			must(t, os.Lchown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID))
		}
	}
}

func (e hookEnv) writeWorkspace(t *testing.T, ws string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"),
		[]byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(bash probe.sh)\"\n"), 0o644))
	// The gate sees only "bash probe.sh": what the script does is for
	// the sandbox to confine.
	must(t, os.WriteFile(filepath.Join(ws, "probe.sh"), []byte(`echo ran >> runs.log
echo escaped > "$OUTSIDE_FILE" 2>/dev/null && echo WROTE-OUTSIDE
cat "$SSH_KEY" 2>/dev/null
ls "$(dirname "$SSH_KEY")" >/dev/null 2>&1 && echo SAW-SSH-DIR
exit 0
`), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestHookSandboxRewrite is the proof: the rewritten command,
// executed by a real bash, runs confined (a write outside the workspace
// fails, ~/.ssh is invisible), and airlock run refuses it a second time,
// hand-edited, or for another workspace. Run as root and as uid 65534.
func TestHookSandboxRewrite(t *testing.T) {
	bin := buildAirlock(t)
	forEachHookUser(t, bin, testHookSandboxRewrite)
}

func testHookSandboxRewrite(t *testing.T, e hookEnv) {
	outside := sandboxtest.OutsideDir(t)
	must(t, os.Chmod(outside, 0o777))
	outsideFile := filepath.Join(outside, "escaped")
	sshKey := filepath.Join(e.home, ".ssh", "id_ed25519")
	// The probe reads where to write and what to read from its own
	// command line, so that the gate's view ("bash probe.sh") stays the
	// same; the paths are put in the script itself.
	script, err := os.ReadFile(filepath.Join(e.ws, "probe.sh"))
	must(t, err)
	script = []byte("OUTSIDE_FILE=" + outsideFile + "\nSSH_KEY=" + sshKey + "\n" + string(script))
	must(t, os.WriteFile(filepath.Join(e.ws, "probe.sh"), script, 0o644))
	runs := func() int {
		data, _ := os.ReadFile(filepath.Join(e.ws, "runs.log"))
		return strings.Count(string(data), "ran\n")
	}

	// Positive control: the same probe run by bash directly, as Claude
	// Code would without the sandbox, escapes and sees the key.
	code, so, se := run(e.command(e.ws, "bash", "-c", "bash probe.sh"), "")
	if code != 0 || !strings.Contains(so, "WROTE-OUTSIDE") || !strings.Contains(so, "SECRET-KEY-MATERIAL") {
		t.Fatalf("control run: exit %d stdout %q stderr %q; the probe cannot detect an escape", code, so, se)
	}
	must(t, os.Remove(outsideFile))
	must(t, os.Remove(filepath.Join(e.ws, "runs.log")))

	// The rewrite runs confined.
	rewritten := e.rewrite(t, e.ws, "bash probe.sh", "toolu_confined")
	code, so, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
	if code != 0 || runs() != 1 {
		t.Fatalf("sandboxed run: exit %d, %d runs, stdout %q stderr %q", code, runs(), so, se)
	}
	if strings.Contains(so, "WROTE-OUTSIDE") || sandboxtest.Exists(outsideFile) {
		t.Error("the sandboxed command wrote outside the workspace")
	}
	if strings.Contains(so+se, "SECRET-KEY-MATERIAL") || strings.Contains(so, "SAW-SSH-DIR") {
		t.Errorf("the sandboxed command saw ~/.ssh: %q", so)
	}

	// The same rewritten command again: the grant is spent.
	code, _, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
	if code != exitSetup || !strings.Contains(se, "already used") || runs() != 1 {
		t.Errorf("replay: exit %d, %d runs, stderr %q; want 125, the grant refused, nothing run", code, runs(), se)
	}

	// A hand-edited command with an unspent grant is refused, and the
	// unedited one still runs (so it was the edit that was refused).
	rewritten = e.rewrite(t, e.ws, "bash probe.sh", "toolu_edit")
	edited := strings.Replace(rewritten, "'bash probe.sh'", "'bash probe.sh; touch edited'", 1)
	if edited == rewritten {
		t.Fatalf("the command is not where the test expects it: %s", rewritten)
	}
	code, _, se = run(e.command(e.ws, "bash", "-c", edited), "")
	if code != exitSetup || !strings.Contains(se, "another command") || runs() != 1 || sandboxtest.Exists(filepath.Join(e.ws, "edited")) {
		t.Errorf("edited: exit %d, %d runs, stderr %q; want 125 and nothing run", code, runs(), se)
	}
	if code, _, se = run(e.command(e.ws, "bash", "-c", rewritten), ""); code != 0 || runs() != 2 {
		t.Errorf("the unedited command after the edited one: exit %d, %d runs, %s", code, runs(), se)
	}

	// A grant issued for another workspace: run there it would work; moved
	// to this one (its --workspace or its directory) it is refused.
	other := filepath.Join(filepath.Dir(e.ws), "other")
	must(t, os.MkdirAll(other, 0o700))
	e.writeWorkspace(t, other)
	must(t, os.WriteFile(filepath.Join(other, "probe.sh"), script, 0o644))
	if e.asNobody {
		must(t, filepath.Walk(other, func(p string, _ os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID)
		}))
	}
	forOther := e.rewrite(t, other, "bash probe.sh", "toolu_other")
	moved := strings.Replace(forOther, "--workspace "+other, "--workspace "+e.ws, 1)
	for name, c := range map[string]struct{ dir, cmd, want string }{
		"--workspace changed, run here":  {e.ws, moved, "another working directory"},
		"--workspace changed, run there": {other, moved, "another working directory"},
	} {
		code, _, se := run(e.command(c.dir, "bash", "-c", c.cmd), "")
		if code != exitSetup || !strings.Contains(se, c.want) || runs() != 2 {
			t.Errorf("%s: exit %d, %d runs, stderr %q; want 125 and nothing run", name, code, runs(), se)
		}
	}
	if code, _, se := run(e.command(other, "bash", "-c", forOther), ""); code != 0 {
		t.Errorf("the other workspace's grant in its own workspace: exit %d, %s", code, se)
	}

	// One audit log joins the decision (with Claude Code's ids) and the
	// run (spawn and exit) under one execution id.
	data, err := os.ReadFile(e.log)
	must(t, err)
	var evs []audit.Event
	must(t, audit.Read(strings.NewReader(string(data)), func(ev audit.Event) error { evs = append(evs, ev); return nil }))
	byExec := map[string][]string{}
	var confinedExec string
	for _, ev := range evs {
		byExec[ev.ExecutionID] = append(byExec[ev.ExecutionID], ev.Type+"/"+ev.Decision)
		if ev.ToolUseID == "toolu_confined" && ev.SessionID == "sess-sandbox" {
			confinedExec = ev.ExecutionID
		}
	}
	// The decision, the run, and the refused replay.
	if got := fmt.Sprint(byExec[confinedExec]); confinedExec == "" || got != "[decision/allow spawn/ exit/ spawn/deny]" {
		t.Errorf("events of the confined run %q: %s", confinedExec, got)
	}
	if strings.Contains(string(data), "airlock-grant1.") {
		t.Error("a grant token reached the audit log")
	}
}
