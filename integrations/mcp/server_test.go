package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// serverPolicy allows echo, exit and sleep, denies rm with a reason, and leaves
// every other command to be asked.
const serverPolicy = `
[[rule]]
effect = "allow"
match  = "Bash(echo *)"

[[rule]]
effect = "allow"
match  = "Bash(exit *)"

[[rule]]
effect = "allow"
match  = "Bash(sleep *)"

[[rule]]
effect = "deny"
match  = "Bash(rm *)"
reason = "deleting files is not allowed here"
`

// serverWorkspace is a workspace with serverPolicy and one file, whose
// profile sets auto_allow_in_sandbox = false, so that a command no rule
// allows is asked about (sandboxed_test.go has the default).
func serverWorkspace(t *testing.T) string {
	t.Helper()
	ws := workspace(t)
	policy(t, ws, serverPolicy)
	if err := os.WriteFile(filepath.Join(ws, ".airlock", "profile.toml"), []byte("auto_allow_in_sandbox = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "hello.txt"), []byte("hello from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

// exerciseServer lists the tools, calls each one, and sees denials from
// the gate (a rule, the profile) with host-side evidence.
func exerciseServer(t *testing.T, cs *sdk.ClientSession, ws string) {
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]string{}
	for _, tl := range tools.Tools {
		b, _ := json.Marshal(tl.InputSchema)
		schemas[tl.Name] = string(b)
	}
	want := map[string][]string{
		"run_command":    {`"command"`, `"timeout_seconds"`, `"required":["command"]`},
		"read_file":      {`"path"`, `"required":["path"]`},
		"write_file":     {`"path"`, `"content"`},
		"edit_file":      {`"path"`, `"old_string"`, `"new_string"`},
		"list_directory": {`"path"`, `"required":["path"]`},
	}
	if len(schemas) != len(want) {
		t.Errorf("tools: %v, want exactly %d", schemas, len(want))
	}
	for name, parts := range want {
		for _, p := range parts {
			if !strings.Contains(schemas[name], p) {
				t.Errorf("tool %s schema %s lacks %s", name, schemas[name], p)
			}
		}
	}

	res := call(t, cs, "run_command", map[string]any{"command": "echo hi from the sandbox", "timeout_seconds": 30})
	if o := structured(t, res); res.IsError || o.Status != "succeeded" || o.ExitCode != 0 || o.Output != "hi from the sandbox\n" {
		t.Errorf("run_command echo: isError=%v %+v %q", res.IsError, o, text(res))
	}
	res = call(t, cs, "run_command", map[string]any{"command": "echo failing >&2; exit 3"})
	if o := structured(t, res); !res.IsError || o.Status != "failed" || o.ExitCode != 3 || o.Output != "failing\n" {
		t.Errorf("run_command exit 3: isError=%v %+v", res.IsError, o)
	}
	res = call(t, cs, "run_command", map[string]any{"command": "sleep 30", "timeout_seconds": 0.5})
	if o := structured(t, res); !res.IsError || o.Status != "timed_out" {
		t.Errorf("run_command past its timeout: isError=%v %+v", res.IsError, o)
	}
	res = call(t, cs, "read_file", map[string]any{"path": "hello.txt"})
	if o := structured(t, res); res.IsError || o.Output != "hello from the host\n" || text(res) != o.Output {
		t.Errorf("read_file: isError=%v %+v", res.IsError, o)
	}
	res = call(t, cs, "write_file", map[string]any{"path": "sub/new.txt", "content": "one two three\n"})
	if res.IsError || readFile(t, filepath.Join(ws, "sub", "new.txt")) != "one two three\n" {
		t.Errorf("write_file: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "edit_file", map[string]any{"path": filepath.Join(ws, "sub", "new.txt"), "old_string": "two", "new_string": "2"})
	if res.IsError || readFile(t, filepath.Join(ws, "sub", "new.txt")) != "one 2 three\n" {
		t.Errorf("edit_file: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "edit_file", map[string]any{"path": "sub/new.txt", "old_string": "absent", "new_string": "x"})
	if !res.IsError || !strings.Contains(text(res), "does not occur") {
		t.Errorf("edit_file of absent text: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "list_directory", map[string]any{"path": "."})
	if o := structured(t, res); res.IsError || !strings.Contains(o.Output, "hello.txt\t20 bytes") || !strings.Contains(o.Output, "sub/") {
		t.Errorf("list_directory: isError=%v %q", res.IsError, o.Output)
	}

	// A deny rule: the reason reaches the model, and nothing ran.
	res = call(t, cs, "run_command", map[string]any{"command": "rm hello.txt"})
	o := structured(t, res)
	if !res.IsError || !strings.Contains(text(res), "deleting files is not allowed here") || o.Status != "denied" ||
		len(o.Denials) != 1 || o.Denials[0].Source != "gate" || o.Denials[0].Rule != "Bash(rm *)" {
		t.Errorf("rm: isError=%v %q %+v", res.IsError, text(res), o)
	}
	if !sandboxtest.Exists(filepath.Join(ws, "hello.txt")) {
		t.Error("the denied rm removed hello.txt on the host")
	}
	// The profile: nothing outside the workspace is writable.
	outside := filepath.Join(sandboxtest.OutsideDir(t), "planted.txt")
	res = call(t, cs, "write_file", map[string]any{"path": outside, "content": "x"})
	if !res.IsError || !strings.Contains(text(res), "profile does not allow") || sandboxtest.Exists(outside) {
		t.Errorf("write outside the workspace: isError=%v %q exists=%v", res.IsError, text(res), sandboxtest.Exists(outside))
	}
	res = call(t, cs, "read_file", map[string]any{"path": "/etc/shadow"})
	if !res.IsError || strings.Contains(text(res), "root:") {
		t.Errorf("read /etc/shadow: isError=%v %q", res.IsError, text(res))
	}
}

func TestServeStdioGoClient(t *testing.T) {
	ws := serverWorkspace(t)
	log := filepath.Join(t.TempDir(), "audit.jsonl")
	cs := connectStdio(t, &elicitor{action: "accept"}, serveArgs(ws, "--audit", log)...)
	exerciseServer(t, cs, ws)

	// The decisions are in the audit log, the denial with its rule, and
	// the runs with their exits.
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var denied, exits int
	err = audit.Read(f, func(e audit.Event) error {
		if e.Type == audit.TypeDecision && e.Decision == "deny" && e.Rule == "Bash(rm *)" {
			denied++
		}
		if e.Type == audit.TypeExit {
			exits++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if denied != 1 || exits < 6 {
		t.Errorf("audit log: %d denials of rm (want 1), %d exits (want >= 6)", denied, exits)
	}
}

func TestServeHTTPGoClient(t *testing.T) {
	ws := serverWorkspace(t)
	url, token := startHTTP(t, serveArgs(ws)...)
	el := &elicitor{action: "accept"}
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, &sdk.ClientOptions{ElicitationHandler: el.handle})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearer(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t.Logf("protocol version %s", cs.InitializeResult().ProtocolVersion)
	exerciseServer(t, cs, ws)
	elicitRoundTrip(t, cs, el, ws)
}

// elicitRoundTrip runs a command no rule allows: the gate says ask, the
// client is asked, and the answer decides.
func elicitRoundTrip(t *testing.T, cs *sdk.ClientSession, el *elicitor, ws string) {
	t.Helper()
	el.action = "accept"
	res := call(t, cs, "run_command", map[string]any{"command": "touch approved.txt"})
	if res.IsError || len(el.asked) != 1 || !strings.Contains(el.asked[0], "touch approved.txt") {
		t.Errorf("accepted ask: isError=%v %q asked=%q", res.IsError, text(res), el.asked)
	}
	if !sandboxtest.Exists(filepath.Join(ws, "approved.txt")) {
		t.Error("the approved command did not run")
	}
	el.action = "decline"
	res = call(t, cs, "run_command", map[string]any{"command": "touch declined.txt"})
	if !res.IsError || len(el.asked) != 2 || !strings.Contains(text(res), "decline") {
		t.Errorf("declined ask: isError=%v %q asked=%d", res.IsError, text(res), len(el.asked))
	}
	if sandboxtest.Exists(filepath.Join(ws, "declined.txt")) {
		t.Error("the declined command ran")
	}
}

func TestServeElicitation(t *testing.T) {
	ws := serverWorkspace(t)
	el := &elicitor{}
	cs := connectStdio(t, el, serveArgs(ws)...)
	elicitRoundTrip(t, cs, el, ws)
}

// A client that cannot ask gets a refusal the model can read, and nothing runs.
func TestServeAskWithoutElicitation(t *testing.T) {
	ws := serverWorkspace(t)
	cs := connectStdio(t, nil, serveArgs(ws)...)
	res := call(t, cs, "run_command", map[string]any{"command": "touch refused.txt"})
	o := structured(t, res)
	if !res.IsError || !strings.Contains(text(res), "does not support elicitation") || !strings.Contains(text(res), "Bash(touch refused.txt)") || o.Status != "denied" {
		t.Errorf("ask without elicitation: isError=%v %q %+v", res.IsError, text(res), o)
	}
	if sandboxtest.Exists(filepath.Join(ws, "refused.txt")) {
		t.Error("the refused command ran")
	}
	// Positive control: an allowed command runs in this same session.
	if res := call(t, cs, "run_command", map[string]any{"command": "echo ok"}); res.IsError {
		t.Errorf("echo: %q", text(res))
	}
}

// An answer the server never asked for approves nothing: a client cannot
// skip the question by sending a made-up request state.
func TestServeForgedApproval(t *testing.T) {
	ws := serverWorkspace(t)
	cs := connectStdio(t, nil, serveArgs(ws)...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{
		Name: "run_command", Arguments: map[string]any{"command": "touch forged.txt"},
		RequestState:   "00112233445566778899aabbccddeeff",
		InputResponses: sdk.InputResponseMap{"airlock_approval": &sdk.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || sandboxtest.Exists(filepath.Join(ws, "forged.txt")) {
		t.Errorf("forged approval: isError=%v %q", res.IsError, text(res))
	}
}

// The sandbox, not only the gate, confines an allowed command: echo is
// allowed, and its redirection to a path outside the workspace is refused
// by the gate; a command that resolves the path only when it runs is
// asked about, and once approved the sandbox still stops it.
func TestServeSandboxConfinesApprovedCommand(t *testing.T) {
	ws := serverWorkspace(t)
	outside := sandboxtest.OutsideDir(t)
	target := filepath.Join(outside, "escaped.txt")
	el := &elicitor{action: "accept"}
	cs := connectStdio(t, el, serveArgs(ws)...)
	res := call(t, cs, "run_command", map[string]any{"command": `d=` + outside + `; echo pwned > "$d/escaped.txt"`})
	if len(el.asked) != 1 {
		t.Fatalf("the command with a run-time path was not asked about: %q", text(res))
	}
	if !res.IsError || sandboxtest.Exists(target) {
		t.Errorf("approved write outside the workspace: isError=%v %q exists=%v", res.IsError, text(res), sandboxtest.Exists(target))
	}
	// Positive control: the same shape inside the workspace writes.
	inside := filepath.Join(ws, "inside.txt")
	res = call(t, cs, "run_command", map[string]any{"command": `d=` + ws + `; echo ok > "$d/inside.txt"`})
	if res.IsError || !sandboxtest.Exists(inside) {
		t.Errorf("approved write inside the workspace: isError=%v %q", res.IsError, text(res))
	}
	if !slices.ContainsFunc(el.asked, func(s string) bool { return strings.Contains(s, "inside.txt") }) {
		t.Errorf("asked: %q", el.asked)
	}
}

// Real users are not root: airlock mcp serve as uid 65534 runs allowed
// calls in the sandbox and still refuses what the profile denies.
func TestServeUnprivileged(t *testing.T) {
	n := newNobodyTree(t, "airlock-mcp-unpriv-", map[string]string{airlockBin: "airlock", airlockbin.Server(airlockBin): "airlock-server"})
	root, ws := n.root, n.ws
	policy(t, ws, serverPolicy)
	n.own(t)
	cmd := n.command(t, "airlock", serveArgs(ws)...)
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := call(t, cs, "run_command", map[string]any{"command": "echo unprivileged"})
	if o := structured(t, res); res.IsError || o.Output != "unprivileged\n" {
		t.Errorf("run_command as uid 65534: isError=%v %+v", res.IsError, o)
	}
	res = call(t, cs, "write_file", map[string]any{"path": "mine.txt", "content": "ok"})
	if res.IsError || readFile(t, filepath.Join(ws, "mine.txt")) != "ok" {
		t.Errorf("write_file as uid 65534: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "list_directory", map[string]any{"path": ws})
	if o := structured(t, res); res.IsError || o.Output != ".airlock/\nmine.txt\t2 bytes\n" {
		t.Errorf("list_directory as uid 65534 (no placeholders): isError=%v %q", res.IsError, o.Output)
	}
	outside := filepath.Join(root, "escaped.txt")
	res = call(t, cs, "write_file", map[string]any{"path": outside, "content": "x"})
	if !res.IsError || sandboxtest.Exists(outside) {
		t.Errorf("write outside as uid 65534: isError=%v %q", res.IsError, text(res))
	}
}

// Over HTTP, the server listens only on loopback and refuses requests a
// web page could make: another Host (DNS rebinding) or a cross-origin
// browser request.
func TestServeHTTPRefusesBrowsersAndRemoteAddresses(t *testing.T) {
	ws := serverWorkspace(t)
	cmd := exec.Command(airlockBin, append(serveArgs(ws), "--http", "0.0.0.0:0")...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || !strings.Contains(string(out), "loopback") {
		t.Errorf("--http 0.0.0.0:0: %v %s", err, out)
	}

	url, token := startHTTP(t, serveArgs(ws)...)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	post := func(edit func(*http.Request)) int {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		edit(req)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(func(*http.Request) {}); code != http.StatusOK {
		t.Errorf("plain initialize: %d, want 200 (the positive control)", code)
	}
	if code := post(func(r *http.Request) { r.Host = "attacker.example" }); code != http.StatusForbidden {
		t.Errorf("rebinding Host: %d, want 403", code)
	}
	if code := post(func(r *http.Request) {
		r.Header.Set("Origin", "https://attacker.example")
		r.Header.Set("Sec-Fetch-Site", "cross-site")
	}); code != http.StatusForbidden {
		t.Errorf("cross-origin browser request: %d, want 403", code)
	}
}

// A client whose elicitation fails gets a refusal as a tool result, not a
// protocol error, and nothing runs.
func TestServeFailedElicitation(t *testing.T) {
	ws := serverWorkspace(t)
	url, token := startHTTP(t, serveArgs(ws)...)
	asked := 0
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, &sdk.ClientOptions{
		ElicitationHandler: func(context.Context, *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			asked++
			return nil, errors.New("the user interface is gone")
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: bearer(token)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res := call(t, cs, "run_command", map[string]any{"command": "touch unasked.txt"})
	if asked != 1 || !res.IsError || !strings.Contains(text(res), "could not ask") || sandboxtest.Exists(filepath.Join(ws, "unasked.txt")) {
		t.Errorf("failed elicitation: asked %d, isError=%v %q", asked, res.IsError, text(res))
	}
}
