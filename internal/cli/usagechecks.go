package cli

import (
	"fmt"
	"strconv"

	"github.com/airlockhq/airlock/profile"
)

// minCPU is the smallest CPU budget the kernel takes: a quota of 1 ms
// in the 100 ms period the sandbox sets (cpu.max, cpu.cfs_quota_us).
const minCPU = 0.01

// budgetUsage refuses the values a run could not use, which would
// otherwise fail later with a kernel's words or pass without a word:
// a CPU budget below the kernel's minimum, a process budget too small
// for any command that starts another, an empty --workspace (read as
// "find one"), and --max-output 0 (read as the profile's budget).
func budgetUsage(set map[string]bool, f *ProfileFlags) error {
	if set["cpu"] && f.cpu > 0 && f.cpu < minCPU {
		return fmt.Errorf("--cpu %s: below the kernel's smallest CPU budget, %g cores (1 ms per 100 ms); use %g or more, or leave --cpu out for none", strconv.FormatFloat(f.cpu, 'g', -1, 64), minCPU, minCPU)
	}
	if set["pids"] && f.pids == 1 {
		return fmt.Errorf("--pids 1: the command itself is the one process, so it could start no other (a shell, git, make and compilers all do, and fail with \"Resource temporarily unavailable\"); use 2 or more, 64 for a build")
	}
	if set["workspace"] && f.workspace == "" {
		return fmt.Errorf("--workspace '': an empty path; name the project directory (--workspace .), or leave --workspace out to use the nearest one with .git or .airlock/")
	}
	if set["max-output"] {
		if s, err := profile.ParseSize(f.maxOutput); err == nil && s == 0 {
			return fmt.Errorf("--max-output %s: the command could print nothing at all; use a positive size such as 1MiB, or leave --max-output out for the profile's budget", f.maxOutput)
		}
	}
	return nil
}
