package sandbox

import (
	"fmt"
	"strings"

	"github.com/airlockhq/airlock/internal/visible"
	"github.com/airlockhq/airlock/profile"
)

// Level summarises a Report: full when every guarantee that applies to the
// profile is enforced, none when nothing is, partial otherwise.
type Level string

const (
	LevelFull    Level = "full"
	LevelPartial Level = "partial"
	LevelNone    Level = "none"
)

// Enforcement is the status of one guarantee on this host.
type Enforcement string

const (
	Enforced    Enforcement = "enforced"    // fully given
	Degraded    Enforcement = "degraded"    // given by a weaker mechanism; Reason says how
	Unavailable Enforcement = "unavailable" // not given; Reason says why
	NotApplied  Enforcement = "not_applied" // the profile does not ask for it (e.g. network-none with --net all)
)

// GuaranteeStatus is one line of a Report.
type GuaranteeStatus struct {
	Guarantee profile.Guarantee `json:"guarantee"`
	Status    Enforcement       `json:"status"`
	Mechanism string            `json:"mechanism,omitempty"`
	Reason    string            `json:"reason,omitempty"`
}

// Report is what the sandbox enforces for one profile on this host.
type Report struct {
	Level      Level             `json:"level"`
	Guarantees []GuaranteeStatus `json:"guarantees"`
	// Budgets says what bounds each budget of the profile; the
	// resource-limits guarantee sums them up.
	Budgets []BudgetStatus `json:"budgets"`
	// Silent lists the refusals that, on this host, reach neither the
	// run's stderr nor its Result, or only through the command's own
	// error messages, and why (maskwatch.go).
	Silent []string `json:"silent_refusals,omitempty"`
	// Rules lists how each deny rule of the workspace the profile was
	// made for is enforced: by which kernel or egress mechanism, or only
	// by the gate (profile.Spec.Enforced, filled by package workspace).
	Rules []profile.RuleEnforcement `json:"rules,omitempty"`
	Host  HostInfo                  `json:"host"`
}

// Status returns the line for g.
func (r Report) Status(g profile.Guarantee) GuaranteeStatus {
	for _, s := range r.Guarantees {
		if s.Guarantee == g {
			return s
		}
	}
	return GuaranteeStatus{Guarantee: g, Status: Unavailable, Reason: "not reported"}
}

// Enforced is the set of guarantees whose status is Enforced.
func (r Report) Enforced() profile.Guarantee {
	var set profile.Guarantee
	for _, s := range r.Guarantees {
		if s.Status == Enforced {
			set |= s.Guarantee
		}
	}
	return set
}

// String renders the report as aligned text for people.
func (r Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "level: %s\n", r.Level)
	for _, s := range r.Guarantees {
		fmt.Fprintf(&b, "  %-21s %-12s %s", s.Guarantee, s.Status, visible.Text(s.Mechanism))
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", visible.Text(s.Reason))
		}
		b.WriteByte('\n')
	}
	if len(r.Budgets) > 0 {
		b.WriteString("budgets:\n")
	}
	for _, s := range r.Budgets {
		limit := s.Limit
		if limit == "" {
			limit = "-"
		}
		fmt.Fprintf(&b, "  %-21s %-12s %-8s %s", s.Budget, s.Status, limit, s.Mechanism)
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", s.Reason)
		}
		b.WriteByte('\n')
	}
	if len(r.Silent) > 0 {
		b.WriteString("silent refusals:\n")
	}
	for _, s := range r.Silent {
		fmt.Fprintf(&b, "  %s\n", visible.Text(s))
	}
	writeRules(&b, r.Rules)
	return b.String()
}

func levelOf(gs []GuaranteeStatus) Level {
	applied, enforced := 0, 0
	for _, s := range gs {
		if s.Status == NotApplied {
			continue
		}
		applied++
		if s.Status == Enforced {
			enforced++
		}
	}
	switch {
	case applied > 0 && enforced == applied:
		return LevelFull
	case enforced == 0:
		return LevelNone
	}
	return LevelPartial
}
