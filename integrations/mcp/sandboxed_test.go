package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// sandboxedPolicy denies rm and asks for git push; every other command is
// one no rule mentions.
const sandboxedPolicy = `
[[rule]]
effect = "deny"
match  = "Bash(rm:*)"
reason = "no deleting here"

[[rule]]
effect = "ask"
match  = "Bash(touch:*)"
`

// In airlock mcp serve every command runs in the sandbox, so one no rule
// mentions runs without a prompt; an ask rule still asks, a deny rule
// still denies; auto_allow_in_sandbox = false in the profile asks for
// everything again.
func TestServeRunsUnmentionedCommandsWithoutAsking(t *testing.T) {
	ws := workspace(t)
	policy(t, ws, sandboxedPolicy)
	writeHostFile(t, filepath.Join(ws, "keep.txt"), "kept\n")
	el := &elicitor{action: "decline"}
	cs := connectStdio(t, el, serveArgs(ws)...)

	res := call(t, cs, "run_command", map[string]any{"command": "mkdir made && echo built > made/out.txt"})
	if res.IsError || len(el.asked) != 0 || readFile(t, filepath.Join(ws, "made", "out.txt")) != "built\n" {
		t.Errorf("unmentioned command: isError=%v %q asked=%q", res.IsError, text(res), el.asked)
	}
	res = call(t, cs, "run_command", map[string]any{"command": "touch asked.txt"})
	if !res.IsError || len(el.asked) != 1 || sandboxtest.Exists(filepath.Join(ws, "asked.txt")) {
		t.Errorf("ask rule, declined: isError=%v %q asked=%q", res.IsError, text(res), el.asked)
	}
	res = call(t, cs, "run_command", map[string]any{"command": "rm keep.txt"})
	if !res.IsError || !strings.Contains(text(res), "no deleting here") || !sandboxtest.Exists(filepath.Join(ws, "keep.txt")) {
		t.Errorf("deny rule: isError=%v %q", res.IsError, text(res))
	}
	if len(el.asked) != 1 {
		t.Errorf("the deny rule asked: %q", el.asked)
	}

	// The profile turns it off: the same unmentioned command is asked
	// about (and declined, so it does not run).
	off := workspace(t)
	policy(t, off, sandboxedPolicy)
	writeHostFile(t, filepath.Join(off, ".airlock", "profile.toml"), "auto_allow_in_sandbox = false\n")
	el2 := &elicitor{action: "decline"}
	cs2 := connectStdio(t, el2, serveArgs(off)...)
	res = call(t, cs2, "run_command", map[string]any{"command": "mkdir made"})
	if !res.IsError || len(el2.asked) != 1 || sandboxtest.Exists(filepath.Join(off, "made")) {
		t.Errorf("auto_allow_in_sandbox = false: isError=%v %q asked=%q", res.IsError, text(res), el2.asked)
	}
}

// treeSecret is the content of the files the profile hides; no output may
// contain it.
const treeSecret = "SECRET-7f3a9c"

// treeWorkspace has source files that mention "needle", and .env files
// holding treeSecret next to them.
func treeWorkspace(t *testing.T, profileTOML string) string {
	t.Helper()
	ws := workspace(t)
	writeHostFile(t, filepath.Join(ws, "src", "a.js"), "const needle = 1\n")
	writeHostFile(t, filepath.Join(ws, "src", "b.js"), "// needle again\n")
	writeHostFile(t, filepath.Join(ws, ".env"), "needle="+treeSecret+"\n")
	writeHostFile(t, filepath.Join(ws, "src", ".env"), "needle="+treeSecret+"\n")
	policy(t, ws, "")
	if profileTOML != "" {
		writeHostFile(t, filepath.Join(ws, ".airlock", "profile.toml"), profileTOML)
	}
	return ws
}

// treeReads are the ordinary reads of a whole tree an agent makes.
var treeReads = []string{
	"grep -r needle .",
	"find . -name '*.js'",
	"find . -type f -exec cat {} +",
	"ls -R",
	`for f in src/* src/.env .env; do cat "$f"; done`,
	"cat src/*.js",
}

// A read of a whole tree is not refused because the profile denies files
// in it: the sandbox masks them, so the output has the rest and never
// their content. A read of the denied file itself is still refused by the
// gate. The positive control, without the deny entry, prints the secret:
// the check would see a leak.
func TestServeTreeReadsMaskDeniedFiles(t *testing.T) {
	ws := treeWorkspace(t, "[filesystem]\ndeny = [\"**/.env\"]\n")
	el := &elicitor{action: "decline"}
	cs := connectStdio(t, el, serveArgs(ws)...)
	for _, cmd := range treeReads {
		res := call(t, cs, "run_command", map[string]any{"command": cmd})
		o := structured(t, res)
		if o.Status == "denied" || !strings.Contains(o.Output, "a.js") && !strings.Contains(o.Output, "needle") {
			t.Errorf("%s: status %s isError=%v %q", cmd, o.Status, res.IsError, text(res))
		}
		if strings.Contains(text(res), treeSecret) || strings.Contains(o.Output, treeSecret) {
			t.Errorf("%s: the output holds the masked file's content: %q", cmd, o.Output)
		}
	}
	res := call(t, cs, "list_directory", map[string]any{"path": "."})
	if o := structured(t, res); res.IsError || !strings.Contains(o.Output, "src/") {
		t.Errorf("list_directory: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "read_file", map[string]any{"path": ".env"})
	if !res.IsError || strings.Contains(text(res), treeSecret) {
		t.Errorf("read_file .env: isError=%v %q", res.IsError, text(res))
	}
	if len(el.asked) != 0 {
		t.Errorf("asked: %q", el.asked)
	}

	// Positive control: without the deny entry the same read shows the
	// secret.
	open := treeWorkspace(t, "")
	cs2 := connectStdio(t, &elicitor{action: "decline"}, serveArgs(open)...)
	res = call(t, cs2, "run_command", map[string]any{"command": "grep -r needle ."})
	if o := structured(t, res); !strings.Contains(o.Output, treeSecret) {
		t.Errorf("control: grep -r without the deny entry: %q", o.Output)
	}
}

func writeHostFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Read deny rule holds inside the sandbox mcp serve runs commands in:
// an interpreter the gate cannot see into (allowed, as a command no rule
// mentions) gets nothing of the file, and a read of the whole tree is
// allowed and shows the rest. The positive control, without the rule,
// prints the secret through the same call.
func TestServeReadRuleHoldsInTheSandbox(t *testing.T) {
	const readEnv = `/usr/bin/python3 -c 'print(open(".env").read())'`
	if !sandboxtest.Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	ws := treeWorkspace(t, "")
	policy(t, ws, "[[rule]]\neffect = \"deny\"\nmatch = \"Read(./.env)\"\n")
	el := &elicitor{action: "decline"}
	cs := connectStdio(t, el, serveArgs(ws)...)
	res := call(t, cs, "run_command", map[string]any{"command": readEnv})
	if o := structured(t, res); o.Status == "denied" || strings.Contains(text(res)+o.Output, treeSecret) {
		t.Errorf("python reading .env under deny Read(./.env): status %s %q", o.Status, o.Output)
	}
	res = call(t, cs, "run_command", map[string]any{"command": "grep -r needle ."})
	// src/.env is not the rule's: it may show; ./.env must not.
	if o := structured(t, res); o.Status == "denied" || !strings.Contains(o.Output, "a.js") || strings.Contains(o.Output, "./.env:needle") {
		t.Errorf("grep -r under deny Read(./.env): status %s %q", o.Status, o.Output)
	}
	if len(el.asked) != 0 {
		t.Errorf("asked: %q", el.asked)
	}

	open := treeWorkspace(t, "")
	cs2 := connectStdio(t, &elicitor{action: "decline"}, serveArgs(open)...)
	res = call(t, cs2, "run_command", map[string]any{"command": readEnv})
	if o := structured(t, res); !strings.Contains(o.Output, treeSecret) {
		t.Errorf("control: python without the rule: %q", o.Output)
	}
}
