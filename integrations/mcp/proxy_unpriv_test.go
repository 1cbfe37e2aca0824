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

	"github.com/airlockhq/airlock/internal/sandboxtest"
)

// Real users are not root: the proxy as uid 65534 starts the downstream
// server in the sandbox, relays it live, and still refuses what the rules
// deny, with the reason and no structured content the schema rejects.
func TestProxyUnprivileged(t *testing.T) {
	if sandboxtest.Unprivileged() {
		t.Skip("already unprivileged: the other tests are the unprivileged run")
	}
	setpriv, err := exec.LookPath("setpriv")
	if err != nil {
		t.Skip("setpriv (util-linux) is not installed; it is how the test drops to uid 65534")
	}
	root, err := os.MkdirTemp("", "airlock-mcp-proxy-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	bin, home, ws := filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "ws")
	for _, d := range []string{root, bin} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The airlock binary and this test binary (the downstream server),
	// where uid 65534 can run them.
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	for src, dst := range map[string]string{airlockBin: "airlock", self: "downstream"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, dst), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{home, ws} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	policy(t, ws, livePolicy+`
[[rule]]
effect = "deny"
match  = "mcp__down__forbidden"
reason = "the forbidden tool is not for agents"
`)
	for _, p := range []string{home, ws, filepath.Join(ws, ".airlock"), filepath.Join(ws, ".airlock", "policy.toml")} {
		if err := os.Chown(p, sandboxtest.NobodyUID, sandboxtest.NobodyUID); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(setpriv, "--reuid", "65534", "--regid", "65534", "--clear-groups", "--",
		filepath.Join(bin, "airlock"), "mcp", "proxy", "--name", "down", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", bin, "--env", downstreamEnv+"=1", "--", filepath.Join(bin, "downstream"))
	cmd.Env = []string{"PATH=" + sandboxtest.SystemPath, "HOME=" + home, "LANG=C.UTF-8"}
	cmd.Stderr = &testWriter{t: t}
	updated := make(chan string, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if res := call(t, cs, "echo", map[string]any{"text": "as nobody"}); res.IsError || text(res) != "echo: as nobody" {
		t.Errorf("echo as uid 65534: isError=%v %q", res.IsError, text(res))
	}
	res := call(t, cs, "forbidden", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "not for agents") || strings.Contains(text(res), "ran") {
		t.Errorf("forbidden as uid 65534: isError=%v %q", res.IsError, text(res))
	}
	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://greeting"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	var uri string
	for i := 0; uri == "" && i < 50; i++ {
		call(t, cs, "touch", map[string]any{})
		select {
		case uri = <-updated:
		case <-time.After(100 * time.Millisecond):
		}
	}
	if uri != "test://greeting" {
		t.Errorf("resources/updated as uid 65534: %q", uri)
	}
}
