package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/airlockbin"
	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// airlockBin is the CLI built once for the whole test binary: the MCP
// clients under test start it as any MCP client would.
var airlockBin string

func TestMain(m *testing.M) {
	if os.Getenv(downstreamEnv) != "" {
		// Started by the proxy (inside the sandbox) as the downstream server.
		serveDownstream()
		return
	}
	dir, err := os.MkdirTemp("", "airlock-mcp-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Run journals and grants of the airlock processes these tests start
	// (one is SIGKILLed on purpose) stay in the test's own state directory.
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	airlockBin, err = airlockbin.Build(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// policy writes the workspace's rule file.
func policy(t *testing.T, ws, toml string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(ws, ".airlock"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, ".airlock", "policy.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serveArgs are airlock's arguments for "mcp serve" on ws, with only the
// workspace's rules (no managed or user layer from this machine).
func serveArgs(ws string, extra ...string) []string {
	return append([]string{"mcp", "serve", "--workspace", ws, "--managed", "-", "--user", "-"}, extra...)
}

// elicitor is a Go SDK client's elicitation handler that answers action to
// every question and counts them.
type elicitor struct {
	action string
	asked  []string
}

func (e *elicitor) handle(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	e.asked = append(e.asked, req.Params.Message)
	return &sdk.ElicitResult{Action: e.action, Content: map[string]any{"approve": e.action == "accept"}}, nil
}

// connectStdio starts airlock with args as a Go SDK client would (over
// stdin and stdout) and returns the session. A nil el declares no
// elicitation capability.
func connectStdio(t *testing.T, el *elicitor, args ...string) *sdk.ClientSession {
	t.Helper()
	opts := &sdk.ClientOptions{}
	if el != nil {
		opts.ElicitationHandler = el.handle
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, opts)
	cmd := exec.Command(airlockBin, args...)
	cmd.Stderr = &testWriter{t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to airlock %v: %v", args, err)
	}
	t.Cleanup(func() { cs.Close() })
	if ir := cs.InitializeResult(); ir != nil {
		t.Logf("protocol version %s", ir.ProtocolVersion)
	}
	return cs
}

// testWriter logs a process's stderr in the test's output.
type testWriter struct{ t *testing.T }

func (w *testWriter) Write(p []byte) (int, error) {
	w.t.Logf("airlock stderr: %s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startHTTP starts "airlock mcp serve --http 127.0.0.1:0" with a token
// file of the test's own and returns its URL, read from the first line
// airlock writes on stderr, and the token clients must send.
func startHTTP(t *testing.T, args ...string) (url, token string) {
	t.Helper()
	tokenFile := filepath.Join(t.TempDir(), "token")
	cmd := exec.Command(airlockBin, append(args, "--http", "127.0.0.1:0", "--token-file", tokenFile)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	r := bufio.NewReader(stderr)
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("airlock mcp serve --http wrote no address: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	m := regexp.MustCompile(`http://[^ ]+/`).FindString(line)
	if m == "" {
		t.Fatalf("no URL in %q", line)
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatalf("airlock mcp serve --http made no token file: %v", err)
	}
	return m, strings.TrimSpace(string(b))
}

// bearer is an HTTP client that sends token on every request.
func bearer(token string) *http.Client {
	return &http.Client{Transport: bearerTransport(token)}
}

type bearerTransport string

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

// call calls a tool and returns the result; a protocol error fails the test.
func call(t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s %v: protocol error: %v", name, args, err)
	}
	return res
}

// text is a result's text content.
func text(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// outcome is the structured content of the server's results.
type outcome struct {
	Status   string `json:"status"`
	ExitCode int    `json:"exit_code"`
	Output   string `json:"output"`
	Reason   string `json:"reason"`
	Denials  []struct {
		Source, Kind, Target, Reason, Rule string
	} `json:"denials"`
}

func structured(t *testing.T, res *sdk.CallToolResult) outcome {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var o outcome
	if err := json.Unmarshal(b, &o); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
	return o
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("host side: %v", err)
	}
	return string(b)
}

// nodeModules is the directory npm ci installed the pinned TypeScript SDK
// and filesystem server into. Without it the test skips, except in CI
// (CI=true), where it fails: .ci/run installs it.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("testdata", "node", "node_modules"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "@modelcontextprotocol", "sdk")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: run npm ci in integrations/mcp/testdata/node (.ci/run does)", dir)
		}
		t.Skipf("%s is missing: run 'npm ci' in integrations/mcp/testdata/node to drive airlock with the TypeScript SDK and the filesystem server", dir)
	}
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node is not installed")
		}
		t.Skip("node is not installed")
	}
	return dir
}

// workspace makes a workspace with a marker in its name, so the host's
// processes that belong to it can be found.
func workspace(t *testing.T) string {
	t.Helper()
	ws := filepath.Join(sandboxtest.Workspace(t), sandboxtest.Marker(t, "ws"))
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}
