package approval

import (
	"context"
	"fmt"

	"github.com/airlockhq/airlock/gate"
)

// Func is a gate.Approver made of a Go function.
type Func func(ctx context.Context, req gate.Request) (gate.Answer, error)

// Approve calls f.
func (f Func) Approve(ctx context.Context, req gate.Request) (gate.Answer, error) {
	return f(ctx, req)
}

// Headless is the approver of a gate with no one to ask: every request is
// refused with an error wrapping gate.ErrApprovalRequired, which the gate
// turns into a denial.
type Headless struct{}

// Approve refuses.
func (Headless) Approve(_ context.Context, req gate.Request) (gate.Answer, error) {
	what := "this call"
	if len(req.Pending) > 0 {
		p := req.Pending[0].Requirement
		what = p.Kind + " " + p.Target
	}
	return gate.Answer{}, fmt.Errorf("%w: %s needs approval (add an allow rule to permit it)", gate.ErrApprovalRequired, what)
}
