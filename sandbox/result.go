package sandbox

import (
	"encoding/json"
	"strconv"
	"time"
)

// Status is how a run ended. Setup failures are errors, not statuses.
type Status string

const (
	StatusSucceeded           Status = "succeeded"             // exit status 0
	StatusFailed              Status = "failed"                // non-zero exit or killed by a signal
	StatusTimedOut            Status = "timed_out"             // wall-clock limit reached
	StatusOutputLimitExceeded Status = "output_limit_exceeded" // stdout+stderr over the cap
	StatusCancelled           Status = "cancelled"             // context cancelled or Kill called
	StatusKilledOOM           Status = "killed_oom"            // the memory limit's OOM killer fired
	StatusLimitExceeded       Status = "limit_exceeded"        // another budget was hit: pids (and the run failed), or the write budget
)

// Result is what Wait returns.
type Result struct {
	Status   Status `json:"status"`
	ExitCode int    `json:"exit_code"` // -1 when killed by a signal
	Signal   string `json:"signal,omitempty"`
	// Stdout and Stderr hold the output when the Cmd had no writer for it,
	// up to the output budget.
	Stdout []byte `json:"-"`
	Stderr []byte `json:"-"`
	// OutputBytes counts every byte the command wrote, kept or not.
	OutputBytes int64    `json:"output_bytes"`
	Timings     Timings  `json:"timings"`
	Denials     []Denial `json:"denials"`

	Level      Level             `json:"level"`
	Guarantees []GuaranteeStatus `json:"guarantees"`
	Budgets    []BudgetStatus    `json:"budgets"`
	// Silent is the Report's list of refusals this run could not report.
	Silent      []string           `json:"silent_refusals,omitempty"`
	Fingerprint string             `json:"profile_fingerprint"`
	Limits      map[string]float64 `json:"limits,omitempty"`
	// Published lists the command's ports reachable from the host
	// (Cmd.Publish).
	Published []Publish `json:"published,omitempty"`
}

// Timings of one run. Prepare, Setup and Run follow each other; Total is
// Setup, Run and the end of the run (the cgroup's counters and removal,
// the end-of-run checks).
type Timings struct {
	Prepare time.Duration `json:"prepare_ns"` // Prepare called → returned (the plan)
	Setup   time.Duration `json:"setup_ns"`   // Start called → command exec'd
	// HelperWait is the part of Setup that Start waited for the clone of
	// the Executor's warm helper to finish (zero when it was ready, or
	// when the run cloned its own).
	HelperWait time.Duration `json:"helper_wait_ns,omitempty"`
	Run        time.Duration `json:"run_ns"`   // exec → the helper reaped (every process of the run gone)
	Total      time.Duration `json:"total_ns"` // Start called → Wait done

	// The whole program that ran the sandbox, which the library cannot
	// see: set by that program (airlock run sets both), else zero.
	// ProcessInit is its start → its main function (exec, the Go
	// runtime's start, package inits); Process is its start → the Report
	// written, the last step before it exits (see internal/proctime).
	ProcessInit time.Duration `json:"process_init_ns,omitempty"`
	Process     time.Duration `json:"process_ns,omitempty"`

	// End is Wait, step by step, in the order the steps ran (finish.go).
	// The first, helper, is Wait called → the helper reaped: with Wait
	// called at once after Start, it is mostly the run itself; the others
	// are the end of the run. In the JSON each is a number of its own,
	// end_<step>_ns, so that every timing stays a number of nanoseconds.
	End []EndStep `json:"-"`
}

// EndStep is one step of the end of a run and how long it took.
type EndStep struct {
	Step     string // helper, output, guards, exit_status, cgroup_counters, cleanup, write_budget, protected_paths, result
	Duration time.Duration
}

// MarshalJSON writes the timings as one object of numbers, End's steps
// as end_<step>_ns after the others.
func (t Timings) MarshalJSON() ([]byte, error) {
	type plain Timings
	b, err := json.Marshal(plain(t))
	if err != nil || len(t.End) == 0 {
		return b, err
	}
	b = b[:len(b)-1] // the closing brace; the object has Prepare at least
	for _, s := range t.End {
		b = append(b, `,"end_`...)
		b = append(b, s.Step...) // a name of endSteps: no quoting needed
		b = append(b, `_ns":`...)
		b = strconv.AppendInt(b, int64(s.Duration), 10)
	}
	return append(b, '}'), nil
}

// Denial is one thing the sandbox refused that the audit log should join
// with the gate's decision: a limit hit, a timeout, a blocked connection.
type Denial struct {
	Kind string `json:"kind"` // "memory", "pids", "timeout", "output", "network", ...
	// Protocol of a network denial: "tcp", "udp", "dns" (a lookup the
	// gateway refused to answer) or "icmp".
	Protocol string `json:"protocol,omitempty"`
	Target   string `json:"target"` // what was refused, e.g. "example.com:443"
	Reason   string `json:"reason"`
	// Live: a line on the run's stderr said so as it happened (or said
	// that more refusals followed than it would list), so a caller that
	// sums the refusals up at the end need not say it again. Not in the
	// JSON: every field a report's reader gets stays a string.
	Live bool `json:"-"`
}
