package provider

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"
)

// Provider runs requests for one configured sandbox. Implementations
// assume the Request is valid and its context carries the all-in
// deadline: a Handle checks both before calling Execute.
type Provider interface {
	// Execute runs req and returns its Result. A non-nil error means no
	// Result was produced; it is one of this package's typed errors and
	// carries no daemon text.
	Execute(ctx context.Context, req Request) (Result, error)
	// Close releases what the provider holds (scopes, containers,
	// scratch directories) and waits until it is released.
	Close() error
}

// Languages Request.Code may be written in.
const (
	LangPython = "python"
	LangSh     = "sh"
)

// Identity says on whose behalf a request runs. Every field is optional;
// scopes are keyed on all of them together, never on one alone.
type Identity struct {
	Agent      string `json:"agent,omitempty"`
	User       string `json:"user,omitempty"`
	Session    string `json:"session,omitempty"`
	Invocation string `json:"invocation,omitempty"`
}

// Request is one execution. Exactly one of Code and Argv is set.
type Request struct {
	// Code is a program in Lang (python or sh; empty means python).
	Code string
	Lang string
	// Argv is a command line run without a shell.
	Argv []string
	// Stdin is the program's standard input.
	Stdin []byte
	// Files are written into the working directory before the run:
	// name → content. A name is one path element (no slash, not . or ..).
	Files map[string][]byte
	// OutputFiles names files of the working directory to return.
	OutputFiles []string
	// Timeout is the all-in deadline (queue + start + run); zero means
	// the sandbox's, and a larger value is cut to it.
	Timeout time.Duration
	// Identity is filled by the Handle from its invocation; a caller's
	// own value is ignored.
	Identity Identity
	// ExecutionID ties the run to the gate's decision; a Handle makes one
	// when empty.
	ExecutionID string
	// Metadata is the caller's JSON, copied on entry and never logged.
	Metadata json.RawMessage
	// Network narrows the sandbox's network for this request: empty keeps
	// it, "none" removes it. A request can never widen it.
	Network string
}

// LogValue keeps code, input, files and metadata out of logs.
func (r Request) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("execution_id", r.ExecutionID),
		slog.String("lang", r.Lang),
		slog.Int("argc", len(r.Argv)),
		slog.Int("files", len(r.Files)),
		slog.Duration("timeout", r.Timeout),
	)
}

// Status is how an execution ended.
type Status string

const (
	StatusSucceeded           Status = "succeeded"             // exit status 0, nothing cut short
	StatusFailed              Status = "failed"                // non-zero exit, a signal, a budget kill, or an input file refused
	StatusTimedOut            Status = "timed_out"             // the all-in deadline passed (queued, starting or running)
	StatusOutputLimitExceeded Status = "output_limit_exceeded" // stdout+stderr over max_output
	StatusCancelled           Status = "cancelled"             // the caller's context ended or the handle was revoked
)

// Result is what an execution produced. Whatever its Status, the run
// happened (or was queued and ended); errors are separate.
type Result struct {
	ExecutionID string `json:"execution_id"`
	Status      Status `json:"status"`
	// ExitCode is the program's exit status; -1 when it did not exit on
	// its own (killed, never started).
	ExitCode int    `json:"exit_code"`
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	// Limit names the budget that ended a failed run ("memory", "pids"),
	// when the provider can tell.
	Limit string `json:"limit,omitempty"`
	// OutputFiles holds the requested files that existed after the run.
	OutputFiles map[string][]byte `json:"output_files,omitempty"`
	// FileErrors says, by name, why an input or output file was not
	// moved: the working directory held a link, a FIFO, a directory or
	// a device under that name, or the file was over max_output. An
	// input that could not be placed means the program did not run
	// (status failed, exit code -1).
	FileErrors map[string]string `json:"file_errors,omitempty"`
	// Metadata is what the provider says about the run (provider name,
	// scope, container id); never the request's Metadata.
	Metadata map[string]string `json:"metadata,omitempty"`
	Timings  Timings           `json:"timings"`
}

// Timings of one execution; they add up to at most the all-in deadline.
type Timings struct {
	Queue time.Duration `json:"queue_ns"` // waiting for a slot of the sandbox
	Start time.Duration `json:"start_ns"` // scratch, container or sandbox set up
	Run   time.Duration `json:"run_ns"`   // the program itself
}

// Default budgets of a sandbox that does not set them.
const (
	DefaultTimeout   = 300 * time.Second
	DefaultMemory    = 512 << 20
	DefaultCPU       = 1.0
	DefaultPids      = 64
	DefaultMaxOutput = 1 << 20
	DefaultScratch   = 64 << 20
	DefaultMaxScopes = 8
)

// ScopeKey is the key a scoped provider keeps a workspace or container
// under: every identity field, so that no two users or agents sharing a
// session id ever share one. Execution scope has no key ("").
func ScopeKey(scope string, id Identity) string {
	switch scope {
	case ScopeSession:
		id.Invocation = ""
	case ScopeInvocation:
	default:
		return ""
	}
	b, _ := json.Marshal(id)
	return scope + ":" + string(b)
}

// Scopes a sandbox may have.
const (
	ScopeExecution  = "execution"  // a fresh workspace or container per execution
	ScopeInvocation = "invocation" // reused within one agent+user+session+invocation
	ScopeSession    = "session"    // reused within one agent+user+session
)
