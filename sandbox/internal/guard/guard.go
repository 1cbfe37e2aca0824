// Package guard is the shape every guard of the sandbox shares: the
// supervisor-side parts that watch a run from outside it (the egress
// gateway, the connect broker with its unix socket guard, exec watch and
// create guard, the deny and mask watch over fanotify).
//
// A guard has the same parts each time: a probe of the host (Guard),
// which the Report turns into a status; a socket the helper hands it
// descriptors over (Handoff); a start once the helper has its config,
// and a close when the run ends (Run). The sandbox keeps one registry of
// probes (Registry) and one of runs, and walks them; adding a guard adds
// one entry to each and touches no other guard.
//
// The package owns the interface, the probes and the hand-off wire. It
// does not own what a guard does during a run (that is the sandbox's,
// which holds the run's state), nor the helper's end of a hand-off
// (sandbox/internal/linux).
package guard

import (
	"errors"
	"os"

	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// Name names a guard in a probe's results.
type Name string

// The guards that probe the host, in Registry order.
const (
	// Tun: /dev/net/tun opens, so the egress gateway can serve a TAP
	// device in the sandbox's network namespace.
	Tun Name = "tun"
	// Fanotify: the supervisor may answer fanotify permission events,
	// so the deny and mask watch can run.
	Fanotify Name = "fanotify"
	// UnixSocket: the supervisor can stop and carry out the sandbox's
	// connects (the connect broker, its unix socket guard and exec
	// watch).
	UnixSocket Name = "unix-socket"
	// Create: the supervisor can also stop the name-making calls and
	// hand back what it opened for them.
	Create Name = "create"
)

// Availability is whether this host can run a guard, and why not.
type Availability struct {
	OK     bool
	Reason string // what is missing and how to get it; empty when OK
}

// Host is what a probe reads besides the host itself: facts found
// before any guard is probed, and the guards probed before it.
type Host struct {
	// Kernel is the kernel release (uname -r).
	Kernel string
	// Seccomp is whether seccomp filters can be installed.
	Seccomp Availability

	found map[Name]Availability
}

// Found returns the result of a guard probed earlier; the zero value
// (not OK) for one that was not.
func (h *Host) Found(n Name) Availability { return h.found[n] }

// Guard is a guard as the host sees it.
type Guard interface {
	Name() Name
	// Probe says whether this host can run the guard. It creates
	// nothing that outlives it.
	Probe(h *Host) Availability
}

// Registry lists the guards, each after those its probe reads.
var Registry = []Guard{tunProbe{}, fanotifyProbe{}, unixSocketProbe{}, createProbe{}}

// ProbeAll probes every guard of the registry on h, in order.
func ProbeAll(h Host) map[Name]Availability {
	h.found = make(map[Name]Availability, len(Registry))
	for _, g := range Registry {
		h.found[g.Name()] = g.Probe(&h)
	}
	return h.found
}

// ErrHelperGone: the helper ended before it handed a guard its
// descriptors. The helper's own message on the error pipe says why, so
// the supervisor reports that one instead.
var ErrHelperGone = errors.New("the helper ended before the hand-off")

// Run is a guard's supervisor side in one run, D being what the sandbox
// records of a refusal. The sandbox calls, in order: Handoff and
// Configure while it builds the helper's command and config; Start once
// the helper has its config (the runs' Starts go side by side); Close
// when every process of the run is gone, or when the setup fails.
type Run[D any] interface {
	// Step names the guard in a setup error ("egress", "deny watch").
	Step() string
	// Handoff is the socket pair the helper's descriptors travel over.
	Handoff() *Handoff
	// Configure tells the helper's config which of its descriptors the
	// hand-off's child end is.
	Configure(cfg *linux.Config, fd int) error
	// Start receives the helper's descriptors and serves them. An error
	// wrapping ErrHelperGone means the helper ended first.
	Start() error
	// Close ends the guard and returns what it refused. Safe to call
	// more than once, and without Start.
	Close() []D
}

// Handoff is a socket pair between the supervisor (Parent) and the
// helper (Child) that descriptors travel over.
type Handoff struct {
	Parent, Child *os.File
}

// HelperGone is ErrHelperGone for one hand-off, named by what was being
// handed over: errors.Is(HelperGone(x), ErrHelperGone) holds. A type,
// not fmt.Errorf, so that a package variable of it costs nothing at
// init (cmd/airlock's TestLazyInits).
type HelperGone string

func (h HelperGone) Error() string { return string(h) + ": " + ErrHelperGone.Error() }

// Unwrap makes errors.Is see ErrHelperGone.
func (HelperGone) Unwrap() error { return ErrHelperGone }
