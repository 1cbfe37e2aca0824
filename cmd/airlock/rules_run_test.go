package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// ruleFile denies reading .env, editing the CI workflows and running rm:
// the workspace's rules, which every sandboxed run of the workspace
// enforces.
const ruleFile = `
[[rule]]
effect = "deny"
match  = "Read(./.env)"

[[rule]]
effect = "deny"
match  = "Edit(./.github/workflows/**)"

[[rule]]
effect = "deny"
match  = "Bash(rm:*)"
`

// TestEntryPointsHoldWorkspaceRules: a plain airlock run in a workspace
// with rule files, and the Claude Code hook's rewritten command, enforce
// its deny rules in the sandbox against a program the gate cannot see
// into (python): .env is not read, the workflow is not rewritten, no new
// file appears under the denied directory, rm run as a subprocess does
// not remove the file. The positive control is the same run and the same
// hook rewrite in the workspace without the rule file, which read the
// secret, rewrite the workflow, create the new file and remove the
// victim. Run as root
// and as uid 65534.
func TestEntryPointsHoldWorkspaceRules(t *testing.T) {
	if !sandboxtest.Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	bin := buildAirlock(t)
	forEachHookUser(t, bin, testEntryPointsHoldRules)
}

func testEntryPointsHoldRules(t *testing.T, e hookEnv) {
	const secret = "SECRET-RUN-5e21"
	workflow := filepath.Join(e.ws, ".github", "workflows", "ci.yml")
	e.write(t, filepath.Join(e.ws, ".env"), "TOKEN="+secret+"\n")
	e.write(t, workflow, "on: push\n")
	probe := `/usr/bin/python3 -c '
try:
    print(open(".env").read())
except OSError as e:
    print("read refused:", e)
try:
    open(".github/workflows/ci.yml", "w").write("on: pwned\n")
    print("WROTE-WORKFLOW")
except OSError as e:
    print("write refused:", e)
try:
    open(".github/workflows/new.yml", "w").write("on: planted\n")
    print("WROTE-NEW-WORKFLOW")
except OSError as e:
    print("create refused:", e)
import subprocess
try:
    subprocess.run(["rm", "victim.txt"])
except OSError as e:
    print("rm refused:", e)
'`
	victim := filepath.Join(e.ws, "victim.txt")
	planted := filepath.Join(e.ws, ".github", "workflows", "new.yml")
	reset := func() {
		e.write(t, workflow, "on: push\n")
		e.write(t, victim, "keep\n")
		os.Remove(planted)
	}
	reset()
	pwned := func() bool {
		data, _ := os.ReadFile(workflow)
		return strings.Contains(string(data), "pwned")
	}

	// Positive control: no rule file, the same run reads and writes.
	must(t, os.Remove(filepath.Join(e.ws, ".airlock", "policy.toml")))
	code, so, se := run(e.command(e.ws, e.bin, "run", "--", "bash", "-c", probe), "")
	if code != 0 || !strings.Contains(so, secret) || !pwned() || !sandboxtest.Exists(planted) || sandboxtest.Exists(victim) {
		t.Fatalf("control: exit %d %q %q: the probe cannot see the rules hold", code, so, se)
	}
	reset()
	// The hook's rewrite of the same command, without the rules: the
	// sandbox it runs in lets the probe do all of it.
	decision, rewritten := e.decide(t, e.ws, probe)
	if decision != "allow" || rewritten == "" {
		t.Fatalf("hook control: %s %q, want allow, sandboxed", decision, rewritten)
	}
	code, so, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
	if code != 0 || !strings.Contains(so, secret) || !pwned() || !sandboxtest.Exists(planted) || sandboxtest.Exists(victim) {
		t.Fatalf("hook control: exit %d %q %q: the probe cannot see the rules hold", code, so, se)
	}
	reset()

	e.write(t, filepath.Join(e.ws, ".airlock", "policy.toml"), ruleFile)
	code, so, se = run(e.command(e.ws, e.bin, "run", "--", "bash", "-c", probe), "")
	if strings.Contains(so+se, secret) || pwned() || sandboxtest.Exists(planted) || !sandboxtest.Exists(victim) {
		t.Errorf("airlock run with the rules: exit %d %q %q", code, so, se)
	}
	if !strings.Contains(so, "read refused") || !strings.Contains(so, "write refused") || !strings.Contains(so, "create refused") {
		t.Errorf("airlock run with the rules: the probe did not run every part: %q %q", so, se)
	}
	reset()

	// The hook's rewrite: the gate allows the command (it cannot see
	// into python), the sandbox holds the rules.
	decision, rewritten = e.decide(t, e.ws, probe)
	if decision != "allow" || rewritten == "" {
		t.Fatalf("hook: %s %q, want allow, sandboxed", decision, rewritten)
	}
	code, so, se = run(e.command(e.ws, "bash", "-c", rewritten), "")
	if strings.Contains(so+se, secret) || pwned() || sandboxtest.Exists(planted) || !sandboxtest.Exists(victim) {
		t.Errorf("the hook's rewritten command: exit %d %q %q", code, so, se)
	}
	if !strings.Contains(so, "read refused") || !strings.Contains(so, "write refused") || !strings.Contains(so, "create refused") {
		t.Errorf("the hook's rewritten command: the probe did not run every part: %q %q", so, se)
	}
}

// doctor says, for each deny rule of the workspace, whether the sandbox
// enforces it and how, or that only the gate does.
func TestDoctorListsWorkspaceRules(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte(ruleFile+"\n[[rule]]\neffect = \"deny\"\nmatch = \"mcp__github__create_issue\"\n"), 0o644))
	var so, se strings.Builder
	dispatch([]string{"doctor", "--json", "--workspace", ws}, &so, &se)
	var doc struct {
		Rules []struct {
			Rule      string `json:"rule"`
			Kernel    bool   `json:"kernel"`
			Mechanism string `json:"mechanism"`
		} `json:"rules"`
	}
	if err := json.Unmarshal([]byte(so.String()), &doc); err != nil {
		t.Fatalf("%v: %s %s", err, so.String(), se.String())
	}
	got := map[string]bool{}
	for _, r := range doc.Rules {
		got[r.Rule] = r.Kernel
	}
	want := map[string]bool{"deny Read(./.env)": true, "deny Edit(./.github/workflows/**)": true, "deny mcp__github__create_issue": false}
	for rule, kernel := range want {
		if k, ok := got[rule]; !ok || k != kernel {
			t.Errorf("%s: listed %v, kernel %v; want kernel %v (all: %+v)", rule, ok, k, kernel, doc.Rules)
		}
	}
	so.Reset()
	dispatch([]string{"doctor", "--workspace", ws}, &so, &se)
	if !strings.Contains(so.String(), "deny rules:") || !strings.Contains(so.String(), "gate only") {
		t.Errorf("doctor's text lacks the rules: %s", so.String())
	}
}

// policy explain --sandboxed decides as a surface that runs the call in
// the sandbox: unmentioned commands and tree reads over masked files are
// allowed; without it, or with auto_allow_in_sandbox = false, they are
// not.
func TestPolicyExplainSandboxed(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte(ruleFile), 0o644))
	tests := []struct {
		command, profileFile string
		sandboxed            bool
		want                 string
	}{
		{"mkdir build", "", false, "ask"},
		{"mkdir build", "", true, "allow"},
		{"mkdir build", "auto_allow_in_sandbox = false\n", true, "ask"},
		{"grep -r needle .", "", false, "deny"},
		{"grep -r needle .", "", true, "allow"},
		{"cat .env", "", true, "deny"},
		{"echo x > .github/workflows/ci.yml", "", true, "deny"},
	}
	for _, tt := range tests {
		pf := filepath.Join(ws, ".airlock", "profile.toml")
		os.Remove(pf)
		if tt.profileFile != "" {
			must(t, os.WriteFile(pf, []byte(tt.profileFile), 0o644))
		}
		args := []string{"policy", "explain", "--json", "--workspace", ws, "--managed", "-", "--user", "-", "--tool", "Bash",
			"--input", `{"command": "` + strings.ReplaceAll(tt.command, `"`, `\"`) + `"}`}
		if tt.sandboxed {
			args = append(args, "--sandboxed")
		}
		var so, se strings.Builder
		dispatch(args, &so, &se)
		var d struct {
			Effect string `json:"decision"`
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal([]byte(so.String()), &d); err != nil {
			t.Fatalf("%v: %s %s", err, so.String(), se.String())
		}
		if d.Effect != tt.want {
			t.Errorf("%q sandboxed=%v profile %q: %s (%s), want %s", tt.command, tt.sandboxed, tt.profileFile, d.Effect, d.Reason, tt.want)
		}
	}
}
