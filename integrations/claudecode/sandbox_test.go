package claudecode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/integrations/claudecode"
	"github.com/airlockhq/airlock/tool"
)

// goldenCommands are the Bash commands of the gate's golden decision
// table plus the shell constructs quoting is most likely to break on.
func goldenCommands(t *testing.T) []string {
	t.Helper()
	var cases struct {
		Case []struct {
			Tool  string `toml:"tool"`
			Input string `toml:"input"`
		} `toml:"case"`
	}
	if _, err := toml.DecodeFile(filepath.Join("..", "..", "gate", "testdata", "cases.toml"), &cases); err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, c := range cases.Case {
		if c.Tool != "Bash" {
			continue
		}
		cmd := c.Input
		if strings.HasPrefix(cmd, "{") {
			var in struct{ Command string }
			if json.Unmarshal([]byte(cmd), &in) != nil || in.Command == "" {
				continue
			}
			cmd = in.Command
		}
		cmds = append(cmds, cmd)
	}
	if len(cmds) < 20 {
		t.Fatalf("only %d Bash commands in the gate's cases", len(cmds))
	}
	return append(cmds,
		`echo 'single' "double" $'ansi\tc' \'escaped\'`,
		`echo "it's" 'it'\''s'`,
		"cat <<'EOF'\n$HOME `date` 'x'\nEOF",
		"cat <<EOF\n$HOME\nEOF",
		"printf '%s\\n' a\\ b \"c d\"",
		`echo $(echo $(echo nested)) ${HOME:-x} $((1+2)) <(ls) >(cat)`,
		"a=1; { echo $a; } && (cd /tmp || exit) | tee /dev/null &",
		`echo !x !! ^a^b # not history in a script`,
		"echo '\\' \\\\ \"\\\"\"",
		"echo ünïcödé 日本 \x01\x7f",
		"echo \"$(printf '%s' \"'\")\"",
		"trap 'echo bye' EXIT; echo -- --grant fake -- bash -c 'x'",
		"'",
		`echo "unterminated`,
		"   leading and trailing spaces   ",
		"\n\nnewlines\n\n",
	)
}

// TestRewriteQuoting: a real bash, given the rewritten command, must run
// airlock with the original command as one argument, byte for byte, for
// every golden command. The airlock binary is replaced by a script that
// prints its arguments NUL-separated.
func TestRewriteQuoting(t *testing.T) {
	dir := t.TempDir()
	dumper := filepath.Join(dir, "airlock")
	if err := os.WriteFile(dumper, []byte("#!/bin/sh\nprintf '%s\\0' \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	h := f.hook()
	h.Sandbox = &claudecode.Sandbox{Always: true, Airlock: dumper, Issuer: grant.NewRandomIssuer()}
	ran := 0
	for _, cmd := range goldenCommands(t) {
		rewritten, out := rewriteOf(t, f, h, cmd)
		if out.HookSpecificOutput.PermissionDecision == "deny" {
			continue // nothing runs: the gate denied it
		}
		if rewritten == "" {
			t.Errorf("%q was not rewritten: %+v", cmd, out.HookSpecificOutput)
			continue
		}
		got, err := exec.Command("bash", "-c", rewritten).Output()
		if err != nil {
			t.Errorf("bash could not run the rewrite of %q: %v\n%s", cmd, err, rewritten)
			continue
		}
		ran++
		args := strings.Split(strings.TrimSuffix(string(got), "\x00"), "\x00")
		n := len(args)
		if n < 4 || args[0] != "run" || args[n-4] != "--" || args[n-3] != "bash" || args[n-2] != "-c" || args[n-1] != cmd {
			t.Errorf("rewrite of %q ran airlock with %q", cmd, args)
		}
	}
	if ran < 30 {
		t.Errorf("only %d commands were rewritten and run; the rest were denied", ran)
	}
	t.Logf("%d rewritten commands ran", ran)
}

// rewriteOf runs a Bash call through h and returns the rewritten command.
func rewriteOf(t *testing.T, f *fixture, h *claudecode.Hook, cmd string) (string, claudecode.Output) {
	t.Helper()
	in, _ := json.Marshal(map[string]any{
		"session_id": "sess-1", "cwd": f.ws, "hook_event_name": "PreToolUse", "tool_name": "Bash",
		"tool_input": map[string]any{"command": cmd, "description": "d", "timeout": 120000}, "tool_use_id": "toolu_q",
	})
	var stdout, stderr bytes.Buffer
	if code := h.Run(context.Background(), bytes.NewReader(in), &stdout, &stderr); code != 0 {
		t.Fatalf("%q: exit %d: %s", cmd, code, stderr.String())
	}
	var out claudecode.Output
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.HookSpecificOutput.PermissionDecision == "deny" {
		if out.HookSpecificOutput.UpdatedInput != nil {
			t.Errorf("%q: a denial carries updatedInput", cmd)
		}
		return "", out
	}
	if out.HookSpecificOutput.UpdatedInput == nil {
		return "", out
	}
	var upd struct {
		Command     string `json:"command"`
		Description string `json:"description"`
		Timeout     int    `json:"timeout"`
	}
	if err := json.Unmarshal(out.HookSpecificOutput.UpdatedInput, &upd); err != nil {
		t.Fatalf("%q: updatedInput: %v (%s)", cmd, err, stdout.String())
	}
	if upd.Description != "d" || upd.Timeout != 120000 {
		t.Errorf("%q: updatedInput lost the other fields: %+v", cmd, upd)
	}
	return upd.Command, out
}

// TestRewriteGrant: the grant in the rewrite is bound to the exact
// command, the cwd, the profile and the execution id, for the whole
// command as one command.execute, and only once.
func TestRewriteGrant(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	iss := grant.NewRandomIssuer()
	h.Sandbox = &claudecode.Sandbox{Always: true, Airlock: "/usr/local/bin/airlock", Issuer: iss, GrantTTL: time.Minute}
	cmd := "git status && echo 'done'"
	rewritten, out := rewriteOf(t, f, h, cmd)
	if out.HookSpecificOutput.PermissionDecision != "allow" {
		t.Fatalf("decision %q, want allow (echo has no rule, and it runs in the sandbox)", out.HookSpecificOutput.PermissionDecision)
	}
	if !strings.HasSuffix(out.HookSpecificOutput.PermissionDecisionReason, "; it runs inside the airlock sandbox") {
		t.Errorf("reason %q does not say it runs sandboxed", out.HookSpecificOutput.PermissionDecisionReason)
	}
	words := strings.Fields(rewritten)
	value := func(flag string) string {
		for i, w := range words {
			if w == flag && i+1 < len(words) {
				return words[i+1]
			}
		}
		t.Fatalf("no %s in %s", flag, rewritten)
		return ""
	}
	if value("--workspace") != f.ws {
		t.Errorf("--workspace %s, want %s", value("--workspace"), f.ws)
	}
	pol, err := f.policy(f.ws)
	if err != nil {
		t.Fatal(err)
	}
	want := grant.Binding{ExecutionID: value("--execution-id"), Command: cmd, Dir: f.ws,
		Profile: pol.Profile.Fingerprint(), Kind: tool.KindCommandExecute, Target: cmd}
	tok := grant.Token(value("--grant"))
	for name, edit := range map[string]func(*grant.Binding){
		"edited command": func(b *grant.Binding) { b.Command, b.Target = cmd+"; rm -rf x", cmd+"; rm -rf x" },
		"other dir":      func(b *grant.Binding) { b.Dir = "/tmp" },
		"other profile":  func(b *grant.Binding) { b.Profile = strings.Repeat("0", 64) },
		"other exec":     func(b *grant.Binding) { b.ExecutionID = "claude-0000" },
	} {
		b := want
		edit(&b)
		if _, err := iss.Redeem(tok, b); err == nil {
			t.Errorf("%s: the grant was accepted", name)
		}
	}
	if _, err := iss.Redeem(tok, want); err != nil {
		t.Fatalf("the grant for exactly this command: %v", err)
	}
	if _, err := iss.Redeem(tok, want); err == nil {
		t.Fatal("the grant was accepted twice")
	}
}

func TestSandboxFromPolicyFile(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	cmd := "git status"
	// Without a Sandbox the hook cannot rewrite: a workspace that asks
	// for the sandbox gets a denial, never an unsandboxed command.
	writeFile(t, filepath.Join(f.ws, ".airlock", "policy.toml"), "sandbox = true\n[[rule]]\neffect = \"allow\"\nmatch = \"Bash(git status)\"\n")
	_, out := rewriteOf(t, f, h, cmd)
	if out.HookSpecificOutput.PermissionDecision != "deny" {
		t.Fatalf("decision %q, want deny without a way to sandbox", out.HookSpecificOutput.PermissionDecision)
	}
	h.Sandbox = &claudecode.Sandbox{Airlock: "/usr/bin/airlock", Issuer: grant.NewRandomIssuer()}
	rewritten, out := rewriteOf(t, f, h, cmd)
	if out.HookSpecificOutput.PermissionDecision != "allow" || !strings.HasPrefix(rewritten, "/usr/bin/airlock run ") {
		t.Fatalf("with sandbox = true: %q %q", out.HookSpecificOutput.PermissionDecision, rewritten)
	}
	// Positive control: without the key, the same hook does not rewrite.
	writeFile(t, filepath.Join(f.ws, ".airlock", "policy.toml"), "[[rule]]\neffect = \"allow\"\nmatch = \"Bash(git status)\"\n")
	_, out = rewriteOf(t, f, h, cmd)
	if out.HookSpecificOutput.UpdatedInput != nil {
		t.Fatal("rewritten without sandbox = true or Always")
	}
}

func TestSandboxRefusesGrantDirInWorkspace(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	h.Sandbox = &claudecode.Sandbox{Always: true, Airlock: "/usr/bin/airlock", Issuer: grant.NewRandomIssuer(),
		GrantDir: filepath.Join(f.ws, ".state", "grants")}
	_, out := rewriteOf(t, f, h, "git status")
	if out.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(out.HookSpecificOutput.PermissionDecisionReason, "AIRLOCK_GRANT_DIR") {
		t.Fatalf("got %+v, want a denial saying to move the grant directory", out.HookSpecificOutput)
	}
}
