package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// decide asks the hook (in sandbox mode) about a Bash call in ws and
// returns its decision and the command Claude Code would run instead
// ("" when there is none).
func (e hookEnv) decide(t *testing.T, ws, command string) (string, string) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{
		"session_id": "sess-surface", "transcript_path": filepath.Join(e.home, "t.jsonl"), "cwd": ws,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": command}, "tool_use_id": "toolu_surface",
	})
	code, stdout, stderr := run(e.command(ws, e.bin, "hook", "claude-code", "--sandbox"), string(in))
	if code != 0 {
		t.Fatalf("hook: exit %d: %s", code, stderr)
	}
	var out struct {
		HookSpecificOutput struct {
			PermissionDecision       string `json:"permissionDecision"`
			PermissionDecisionReason string `json:"permissionDecisionReason"`
			UpdatedInput             struct {
				Command string `json:"command"`
			} `json:"updatedInput"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("hook output %q: %v", stdout, err)
	}
	t.Logf("%s → %s: %s", command, out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.PermissionDecisionReason)
	return out.HookSpecificOutput.PermissionDecision, out.HookSpecificOutput.UpdatedInput.Command
}

// surfaceSecret is what the .env files hold; no output may contain it.
const surfaceSecret = "SECRET-ENV-b41d"

// TestHookSandboxedSurface: in sandbox mode every Bash call runs in the
// sandbox, so a command no rule mentions is allowed without a prompt, an
// ask rule still asks, a deny rule still denies, and the profile's
// auto_allow_in_sandbox = false asks again. A read of a whole tree where
// the profile denies files is allowed, and the rewritten command, run by
// a real bash, prints the rest and never the denied files' content. Run
// as root and as uid 65534.
func TestHookSandboxedSurface(t *testing.T) {
	bin := buildAirlock(t)
	forEachHookUser(t, bin, testHookSandboxedSurface)
}

func testHookSandboxedSurface(t *testing.T, e hookEnv) {
	e.write(t, filepath.Join(e.ws, ".airlock", "policy.toml"), `
[[rule]]
effect = "deny"
match  = "Bash(rm:*)"

[[rule]]
effect = "ask"
match  = "Bash(touch:*)"
`)
	e.write(t, filepath.Join(e.ws, ".airlock", "profile.toml"), "[filesystem]\ndeny = [\"**/.env\"]\n")
	e.write(t, filepath.Join(e.ws, "src", "a.js"), "const needle = 1\n")
	e.write(t, filepath.Join(e.ws, ".env"), "needle="+surfaceSecret+"\n")
	e.write(t, filepath.Join(e.ws, "src", ".env"), "needle="+surfaceSecret+"\n")

	decision, rewritten := e.decide(t, e.ws, "mkdir made")
	if decision != "allow" || rewritten == "" {
		t.Fatalf("unmentioned command: %s, rewritten %q; want allow, sandboxed", decision, rewritten)
	}
	if code, so, se := run(e.command(e.ws, "bash", "-c", rewritten), ""); code != 0 || !sandboxtest.Exists(filepath.Join(e.ws, "made")) {
		t.Errorf("the allowed command: exit %d %q %q", code, so, se)
	}
	if decision, _ := e.decide(t, e.ws, "touch x"); decision != "ask" {
		t.Errorf("ask rule: %s, want ask", decision)
	}
	if decision, rewritten := e.decide(t, e.ws, "rm probe.sh"); decision != "deny" || rewritten != "" {
		t.Errorf("deny rule: %s %q, want deny", decision, rewritten)
	}

	// Positive control: the tree read run directly prints the secret.
	if _, so, _ := run(e.command(e.ws, "bash", "-c", "grep -r needle ."), ""); !strings.Contains(so, surfaceSecret) {
		t.Fatalf("control: grep -r outside the sandbox does not show the secret: %q", so)
	}
	for _, cmd := range []string{"grep -r needle .", "find . -type f -exec cat {} +", "ls -R", `for f in src/* src/.env .env; do cat "$f"; done`} {
		decision, rewritten := e.decide(t, e.ws, cmd)
		if decision != "allow" || rewritten == "" {
			t.Errorf("%s: %s; want allow, sandboxed", cmd, decision)
			continue
		}
		_, so, se := run(e.command(e.ws, "bash", "-c", rewritten), "")
		if strings.Contains(so+se, surfaceSecret) {
			t.Errorf("%s: the output holds a masked file's content: %q %q", cmd, so, se)
		}
		if !strings.Contains(so, "a.js") && !strings.Contains(so, "needle") {
			t.Errorf("%s: the output lacks the rest of the tree: %q %q", cmd, so, se)
		}
	}
	if decision, _ := e.decide(t, e.ws, "cat .env"); decision != "deny" {
		t.Errorf("cat .env: %s, want deny (the gate still refuses the denied file itself)", decision)
	}

	// auto_allow_in_sandbox = false in the profile: asked again.
	e.write(t, filepath.Join(e.ws, ".airlock", "profile.toml"), "auto_allow_in_sandbox = false\n")
	if decision, _ := e.decide(t, e.ws, "mkdir other"); decision != "ask" {
		t.Errorf("auto_allow_in_sandbox = false: %s, want ask", decision)
	}
}
