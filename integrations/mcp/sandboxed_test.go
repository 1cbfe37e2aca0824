package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// asUsers runs f as the test's user and, from root, as uid 65534 (real
// users are not root), with connect starting airlock mcp serve as that
// user.
func asUsers(t *testing.T, f func(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession)) {
	t.Run("self", func(t *testing.T) {
		f(t, func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession {
			return connectStdio(t, el, serveArgs(ws)...)
		})
	})
	t.Run("uid 65534", func(t *testing.T) {
		if sandboxtest.Unprivileged() {
			t.Skip("already unprivileged: the run above is the unprivileged one")
		}
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("setpriv (util-linux) is not installed")
		}
		f(t, func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession {
			return connectNobody(t, setpriv, el, ws)
		})
	})
}

// connectNobody starts airlock mcp serve on ws as uid 65534, with ws
// (and everything in it) and a home of its own given to that user.
func connectNobody(t *testing.T, setpriv string, el *elicitor, ws string) *sdk.ClientSession {
	t.Helper()
	root, err := os.MkdirTemp("", "airlock-mcp-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	home := filepath.Join(root, "home")
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	// airlock and the airlock-server it hands mcp to.
	bin, err := airlockbin.CopyTo(airlockBin, root)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	chown := func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID)
	}
	for _, d := range []string{home, ws} {
		if err := filepath.Walk(d, chown); err != nil {
			t.Fatal(err)
		}
	}
	// The workspace's parents must be passable for uid 65534.
	for d := filepath.Dir(ws); d != "/"; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(d, fi.Mode().Perm()|0o011); err != nil {
				t.Fatal(err)
			}
		}
	}
	cmd := exec.Command(setpriv, append([]string{"--reuid", "65534", "--regid", "65534", "--clear-groups", "--", bin}, serveArgs(ws)...)...)
	cmd.Env = []string{"PATH=" + sandboxtest.SystemPath, "HOME=" + home, "LANG=C.UTF-8"}
	cmd.Stderr = &testWriter{t: t}
	opts := &sdk.ClientOptions{}
	if el != nil {
		opts.ElicitationHandler = el.handle
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to airlock mcp serve as uid 65534: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

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

// rmVictim removes src/a.js through python's subprocess.
const rmVictim = `/usr/bin/python3 -c 'import subprocess; subprocess.run(["rm", "src/a.js"])'`

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
	asUsers(t, testServeTreeReads)
}

func testServeTreeReads(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession) {
	ws := treeWorkspace(t, "[filesystem]\ndeny = [\"**/.env\"]\n")
	el := &elicitor{action: "decline"}
	cs := connect(t, el, ws)
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
	cs2 := connect(t, &elicitor{action: "decline"}, open)
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

// Read and Bash deny rules hold inside the sandbox mcp serve runs
// commands in: an interpreter the gate cannot see into (allowed, as a
// command no rule mentions) gets nothing of the file and cannot run rm,
// and a read of the whole tree is allowed and shows the rest. The
// positive control, without the rules, prints the secret and removes the
// file through the same calls.
func TestServeDenyRulesHoldInTheSandbox(t *testing.T) {
	const readEnv = `/usr/bin/python3 -c 'print(open(".env").read())'`
	if !sandboxtest.Exists("/usr/bin/python3") {
		t.Skip("no /usr/bin/python3 on this host")
	}
	asUsers(t, func(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession) {
		testServeReadRule(t, connect, readEnv)
	})
}

func testServeReadRule(t *testing.T, connect func(t *testing.T, el *elicitor, ws string) *sdk.ClientSession, readEnv string) {
	ws := treeWorkspace(t, "")
	policy(t, ws, "[[rule]]\neffect = \"deny\"\nmatch = \"Read(./.env)\"\n\n[[rule]]\neffect = \"deny\"\nmatch = \"Bash(rm:*)\"\n")
	el := &elicitor{action: "decline"}
	cs := connect(t, el, ws)
	// rm through python's subprocess: the gate sees only python; the
	// sandbox has no rm to run.
	res0 := call(t, cs, "run_command", map[string]any{"command": rmVictim})
	if !sandboxtest.Exists(filepath.Join(ws, "src", "a.js")) {
		t.Errorf("python's rm removed src/a.js under deny Bash(rm:*): %q", text(res0))
	}
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
	cs2 := connect(t, &elicitor{action: "decline"}, open)
	res = call(t, cs2, "run_command", map[string]any{"command": readEnv})
	if o := structured(t, res); !strings.Contains(o.Output, treeSecret) {
		t.Errorf("control: python without the rule: %q", o.Output)
	}
	call(t, cs2, "run_command", map[string]any{"command": rmVictim})
	if sandboxtest.Exists(filepath.Join(open, "src", "a.js")) {
		t.Error("control: python's rm without the rule did not remove src/a.js")
	}
}
