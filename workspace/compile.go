package workspace

import (
	"slices"

	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// compiled is what the sandbox enforces of a workspace's rules.
type compiled struct {
	// report is KernelRules' word on every deny rule.
	report []Enforcement
	// masked are the Read deny rules every path of which the sandbox
	// masks (files created there later included): the gate leaves a
	// read of a whole tree holding them to the sandbox.
	masked map[*rules.Rule]bool
}

// compileRules is the one step of Load that turns the workspace's deny
// rules into profile fields the sandbox enforces (KernelRules: an
// overlay merged over the profile) and says which Read rules it masks
// whole.
func compileRules(set *rules.Set, ws string) (profile.Spec, compiled) {
	overlay, report := KernelRules(set, ws)
	c := compiled{report: report, masked: map[*rules.Rule]bool{}}
	for _, r := range set.Rules() {
		if r.Effect != rules.Deny || r.Pattern == nil || r.Pattern.Kind != tool.KindFilesystemRead || r.Pattern.OnlyTool != "" {
			continue
		}
		// Masked only when every glob the rule stands for went into the
		// overlay: one left out (it would hide the workspace) is the
		// gate's alone.
		globs, ok := r.Pattern.ElementGlobs()
		if ok && len(globs) > 0 && !slices.ContainsFunc(globs, func(g string) bool { return !slices.Contains(overlay.Filesystem.Deny, g) }) {
			c.masked[r] = true
		}
	}
	return overlay, c
}

// Enforcements lists how the sandbox of this policy enforces each deny
// rule of the workspace: by which kernel or egress mechanism, or only by
// the gate, and why (KernelRules).
func (p *Policy) Enforcements() []Enforcement {
	return append([]Enforcement(nil), p.kernel.report...)
}
