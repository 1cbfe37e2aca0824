package mcp_test

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// "mcp serve --http" answers only clients that send its token: without
// it, or with another, nothing is listed or run, even on a session an
// authenticated client opened.
func TestServeHTTPRequiresToken(t *testing.T) {
	ws := serverWorkspace(t)
	url, token := startHTTP(t, serveArgs(ws)...)
	connect := func(hc *http.Client) (*sdk.ClientSession, error) {
		client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil)
	}
	if cs, err := connect(http.DefaultClient); err == nil {
		cs.Close()
		t.Errorf("a client without the token connected")
	}
	if cs, err := connect(bearer(strings.TrimSuffix(token, token[len(token)-1:]) + "x")); err == nil {
		cs.Close()
		t.Errorf("a client with another token connected")
	}

	// Positive control: with the token, a call runs.
	cs, err := connect(bearer(token))
	if err != nil {
		t.Fatalf("with the token: %v", err)
	}
	defer cs.Close()
	if res := call(t, cs, "run_command", map[string]any{"command": "echo ok > authed.txt"}); res.IsError ||
		readFile(t, filepath.Join(ws, "authed.txt")) != "ok\n" {
		t.Fatalf("authenticated call: %s", text(res))
	}

	// The attack: reuse the authenticated session's id without the token.
	body := `{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"run_command","arguments":{"command":"touch stolen.txt"}}}`
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("tools/call without the token: %d, want 401", resp.StatusCode)
	}
	if sandboxtest.Exists(filepath.Join(ws, "stolen.txt")) {
		t.Errorf("a call without the token ran: stolen.txt exists")
	}
}

// A token file that others may read stops the server before it listens.
func TestServeHTTPRefusesOpenTokenFile(t *testing.T) {
	ws := serverWorkspace(t)
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("almcp_0123456789abcdef0123456789abcdef0123456789a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tokenFile, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(airlockBin, append(serveArgs(ws), "--http", "127.0.0.1:0", "--token-file", tokenFile)...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "chmod 600") || strings.Contains(string(out), "listening") {
		t.Errorf("open token file: %v %s", err, out)
	}
}
