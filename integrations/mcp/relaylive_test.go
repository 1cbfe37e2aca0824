//lint:file-ignore SA1019 roots and sampling are deprecated in the protocol of 2026-07-28, but the clients and servers in use today speak the one before it, and relaying them is this file's job.

package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// liveServerOptions make the test downstream server offer subscriptions
// and completions. It speaks the protocol before 2026-07-28, as the
// servers on npm do, so that it may send requests of its own (sampling,
// elicitation, roots) while a call runs.
func liveServerOptions() *sdk.ServerOptions {
	return &sdk.ServerOptions{
		SupportedProtocolVersions: []string{"2025-11-25"},
		SubscribeHandler:          func(context.Context, *sdk.SubscribeRequest) error { return nil },
		UnsubscribeHandler:        func(context.Context, *sdk.UnsubscribeRequest) error { return nil },
		CompletionHandler: func(_ context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			var vals []string
			for _, v := range []string{"alpha", "alpine", "beta"} {
				if strings.HasPrefix(v, req.Params.Argument.Value) {
					vals = append(vals, v)
				}
			}
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: vals}}, nil
		},
	}
}

func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// addLiveTools gives the test downstream server the tools that exercise
// the proxy's live relay.
func addLiveTools(s *sdk.Server) {
	type slowArgs struct {
		Marker string `json:"marker,omitempty"`
		Wait   bool   `json:"wait,omitempty"`
	}
	// slow reports progress twice, then returns, or with wait set blocks
	// until the call is cancelled and writes marker (host-side evidence
	// that the cancellation reached the server).
	sdk.AddTool(s, &sdk.Tool{Name: "slow"}, func(ctx context.Context, req *sdk.CallToolRequest, in slowArgs) (*sdk.CallToolResult, any, error) {
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= 2; i++ {
				_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 2, Message: "step"})
			}
		}
		if in.Wait {
			<-ctx.Done()
			_ = os.WriteFile(in.Marker, []byte("cancelled\n"), 0o644)
		}
		return textResult("slow done"), nil, nil
	})
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "contents of " + req.Params.URI}}}, nil
	}
	sdk.AddTool(s, &sdk.Tool{Name: "grow"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		s.AddResource(&sdk.Resource{URI: "test://late", Name: "late"}, read)
		s.AddPrompt(&sdk.Prompt{Name: "late"}, func(context.Context, *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "late prompt"}}}}, nil
		})
		return textResult("grown"), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "touch"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		_ = s.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: "test://greeting"})
		return textResult("touched"), nil, nil
	})
	type sampleArgs struct {
		System string `json:"system,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "sample"}, func(ctx context.Context, req *sdk.CallToolRequest, in sampleArgs) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &sdk.CreateMessageParams{MaxTokens: 10, SystemPrompt: in.System,
			Messages: []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello"}}}})
		if err != nil {
			return textResult("sampling failed: " + err.Error()), nil, nil
		}
		return textResult("sampled: " + res.Content.(*sdk.TextContent).Text), nil, nil
	})
	type askArgs struct {
		Message string `json:"message,omitempty"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "ask_person"}, func(ctx context.Context, req *sdk.CallToolRequest, in askArgs) (*sdk.CallToolResult, any, error) {
		if in.Message == "" {
			in.Message = "What is your name?"
		}
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Mode: "form", Message: in.Message,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}})
		if err != nil {
			return textResult("elicitation failed: " + err.Error()), nil, nil
		}
		name, _ := res.Content["name"].(string)
		return textResult(res.Action + " " + name), nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "roots"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return textResult("roots failed: " + err.Error()), nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return textResult("roots: " + strings.Join(uris, " ")), nil, nil
	})
}

// livePolicy allows the downstream server, but not sampling with a system
// prompt that mentions secrets, nor one tool.
const livePolicy = `
[[rule]]
effect = "allow"
match  = "mcp__down"

[[rule]]
effect = "deny"
match  = "mcp__down__sampling__createMessage(systemPrompt:*secret*)"
reason = "no sampling about secrets"

[[rule]]
effect = "ask"
match  = "mcp__down__sampling__createMessage(systemPrompt:*costly*)"

[[rule]]
effect = "deny"
match  = "mcp__down__elicitation__create(message:*password*)"
reason = "servers do not ask for passwords"
`

// The proxy relays live, to and from the official TypeScript client:
// progress, cancellation, resource subscriptions and updates, list
// changes of resources and prompts, completions, and the downstream
// server's own requests (sampling and elicitation decided by the gate,
// roots).
func TestProxyRelaysLive(t *testing.T) {
	nodeModules(t)
	ws := workspace(t)
	policy(t, ws, livePolicy)
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(ws, "cancelled.txt")
	out := runNode(t, []string{filepath.Join("testdata", "node", "live.mjs"), marker, airlockBin,
		"mcp", "proxy", "--name", "down", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", filepath.Dir(self), "--env", downstreamEnv + "=1", "--", self})
	var r struct {
		Progress       []float64 `json:"progress"`
		Cancelled      string    `json:"cancelled"`
		Updates        []string  `json:"updates"`
		ResourcesAfter []string  `json:"resourcesAfter"`
		PromptsAfter   []string  `json:"promptsAfter"`
		ListChanged    struct {
			Resources int `json:"resources"`
			Prompts   int `json:"prompts"`
		} `json:"listChanged"`
		Completions []string `json:"completions"`
		Sampled     string   `json:"sampled"`
		SampleDeny  string   `json:"sampleDenied"`
		SampleAsked string   `json:"sampleAsked"`
		Approvals   []string `json:"approvals"`
		AskDenied   string   `json:"askDenied"`
		PersonAsked []string `json:"personAsked"`
		Sampling    []string `json:"samplingSeen"`
		Asked       string   `json:"asked"`
		Roots       string   `json:"roots"`
	}
	decode(t, out, &r)
	if len(r.Progress) != 2 || r.Progress[0] != 1 || r.Progress[1] != 2 {
		t.Errorf("progress relayed: %v, want [1 2]", r.Progress)
	}
	if !strings.Contains(r.Cancelled, "abort") || readFile(t, marker) != "cancelled\n" {
		t.Errorf("cancellation: client saw %q; the downstream server must see it and write %s", r.Cancelled, marker)
	}
	if len(r.Updates) != 1 || r.Updates[0] != "test://greeting" {
		t.Errorf("resources/updated relayed %v, want one for test://greeting (and none after unsubscribing)", r.Updates)
	}
	if !strings.Contains(strings.Join(r.ResourcesAfter, " "), "test://late") || !strings.Contains(strings.Join(r.PromptsAfter, " "), "late") ||
		r.ListChanged.Resources == 0 || r.ListChanged.Prompts == 0 {
		t.Errorf("list changes: resources %v prompts %v notifications %+v", r.ResourcesAfter, r.PromptsAfter, r.ListChanged)
	}
	if strings.Join(r.Completions, " ") != "alpha alpine" {
		t.Errorf("completions: %v", r.Completions)
	}
	if r.Sampled != "sampled: from the client's model" {
		t.Errorf("allowed sampling: %q", r.Sampled)
	}
	if !strings.Contains(r.SampleDeny, "no sampling about secrets") {
		t.Errorf("denied sampling: %q", r.SampleDeny)
	}
	if r.SampleAsked != "sampled: from the client's model" || len(r.Approvals) != 1 || !strings.Contains(r.Approvals[0], "mcp__down__sampling__createMessage") {
		t.Errorf("sampling an ask rule matches: %q after the questions %q; want it sampled after one question naming the request", r.SampleAsked, r.Approvals)
	}
	if strings.Join(r.Sampling, "|") != "be brief|a costly answer" {
		t.Errorf("the client's model was asked %q; the denied request must never reach it", r.Sampling)
	}
	if !strings.Contains(r.AskDenied, "servers do not ask for passwords") || strings.Contains(r.AskDenied, "accept") ||
		strings.Join(r.PersonAsked, "|") != "What is your name?" {
		t.Errorf("a denied elicitation: %q; the person was asked %q, and must never see the denied question", r.AskDenied, r.PersonAsked)
	}
	if r.Asked != "accept Pat" {
		t.Errorf("elicitation: %q", r.Asked)
	}
	if !strings.Contains(r.Roots, "file:///projects/demo") {
		t.Errorf("roots: %q", r.Roots)
	}
}

// runNode runs node with args and returns its stdout.
func runNode(t *testing.T, args []string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node %v: %v\nstdout: %s\nstderr: %s", args[0], err, stdout.String(), stderr.String())
	}
	t.Logf("node %s stderr: %s", args[0], stderr.String())
	return stdout.Bytes()
}

func decode(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("output %q: %v", b, err)
	}
}
