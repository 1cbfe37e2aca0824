package workspace

import (
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
)

// Masked reports whether the sandbox of this policy makes every path the
// deny rule r matches unreadable, files created there later included.
func (p *Policy) Masked(r *rules.Rule) bool {
	return p.kernel.masked[r]
}

// Confinement describes, for the gate, this policy's sandbox running
// every call of tools: what it masks, so that a read of a whole tree is
// left to it, and that a command there needs no prompt unless the
// profile sets auto_allow_in_sandbox = false (gate.Confinement). Only
// surfaces that run those calls in the sandbox themselves (mcp serve,
// the Claude Code hook's sandbox rewrite) may claim it.
func (p *Policy) Confinement(tools ...string) *gate.Confinement {
	return &gate.Confinement{Tools: tools, Masked: p.Masked}
}

// Evaluator returns an Evaluator with this policy's profile and rules,
// and, when tools are named, the Confinement of their calls. The caller
// sets the Approver, Recorder, Issuer and the rest before its first
// Decide.
func (p *Policy) Evaluator(tools ...string) *gate.Evaluator {
	ev := &gate.Evaluator{Rules: p.Rules}
	if p.Profile != nil { // a nil *Profile in the interface would not read as none
		ev.Profile = p.Profile
	}
	if len(tools) > 0 {
		ev.Sandbox = p.Confinement(tools...)
	}
	return ev
}
