package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/integrations/claudecode"
)

// In sandbox mode the rewrite must reach Claude Code even where the
// permission mode leaves the call to it (no decision would drop the
// rewrite, and the command would run unsandboxed once approved): such a
// call comes back "ask" with the sandboxed command. Monitor's command is
// rewritten like Bash's; PowerShell, which the sandbox cannot run, is
// denied.
func TestSandboxUnderModes(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	h.Sandbox = &claudecode.Sandbox{Always: true, Airlock: "/usr/bin/airlock", Issuer: grant.NewRandomIssuer()}
	run := func(mode, toolName string, input map[string]any) claudecode.Decision {
		t.Helper()
		in, _ := json.Marshal(map[string]any{
			"session_id": "sess-1", "cwd": f.ws, "hook_event_name": "PreToolUse", "permission_mode": mode,
			"tool_name": toolName, "tool_input": input, "tool_use_id": "toolu_m",
		})
		var stdout, stderr bytes.Buffer
		if code := h.Run(context.Background(), bytes.NewReader(in), &stdout, &stderr); code != 0 {
			t.Fatalf("%s %s: exit %d: %s", mode, toolName, code, stderr.String())
		}
		var out claudecode.Output
		if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		return out.HookSpecificOutput
	}
	rewritten := func(d claudecode.Decision) string {
		var in struct {
			Command string `json:"command"`
		}
		json.Unmarshal(d.UpdatedInput, &in)
		return in.Command
	}

	// "git status" is allowed by a rule; in plan mode the hook would
	// defer, so the sandboxed command is put to the person.
	d := run("plan", "Bash", map[string]any{"command": "git status"})
	if d.PermissionDecision != "ask" || !strings.HasPrefix(rewritten(d), "/usr/bin/airlock run ") {
		t.Errorf("plan mode: %+v, want ask with the sandboxed command", d)
	}
	// A control: in default mode the rule allows it, sandboxed.
	d = run("default", "Bash", map[string]any{"command": "git status"})
	if d.PermissionDecision != "allow" || !strings.HasPrefix(rewritten(d), "/usr/bin/airlock run ") {
		t.Errorf("default mode: %+v, want allow with the sandboxed command", d)
	}
	d = run("default", "Monitor", map[string]any{"description": "d", "timeout_ms": 1000, "command": "git status"})
	if d.PermissionDecision != "allow" || !strings.HasSuffix(rewritten(d), "-- bash -c 'git status'") {
		t.Errorf("Monitor: %+v, want its command sandboxed", d)
	}
	// A monitor on a WebSocket runs no command: nothing to rewrite.
	d = run("bypassPermissions", "Monitor", map[string]any{"description": "d", "timeout_ms": 1000, "ws": map[string]any{"url": "wss://events.example/"}})
	if d.PermissionDecision != "ask" || d.UpdatedInput != nil {
		t.Errorf("Monitor on a socket: %+v, want ask without a rewrite", d)
	}
	d = run("bypassPermissions", "PowerShell", map[string]any{"command": "Get-ChildItem"})
	if d.PermissionDecision != "deny" || !strings.Contains(d.PermissionDecisionReason, "not PowerShell") {
		t.Errorf("PowerShell in sandbox mode: %+v, want deny", d)
	}
	d = run("default", "Bash", map[string]any{"command": "git push origin main"})
	if d.PermissionDecision != "deny" || d.UpdatedInput != nil {
		t.Errorf("a denied command: %+v", d)
	}
}
