package claudecode

import (
	"fmt"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// Claude Code's permission modes, as its hook input's permission_mode
// spells them (PermissionMode in the Agent SDK's sdk.d.ts).
const (
	ModeDefault     = "default"
	ModeAcceptEdits = "acceptEdits"
	ModePlan        = "plan"
	ModeDontAsk     = "dontAsk"
	ModeBypass      = "bypassPermissions"
	ModeAuto        = "auto"
)

// Verdict is the hook's answer: one of Claude Code's permission
// decisions, or VerdictDefer, which gives none and leaves the call to Claude
// Code's own permission system, just as if the hook were not there.
type Verdict string

const (
	VerdictAllow Verdict = "allow"
	VerdictAsk   Verdict = "ask"
	VerdictDeny  Verdict = "deny"
	// VerdictDefer prints no permissionDecision.
	VerdictDefer Verdict = "defer"
)

// modeVerdict turns the gate's decision on a call of tool info into the
// hook's answer under Claude Code's permission mode. airlock never makes
// Claude Code less strict than it is alone (the rules are in Verdict's
// terms; see README "Claude Code"):
//
//   - a denial holds in every mode, bypassPermissions included;
//   - an "allow" is only given where Claude Code alone would run the call
//     without asking too: each requirement allowed by a rule, or allowed
//     by the profile and of a kind the mode lets through unasked (a read
//     inside the workspace in every mode, an edit inside it in
//     acceptEdits, anything in bypassPermissions); otherwise the hook
//     defers, and Claude Code asks, refuses or allows as it would alone;
//   - in plan mode, and in a mode this version does not know, nothing
//     that can change anything is allowed, not even by a rule;
//   - orchestration tools that no rule names are deferred, and a tool
//     this version does not know is asked about unless a rule denies it.
//
// The reason says why, for the audit and for Claude Code's debug log.
//
// ruleAllows reports whether an allow rule matches a requirement: the
// gate does not look for one where the profile already allows it.
//
// confined says the call runs inside the airlock sandbox (sandbox mode's
// rewrite of a shell tool's command). What the profile allows of such a
// call is then run unasked in the modes where Claude Code's own sandbox
// mode runs sandboxed commands unasked (default, acceptEdits,
// bypassPermissions): the sandbox confines it, as Claude Code's would. In
// plan mode, dontAsk, auto and unknown modes it still defers.
func modeVerdict(mode, workspace string, info tool.ClaudeCodeTool, d gate.Decision, ruleAllows func(tool.Requirement) bool, confined bool) (Verdict, string) {
	switch d.Effect {
	case rules.Deny:
		return VerdictDeny, d.Reason
	case rules.Ask:
		if d.Rule == "" && info.Class == tool.ClassOrchestration {
			return VerdictDefer, "no rule names this tool, which steers Claude Code itself; Claude Code's permissions decide it"
		}
		if d.Rule == "" && info.Class == tool.ClassUnknown {
			return VerdictAsk, "airlock does not know this tool yet, so a person decides; a rule naming it can allow or deny it"
		}
		return VerdictAsk, d.Reason
	case rules.Allow:
	default:
		return VerdictDeny, fmt.Sprintf("unknown gate effect %q: %s", d.Effect, d.Reason)
	}
	if info.Class == tool.ClassUnknown && d.Rule == "" {
		// Allowed by no rule (the profile's default): a rule naming the
		// tool allows it, as /v1/decide does; nothing else does.
		return VerdictAsk, "airlock does not know this tool yet, so a person decides (" + d.Reason + ")"
	}
	switch mode {
	case "", ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass, ModeAuto:
	default:
		if !info.ReadOnly {
			return VerdictDefer, fmt.Sprintf("%s; permission mode %q is unknown to airlock, which allows nothing that changes anything in it: Claude Code's permissions decide", d.Reason, mode)
		}
	}
	if mode == ModePlan && !info.ReadOnly {
		return VerdictDefer, d.Reason + "; in plan mode airlock allows nothing that can change anything: Claude Code's permissions decide"
	}
	for _, s := range d.Requirements {
		if s.Effect == rules.Allow && (s.Layer != gate.LayerProfile || ruleAllows != nil && ruleAllows(s.Requirement)) {
			continue // a rule allows it: Claude Code's own allow rules would too
		}
		if confined && confinedUnasked(mode) {
			continue // it runs in the sandbox, which confines it
		}
		if !unasked(mode, workspace, info, s.Requirement) {
			return VerdictDefer, fmt.Sprintf("%s, but no rule allows %s %s and Claude Code asks about it in permission mode %q: Claude Code's permissions decide",
				d.Reason, s.Requirement.Kind, s.Requirement.Target, modeName(mode))
		}
	}
	return VerdictAllow, d.Reason
}

// confinedUnasked reports whether, in mode, a sandboxed command the
// profile allows runs without asking (Claude Code's sandbox mode runs its
// sandboxed commands unasked in these modes).
func confinedUnasked(mode string) bool {
	switch mode {
	case "", ModeDefault, ModeAcceptEdits, ModeBypass:
		return true
	}
	return false
}

// unasked reports whether Claude Code alone, in mode, runs a requirement
// of a call of tool info without asking.
func unasked(mode, workspace string, info tool.ClaudeCodeTool, r tool.Requirement) bool {
	switch {
	case mode == ModeBypass:
		return true
	case r.Kind == tool.KindFilesystemRead && info.ReadOnly:
		return inWorkspace(r.Target, workspace)
	case r.Kind == tool.KindFilesystemWrite && info.Edit && mode == ModeAcceptEdits:
		return inWorkspace(r.Target, workspace)
	}
	return false
}

// inWorkspace reports whether a resolved target is inside the workspace,
// as written or with its symlinks resolved (targets are resolved).
func inWorkspace(target, workspace string) bool {
	return workspace != "" && (within(target, workspace) || within(target, tool.Canonical(workspace)))
}

func modeName(mode string) string {
	if mode == "" {
		return ModeDefault
	}
	return mode
}
