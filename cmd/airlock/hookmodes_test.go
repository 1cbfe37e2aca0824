package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/claudetypes"
)

// hookRules are the rule sets of TestHookModes, as a workspace's
// .airlock/policy.toml.
var hookRules = map[string]string{
	"none": "",
	"rules": `
[[rule]]
effect = "allow"
match = "Bash(npm test)"
[[rule]]
effect = "deny"
match = "Bash(git push *)"
[[rule]]
effect = "allow"
match = "Edit(./docs/**)"
[[rule]]
effect = "deny"
match = "Read(./secrets/**)"
[[rule]]
effect = "deny"
match = "Agent"
[[rule]]
effect = "allow"
match = "mcp__github"
[[rule]]
effect = "allow"
match = "SomeToolOfTomorrow"
`,
}

// hookCase is one call of TestHookModes: a tool, fields set over the
// published type's sample input, the permission mode and rule set, and
// the answer wanted ("defer": no permissionDecision).
type hookCase struct {
	tool   string
	set    map[string]any
	mode   string
	rules  string
	want   string
	reason string // a substring of the reason, when it matters
}

func hookModeCases(ws, home string) []hookCase {
	omit := claudetypes.Omit
	src, docs, secret := ws+"/src/main.go", ws+"/docs/guide.md", ws+"/secrets/token"
	read := map[string]any{"file_path": src, "pages": omit}
	write := map[string]any{"file_path": ws + "/src/new.go"}
	return []hookCase{
		// Fields Claude Code sends today (allow_large, -o, offset) are
		// tolerated; reads inside the workspace are allowed in every mode.
		{tool: "Read", set: read, mode: "default", rules: "none", want: "allow"},
		{tool: "Read", set: read, mode: "plan", rules: "none", want: "allow"},
		{tool: "Read", set: read, mode: "dontAsk", rules: "none", want: "allow"},
		{tool: "Grep", set: map[string]any{"path": ws + "/src", "glob": "*.go", "type": omit}, mode: "default", rules: "none", want: "allow"},
		{tool: "Glob", set: map[string]any{"pattern": "src/**/*.go", "path": ws}, mode: "default", rules: "none", want: "allow"},
		{tool: "WebFetch", set: map[string]any{"url": "https://docs.example.com/page?q=1"}, mode: "default", rules: "none", want: "ask"},
		// Deny rules and the profile's denials hold in every mode.
		{tool: "Read", set: map[string]any{"file_path": secret, "pages": omit}, mode: "bypassPermissions", rules: "rules", want: "deny"},
		{tool: "Read", set: map[string]any{"file_path": home + "/.ssh/id_ed25519", "pages": omit}, mode: "bypassPermissions", rules: "none", want: "deny"},
		{tool: "Write", set: map[string]any{"file_path": "/var/tmp/airlock-x.sh"}, mode: "bypassPermissions", rules: "none", want: "deny"},
		{tool: "Bash", set: map[string]any{"command": "git push origin main"}, mode: "bypassPermissions", rules: "rules", want: "deny"},
		{tool: "Agent", set: nil, mode: "bypassPermissions", rules: "rules", want: "deny"},
		// A write no rule allows: only acceptEdits and bypassPermissions
		// let it through unasked, as Claude Code alone would.
		{tool: "Write", set: write, mode: "default", rules: "none", want: "defer"},
		{tool: "Write", set: write, mode: "plan", rules: "none", want: "defer"},
		{tool: "Write", set: write, mode: "dontAsk", rules: "none", want: "defer"},
		{tool: "Write", set: write, mode: "auto", rules: "none", want: "defer"},
		{tool: "Write", set: write, mode: "acceptEdits", rules: "none", want: "allow"},
		{tool: "Write", set: write, mode: "bypassPermissions", rules: "none", want: "allow"},
		{tool: "Write", set: write, mode: "aFutureMode", rules: "none", want: "defer"},
		{tool: "Edit", set: map[string]any{"file_path": src}, mode: "acceptEdits", rules: "none", want: "allow"},
		{tool: "NotebookEdit", set: map[string]any{"notebook_path": ws + "/nb.ipynb", "cell_type": omit, "edit_mode": omit}, mode: "acceptEdits", rules: "none", want: "allow"},
		{tool: "Edit", set: map[string]any{"file_path": ws + "/.git/hooks/pre-commit"}, mode: "acceptEdits", rules: "none", want: "ask"},
		// A write a rule allows is allowed, except in plan mode.
		{tool: "Edit", set: map[string]any{"file_path": docs}, mode: "default", rules: "rules", want: "allow"},
		{tool: "Edit", set: map[string]any{"file_path": docs}, mode: "plan", rules: "rules", want: "defer"},
		{tool: "Bash", set: map[string]any{"command": "npm test"}, mode: "default", rules: "rules", want: "allow"},
		{tool: "Bash", set: map[string]any{"command": "npm test"}, mode: "plan", rules: "rules", want: "defer"},
		{tool: "Bash", set: map[string]any{"command": "ls -la"}, mode: "default", rules: "none", want: "ask"},
		// Orchestration is left to Claude Code.
		{tool: "Agent", set: map[string]any{"mode": omit, "model": omit, "effort": omit, "isolation": omit}, mode: "default", rules: "none", want: "defer"},
		{tool: "AskUserQuestion", mode: "default", rules: "none", want: "defer"},
		{tool: "EnterPlanMode", mode: "default", rules: "none", want: "defer"},
		{tool: "ExitPlanMode", mode: "plan", rules: "none", want: "defer"},
		{tool: "TodoWrite", mode: "default", rules: "none", want: "defer"},
		{tool: "TaskCreate", mode: "default", rules: "none", want: "defer"},
		{tool: "TaskUpdate", mode: "default", rules: "none", want: "defer"},
		{tool: "TaskStop", mode: "default", rules: "none", want: "defer"},
		{tool: "CronCreate", mode: "default", rules: "none", want: "defer"},
		// Commands, MCP servers, opaque and unknown tools.
		{tool: "Monitor", set: map[string]any{"command": "tail -f " + ws + "/app.log", "ws": omit}, mode: "default", rules: "none", want: "ask", reason: "command.execute tail"},
		{tool: "Monitor", set: map[string]any{"command": omit, "ws": map[string]any{"url": "wss://events.example/feed"}}, mode: "default", rules: "none", want: "ask", reason: "network.connect events.example:443"},
		{tool: "Monitor", set: map[string]any{"command": "git push origin main", "ws": omit}, mode: "bypassPermissions", rules: "rules", want: "deny"},
		{tool: "ReadMcpResourceTool", set: map[string]any{"server": "github", "uri": "repo://a/b"}, mode: "default", rules: "rules", want: "allow"},
		{tool: "ReadMcpResourceTool", set: map[string]any{"server": "github", "uri": "repo://a/b"}, mode: "default", rules: "none", want: "ask", reason: "mcp__github__ReadMcpResourceTool"},
		{tool: "ListMcpResourcesTool", set: map[string]any{"server": "github"}, mode: "default", rules: "rules", want: "allow"},
		{tool: "EnterWorktree", mode: "bypassPermissions", rules: "none", want: "ask"},
		{tool: "PowerShell", mode: "bypassPermissions", rules: "none", want: "ask"},
		{tool: "SomeToolOfTomorrow", mode: "bypassPermissions", rules: "none", want: "ask", reason: "does not know this tool"},
		// A rule naming an unknown tool decides it, as on /v1/decide.
		{tool: "SomeToolOfTomorrow", mode: "default", rules: "rules", want: "allow"},
		{tool: "SomeToolOfTomorrow", mode: "plan", rules: "rules", want: "defer"},
	}
}

// TestHookModes drives the built "airlock hook claude-code" with calls
// shaped exactly like the Claude Agent SDK's published input types
// (pinned in integrations/claudecode/testdata/sdk): every field the type
// declares, then the fields the case sets. It checks the answer under
// each permission mode and rule set, and that the audit log records the
// answer given. It runs as root and as uid 65534.
func TestHookModes(t *testing.T) {
	types, err := claudetypes.Load(".")
	if errors.Is(err, claudetypes.ErrNotInstalled) && os.Getenv("CI") == "" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	bin := buildAirlock(t)
	forEachHookUser(t, bin, func(t *testing.T, e hookEnv) { testHookModes(t, types, e) })
}

func testHookModes(t *testing.T, types *claudetypes.Types, e hookEnv) {
	for _, f := range []string{"src/main.go", "docs/guide.md", "secrets/token", "nb.ipynb", "app.log"} {
		p := filepath.Join(e.ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o777))
		must(t, os.WriteFile(p, []byte("x\n"), 0o666))
	}
	must(t, os.MkdirAll(filepath.Join(e.ws, ".git", "hooks"), 0o777))
	runs := 0
	var err error
	for _, set := range []string{"none", "rules"} {
		must(t, os.WriteFile(filepath.Join(e.ws, ".airlock", "policy.toml"), []byte(hookRules[set]), 0o644))
		for i, c := range hookModeCases(e.ws, e.home) {
			if c.rules != set {
				continue
			}
			name := fmt.Sprintf("%s/%s/%s", c.tool, c.mode, c.rules)
			var input map[string]any
			if iface, ok := types.InputOf(c.tool); ok {
				if input, err = iface.Sample(c.set); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			} else if c.tool == "PowerShell" || c.tool == "SomeToolOfTomorrow" {
				// Not published: PowerShell's input is not in sdk-tools.d.ts.
				input = map[string]any{"command": "Get-ChildItem"}
			} else {
				t.Fatalf("%s: the pinned SDK publishes no input type for %s", name, c.tool)
			}
			toolUse := fmt.Sprintf("toolu_mode_%d", i)
			call, _ := json.Marshal(map[string]any{
				"session_id": "sess-modes", "transcript_path": filepath.Join(e.home, "t.jsonl"), "cwd": e.ws,
				"prompt_id": "p-1", "permission_mode": c.mode, "effort": map[string]any{"level": "high"},
				"hook_event_name": "PreToolUse", "tool_name": c.tool, "tool_input": input, "tool_use_id": toolUse,
			})
			code, stdout, stderr := run(e.command(e.ws, e.bin, "hook", "claude-code"), string(call))
			runs++
			if code != 0 {
				t.Errorf("%s: exit %d, stderr %s", name, code, stderr)
				continue
			}
			var out struct {
				HookSpecificOutput struct {
					HookEventName            string  `json:"hookEventName"`
					PermissionDecision       *string `json:"permissionDecision"`
					PermissionDecisionReason string  `json:"permissionDecisionReason"`
				} `json:"hookSpecificOutput"`
			}
			dec := json.NewDecoder(strings.NewReader(stdout))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&out); err != nil || out.HookSpecificOutput.HookEventName != "PreToolUse" {
				t.Errorf("%s: output %q is not a PreToolUse answer: %v", name, stdout, err)
				continue
			}
			got := "defer"
			if p := out.HookSpecificOutput.PermissionDecision; p != nil {
				got = *p
				if !strings.Contains(strings.Join(types.HookDecisions, " "), got) || got == "defer" {
					t.Errorf("%s: permissionDecision %q is not one the SDK defines", name, got)
				}
			}
			if got != c.want || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, c.reason) {
				t.Errorf("%s: %s (%s), want %s %s", name, got, out.HookSpecificOutput.PermissionDecisionReason, c.want, c.reason)
			}
			if ev := lastAuditEvent(t, e.log); ev.ToolUseID != toolUse || ev.Decision != got {
				t.Errorf("%s: the audit log's last event is %s %q for %s, want %s", name, ev.Tool, ev.Decision, ev.ToolUseID, got)
			}
		}
	}
	if runs == 0 {
		t.Fatal("no case ran")
	}
}

func lastAuditEvent(t *testing.T, path string) audit.Event {
	t.Helper()
	data, err := os.ReadFile(path)
	must(t, err)
	var last audit.Event
	must(t, audit.Read(bytes.NewReader(data), func(e audit.Event) error { last = e; return nil }))
	return last
}
