package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// ProxyOptions configure [StartProxy].
type ProxyOptions struct {
	// Gate decides every tools/call as the tool mcp__NAME__TOOL.
	Gate
	// Name is the NAME in mcp__NAME__TOOL: the server's name in rules.
	Name string
	// Executor confines the downstream server, with its own profile.
	Executor *sandbox.Executor
	// Args is the downstream server's command line.
	Args []string
	// Stderr receives the downstream server's stderr; nil discards it.
	Stderr io.Writer
	// Version is reported to clients as the proxy's version.
	Version string
}

// Proxy relays one downstream MCP server that runs in the sandbox.
type Proxy struct {
	g      *gatekeeper
	name   string
	ws     string
	srv    *sdk.Server
	client *sdk.Client
	cs     *sdk.ClientSession
	stdin  *os.File
	proc   *sandbox.Process
	cancel context.CancelFunc
	done   chan struct{} // closed when the downstream server has ended
	id     string

	mu    sync.Mutex
	tools map[string]bool // the tool names currently relayed
	out   map[string]any  // the output schemas of the relayed tools that have one
	err   error           // why the downstream server ended
	relay relayState
}

// StartProxy starts the downstream server in the sandbox, connects to it
// and mirrors its tools, resources and prompts. Close ends it.
func StartProxy(ctx context.Context, opts ProxyOptions) (*Proxy, error) {
	if opts.Profile == nil || opts.Executor == nil || len(opts.Args) == 0 {
		return nil, errors.New("mcp: a proxy needs a Profile, an Executor and the downstream server's command")
	}
	if !validServerName(opts.Name) {
		return nil, fmt.Errorf("mcp: proxy name %q: use letters, digits, - and _ only (it is the NAME in mcp__NAME__TOOL rules)", opts.Name)
	}
	stderr := opts.Stderr
	if stderr == nil {
		stderr = io.Discard
	}
	runCtx, cancel := context.WithCancel(context.Background())
	p := &Proxy{g: newGatekeeper(opts.Gate), name: opts.Name, ws: opts.Profile.Workspace(),
		cancel: cancel, done: make(chan struct{}), id: newExecutionID(), tools: map[string]bool{},
		relay: relayState{progress: map[int64]progressRoute{}, subs: map[string]int{}}}

	// The server's stdin is an os.File so that the sandbox passes it as it
	// is; a plain reader would leave a copying goroutine blocked on it
	// after the server ends.
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		cancel()
		return nil, err
	}
	stdoutR, stdoutW := io.Pipe()
	proc, err := opts.Executor.Prepare(runCtx, sandbox.Cmd{
		Args: opts.Args, Stdin: stdinR, Stdout: stdoutW, Stderr: stderr, ExecutionID: p.id,
	})
	if err == nil {
		err = proc.Start()
	}
	stdinR.Close()
	if err != nil {
		cancel()
		stdinW.Close()
		p.g.recordRun(p.id, "mcp proxy "+opts.Name, strings.Join(opts.Args, " "), nil, err)
		return nil, fmt.Errorf("mcp: start the downstream server in the sandbox: %w", err)
	}
	p.proc, p.stdin = proc, stdinW
	go func() {
		res, err := proc.Wait()
		stdoutW.CloseWithError(io.EOF)
		p.g.recordRun(p.id, "mcp proxy "+opts.Name, strings.Join(opts.Args, " "), res, err)
		p.mu.Lock()
		if err != nil {
			p.err = err
		} else {
			p.err = fmt.Errorf("the downstream server ended: %s, exit code %d", res.Status, res.ExitCode)
		}
		p.mu.Unlock()
		close(p.done)
	}()

	client := sdk.NewClient(&sdk.Implementation{Name: "airlock-proxy", Version: opts.Version}, p.downstreamClientOptions())
	p.client = client
	connectCtx, stop := context.WithCancel(ctx)
	go func() {
		select {
		case <-p.done:
			stop() // the server died before it answered
		case <-connectCtx.Done():
		}
	}()
	p.cs, err = client.Connect(connectCtx, &sdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	stop()
	if err != nil {
		p.Close()
		return nil, fmt.Errorf("mcp: connect to the downstream server: %w%s", err, p.downstreamEnded())
	}
	ir := p.cs.InitializeResult()
	var caps sdk.ServerCapabilities
	if ir != nil && ir.Capabilities != nil {
		caps = *ir.Capabilities
	}
	instructions := ""
	if ir != nil {
		instructions = ir.Instructions
	}
	// The proxy offers what the downstream server offers, even before a
	// feature is registered (a server may list its tools later).
	var offer sdk.ServerCapabilities
	if caps.Tools != nil {
		offer.Tools = &sdk.ToolCapabilities{ListChanged: true}
	}
	if caps.Resources != nil {
		offer.Resources = &sdk.ResourceCapabilities{ListChanged: true}
	}
	if caps.Prompts != nil {
		offer.Prompts = &sdk.PromptCapabilities{ListChanged: true}
	}
	sopts := &sdk.ServerOptions{Instructions: instructions, Capabilities: &offer}
	p.relayServerOptions(caps, sopts)
	srv := sdk.NewServer(&sdk.Implementation{Name: "airlock-proxy-" + opts.Name, Version: opts.Version}, sopts)
	refuseFailedAsks(srv)
	p.trackSessions(srv)
	p.mu.Lock()
	p.srv = srv
	p.mu.Unlock()
	if err := p.mirror(ctx, caps); err != nil {
		p.Close()
		return nil, err
	}
	return p, nil
}

// downstreamEnded says why the downstream server ended, if it has.
func (p *Proxy) downstreamEnded() string {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return " (" + p.err.Error() + ")"
	default:
		return ""
	}
}

// mirror registers the downstream server's features on the proxy's server.
func (p *Proxy) mirror(ctx context.Context, caps sdk.ServerCapabilities) error {
	if caps.Tools != nil {
		if err := p.syncTools(ctx); err != nil {
			return err
		}
	}
	if caps.Resources != nil {
		if err := p.syncResources(ctx); err != nil {
			return err
		}
	}
	if caps.Prompts != nil {
		return p.syncPrompts(ctx)
	}
	return nil
}

// syncTools makes the relayed tools those the downstream server lists now.
func (p *Proxy) syncTools(ctx context.Context) error {
	srv := p.server()
	if srv == nil {
		return nil // StartProxy lists them once the server exists
	}
	seen := map[string]bool{}
	out := map[string]any{}
	for t, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: list the downstream server's tools: %w", err)
		}
		if !objectSchema(t.InputSchema) {
			continue // the SDK refuses it, and no client could call it
		}
		if t.Name == samplingTool || t.Name == elicitationTool {
			continue // the name rules give the server's own requests
		}
		if t.OutputSchema != nil && !objectSchema(t.OutputSchema) {
			t.OutputSchema = nil
		}
		seen[t.Name] = true
		if t.OutputSchema != nil {
			out[t.Name] = t.OutputSchema
		}
		srv.AddTool(t, p.callTool(t.Name))
	}
	p.mu.Lock()
	var gone []string
	for name := range p.tools {
		if !seen[name] {
			gone = append(gone, name)
		}
	}
	p.tools, p.out = seen, out
	p.mu.Unlock()
	if len(gone) > 0 {
		srv.RemoveTools(gone...)
	}
	return nil
}

func objectSchema(s any) bool {
	m, ok := s.(map[string]any)
	return ok && m["type"] == "object"
}

// callTool relays tools/call for the downstream tool name once the gate
// allowed it as mcp__NAME__name.
func (p *Proxy) callTool(name string) sdk.ToolHandler {
	gated := "mcp__" + p.name + "__" + name
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		args := req.Params.Arguments
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		call := tool.Call{Tool: gated, Input: args, Workspace: p.ws, ExecutionID: p.id}
		if v := p.g.decide(ctx, req, call); v.Result != nil {
			p.mu.Lock()
			schema := p.out[name]
			p.mu.Unlock()
			return fitOutput(schema, v.Result), nil
		}
		params := &sdk.CallToolParams{Name: name, Arguments: args}
		if tok := req.Params.GetProgressToken(); tok != nil {
			t, done := p.progressToken(req.Session, tok)
			defer done()
			params.SetProgressToken(t)
		}
		res, err := p.cs.CallTool(ctx, params)
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
				Text: "airlock allowed the call, but the downstream server failed: " + err.Error() + p.downstreamEnded()}}}, nil
		}
		return res, nil
	}
}

func (p *Proxy) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	return p.cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: req.Params.URI})
}

func (p *Proxy) getPrompt(ctx context.Context, req *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
	return p.cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
}

// MCPServer returns the proxy's server, for transports other than stdio.
func (p *Proxy) MCPServer() *sdk.Server { return p.srv }

// Run serves one client over t until it disconnects, ctx ends or the
// downstream server ends, then closes the proxy.
func (p *Proxy) Run(ctx context.Context, t sdk.Transport) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-p.done:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := p.srv.Run(ctx, t)
	ended := false
	select {
	case <-p.done:
		ended = true
	default:
	}
	p.Close()
	if ended {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.err
	}
	return err
}

// Done is closed when the downstream server has ended.
func (p *Proxy) Done() <-chan struct{} { return p.done }

// Close ends the downstream server and everything it started (the
// sandbox's pid namespace ends with it) and waits for it.
func (p *Proxy) Close() error {
	if p.cs != nil {
		_ = p.cs.Close()
	}
	p.stdin.Close()
	p.cancel() // kills the process tree if it did not end on EOF
	<-p.done
	return nil
}

// validServerName reports whether name can be the NAME of mcp__NAME__TOOL.
func validServerName(name string) bool {
	if name == "" || strings.Contains(name, "__") {
		return false
	}
	for _, c := range name {
		if c != '_' && c != '-' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}
