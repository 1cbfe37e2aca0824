//lint:file-ignore SA1019 roots and sampling are deprecated in the protocol of 2026-07-28, but the clients and servers in use today speak the one before it, and relaying them is this file's job.

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// The requests a downstream server sends to the client are decided as
// tools of its own server, so that one rule can allow, ask about or deny
// them: mcp__NAME__sampling__createMessage (the server makes the
// client's model write), mcp__NAME__elicitation__create (the server asks
// the person). A downstream tool of one of these names is not relayed.
const (
	samplingTool    = "sampling__createMessage"
	elicitationTool = "elicitation__create"
)

// relayState is what the proxy keeps to relay live between its clients and
// the downstream server.
type relayState struct {
	last      atomic.Pointer[sdk.ServerSession] // the client session that sent the latest request
	progress  map[int64]progressRoute           // proxy progress token → the client's
	nextToken int64
	resources map[string]bool // URIs currently relayed
	templates map[string]bool // URI templates currently relayed
	prompts   map[string]bool // prompt names currently relayed
	subs      map[string]int  // URI → client subscriptions
	roots     []string        // root URIs currently offered downstream
}

type progressRoute struct {
	ss    *sdk.ServerSession
	token any
	seen  *atomic.Int64 // notifications relayed so far
}

// downstreamClientOptions are the options of the proxy's client of the
// downstream server: its notifications are relayed to the proxy's clients,
// its requests for sampling and elicitation go through the gate to the
// client that sent the latest request.
func (p *Proxy) downstreamClientOptions() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		Capabilities: &sdk.ClientCapabilities{
			RootsV2:     &sdk.RootCapabilities{ListChanged: true},
			Sampling:    &sdk.SamplingCapabilities{},
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}},
		},
		ToolListChangedHandler:     func(ctx context.Context, _ *sdk.ToolListChangedRequest) { _ = p.syncTools(ctx) },
		ResourceListChangedHandler: func(ctx context.Context, _ *sdk.ResourceListChangedRequest) { _ = p.syncResources(ctx) },
		PromptListChangedHandler:   func(ctx context.Context, _ *sdk.PromptListChangedRequest) { _ = p.syncPrompts(ctx) },
		ResourceUpdatedHandler: func(ctx context.Context, req *sdk.ResourceUpdatedNotificationRequest) {
			if srv := p.server(); srv != nil {
				_ = srv.ResourceUpdated(ctx, &sdk.ResourceUpdatedNotificationParams{URI: req.Params.URI})
			}
		},
		ProgressNotificationHandler: p.relayProgress,
		CreateMessageHandler:        p.relaySampling,
		ElicitationHandler:          p.relayElicitation,
	}
}

// relayServerOptions adds to opts the handlers that relay what the
// downstream server offers beyond tools, resources and prompts.
func (p *Proxy) relayServerOptions(caps sdk.ServerCapabilities, opts *sdk.ServerOptions) {
	if caps.Resources != nil && caps.Resources.Subscribe {
		opts.Capabilities.Resources.Subscribe = true
		opts.SubscribeHandler = p.subscribe
		opts.UnsubscribeHandler = p.unsubscribe
	}
	if caps.Completions != nil {
		opts.Capabilities.Completions = &sdk.CompletionCapabilities{}
		opts.CompletionHandler = func(ctx context.Context, req *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			// Without the client's _meta: a client on the protocol of
			// 2026-07-28 puts its protocol version there, which is about
			// its own connection, not the proxy's to the server.
			return p.cs.Complete(ctx, &sdk.CompleteParams{Argument: req.Params.Argument, Context: req.Params.Context, Ref: req.Params.Ref})
		}
	}
	opts.InitializedHandler = func(_ context.Context, req *sdk.InitializedRequest) { go p.syncRoots(req.Session) }
	opts.RootsListChangedHandler = func(_ context.Context, req *sdk.RootsListChangedRequest) { go p.syncRoots(req.Session) }
}

// trackSessions remembers which client session sent the latest request:
// the downstream server's own requests (sampling, elicitation) go there.
func (p *Proxy) trackSessions(srv *sdk.Server) {
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if ss, ok := req.GetSession().(*sdk.ServerSession); ok && ss != nil {
				p.relay.last.Store(ss)
			}
			return next(ctx, method, req)
		}
	})
}

func (p *Proxy) server() *sdk.Server {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.srv
}

// progressToken gives the relayed call a token of the proxy's own, so that
// two clients using the same token do not see each other's progress; done
// forgets it.
func (p *Proxy) progressToken(ss *sdk.ServerSession, token any) (proxyToken int64, done func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.relay.nextToken++
	t := p.relay.nextToken
	seen := new(atomic.Int64)
	p.relay.progress[t] = progressRoute{ss: ss, token: token, seen: seen}
	return t, func() {
		// The SDK hands a response to the caller at once but queues
		// notifications for a handler goroutine, so progress the server
		// sent just before its result may still be on its way: wait until
		// none has come for a moment (bounded) before the client gets the
		// result and forgets the token.
		for range progressDrainRounds {
			before := seen.Load()
			time.Sleep(progressQuiet)
			if seen.Load() == before {
				break
			}
		}
		p.mu.Lock()
		delete(p.relay.progress, t)
		p.mu.Unlock()
	}
}

// progressQuiet and progressDrainRounds bound how long a relayed call with
// a progress token waits for late progress before it returns.
const (
	progressQuiet       = 30 * time.Millisecond
	progressDrainRounds = 10
)

func (p *Proxy) relayProgress(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
	var t int64
	switch v := req.Params.ProgressToken.(type) {
	case float64:
		t = int64(v)
	case int64:
		t = v
	case int:
		t = int64(v)
	default:
		return // not a token the proxy gave
	}
	p.mu.Lock()
	r, ok := p.relay.progress[t]
	p.mu.Unlock()
	if !ok {
		return
	}
	params := *req.Params
	params.ProgressToken = r.token
	_ = r.ss.NotifyProgress(ctx, &params)
	r.seen.Add(1)
}

// syncResources makes the relayed resources and templates those the
// downstream server lists now.
func (p *Proxy) syncResources(ctx context.Context) error {
	srv := p.server()
	if srv == nil {
		return nil
	}
	seen, seenT := map[string]bool{}, map[string]bool{}
	for r, err := range p.cs.Resources(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: list the downstream server's resources: %w", err)
		}
		seen[r.URI] = true
		srv.AddResource(r, p.readResource)
	}
	for t, err := range p.cs.ResourceTemplates(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: list the downstream server's resource templates: %w", err)
		}
		seenT[t.URITemplate] = true
		srv.AddResourceTemplate(t, p.readResource)
	}
	p.mu.Lock()
	gone, goneT := missing(p.relay.resources, seen), missing(p.relay.templates, seenT)
	p.relay.resources, p.relay.templates = seen, seenT
	p.mu.Unlock()
	if len(gone) > 0 {
		srv.RemoveResources(gone...)
	}
	if len(goneT) > 0 {
		srv.RemoveResourceTemplates(goneT...)
	}
	return nil
}

// syncPrompts makes the relayed prompts those the downstream server lists
// now.
func (p *Proxy) syncPrompts(ctx context.Context) error {
	srv := p.server()
	if srv == nil {
		return nil
	}
	seen := map[string]bool{}
	for pr, err := range p.cs.Prompts(ctx, nil) {
		if err != nil {
			return fmt.Errorf("mcp: list the downstream server's prompts: %w", err)
		}
		seen[pr.Name] = true
		srv.AddPrompt(pr, p.getPrompt)
	}
	p.mu.Lock()
	gone := missing(p.relay.prompts, seen)
	p.relay.prompts = seen
	p.mu.Unlock()
	if len(gone) > 0 {
		srv.RemovePrompts(gone...)
	}
	return nil
}

// missing is the keys of had that now lacks.
func missing(had, now map[string]bool) []string {
	var gone []string
	for k := range had {
		if !now[k] {
			gone = append(gone, k)
		}
	}
	return gone
}

// subscribe subscribes downstream on a URI's first client subscription;
// the SDK's server keeps which client sessions get resources/updated.
func (p *Proxy) subscribe(ctx context.Context, req *sdk.SubscribeRequest) error {
	uri := req.Params.URI
	p.mu.Lock()
	p.relay.subs[uri]++
	first := p.relay.subs[uri] == 1
	p.mu.Unlock()
	if !first {
		return nil
	}
	if err := p.cs.Subscribe(ctx, &sdk.SubscribeParams{URI: uri}); err != nil {
		p.mu.Lock()
		p.relay.subs[uri]--
		p.mu.Unlock()
		return err
	}
	return nil
}

// unsubscribe unsubscribes downstream when a URI's last client
// subscription ends.
func (p *Proxy) unsubscribe(ctx context.Context, req *sdk.UnsubscribeRequest) error {
	uri := req.Params.URI
	p.mu.Lock()
	last := p.relay.subs[uri] == 1
	if p.relay.subs[uri] > 0 {
		p.relay.subs[uri]--
	}
	if p.relay.subs[uri] == 0 {
		delete(p.relay.subs, uri)
	}
	p.mu.Unlock()
	if !last {
		return nil
	}
	return p.cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: uri})
}

// syncRoots offers the downstream server the roots of the client session
// ss, if it has any. Roots only tell the server where the person works; the
// sandbox, not the roots, bounds what it can reach.
func (p *Proxy) syncRoots(ss *sdk.ServerSession) {
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.RootsV2 == nil {
		return // the client has no roots to offer
	}
	ctx, cancel := context.WithTimeout(context.Background(), askTTL)
	defer cancel()
	res, err := ss.ListRoots(ctx, nil)
	if err != nil || res == nil {
		return
	}
	p.mu.Lock()
	old := p.relay.roots
	if len(old) == 0 && len(res.Roots) == 0 {
		p.mu.Unlock()
		return // nothing to tell the server
	}
	p.relay.roots = nil
	for _, r := range res.Roots {
		p.relay.roots = append(p.relay.roots, r.URI)
	}
	p.mu.Unlock()
	p.client.RemoveRoots(old...)
	p.client.AddRoots(res.Roots...)
}

// upstream is the client session the downstream server's requests go to.
func (p *Proxy) upstream() (*sdk.ServerSession, error) {
	ss := p.relay.last.Load()
	if ss == nil {
		return nil, errors.New("airlock: no MCP client is connected to the proxy yet")
	}
	return ss, nil
}

// decideRequest decides a request the downstream server sent as the tool
// mcp__NAME__name with params as its input. An "ask" is put to the person
// through the client's elicitation when it has it, and is a denial when
// it has not.
func (p *Proxy) decideRequest(ctx context.Context, ss *sdk.ServerSession, name string, params any) (gate.Decision, error) {
	in, err := json.Marshal(params)
	if err != nil {
		return gate.Decision{}, err
	}
	call := tool.Call{Tool: "mcp__" + p.name + "__" + name, Input: in, Workspace: p.ws, ExecutionID: p.id}
	d, err := p.g.evaluator(headlessApprover{}).Decide(ctx, call)
	if !errors.Is(err, gate.ErrApprovalRequired) {
		return d, nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return d, nil
	}
	res, err := ss.Elicit(ctx, &sdk.ElicitParams{
		Mode:    "form",
		Message: approvalMessage(call, d),
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{
			"approve": map[string]any{"type": "boolean", "title": "Allow this once", "default": true}}},
	})
	if err != nil {
		return d, nil
	}
	d, _ = p.g.evaluator(fixedApprover(answerOf(res))).Decide(ctx, call)
	return d, nil
}

// relaySampling relays the downstream server's sampling/createMessage to
// the client once the gate allows mcp__NAME__sampling__createMessage.
func (p *Proxy) relaySampling(ctx context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
	ss, err := p.upstream()
	if err != nil {
		return nil, err
	}
	d, err := p.decideRequest(ctx, ss, samplingTool, req.Params)
	if err != nil {
		return nil, err
	}
	if d.Effect != rules.Allow {
		return nil, fmt.Errorf("airlock denied this sampling request: %s", d.Reason)
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Sampling == nil {
		return nil, errors.New("airlock allowed this sampling request, but the MCP client in front of the proxy does not support sampling")
	}
	res, err := ss.CreateMessage(ctx, req.Params)
	if err != nil {
		// A client on the protocol of 2026-07-28 takes no request from a
		// server outside a call's input requests; the SDK says so here.
		return nil, fmt.Errorf("airlock allowed this sampling request, but the MCP client in front of the proxy refused it: %w", err)
	}
	return res, nil
}

// relayElicitation relays the downstream server's question to the person
// unless a deny rule refuses mcp__NAME__elicitation__create. An ask
// needs no question of its own: the relayed question goes to the person,
// who can decline it.
func (p *Proxy) relayElicitation(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	ss, err := p.upstream()
	if err != nil {
		return nil, err
	}
	in, err := json.Marshal(req.Params)
	if err != nil {
		return nil, err
	}
	call := tool.Call{Tool: "mcp__" + p.name + "__" + elicitationTool, Input: in, Workspace: p.ws, ExecutionID: p.id}
	d, err := p.g.evaluator(headlessApprover{}).Decide(ctx, call)
	if d.Effect != rules.Allow && !errors.Is(err, gate.ErrApprovalRequired) {
		return nil, fmt.Errorf("airlock denied this elicitation request: %s", d.Reason)
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil, errors.New("the MCP client in front of the airlock proxy does not support elicitation")
	}
	res, err := ss.Elicit(ctx, req.Params)
	if err != nil {
		return nil, fmt.Errorf("the MCP client in front of the airlock proxy could not ask the person: %w", err)
	}
	return res, nil
}
