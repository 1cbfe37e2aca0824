package sandbox

import (
	"fmt"

	"github.com/airlockhq/airlock/profile"
)

// Where no cgroup can be written (an unprivileged user without a delegated
// cgroup), the memory budget falls back to RLIMIT_AS. That limits address
// space, not memory: Go's page allocator and V8 reserve gigabytes they
// never touch, so Go programs and Node die at start under a 512MiB
// RLIMIT_AS while using a few MiB. Below addressSpaceFloor the limit is
// raised to the floor, and the Report and airlock run's stderr say so.
const addressSpaceFloor = profile.Size(4 << 30)

// addressSpaceLimit is the RLIMIT_AS a memory budget becomes.
func addressSpaceLimit(budget profile.Size) uint64 {
	return uint64(max(budget, addressSpaceFloor))
}

// addressSpaceNote is the Report's reason for a memory budget held only by
// RLIMIT_AS; empty when the profile sets none.
func addressSpaceNote(budget profile.Size) string {
	switch {
	case budget == 0:
		return ""
	case budget < addressSpaceFloor:
		return fmt.Sprintf("the memory budget %s is only an address-space limit (RLIMIT_AS), raised to %s because Go and Node cannot start below it; resident memory is not limited", budget, addressSpaceFloor)
	}
	return fmt.Sprintf("the memory budget %s is only an address-space limit (RLIMIT_AS); resident memory is not limited", budget)
}
