package workspace

import (
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/rules"
)

// compiled is what the sandbox enforces of a workspace's rules.
type compiled struct {
	// masked are the deny rules whose paths the sandbox makes
	// unreadable, files created there later included.
	masked map[*rules.Rule]bool
}

// compileRules is the one step of Load that turns the workspace's deny
// rules into profile fields the sandbox enforces (an overlay merged over
// the profile), and says which rules it enforces. The kernel compile of
// issue 17's point 2 (KernelRules, kernel.go) plugs in here.
func compileRules(set *rules.Set, ws string) (profile.Spec, compiled) {
	return profile.Spec{}, compiled{}
}
