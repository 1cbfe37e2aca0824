package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnseenReasonOnEverySurface: where a command's meaning depends on
// state the gate cannot see (npm test runs a package.json script), the
// reason says only the sandbox bounds it, and policy explain, the hook
// and /v1/decide give the same decision and reason (issue 20, point 4).
func TestUnseenReasonOnEverySurface(t *testing.T) {
	bin, dir, dsn, token, _, ws := serveSetup(t)
	home := filepath.Join(dir, "home")
	policy := "[[rule]]\neffect = \"allow\"\nmatch = \"Bash(npm test:*)\"\n"
	if err := os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "only the sandbox bounds that"

	explain := exec.Command(bin, "policy", "explain", "--workspace", ws, "--managed", "-", "--user", "-",
		"--tool", "Bash", "--input", `{"command":"npm test"}`, "--json")
	explain.Env = serveEnv(dir)
	code, out, errOut := runCmd(t, explain)
	var ex struct{ Decision, Reason string }
	if code != 0 || json.Unmarshal([]byte(out), &ex) != nil {
		t.Fatalf("explain: %d %s %s", code, out, errOut)
	}

	in, _ := json.Marshal(map[string]any{
		"session_id": "s", "transcript_path": filepath.Join(home, "t.jsonl"), "cwd": ws,
		"permission_mode": "default", "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": "npm test"}, "tool_use_id": "toolu_1",
	})
	hook := exec.Command(bin, "hook", "claude-code")
	hook.Env = append(serveEnv(dir), "AIRLOCK_AUDIT_LOG="+filepath.Join(dir, "audit.log"))
	hook.Dir = ws
	hook.Stdin = strings.NewReader(string(in))
	hookOut, err := hook.Output()
	var ho struct {
		HookSpecificOutput struct{ PermissionDecision, PermissionDecisionReason string } `json:"hookSpecificOutput"`
	}
	if err != nil || json.Unmarshal(hookOut, &ho) != nil {
		t.Fatalf("hook: %v %s", err, hookOut)
	}

	d := startDaemon(t, bin, dir, dsn)
	var dec struct{ Decision, Reason string }
	body := `{"tool":"Bash","input":{"command":"npm test"},"workspace":"` + ws + `","agent":"a"}`
	if code := d.call(t, token, "POST", "/v1/decide", body, &dec); code != 200 {
		t.Fatalf("decide: %d %+v", code, dec)
	}

	for surface, got := range map[string][2]string{
		"policy explain": {ex.Decision, ex.Reason},
		"hook":           {ho.HookSpecificOutput.PermissionDecision, strings.TrimPrefix(ho.HookSpecificOutput.PermissionDecisionReason, "airlock: ")},
		"/v1/decide":     {dec.Decision, dec.Reason},
	} {
		if got[0] != "allow" || !strings.Contains(got[1], want) || got[1] != ex.Reason {
			t.Errorf("%s: %s (%s); want allow with explain's reason %q", surface, got[0], got[1], ex.Reason)
		}
	}
}
