package sandbox

import (
	"fmt"
	"strings"

	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/profile"
)

// writeRules renders the Report's rule lines: each deny rule, "kernel"
// with its mechanism or "gate" with why the sandbox leaves it to the
// gate, and what the mechanism does not cover.
func writeRules(b *strings.Builder, rules []profile.RuleEnforcement) {
	if len(rules) == 0 {
		return
	}
	b.WriteString("deny rules:\n")
	for _, r := range rules {
		where := "gate"
		if r.Kernel {
			where = "kernel"
		}
		fmt.Fprintf(b, "  %-6s %s", where, visible.Text(r.Rule))
		if r.Source != "" {
			fmt.Fprintf(b, " [%s]", visible.Text(r.Source))
		}
		if r.Mechanism != "" {
			fmt.Fprintf(b, ": %s", visible.Text(r.Mechanism))
		}
		if r.Note != "" {
			fmt.Fprintf(b, " (%s)", visible.Text(r.Note))
		}
		b.WriteByte('\n')
	}
}
