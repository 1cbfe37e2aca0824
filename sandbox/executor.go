package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/airlockhq/airlock/egress"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/profile"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// ErrUnavailable is the class of errors for a profile whose required
// guarantees this host cannot give.
var ErrUnavailable = errors.New("sandbox unavailable")

// ErrSetup is the class of errors for a run whose sandbox could not be
// set up; nothing of the command ran.
var ErrSetup = errors.New("sandbox setup failed")

// UnavailableError lists the required guarantees the host cannot give.
type UnavailableError struct {
	Missing []GuaranteeStatus
}

func (e *UnavailableError) Error() string {
	var parts []string
	for _, m := range e.Missing {
		why := m.Reason
		if why == "" {
			why = string(m.Status)
		}
		parts = append(parts, fmt.Sprintf("%s: %s", m.Guarantee, why))
	}
	return "sandbox: required guarantee not available on this host: " + strings.Join(parts, "; ")
}

// Unwrap makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Unwrap() error { return ErrUnavailable }

// SetupError names the setup step that failed.
type SetupError struct {
	Step string // e.g. "mount view", "landlock", "cgroup"
	Err  error
}

func (e *SetupError) Error() string { return "sandbox setup: " + e.Step + ": " + e.Err.Error() }

// Unwrap returns the cause; errors.Is(err, ErrSetup) is also true.
func (e *SetupError) Unwrap() []error { return []error{ErrSetup, e.Err} }

// ErrCommandNotFound and ErrNotExecutable are the setup errors that are
// the command's own: nothing by that name in the sandbox's view, or a
// file that cannot be executed. A SetupError wraps one of them when its
// step is finding or executing the command (the CLI exits 127 and 126 for
// them, as timeout(1) and env(1) do).
var (
	ErrCommandNotFound = errors.New("command not found")
	ErrNotExecutable   = errors.New("command not executable")
)

// commandError is the helper's message about the command, classed.
type commandError struct {
	msg   string
	class error
}

func (e *commandError) Error() string { return e.msg }
func (e *commandError) Unwrap() error { return e.class }

// classifyCommandError turns the helper's message for a failed step into
// an error, classed when the step is finding or executing the command.
func classifyCommandError(step, cause string) error {
	if step != "find command" && !strings.HasPrefix(step, "exec ") {
		return errors.New(cause)
	}
	switch {
	case strings.Contains(cause, "not an executable file"), strings.Contains(cause, "permission denied"),
		strings.Contains(cause, "exec format error"), strings.Contains(cause, "is a directory"):
		return &commandError{msg: cause, class: ErrNotExecutable}
	case strings.Contains(cause, "not found"), strings.Contains(cause, "no such file or directory"),
		strings.Contains(cause, "not a directory"):
		return &commandError{msg: cause, class: ErrCommandNotFound}
	}
	return errors.New(cause)
}

// Executor runs commands under one profile. Build it with New; it is safe
// for concurrent use.
type Executor struct {
	profile *profile.Profile
	opts    Options
	host    HostInfo
	report  Report
	policy  *egress.Policy // nil: no egress gateway (network none, or all without TUN)
	gateway egress.Server  // serves the runs' TAP devices when policy is set

	// The helper for the next run, cloned ahead of it (helper.go).
	spec   helperSpec
	warmMu sync.Mutex
	warm   *warmSlot
	closed bool
}

// Options configure an Executor. The zero value runs any command the
// caller prepares.
type Options struct {
	// Grants, when set, makes the Executor refuse every run that does not
	// present valid single-use grants from the gate (Cmd.Grants) for its
	// exact command, directory, execution id and profile — or that the
	// profile alone does not allow.
	Grants *grant.Issuer
	// Resolver resolves, in the supervisor, the names a network
	// allowlist lets the sandbox look up. Nil means the host's resolver
	// (net.DefaultResolver).
	Resolver *net.Resolver
	// Dialer opens the supervisor's side of the connections the egress
	// layer allows. Nil means a net.Dialer with egress.DefaultDialTimeout.
	Dialer *net.Dialer
	// Gateway starts the egress gateway of each run whose profile has a
	// network. Nil means the one of this process, egress.InProcess
	// (importing egress/netstack registers it); with neither, New
	// refuses such a profile. airlock's CLI names an egress/remote
	// Server, which keeps gVisor's netstack out of its binary.
	Gateway egress.Server
	// KeepWarm clones the helper of the next run as each run starts, for
	// an Executor that serves many runs. False warms one helper only, in
	// New, for the first run; either way Close ends the one not taken.
	KeepWarm bool
	// Cold clones no helper before a Start: for an Executor made to check
	// the host (airlock doctor) rather than to run. KeepWarm wins.
	Cold bool
}

// New checks that this host gives every guarantee p requires and returns
// an Executor for it. Nothing of a command runs; the sandbox's helper for
// the first run starts cloning in the background (Close ends it). The error wraps ErrUnavailable and is
// an *UnavailableError when a required guarantee is missing.
func New(p *profile.Profile) (*Executor, error) {
	return NewWithOptions(p, Options{})
}

// NewWithOptions is New with Options.
func NewWithOptions(p *profile.Profile, opts Options) (*Executor, error) {
	if p == nil {
		return nil, errors.New("sandbox: nil profile")
	}
	// A run whose supervisor died left its end-of-run check undone. One
	// that cannot finish keeps runs out of its own trees only.
	_, err := FinishInterruptedRuns()
	trees := append([]string{p.Spec().Workspace}, p.Spec().Filesystem.Write...)
	if _, block := JournalsBlocking(err, trees...); block != nil {
		return nil, block
	}
	// The first run's helper is cloned as soon as the probe knows how,
	// beside the rest of the probe, and starts beside the checks below;
	// a New that fails ends it.
	var warm *warmSlot
	var cloned func() *warmSlot
	h := probeHost(func(h HostInfo) {
		if h.UserNamespaces && (opts.KeepWarm || !opts.Cold) {
			cloned = cloneWarm(newHelperSpec(p, h))
		}
	})
	if cloned != nil {
		warm = cloned()
	}
	e, err := newExecutor(p, opts, h)
	if err != nil {
		if warm != nil {
			warm.discard()
		}
		return nil, err
	}
	e.warm = warm
	return e, nil
}

// newExecutor checks the host's probe against p.
func newExecutor(p *profile.Profile, opts Options, h HostInfo) (*Executor, error) {
	r := reportFor(p, h)
	var missing []GuaranteeStatus
	for _, g := range p.Required().List() {
		if st := r.Status(g); st.Status != Enforced {
			missing = append(missing, st)
		}
	}
	// Whatever the profile requires, these make any run impossible:
	// without user namespaces there is no sandbox at all; an allowlist
	// without its egress layer would silently be "none", and network
	// "all" without it would silently be the host's network, private
	// ranges and the host's loopback included.
	if !h.UserNamespaces {
		missing = append(missing, r.Status(profile.ProcessIsolation))
	}
	if st := r.Status(profile.NetworkFiltered); st.Status == Unavailable && !containsGuarantee(missing, profile.NetworkFiltered) {
		missing = append(missing, st)
	}
	if st := r.Status(profile.PrivateRangeBlock); p.Spec().Network.Mode == profile.NetworkModeAll && st.Status != Enforced && !containsGuarantee(missing, profile.PrivateRangeBlock) {
		missing = append(missing, st)
	}
	if len(missing) > 0 {
		h.idmapTrees.close()
		return nil, &UnavailableError{Missing: missing}
	}
	var pol *egress.Policy
	var gw egress.Server
	if usesGateway(p.Spec().Network, h) {
		var err error
		if pol, err = egress.Compile(p.Spec().Network); err != nil {
			h.idmapTrees.close()
			return nil, err
		}
		if gw = opts.Gateway; gw == nil {
			gw = egress.InProcess()
		}
		if gw == nil {
			h.idmapTrees.close()
			return nil, errNoGateway
		}
	}
	// A supervisor killed outright cannot remove its run's cgroup; the
	// next one does (not this one's warm helper's: its owner lives).
	linux.SweepStale(h.cgroups)
	return &Executor{profile: p, opts: opts, host: h, report: r, policy: pol, gateway: gw, spec: newHelperSpec(p, h)}, nil
}

// errNoGateway: a program that neither imports egress/netstack nor names
// an Options.Gateway cannot serve a network; refusing is the only choice
// that neither shares the host's network nor silently cuts it off.
var errNoGateway = errors.New("sandbox: the profile's network needs an egress gateway, and this program has none: import github.com/airlockhq/airlock/egress/netstack, or set Options.Gateway")

func containsGuarantee(list []GuaranteeStatus, g profile.Guarantee) bool {
	for _, s := range list {
		if s.Guarantee == g {
			return true
		}
	}
	return false
}

// Report is what this Executor enforces on this host.
func (e *Executor) Report() Report { return e.report }

// Profile is the Executor's profile.
func (e *Executor) Profile() *profile.Profile { return e.profile }

// Cmd describes one command to run, like exec.Cmd's fields.
type Cmd struct {
	// Args is the command line; Args[0] is looked up on the sandbox's PATH
	// when it has no slash.
	Args []string
	// Dir is the working directory inside the sandbox; empty means the
	// workspace. It must be a path the profile makes visible.
	Dir string
	// Env adds KEY=VALUE entries after the profile's environment. The
	// caller's own environment never passes except through the profile's
	// allowlist.
	Env []string
	// Stdin is the command's standard input; nil means /dev/null.
	Stdin io.Reader
	// Stdout and Stderr receive the output as it is written. Nil means
	// the output is kept in the Result. Either way, output beyond the
	// profile's output budget ends the run with StatusOutputLimitExceeded.
	Stdout io.Writer
	Stderr io.Writer
	// Terminal, when set, gives the command a terminal of its own
	// instead of Stdin, Stdout and Stderr as they are: Stdin is copied
	// to it and its output goes to Stdout (see Terminal).
	Terminal *Terminal
	// Publish makes ports the command listens on reachable on the host
	// (see Publish).
	Publish []Publish
	// Timeout caps the wall time of the run; zero means the profile's
	// budget. When both are set the smaller applies.
	Timeout time.Duration
	// ExecutionID ties the run to the gate's decision in the audit log.
	ExecutionID string
	// Grants are the gate's single-use tokens for this run; an Executor
	// with Options.Grants redeems them in Prepare.
	Grants []grant.Claim
}

// Prepare checks cmd against the profile and compiles everything the run
// needs; nothing runs until Start. ctx bounds the whole run: cancelling it
// kills the process tree and Wait reports StatusCancelled.
func (e *Executor) Prepare(ctx context.Context, cmd Cmd) (*Process, error) {
	if len(cmd.Args) == 0 || cmd.Args[0] == "" {
		return nil, errors.New("sandbox: empty command")
	}
	return prepare(ctx, e, cmd)
}

// Run prepares, starts and waits for cmd.
func (e *Executor) Run(ctx context.Context, cmd Cmd) (*Result, error) {
	p, err := e.Prepare(ctx, cmd)
	if err != nil {
		return nil, err
	}
	if err := p.Start(); err != nil {
		return nil, err
	}
	return p.Wait()
}
