package sandbox

import (
	"os"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Any program that uses this package re-executes itself as the stage-2
// helper (/proc/self/exe with argv[0] linux.Stage2Arg0). Catching that
// here, at init, means callers need no hook of their own in main.
func init() {
	if len(os.Args) > 0 && os.Args[0] == linux.Stage2Arg0 {
		linux.Stage2()
	}
}
