package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// downstreamEnv makes the test binary an MCP server on stdio (see TestMain):
// a downstream server with a tool, a resource, a resource template and a
// prompt for the proxy to relay.
const downstreamEnv = "AIRLOCK_MCP_TEST_DOWNSTREAM"

func serveDownstream() {
	s := sdk.NewServer(&sdk.Implementation{Name: "downstream", Version: "1"}, liveServerOptions())
	addLiveTools(s)
	type echoArgs struct {
		Text string `json:"text"`
	}
	sdk.AddTool(s, &sdk.Tool{Name: "echo"}, func(_ context.Context, _ *sdk.CallToolRequest, in echoArgs) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "whoami"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		host, _ := os.Hostname()
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ppid " + strconv.Itoa(os.Getppid()) + " host " + host}}}, nil, nil
	})
	sdk.AddTool(s, &sdk.Tool{Name: "forbidden"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the forbidden tool ran"}}}, nil, nil
	})
	read := func(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
		return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: req.Params.URI, Text: "contents of " + req.Params.URI}}}, nil
	}
	s.AddResource(&sdk.Resource{URI: "test://greeting", Name: "greeting"}, read)
	s.AddResourceTemplate(&sdk.ResourceTemplate{URITemplate: "test://item/{id}", Name: "item"}, read)
	s.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "name"}}},
		func(_ context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "Say hi to " + req.Params.Arguments["name"]}}}}, nil
		})
	if err := s.Run(context.Background(), &sdk.StdioTransport{}); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// The proxy relays a downstream server's resources, resource templates and
// prompts, and gates its tools by name.
func TestProxyRelaysResourcesAndPrompts(t *testing.T) {
	ws := workspace(t)
	policy(t, ws, `
[[rule]]
effect = "allow"
match  = "mcp__down"

[[rule]]
effect = "deny"
match  = "mcp__down__forbidden"
reason = "the forbidden tool is not for agents"
`)
	self, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cs := connectStdio(t, nil, "mcp", "proxy", "--name", "down", "--workspace", ws, "--managed", "-", "--user", "-",
		"--allow-read", filepath.Dir(self), "--env", downstreamEnv+"=1", "--", self)
	ctx := context.Background()

	res := call(t, cs, "echo", map[string]any{"text": "relayed"})
	if res.IsError || text(res) != "echo: relayed" {
		t.Errorf("echo: isError=%v %q", res.IsError, text(res))
	}
	// The server runs in the sandbox: its parent is PID 1 of its own pid
	// namespace, the sandbox's init (on the host it would be the proxy).
	res = call(t, cs, "whoami", map[string]any{})
	if res.IsError || !strings.HasPrefix(text(res), "ppid 1 ") {
		t.Errorf("whoami: isError=%v %q", res.IsError, text(res))
	}
	res = call(t, cs, "forbidden", map[string]any{})
	if !res.IsError || !strings.Contains(text(res), "the forbidden tool is not for agents") || strings.Contains(text(res), "ran") {
		t.Errorf("forbidden: isError=%v %q", res.IsError, text(res))
	}

	var uris []string
	for r, err := range cs.Resources(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URI)
	}
	for r, err := range cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		uris = append(uris, r.URITemplate)
	}
	if strings.Join(uris, " ") != "test://greeting test://item/{id}" {
		t.Errorf("resources: %q", uris)
	}
	for _, uri := range []string{"test://greeting", "test://item/42"} {
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(rr.Contents) != 1 || rr.Contents[0].Text != "contents of "+uri {
			t.Errorf("read %s: %v %+v", uri, err, rr)
		}
	}
	pr, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"name": "Pat"}})
	if err != nil || len(pr.Messages) != 1 || pr.Messages[0].Content.(*sdk.TextContent).Text != "Say hi to Pat" {
		t.Errorf("prompt: %v %+v", err, pr)
	}
}
