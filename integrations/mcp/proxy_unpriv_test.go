package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/internal/airlockbin"
)

// Real users are not root: the proxy as uid 65534 starts the downstream
// server in the sandbox, relays it live, and still refuses what the rules
// deny, with the reason and no structured content the schema rejects.
func TestProxyUnprivileged(t *testing.T) {
	// The downstream server is this test binary.
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	n := newNobodyTree(t, "airlock-mcp-proxy-unpriv-", map[string]string{airlockBin: "airlock", airlockbin.Server(airlockBin): "airlock-server", self: "downstream"})
	ws := n.ws
	policy(t, ws, livePolicy+`
[[rule]]
effect = "deny"
match  = "mcp__down__forbidden"
reason = "the forbidden tool is not for agents"
`)
	n.own(t)
	cmd := n.command(t, "airlock", "mcp", "proxy", "--name", "down", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", n.bin, "--env", downstreamEnv+"=1", "--", filepath.Join(n.bin, "downstream"))
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
	if uri := touchUntilUpdated(t, cs, updated); uri != "test://greeting" {
		t.Errorf("resources/updated as uid 65534: %q", uri)
	}
}
