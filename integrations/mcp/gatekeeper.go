package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/sandbox"
	"github.com/airlockhq/airlock/tool"
)

// Gate is what the server and the proxy decide calls with.
type Gate struct {
	// Profile gives step 1 of every decision; its workspace is the one
	// relative paths and rules refer to.
	Profile *profile.Profile
	// Rules are the loaded rules of every layer; nil means none, so
	// everything the profile does not allow must be approved.
	Rules *rules.Set
	// Audit receives every decision and every run; nil records nothing.
	Audit *audit.Log
	// Masked reports the deny rules the sandbox enforces by masking
	// their paths (workspace.Policy.Masked), which a tree read the
	// server runs is left to; nil means none.
	Masked func(*rules.Rule) bool
}

// approvalKey names the one input request an ask sends: the MCP client
// echoes it back with the person's answer.
const approvalKey = "airlock_approval"

// askTTL bounds how long an elicitation may stay unanswered, and
// maxPendingAsks how many may wait at once.
const (
	askTTL         = 10 * time.Minute
	maxPendingAsks = 1000
)

// gatekeeper decides calls and turns "ask" into an elicitation. Asks wait
// in pending, keyed by the random request state the client must echo back,
// so an answer counts once and only for the very call it was asked about:
// a client cannot approve a call by sending an answer nobody asked for.
type gatekeeper struct {
	Gate
	// confined are the tools whose calls run in the sandbox (the
	// server's: all of them; the proxy's: none, its server's tools are
	// not commands of ours).
	confined []string
	mu       sync.Mutex
	pending  map[string]pendingAsk
}

type pendingAsk struct {
	call    string // callKey of the call asked about
	expires time.Time
}

func newGatekeeper(g Gate) *gatekeeper {
	return &gatekeeper{Gate: g, pending: map[string]pendingAsk{}}
}

// verdict is the outcome of decide: either allowed (Decision.Effect is
// allow) or a result to return as it is (a denial, or the input request
// of an ask).
type verdict struct {
	Decision gate.Decision
	Result   *sdk.CallToolResult
}

// fixedApprover answers every request with one answer: the person's answer
// to an elicitation, given once the client sends it back.
type fixedApprover gate.Answer

func (a fixedApprover) Approve(context.Context, gate.Request) (gate.Answer, error) {
	return gate.Answer(a), nil
}

// headlessApprover is the approver when the client cannot ask anyone.
type headlessApprover struct{}

func (headlessApprover) Approve(context.Context, gate.Request) (gate.Answer, error) {
	return gate.Answer{}, gate.ErrApprovalRequired
}

func (g *gatekeeper) evaluator(a gate.Approver) *gate.Evaluator {
	ev := &gate.Evaluator{Profile: g.Profile, Rules: g.Rules, Approver: a}
	if len(g.confined) > 0 {
		ev.Sandbox = &gate.Confinement{Tools: g.confined, Masked: g.Masked}
	}
	if g.Audit != nil {
		ev.Recorder = g.Audit
	}
	return ev
}

// decide decides call for the tools/call request req. Each outcome is
// recorded once in the audit log: an allow or deny as such, an ask as
// "ask" and then the person's answer as the allow or deny it became.
func (g *gatekeeper) decide(ctx context.Context, req *sdk.CallToolRequest, call tool.Call) verdict {
	key := callKey(call)
	if state := req.Params.RequestState; state != "" {
		if g.take(state, key) {
			ans := answerOf(req.Params.InputResponses[approvalKey])
			d, _ := g.evaluator(fixedApprover(ans)).Decide(ctx, call)
			return g.finish(d)
		}
		// A state this server never gave, or gave for another call, or
		// already used: decide afresh as if no answer had come.
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		// No elicitation, or only the URL mode, which cannot carry a yes/no.
		d, err := g.evaluator(headlessApprover{}).Decide(ctx, call)
		v := g.finish(d)
		if errors.Is(err, gate.ErrApprovalRequired) {
			v.Result = deniedResult(d, "This MCP client cannot ask a person (it does not support elicitation). "+
				"The user can allow it with an allow rule matching "+suggestRule(d)+" in the workspace's .airlock/policy.toml, "+
				"or use a client that supports elicitation.")
		}
		return v
	}
	d, _ := g.evaluator(nil).Decide(ctx, call)
	if d.Effect != rules.Ask {
		return g.finish(d)
	}
	state := g.ask(key)
	return verdict{Decision: d, Result: &sdk.CallToolResult{
		InputRequests: sdk.InputRequestMap{approvalKey: &sdk.ElicitParams{
			Mode:    "form",
			Message: approvalMessage(call, d),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"approve": map[string]any{"type": "boolean", "title": "Allow this call once", "default": true},
				},
			},
		}},
		RequestState: state,
	}}
}

// refuseFailedAsks makes a question that could not be put to the person
// (the client answered the elicitation with an error, or went away) a
// tool result the model can read, as a denial is, instead of a protocol
// error. The SDK's own middleware asks clients older than 2026-07-28 and
// fails the whole call with a "multi-round-trip" error; this middleware is
// added after it, so it sees that error.
func refuseFailedAsks(srv *sdk.Server) {
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			res, err := next(ctx, method, req)
			if err != nil && method == "tools/call" && strings.Contains(err.Error(), "multi-round-trip") {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{
					Text: "airlock denied this call: it needs a person's approval and the MCP client could not ask (" + err.Error() + ")"}}}, nil
			}
			return res, err
		}
	})
}

// finish turns a decision without a pending question into a verdict.
func (g *gatekeeper) finish(d gate.Decision) verdict {
	if d.Effect == rules.Allow {
		return verdict{Decision: d}
	}
	return verdict{Decision: d, Result: deniedResult(d, "")}
}

// ask records a pending question about the call with key and returns the
// request state that names it.
func (g *gatekeeper) ask(key string) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	state := hex.EncodeToString(b[:])
	now := time.Now()
	g.mu.Lock()
	defer g.mu.Unlock()
	for s, p := range g.pending {
		if now.After(p.expires) || len(g.pending) >= maxPendingAsks {
			delete(g.pending, s)
		}
	}
	g.pending[state] = pendingAsk{call: key, expires: now.Add(askTTL)}
	return state
}

// take spends the pending question state if it is about the call with key.
func (g *gatekeeper) take(state, key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.pending[state]
	if !ok || p.call != key {
		return false
	}
	delete(g.pending, state)
	return time.Now().Before(p.expires)
}

// answerOf reads the person's answer from an elicitation result: accepted,
// and not with approve set to false.
func answerOf(r sdk.InputResponse) gate.Answer {
	res, ok := r.(*sdk.ElicitResult)
	if !ok || res == nil {
		return gate.Answer{Verdict: gate.DenyOnce, Reason: "the MCP client sent no answer"}
	}
	if res.Action != "accept" {
		return gate.Answer{Verdict: gate.DenyOnce, Reason: "the person answered " + res.Action + " in the MCP client"}
	}
	if v, ok := res.Content["approve"].(bool); ok && !v {
		return gate.Answer{Verdict: gate.DenyOnce, Reason: "the person did not tick approve in the MCP client"}
	}
	return gate.Answer{Verdict: gate.ApproveOnce}
}

// callKey identifies a call by its tool and its arguments in a canonical
// JSON form, so the echo of a retried call matches however it was spaced.
func callKey(call tool.Call) string {
	var v any
	in := []byte(call.Input)
	if json.Unmarshal(call.Input, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			in = b
		}
	}
	return call.Tool + "\x00" + call.Workspace + "\x00" + string(in)
}

func approvalMessage(call tool.Call, d gate.Decision) string {
	in := string(call.Input)
	if len(in) > 2000 {
		in = in[:2000] + "…"
	}
	return fmt.Sprintf("airlock: the agent wants to call %s with %s\n\n%s\n\nAllow it once?", call.Tool, in, d.Reason)
}

// suggestRule is the narrowest rule that would allow what d asked about.
func suggestRule(d gate.Decision) string {
	if d.Requirement != nil {
		if m, err := rules.ExactMatch(*d.Requirement); err == nil {
			return m
		}
	}
	return "..."
}

// Denial is one thing refused: by the gate (Source "gate") or by the
// sandbox while the call ran (Source "sandbox").
type Denial struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Reason string `json:"reason"`
	Rule   string `json:"rule,omitempty"`
	Layer  string `json:"layer,omitempty"`
}

// Outcome is the structured content of every tool result of the server,
// and of the proxy's denials.
type Outcome struct {
	// Status is "denied" when the gate refused the call, else the
	// sandbox's status (succeeded, failed, timed_out, ...).
	Status string `json:"status"`
	// ExitCode is the exit code of the command that carried the call; -1
	// when it did not run or died of a signal.
	ExitCode int `json:"exit_code"`
	// Output is what the call produced: the command's stdout and stderr,
	// a file's text, a directory listing.
	Output string `json:"output"`
	// Denials are what the gate or the sandbox refused.
	Denials []Denial `json:"denials"`
	// Reason says why the call was denied or failed.
	Reason string `json:"reason,omitempty"`
}

// gateDenial is the Outcome of a call the gate did not allow.
func gateDenial(d gate.Decision) Outcome {
	den := Denial{Source: "gate", Reason: d.Reason, Rule: d.Rule, Layer: d.Layer}
	if d.Requirement != nil {
		den.Kind, den.Target = d.Requirement.Kind, d.Requirement.Target
	}
	return Outcome{Status: "denied", ExitCode: -1, Denials: []Denial{den}, Reason: d.Reason}
}

// deniedResult is the tool result of a denial: isError, the reason as
// text for the model, the Outcome as structured content.
func deniedResult(d gate.Decision, hint string) *sdk.CallToolResult {
	text := "airlock denied this call: " + d.Reason
	if d.Rule != "" {
		text += " (rule " + d.Rule + ", " + d.Layer + " layer)"
	}
	if hint != "" {
		text += "\n" + hint
	}
	return &sdk.CallToolResult{
		IsError:           true,
		Content:           []sdk.Content{&sdk.TextContent{Text: text}},
		StructuredContent: gateDenial(d),
	}
}

// newExecutionID names one call's execution in the audit log.
func newExecutionID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "mcp-" + hex.EncodeToString(b[:])
}

// recordRun appends what one sandboxed run did: the spawn (or the setup
// failure), each enforcement the sandbox recorded, and the exit.
func (g *gatekeeper) recordRun(id, toolName, target string, res *sandbox.Result, runErr error) {
	if g.Audit == nil {
		return
	}
	base := audit.Event{ExecutionID: id, Tool: toolName, Profile: g.Profile.Fingerprint()}
	spawn := base
	spawn.Type = audit.TypeSpawn
	spawn.Requirement = &audit.Requirement{Kind: tool.KindCommandExecute, Target: target}
	if res == nil {
		spawn.Decision = "deny"
		if runErr != nil {
			spawn.Reason = "sandbox setup failed: " + runErr.Error()
		}
		_ = g.Audit.Append(spawn)
		return
	}
	spawn.Detail = map[string]any{"level": res.Level, "setup_ms": res.Timings.Setup.Milliseconds()}
	_ = g.Audit.Append(spawn)
	for _, d := range res.Denials {
		ev := base
		ev.Type = audit.TypeEnforcement
		ev.Decision = "deny"
		ev.Reason = d.Reason
		ev.Requirement = &audit.Requirement{Kind: d.Kind, Target: d.Target}
		_ = g.Audit.Append(ev)
	}
	exit := base
	exit.Type = audit.TypeExit
	exit.Detail = map[string]any{"status": res.Status, "exit_code": res.ExitCode, "run_ms": res.Timings.Run.Milliseconds()}
	_ = g.Audit.Append(exit)
}
