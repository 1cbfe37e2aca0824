package gate

import (
	"slices"

	"github.com/airlockhq/airlock/rules"
)

// Confinement is what the gate knows of the sandbox that runs the
// commands of some calls, so that it leaves to the sandbox what the
// sandbox enforces instead of refusing ordinary work: a read of a whole
// tree (grep -r, find ., ls -R, a glob loop) is not denied for a deny
// entry or rule beneath it that the sandbox masks. The masked files'
// content never reaches the command, so it never reaches the agent. And
// a command no rule mentions is allowed without a prompt (the sandbox
// confines it) unless the profile sets auto_allow_in_sandbox, to false
// (asking for everything) or true (allowing them on every surface).
type Confinement struct {
	// Tools are the tools whose calls run entirely inside the sandbox,
	// under the Evaluator's Profile: Bash for the Claude Code hook's
	// sandbox rewrite, every tool of airlock mcp serve. A tool airlock
	// does not run itself (Claude Code's own Grep) must not be listed.
	Tools []string
	// Masked reports whether the sandbox makes every path a deny rule
	// matches unreadable, files created there later included (the rule
	// is compiled into its profile). Nil means no rule is.
	Masked func(*rules.Rule) bool
}

func (c *Confinement) runs(toolName string) bool {
	return c != nil && slices.Contains(c.Tools, toolName)
}

func (c *Confinement) masks(r *rules.Rule) bool {
	return c != nil && c.Masked != nil && c.Masked(r)
}
