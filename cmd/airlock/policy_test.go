package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// policyWorkspace makes a workspace with rule files in two layers and
// Claude Code settings.
func policyWorkspace(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	files := map[string]string{
		".airlock/policy.toml": `
[[rule]]
effect = "ask"
match  = "Bash(git push:*)"
reason = "pushes are reviewed"

[[rule]]
effect = "allow"
match  = "Bash(git:*)"

  [[rule.example]]
  input  = "git status"
  expect = "allow"

  [[rule.example]]
  input  = "git push origin main"
  expect = "ask"

[[rule]]
effect  = "allow"
match   = "Bash(make)"
expires = 2020-01-01T00:00:00Z

[[rule]]
effect = "allow"
match  = "Bash(rm -rf build)"

[[rule]]
effect = "deny"
match  = "Bash(rm:*)"
reason = "no deleting"

  [[rule.example]]
  input  = "cd x && rm -r y"
  expect = "deny"
`,
		".airlock/policy.local.toml": `
[[rule]]
effect = "allow"
match  = "Bash(cd:*)"
`,
		".claude/settings.json": `{"permissions": {"deny": ["Read(./.env)"], "allow": ["Frobnicate"]}}`,
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

func runPolicyArgs(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := runPolicy(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestPolicyExplainJSON(t *testing.T) {
	ws := policyWorkspace(t)
	tests := []struct {
		tool, input, decision, rule, layer string
	}{
		{"Bash", `{"command":"cd sub && git push"}`, "ask", "Bash(git push:*)", "workspace"},
		{"Bash", `{"command":"git status && git log"}`, "allow", "Bash(git:*)", "workspace"},
		{"Bash", `{"command":"cat .env"}`, "deny", "Read(./.env)", "workspace"},
		{"Bash", `{"command":"rm -rf build"}`, "deny", "Bash(rm:*)", "workspace"},
		{"Read", `{"file_path":"/etc/shadow"}`, "deny", "", "profile"},
		// Tools no preparer knows are one tool.invoke of their name, as
		// for the hook and /v1/decide: a rule naming one decides it.
		{"Frobnicate", `{}`, "allow", "Frobnicate", "workspace"},
		{"Agent", `{"prompt":"p","description":"d"}`, "ask", "", ""},
		{"EnterWorktree", `{}`, "ask", "", ""},
	}
	for _, tt := range tests {
		code, out, errOut := runPolicyArgs("explain", "--workspace", ws, "--managed", "-", "--user", "-",
			"--tool", tt.tool, "--input", tt.input, "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tt.input, code, errOut)
		}
		var got struct {
			Decision, Reason, Rule, Layer, Note string
			Requirements                        []map[string]any
		}
		if err := json.Unmarshal([]byte(out), &got); err != nil {
			t.Fatalf("%s: %v\n%s", tt.input, err, out)
		}
		if got.Decision != tt.decision || got.Rule != tt.rule || got.Layer != tt.layer || got.Reason == "" {
			t.Errorf("%s %s: got %+v, want %s %s %s", tt.tool, tt.input, got, tt.decision, tt.rule, tt.layer)
		}
		// A tool that is not gated and that no rule names is weighed by
		// its class on the other surfaces; explain says how.
		if wantNote := tt.rule == "" && (tt.tool == "Agent" || tt.tool == "EnterWorktree"); wantNote != (got.Note != "") {
			t.Errorf("%s: note %q", tt.tool, got.Note)
		}
		if tt.tool == "Bash" && len(got.Requirements) == 0 {
			t.Errorf("%s: no requirements in the JSON", tt.input)
		}
	}
}

func TestPolicyExplainText(t *testing.T) {
	ws := policyWorkspace(t)
	code, out, _ := runPolicyArgs("explain", "--workspace", ws, "--managed", "-", "--user", "-",
		"--tool", "Bash", "--input", `{"command":"git log; rm -rf x"}`)
	if code != 0 || !strings.Contains(out, "decision: deny") || !strings.Contains(out, "no deleting") ||
		!strings.Contains(out, "command.execute git log") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

func TestPolicyList(t *testing.T) {
	ws := policyWorkspace(t)
	code, out, errOut := runPolicyArgs("list", "--workspace", ws, "--managed", "-", "--user", "-")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"NEVER FIRES (expired)", "NEVER FIRES (shadowed): deny rule Bash(rm:*)", "NEVER FIRES (unmatchable)",
		"local      allow   Bash(cd:*)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("list does not show %q:\n%s", want, out)
		}
	}
	code, out, _ = runPolicyArgs("list", "--workspace", ws, "--managed", "-", "--user", "-", "--json")
	var rules []struct {
		Match, Layer, Problem string
	}
	if code != 0 || json.Unmarshal([]byte(out), &rules) != nil || len(rules) != 8 {
		t.Errorf("list --json: exit %d, %d rules:\n%s", code, len(rules), out)
	}
}

func TestPolicyTest(t *testing.T) {
	ws := policyWorkspace(t)
	code, out, _ := runPolicyArgs("test", filepath.Join(ws, ".airlock", "policy.toml"))
	if code != 0 || !strings.Contains(out, "3 passed, 0 failed") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	bad := filepath.Join(ws, "bad.toml")
	os.WriteFile(bad, []byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls *)\"\n[[rule.example]]\ninput = \"ls; rm x\"\nexpect = \"allow\"\n"), 0o644)
	code, out, _ = runPolicyArgs("test", bad)
	if code != 1 || !strings.Contains(out, "FAIL  "+bad+":4") {
		t.Errorf("a failing example: exit %d:\n%s", code, out)
	}
	broken := filepath.Join(ws, "broken.toml")
	os.WriteFile(broken, []byte("[[rule]]\neffect = \"allow\"\nmatch = \"Bash(ls\"\n"), 0o644)
	code, _, errOut := runPolicyArgs("test", broken)
	if code != 1 || !strings.Contains(errOut, "broken.toml:1") || !strings.Contains(errOut, `"Bash(ls"`) {
		t.Errorf("a broken file: exit %d: %s", code, errOut)
	}
}

func TestPolicyHelpAndUsage(t *testing.T) {
	for _, sub := range []string{"explain", "test", "list"} {
		code, out, errOut := runPolicyArgs(sub, "--help")
		if code != 0 || !strings.Contains(out, "Usage: airlock policy "+sub) || errOut != "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", sub, code, out, errOut)
		}
	}
	if code, out, _ := runPolicyArgs("--help"); code != 0 || !strings.Contains(out, "explain") {
		t.Errorf("policy --help: %d %s", code, out)
	}
	if code, _, _ := runPolicyArgs("explain", "--tool", "Bash"); code != 125 {
		t.Errorf("missing --input: exit %d", code)
	}
	if code, _, _ := runPolicyArgs("explain", "--tool", "Bash", "--input", "{not json"); code != 125 {
		t.Errorf("bad JSON: exit %d", code)
	}
	if code, _, _ := runPolicyArgs("nope"); code != 125 {
		t.Errorf("unknown command: exit %d", code)
	}
}
