package claudecode

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
	"github.com/airlockhq/airlock/workspace"
)

// Output is what the hook prints on stdout, exit status 0: the "PreToolUse
// decision control" of https://code.claude.com/docs/en/hooks. For
// permissionDecision "allow" Claude Code runs the call without asking, for
// "ask" it asks its user, for "deny" it refuses the call and shows the
// reason to Claude. updatedInput, when set, replaces the tool's whole
// input (so it repeats every field of the original that is kept).
type Output struct {
	HookSpecificOutput Decision `json:"hookSpecificOutput"`
}

// Decision is the hookSpecificOutput object of a PreToolUse answer.
type Decision struct {
	HookEventName            string          `json:"hookEventName"`
	PermissionDecision       string          `json:"permissionDecision"`
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return h.block(in, err, stderr)
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
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
// gate cannot decide alone becomes permissionDecision "ask".
func (h *Hook) Decide(ctx context.Context, in Input) Output {
	ws := FindWorkspace(in.Cwd, "")
	if h.Workspace != nil {
		ws = h.Workspace(in.Cwd)
	}
	rec := idRecorder{next: h.Recorder, session: in.SessionID, toolUse: in.ToolUseID}
	denyNow := func(reason string) Output {
		if err := rec.Append(audit.Event{Type: audit.TypeDecision, Tool: in.ToolName,
			Decision: string(rules.Deny), Reason: reason, Layer: "hook"}); err != nil {
			reason += " (and the audit log failed: " + err.Error() + ")"
		}
		return answer(rules.Deny, reason, nil)
	}
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
	if sandboxed && h.Sandbox != nil && pol.Profile != nil {
		ev = pol.Evaluator("Bash")
	} else {
		ev = pol.Evaluator()
	}
	ev.Recorder = rec
	d, _ := ev.Decide(ctx, call) // d is a denial whenever err is set
	if d.Effect == rules.Deny || in.ToolName != "Bash" {
		return answer(d.Effect, d.Reason, nil)
	}
	if !sandboxed {
		return answer(d.Effect, d.Reason, nil)
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
	return answer(d.Effect, d.Reason+"; it runs inside the airlock sandbox", updated)
}

// answer builds the hook's output for a gate effect.
func answer(effect rules.Effect, reason string, updated json.RawMessage) Output {
	decision := string(effect)
	switch effect {
	case rules.Allow, rules.Ask, rules.Deny:
	default:
		decision, reason = string(rules.Deny), fmt.Sprintf("unknown gate effect %q: %s", effect, reason)
	}
	return Output{HookSpecificOutput: Decision{
		HookEventName:            EventPreToolUse,
		PermissionDecision:       decision,
		PermissionDecisionReason: "airlock: " + reason,
		UpdatedInput:             updated,
	}}
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
