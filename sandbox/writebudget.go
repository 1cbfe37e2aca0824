package sandbox

import (
	"github.com/airlockhq/airlock/profile"
)

// maxWriteStatus says what bounds the write budget.
func maxWriteStatus(s profile.Spec) BudgetStatus {
	return BudgetStatus{Budget: BudgetMaxWrite, Status: NotApplied, Reason: "no write budget"}
}
