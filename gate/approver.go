package gate

import (
	"context"
	"fmt"
	"time"

	"github.com/airlockhq/airlock/tool"
)

// Approver answers for requirements no rule decided. Implementations are
// in package approval (terminal, function, headless).
type Approver interface {
	// Approve asks about every pending requirement of one call at once and
	// returns one answer for all of them. An error wrapping
	// ErrApprovalRequired means no one could be asked.
	Approve(ctx context.Context, req Request) (Answer, error)
}

// Request is what an Approver is asked.
type Request struct {
	Call tool.Call
	// Pending are the requirements that need an answer.
	Pending []Pending
	// Profile is the profile's fingerprint.
	Profile string
}

// Pending is one requirement waiting for an answer, and why it waits.
type Pending struct {
	Requirement tool.Requirement
	// Rule and Layer name the ask rule that sent it here, if one did.
	Rule, Layer string
	// Why says in words why it needs an answer.
	Why string
	// Savable reports whether an "always" answer can be saved as a rule
	// for it: only exact requirements can; the others are approved once.
	Savable bool
}

// Verdict is a person's answer.
type Verdict int

const (
	// DenyOnce refuses this call.
	DenyOnce Verdict = iota
	// ApproveOnce allows this call.
	ApproveOnce
	// ApproveAlways allows this call and saves an exact allow rule per
	// pending requirement in the local layer.
	ApproveAlways
	// ApproveFor is ApproveAlways with rules that expire after Answer.For.
	ApproveFor
	// DenyAlways refuses this call and saves an exact deny rule per
	// pending requirement.
	DenyAlways
)

func (v Verdict) String() string {
	switch v {
	case DenyOnce:
		return "deny"
	case ApproveOnce:
		return "once"
	case ApproveAlways:
		return "always"
	case ApproveFor:
		return "for a while"
	case DenyAlways:
		return "always deny"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Answer is an Approver's answer.
type Answer struct {
	Verdict Verdict
	// For is how long ApproveFor rules last.
	For time.Duration
	// Reason is an optional note from whoever answered, shown on deny.
	Reason string
}

func (a Answer) approves() bool {
	return a.Verdict == ApproveOnce || a.Verdict == ApproveAlways || a.Verdict == ApproveFor
}

func (a Answer) label() string {
	if a.Verdict == ApproveFor {
		return "for " + a.For.String()
	}
	return a.Verdict.String()
}
