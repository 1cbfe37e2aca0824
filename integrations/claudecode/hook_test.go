package claudecode_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/integrations/claudecode"
	"github.com/airlockhq/airlock/workspace"
)

var update = flag.Bool("update", false, "rewrite testdata/hook.golden from the current answers")

// fixture is a workspace with every rule layer and a fake home.
type fixture struct {
	ws, home, testdata string
	log                *audit.Log
	logPath            string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	td, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	real := func(d string) string {
		r, err := filepath.EvalSymlinks(d)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	f := &fixture{ws: real(t.TempDir()), home: real(t.TempDir()), testdata: td}
	copyTo := func(src, dst string) {
		data, err := os.ReadFile(filepath.Join(td, src))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dst, string(data))
	}
	copyTo("policy.toml", filepath.Join(f.ws, ".airlock", "policy.toml"))
	copyTo("claude-settings.json", filepath.Join(f.ws, ".claude", "settings.json"))
	writeFile(t, filepath.Join(f.ws, "src", "main.go"), "package main\n")
	writeFile(t, filepath.Join(f.ws, ".git", "config"), "[core]\n")
	writeFile(t, filepath.Join(f.ws, ".git", "hooks", "README"), "")
	writeFile(t, filepath.Join(f.home, ".ssh", "id_ed25519"), "not a key\n")
	f.logPath = filepath.Join(t.TempDir(), "audit.jsonl")
	if f.log, err = audit.Open(f.logPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.log.Close() })
	return f
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// policy loads the workspace preset and the four layers plus Claude
// Code's settings, as airlock hook claude-code does.
func (f *fixture) policy(ws string) (*workspace.Policy, error) {
	return workspace.Load(ws, workspace.Overrides{Workspace: ws, Home: f.home,
		Managed: filepath.Join(f.testdata, "managed.toml"), User: filepath.Join(f.testdata, "user.toml")})
}

func (f *fixture) hook() *claudecode.Hook {
	return &claudecode.Hook{
		Workspace: func(cwd string) string { return claudecode.FindWorkspace(cwd, f.ws) },
		Policy:    f.policy,
		Recorder:  f.log,
		Home:      f.home,
	}
}

// expand puts the fixture's directories in place of $WS and $HOME.
func (f *fixture) expand(s string) string {
	return strings.NewReplacer("$WS", f.ws, "$HOME", f.home).Replace(s)
}

// fold is expand's inverse, for the golden file.
func (f *fixture) fold(s string) string {
	return strings.NewReplacer(f.ws, "$WS", f.home, "$HOME").Replace(s)
}

func (f *fixture) events(t *testing.T) []audit.Event {
	t.Helper()
	data, err := os.ReadFile(f.logPath)
	if err != nil {
		t.Fatal(err)
	}
	var evs []audit.Event
	if err := audit.Read(bytes.NewReader(data), func(e audit.Event) error { evs = append(evs, e); return nil }); err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestHookGolden runs every input in testdata/hook through the hook and
// compares the exit status, stdout and stderr with testdata/hook.golden,
// which a person reviews. Each call must also leave exactly one decision
// in the audit log, carrying the call's session and tool-use ids.
func TestHookGolden(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	files, err := filepath.Glob(filepath.Join("testdata", "hook", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases: %v", err)
	}
	sort.Strings(files)
	var got strings.Builder
	got.WriteString("# The hook's answers to testdata/hook/*.json (go test -update rewrites this file).\n")
	got.WriteString("# $WS is the workspace, $HOME the home directory.\n")
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		input := f.expand(string(data))
		before := len(f.events(t))
		var stdout, stderr bytes.Buffer
		code := h.Run(context.Background(), strings.NewReader(input), &stdout, &stderr)
		fmt.Fprintf(&got, "\n== %s\nexit %d\nstdout %s\nstderr %s\n", name, code,
			strings.TrimSuffix(f.fold(stdout.String()), "\n"), strings.TrimSuffix(f.fold(stderr.String()), "\n"))

		switch code {
		case claudecode.ExitDecided:
			if stderr.Len() != 0 || !strings.HasPrefix(stdout.String(), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision`) {
				t.Errorf("%s: a decision must be JSON on stdout and nothing on stderr; got %q / %q", name, stdout.String(), stderr.String())
			}
		case claudecode.ExitBlocked:
			if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "airlock: blocked: ") {
				t.Errorf("%s: a block must be a reason on stderr and nothing on stdout; got %q / %q", name, stdout.String(), stderr.String())
			}
		default:
			t.Errorf("%s: exit status %d lets Claude Code run the call; only 0 and 2 are allowed", name, code)
		}
		evs := f.events(t)
		if len(evs) != before+1 {
			t.Errorf("%s: %d audit events, want exactly 1", name, len(evs)-before)
			continue
		}
		ev := evs[len(evs)-1]
		if ev.Type != audit.TypeDecision || ev.Decision == "" {
			t.Errorf("%s: audit event %+v is not a decision", name, ev)
		}
		if code == claudecode.ExitDecided {
			var out claudecode.Output
			if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
				t.Errorf("%s: stdout: %v", name, err)
			}
			answered := cmp.Or(out.HookSpecificOutput.PermissionDecision, string(claudecode.VerdictDefer))
			if ev.Decision != answered {
				t.Errorf("%s: the audit records %q, the hook answered %q", name, ev.Decision, answered)
			}
		}
		if code == claudecode.ExitDecided && (ev.SessionID != "sess-1" || !strings.HasPrefix(ev.ToolUseID, "toolu_")) {
			t.Errorf("%s: audit event has session %q and tool use %q, want the call's", name, ev.SessionID, ev.ToolUseID)
		}
		if code == claudecode.ExitDecided && !strings.Contains(input, `"tool_use_id":"`+ev.ToolUseID+`"`) {
			t.Errorf("%s: audit event has tool use %q, which is not the call's", name, ev.ToolUseID)
		}
	}

	golden := filepath.Join("testdata", "hook.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got.String() != string(want) {
		t.Errorf("answers differ from %s (go test -update rewrites it; review the diff):\n%s", golden, diffLines(string(want), got.String()))
	}
}

// diffLines lists the lines of want and got that differ, in order.
func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d\n  want %s\n  got  %s\n", i+1, wl, gl)
		}
	}
	return b.String()
}

func TestHookOversizedInput(t *testing.T) {
	f := newFixture(t)
	h := f.hook()
	h.MaxInput = 1 << 20
	pad := strings.Repeat("x", 1<<20)
	input := f.expand(`{"session_id":"sess-1","cwd":"$WS","hook_event_name":"PreToolUse","tool_name":"Write","tool_input":{"file_path":"$WS/a","content":"` + pad + `"},"tool_use_id":"toolu_big"}`)
	var stdout, stderr bytes.Buffer
	code := h.Run(context.Background(), strings.NewReader(input), &stdout, &stderr)
	if code != claudecode.ExitBlocked || stdout.Len() != 0 ||
		stderr.String() != "airlock: blocked: the hook input is larger than 1048576 bytes\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 2 and the size on stderr", code, stdout.String(), stderr.String())
	}
	// Positive control: the same call a little smaller is decided.
	small := strings.Replace(input, pad, pad[:1<<19], 1)
	stdout.Reset()
	stderr.Reset()
	if code := h.Run(context.Background(), strings.NewReader(small), &stdout, &stderr); code != claudecode.ExitDecided {
		t.Fatalf("the smaller call: exit %d, stderr %q", code, stderr.String())
	}
}

// TestHookBrokenPolicyDenies: a rule file that does not parse must not
// become a weaker policy; every call is denied and says which file.
func TestHookBrokenPolicyDenies(t *testing.T) {
	f := newFixture(t)
	writeFile(t, filepath.Join(f.ws, ".airlock", "policy.toml"), "[[rule]]\neffect = \"allow\"\nmatch = \"Bash(\n")
	var stdout, stderr bytes.Buffer
	in := f.expand(`{"session_id":"sess-1","cwd":"$WS","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git status"},"tool_use_id":"toolu_1"}`)
	code := f.hook().Run(context.Background(), strings.NewReader(in), &stdout, &stderr)
	if code != 0 || !strings.Contains(stdout.String(), `"permissionDecision":"deny"`) || !strings.Contains(stdout.String(), "policy.toml") {
		t.Fatalf("exit %d stdout %s: want a denial naming the broken file", code, stdout.String())
	}
}
