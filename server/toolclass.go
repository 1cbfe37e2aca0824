package server

import (
	"context"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// How /v1/decide weighs a Claude Code tool's class (tool.ClaudeCode, the
// table the PreToolUse hook reads too). Every tool that is not gated is
// one tool.invoke of its name (tool.ClaudeCodePreparers), so a rule
// naming it decides it. Without such a rule:
//
//   - an orchestration tool (Agent, AskUserQuestion, plan mode, TodoWrite,
//     Skill, the task tools) is allowed: it touches nothing the sandbox
//     guards, and the agent's own permissions still apply to it (the AI
//     SDK bootstrap hook turns an allow into no objection, and Claude
//     Code's permission flow goes on as without airlock);
//   - an opaque tool, or one airlock does not know yet, goes to a person
//     (ask): never denied for being new, never allowed unseen.

// preparers are the gate's preparers for a call of the tool name.
func (s *Server) preparers(name string) tool.Preparers {
	return tool.ClaudeCodePreparers(s.cfg.Preparers, name)
}

// steersAgentReason is why an orchestration tool no rule names is allowed.
const steersAgentReason = "no rule names this tool, which steers the agent itself (subagents, questions, plan mode, todos, skills, tasks): airlock raises no objection, and the agent's own permissions apply"

// steering decides a call of an orchestration tool that no rule names:
// ok with an allow, recorded, when the gate, asked without a person,
// leaves the call to one only because no rule covers it (a denial when
// the allow cannot be recorded, as the gate's own decisions). Otherwise
// (a rule names the tool, or the call cannot be prepared) ok is false and
// the call is decided as any other, so a deny rule denies it and an ask
// rule opens an approval.
func (s *Server) steering(ctx context.Context, c call, pol Policy) (decideResponse, bool) {
	if tool.ClaudeCode(c.Tool).Class != tool.ClassOrchestration {
		return decideResponse{}, false
	}
	ev := &gate.Evaluator{Profile: pol.Profile, Rules: pol.Rules, Preparers: s.preparers(c.Tool), Now: s.now}
	d, err := ev.Decide(ctx, c.Call)
	if err != nil || d.Effect != rules.Ask || d.Rule != "" {
		return decideResponse{}, false
	}
	e := audit.Event{Type: audit.TypeDecision, ExecutionID: c.ExecutionID, Tool: c.Tool,
		Decision: string(rules.Allow), Reason: steersAgentReason, Layer: gate.LayerTool,
		Detail: map[string]any{"class": tool.ClassOrchestration.String(), "workspace": c.Workspace,
			"identity": c.Identity, "requirements": len(d.Requirements)}}
	if d.Requirement != nil {
		e.Requirement = &audit.Requirement{Kind: d.Requirement.Kind, Target: d.Requirement.Target}
	}
	rec := &recorder{s: s, ctx: context.WithoutCancel(ctx), ap: &approver{s: s, c: c}}
	if err := rec.Append(e); err != nil {
		s.log.Error("recording an orchestration tool's allow", "err", err)
		return decideResponse{Decision: string(rules.Deny),
			Reason: "the decision could not be written to the audit log: " + err.Error()}, true
	}
	return decideResponse{Decision: string(rules.Allow), Reason: steersAgentReason}, true
}
