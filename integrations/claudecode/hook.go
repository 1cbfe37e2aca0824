package claudecode

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/internal/jsonquote"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
	"github.com/airlockhq/airlock/workspace"
)

// Output is what the hook prints on stdout, exit status 0: the "PreToolUse
// decision control" of https://code.claude.com/docs/en/hooks. For
// permissionDecision "allow" Claude Code runs the call without asking, for
// "ask" it asks its user, for "deny" it refuses the call and shows the
// reason to Claude. Without a permissionDecision (VerdictDefer) Claude
// Code decides as if the hook were not there. updatedInput, when set,
// replaces the tool's whole input (so it repeats every field of the
// original that is kept).
type Output struct {
	HookSpecificOutput Decision `json:"hookSpecificOutput"`
}

// encode returns o as a json.Encoder with SetEscapeHTML(false) writes it,
// newline included. The answer without updatedInput (all but the
// sandbox's rewrites) is written field by field: the Encoder's first use
// of Output's types in the process costs more than the rest of the line.
// TestOutputEncode compares the two.
func (o Output) encode() ([]byte, error) {
	d := o.HookSpecificOutput
	if len(d.UpdatedInput) > 0 {
		j, err := marshalNoEscape(o)
		if err != nil {
			return nil, err
		}
		return append(j, '\n'), nil
	}
	b := make([]byte, 0, 256)
	b = append(b, `{"hookSpecificOutput":{"hookEventName":`...)
	b = jsonquote.AppendNoHTMLEscape(b, d.HookEventName)
	if d.PermissionDecision != "" {
		b = append(b, `,"permissionDecision":`...)
		b = jsonquote.AppendNoHTMLEscape(b, d.PermissionDecision)
	}
	b = append(b, `,"permissionDecisionReason":`...)
	b = jsonquote.AppendNoHTMLEscape(b, d.PermissionDecisionReason)
	return append(b, "}}\n"...), nil
}

// Decision is the hookSpecificOutput object of a PreToolUse answer.
type Decision struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision,omitempty"` // empty: no decision (VerdictDefer)
	PermissionDecisionReason string          `json:"permissionDecisionReason"`
	UpdatedInput             json.RawMessage `json:"updatedInput,omitempty"`
}

// Exit statuses of a hook run, as Claude Code reads them: 0 with the
// decision on stdout, 2 to block the call with the reason on stderr. Any
// other status would let the call go ahead, so the hook never uses one.
const (
	ExitDecided = 0
	ExitBlocked = 2
)

// Hook answers Claude Code's PreToolUse hook. Set its fields before the
// first Run.
type Hook struct {
	// Workspace returns the workspace a call's cwd belongs to; nil means
	// FindWorkspace(cwd, "").
	Workspace func(cwd string) string
	// Policy loads what applies in a workspace (workspace.Load). Its
	// Profile gives the gate's step 1 and, in sandbox mode, the profile
	// the command runs under, whose fingerprint is bound into the grant;
	// its Sandbox turns the rewrite on for that workspace even if the
	// Hook's own Sandbox.Always is false. Required.
	Policy func(ws string) (*workspace.Policy, error)
	// Recorder receives every decision, with the session and tool-use
	// ids; nil records nothing.
	Recorder gate.Recorder
	// Sandbox, when set, rewrites allowed Bash calls to run inside
	// "airlock run" (see Sandbox). Nil never rewrites, even when a
	// Policy asks for it: such a call is denied instead, since the
	// policy wants no unsandboxed Bash.
	Sandbox *Sandbox
	// Home is the directory "~" stands for in calls; empty means $HOME.
	Home string
	// MaxInput bounds stdin; 0 means DefaultMaxInput.
	MaxInput int64
}

// Run reads one hook input from stdin, decides it and writes the answer,
// returning the exit status for the process: ExitDecided with the JSON on
// stdout, or ExitBlocked with a reason on stderr when the input is not a
// PreToolUse call this hook understands.
func (h *Hook) Run(ctx context.Context, stdin io.Reader, stdout, stderr io.Writer) int {
	in, err := ReadInput(stdin, h.MaxInput)
	if err != nil {
		return h.block(in, err, stderr)
	}
	out := h.Decide(ctx, in)
	b, err := out.encode()
	if err != nil {
		return h.block(in, err, stderr)
	}
	if _, err := stdout.Write(b); err != nil {
		return h.block(in, err, stderr)
	}
	return ExitDecided
}

// block writes the reason for a blocked call and records it.
func (h *Hook) block(in Input, err error, stderr io.Writer) int {
	reason := "airlock: blocked: " + err.Error()
	if h.Recorder != nil {
		if rerr := h.Recorder.Append(audit.Event{
			Type: audit.TypeDecision, Tool: in.ToolName, Decision: string(rules.Deny),
			Reason: err.Error(), Layer: "hook", SessionID: in.SessionID, ToolUseID: in.ToolUseID,
		}); rerr != nil {
			reason += " (and the audit log failed: " + rerr.Error() + ")"
		}
	}
	fmt.Fprintln(stderr, reason)
	return ExitBlocked
}

// Decide decides one parsed call. It never waits for a person: what the
// gate cannot decide alone becomes permissionDecision "ask". The gate's
// decision is then weighed against Claude Code's permission mode (see
// modeVerdict) and the tool's class (tool.ClaudeCode): where allowing would make
// Claude Code less strict than it is alone, the hook gives no decision.
// The audit event records the answer given, "defer" for none.
func (h *Hook) Decide(ctx context.Context, in Input) Output {
	// One lookup: each walks up from cwd with a stat per marker and level.
	var ws string
	if h.Workspace != nil {
		ws = h.Workspace(in.Cwd)
	} else {
		ws = FindWorkspace(in.Cwd, "")
	}
	rec := idRecorder{next: h.Recorder, session: in.SessionID, toolUse: in.ToolUseID}
	// The gate's event is held back and written once the mode and the
	// sandbox have had their say, so that it records the answer given.
	var held heldEvent
	finish := func(v Verdict, reason string, updated json.RawMessage) Output {
		ev := held.event
		if !held.set {
			ev = audit.Event{Type: audit.TypeDecision, Tool: in.ToolName, Layer: "hook"}
		}
		ev.Decision, ev.Reason = string(v), reason
		if err := rec.Append(ev); err != nil {
			return answer(VerdictDeny, "the decision could not be written to the audit log, so the call is refused: "+err.Error(), nil)
		}
		return answer(v, reason, updated)
	}
	denyNow := func(reason string) Output { return finish(VerdictDeny, reason, nil) }
	if h.Policy == nil {
		return denyNow("the hook has no policy loader")
	}
	pol, err := h.Policy(ws)
	if err != nil {
		return denyNow(fmt.Sprintf("the policy of workspace %s could not be loaded, so nothing is allowed: %v", ws, err))
	}
	call := tool.Call{
		Tool: in.ToolName, Input: in.ToolInput, Workspace: ws, Cwd: in.Cwd, Home: h.Home,
		ExecutionID: newExecutionID(),
		Identity:    tool.Identity{Agent: "claude-code", Session: in.SessionID, Invocation: in.ToolUseID},
	}
	// No Approver: the gate's "a person must decide" comes back as ask,
	// which Claude Code puts to its user. No Issuer: the sandbox rewrite
	// mints its one grant for the whole command itself. In sandbox mode
	// every Bash call runs in the policy's sandbox, which the gate is
	// told (a command no rule mentions needs no prompt; a tree read is
	// left to the masks); Claude Code's own tools it does not run.
	sandboxed := pol.Sandbox || (h.Sandbox != nil && h.Sandbox.Always)
	var ev *gate.Evaluator
	info := tool.ClaudeCode(in.ToolName)
	confined := sandboxed && h.Sandbox != nil && pol.Profile != nil && info.Shell && hasCommand(in.ToolInput)
	if sandboxed && h.Sandbox != nil && pol.Profile != nil {
		ev = pol.Evaluator(shellTools()...)
	} else {
		ev = pol.Evaluator()
	}
	ev.Recorder = &held
	ev.Preparers = tool.ClaudeCodePreparers(nil, in.ToolName)
	d, _ := ev.Decide(ctx, call) // d is a denial whenever err is set
	now := time.Now()
	verdict, reason := modeVerdict(in.PermissionMode, ws, info, d, func(r tool.Requirement) bool {
		return pol.Rules.Match(rules.Allow, r, now) != nil
	}, confined)
	if verdict == VerdictDeny {
		return finish(verdict, reason, nil)
	}
	if !sandboxed {
		return finish(verdict, reason, nil)
	}
	if in.ToolName == "PowerShell" {
		return denyNow("the workspace runs commands inside the airlock sandbox, which runs bash, not PowerShell; use Bash")
	}
	if !info.Shell || !hasCommand(in.ToolInput) {
		return finish(verdict, reason, nil)
	}
	if h.Sandbox == nil {
		return denyNow("the workspace policy sets sandbox = true but this hook cannot rewrite commands; run it as 'airlock hook claude-code'")
	}
	if pol.Profile == nil {
		return denyNow("sandbox mode needs the workspace's profile")
	}
	updated, err := h.Sandbox.rewrite(call, in.ToolInput, pol.Profile)
	if err != nil {
		return denyNow("the command could not be rewritten to run in the sandbox: " + err.Error())
	}
	if verdict == VerdictDefer {
		// The rewrite must reach Claude Code, and it is only applied with
		// a decision: the person sees the sandboxed command instead of
		// Claude Code's own prompt.
		verdict = VerdictAsk
	}
	return finish(verdict, reason+"; it runs inside the airlock sandbox", updated)
}

// answer builds the hook's output for a verdict.
func answer(v Verdict, reason string, updated json.RawMessage) Output {
	decision := string(v)
	switch v {
	case VerdictAllow, VerdictAsk, VerdictDeny:
	case VerdictDefer:
		decision = "" // no permissionDecision: Claude Code decides
	default:
		decision, reason = string(VerdictDeny), fmt.Sprintf("unknown verdict %q: %s", v, reason)
	}
	return Output{HookSpecificOutput: Decision{
		HookEventName:            EventPreToolUse,
		PermissionDecision:       decision,
		PermissionDecisionReason: "airlock: " + reason,
		UpdatedInput:             updated,
	}}
}

// hasCommand reports whether a tool input has a "command" member (a
// Monitor call has a command or a WebSocket).
func hasCommand(input json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(input, &fields) != nil {
		return false
	}
	_, ok := fields["command"]
	return ok
}

// heldEvent keeps the gate's audit event instead of writing it.
type heldEvent struct {
	event audit.Event
	set   bool
}

func (h *heldEvent) Append(e audit.Event) error {
	h.event, h.set = e, true
	return nil
}

// idRecorder stamps the session and tool-use ids on every event.
type idRecorder struct {
	next             gate.Recorder
	session, toolUse string
}

func (r idRecorder) Append(e audit.Event) error {
	if r.next == nil {
		return nil
	}
	e.SessionID, e.ToolUseID = r.session, r.toolUse
	return r.next.Append(e)
}

// newExecutionID names the execution one hook call becomes; the audit
// events of the decision and of the sandboxed run share it.
func newExecutionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "claude-" + hex.EncodeToString(b[:])
}

// FindWorkspace returns the workspace cwd belongs to: projectDir (Claude
// Code's $CLAUDE_PROJECT_DIR) when cwd is inside it; else the nearest
// directory from cwd upwards holding .airlock/, .claude/ or .git, below the
// home directory (whose .claude holds Claude Code's user settings); else
// cwd. It is profile.FindWorkspace, which airlock run uses too, with
// Claude Code's own marker added.
func FindWorkspace(cwd, projectDir string) string {
	if projectDir != "" && within(cwd, projectDir) {
		return projectDir
	}
	return profile.FindWorkspace(cwd, ".claude")
}

// within reports whether path is dir or beneath it; both are clean and
// absolute.
func within(path, dir string) bool {
	return path == dir || dir == "/" || strings.HasPrefix(path, dir+"/")
}
