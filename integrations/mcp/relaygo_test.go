package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The live relay with the Go SDK's client, which speaks the newest
// protocol: progress, resource updates, list changes and completions.
func TestProxyRelaysLiveGoClient(t *testing.T) {
	ws := workspace(t)
	policy(t, ws, livePolicy)
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var progress []float64
	updated := make(chan string, 10)
	listChanged := make(chan string, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-go-live", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			progress = append(progress, req.Params.Progress)
			mu.Unlock()
		},
		ResourceUpdatedHandler:     func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { updated <- req.Params.URI },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { listChanged <- "resources" },
		PromptListChangedHandler:   func(context.Context, *sdk.PromptListChangedRequest) { listChanged <- "prompts" },
	})
	cmd := exec.Command(airlockBin, "mcp", "proxy", "--name", "down", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", filepath.Dir(self), "--env", downstreamEnv+"=1", "--", self)
	cmd.Stderr = &testWriter{t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t.Logf("protocol version %s", cs.InitializeResult().ProtocolVersion)

	params := &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	if _, err := cs.CallTool(ctx, params); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := append([]float64(nil), progress...)
	mu.Unlock()
	if len(got) != 2 {
		t.Errorf("progress: %v, want two notifications", got)
	}

	if err := cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://greeting"}); err != nil {
		t.Fatalf("subscribe: %v", err)
	}
	if uri := touchUntilUpdated(t, cs, updated); uri != "test://greeting" {
		t.Fatalf("resources/updated: %q, want test://greeting", uri)
	}

	call(t, cs, "grow", map[string]any{})
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case what := <-listChanged:
			seen[what] = true
		case <-ctx.Done():
			t.Fatalf("list_changed: saw only %v", seen)
		}
	}
	c, err := cs.Complete(ctx, &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "greet"},
		Argument: sdk.CompleteParamsArgument{Name: "name", Value: "al"}})
	if err != nil || len(c.Completion.Values) != 2 {
		t.Errorf("complete: %v %+v", err, c)
	}
}
