package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// tsResult is what testdata/node/client.mjs prints.
type tsResult struct {
	Tools []struct {
		Name       string   `json:"name"`
		Properties []string `json:"properties"`
		Required   []string `json:"required"`
	} `json:"tools"`
	Results []struct {
		IsError    bool    `json:"isError"`
		Text       string  `json:"text"`
		Structured outcome `json:"structured"`
		Elicited   int     `json:"elicited"`
	} `json:"results"`
}

// runTSClient runs the TypeScript SDK client with the calls of script.
func runTSClient(t *testing.T, script []map[string]any, args ...string) tsResult {
	t.Helper()
	nodeModules(t)
	in, err := json.Marshal(script)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join("testdata", "node", "client.mjs")}, args...)...)
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	var r tsResult
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("client.mjs output %q: %v", stdout.String(), err)
	}
	if len(r.Results) != len(script) {
		t.Fatalf("client.mjs made %d calls, want %d", len(r.Results), len(script))
	}
	return r
}

// tsScript calls every tool, one denial and one command that is asked.
func tsScript(ws string) []map[string]any {
	return []map[string]any{
		{"name": "run_command", "arguments": map[string]any{"command": "echo from typescript"}},
		{"name": "read_file", "arguments": map[string]any{"path": "hello.txt"}},
		{"name": "write_file", "arguments": map[string]any{"path": "ts.txt", "content": "alpha beta\n"}},
		{"name": "edit_file", "arguments": map[string]any{"path": "ts.txt", "old_string": "beta", "new_string": "gamma"}},
		{"name": "list_directory", "arguments": map[string]any{"path": ws}},
		{"name": "run_command", "arguments": map[string]any{"command": "rm hello.txt"}},
		{"name": "run_command", "arguments": map[string]any{"command": "touch elicited.txt"}},
	}
}

func checkTSResult(t *testing.T, r tsResult, ws string) {
	t.Helper()
	var names []string
	for _, tl := range r.Tools {
		names = append(names, tl.Name+"("+strings.Join(tl.Properties, ",")+"|"+strings.Join(tl.Required, ",")+")")
	}
	want := "edit_file(new_string,old_string,path|new_string,old_string,path) list_directory(path|path) read_file(path|path) " +
		"run_command(command,timeout_seconds|command) write_file(content,path|content,path)"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools:\n got %s\nwant %s", got, want)
	}
	res := r.Results
	if res[0].IsError || res[0].Text != "from typescript\n" || res[0].Structured.Status != "succeeded" {
		t.Errorf("run_command: %+v", res[0])
	}
	if res[1].IsError || res[1].Text != "hello from the host\n" {
		t.Errorf("read_file: %+v", res[1])
	}
	if res[2].IsError || res[3].IsError || readFile(t, filepath.Join(ws, "ts.txt")) != "alpha gamma\n" {
		t.Errorf("write_file, edit_file: %+v %+v", res[2], res[3])
	}
	if res[4].IsError || !strings.Contains(res[4].Text, "ts.txt") {
		t.Errorf("list_directory: %+v", res[4])
	}
	if !res[5].IsError || !strings.Contains(res[5].Text, "deleting files is not allowed here") || res[5].Structured.Status != "denied" ||
		!sandboxtest.Exists(filepath.Join(ws, "hello.txt")) {
		t.Errorf("denied rm: %+v", res[5])
	}
	if res[6].IsError || res[6].Elicited != 1 || !sandboxtest.Exists(filepath.Join(ws, "elicited.txt")) {
		t.Errorf("elicited touch: %+v", res[6])
	}
	for i, x := range res[:6] {
		if x.Elicited != 0 {
			t.Errorf("call %d asked the client, but rules or the profile decide it", i)
		}
	}
}

func TestServeStdioTypeScriptClient(t *testing.T) {
	ws := serverWorkspace(t)
	r := runTSClient(t, tsScript(ws), append([]string{"stdio", airlockBin}, serveArgs(ws)...)...)
	checkTSResult(t, r, ws)
}

func TestServeHTTPTypeScriptClient(t *testing.T) {
	nodeModules(t)
	ws := serverWorkspace(t)
	url, token := startHTTP(t, serveArgs(ws)...)
	r := runTSClient(t, tsScript(ws), "http", url, token)
	checkTSResult(t, r, ws)
}
