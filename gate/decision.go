package gate

import (
	"errors"
	"fmt"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/tool"
)

// ErrApprovalRequired is wrapped by the error Decide returns when a call
// needs a person's approval and the Approver cannot ask one (headless
// mode). The Decision is then a denial.
var ErrApprovalRequired = errors.New("gate: approval required and no one can approve")

// ErrDenied is wrapped by errors that stand for a denial, for callers that
// turn a Decision into an error with [Decision.Err].
var ErrDenied = errors.New("gate: denied")

// Layers a decision can come from besides the rule layers.
const (
	LayerProfile  = "profile"  // the profile's access
	LayerTool     = "tool"     // the call could not be prepared, or its tool's class decided
	LayerApprover = "approver" // a person or an approver function
	LayerAudit    = "audit"    // the decision could not be recorded
)

// Decision is the gate's answer for one call.
type Decision struct {
	// Effect is allow, ask (a person must decide; no Approver was set) or
	// deny.
	Effect rules.Effect `json:"decision"`
	// Reason says why, in words shown to the agent and the user.
	Reason string `json:"reason"`
	// Requirement is the requirement that decided: the denied one, the
	// first one needing approval, or for allow the first gated one.
	Requirement *tool.Requirement `json:"requirement,omitempty"`
	// Rule is the matched rule's text, "" when no rule decided.
	Rule string `json:"rule,omitempty"`
	// Layer is the matched rule's layer, or LayerProfile, LayerTool,
	// LayerApprover.
	Layer string `json:"layer,omitempty"`
	// Source is where the rule is written ("file:line").
	Source string `json:"source,omitempty"`
	// Requirements are every requirement of the call with its own step.
	Requirements []Step `json:"requirements"`
	// Approval is how a person answered, when one did: once, always,
	// for DURATION, deny, always deny.
	Approval string `json:"approval,omitempty"`
	// Grants holds one single-use token per Gated requirement that was
	// allowed, for the executor to redeem. Tokens are never encoded.
	Grants []grant.Claim `json:"-"`
}

// Step is one requirement and how it was decided.
type Step struct {
	tool.Requirement
	// Access is what the profile gave it: deny, gated or allow.
	Access string `json:"access"`
	// Effect is what this requirement alone came to: allow, ask or deny
	// ("" when the decision ended before reaching it).
	Effect rules.Effect `json:"effect,omitempty"`
	Rule   string       `json:"rule,omitempty"`
	Layer  string       `json:"layer,omitempty"`
}

// Err returns nil for an allow decision and otherwise a *DeniedError
// wrapping ErrDenied (or ErrApprovalRequired for ask).
func (d Decision) Err() error {
	if d.Effect == rules.Allow {
		return nil
	}
	return &DeniedError{Decision: d}
}

// DeniedError is a decision that is not allow, as an error.
type DeniedError struct{ Decision Decision }

func (e *DeniedError) Error() string {
	return fmt.Sprintf("gate: %s: %s", e.Decision.Effect, e.Decision.Reason)
}

// Unwrap lets errors.Is find ErrDenied, or ErrApprovalRequired for ask.
func (e *DeniedError) Unwrap() error {
	if e.Decision.Effect == rules.Ask {
		return ErrApprovalRequired
	}
	return ErrDenied
}
