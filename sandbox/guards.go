package sandbox

import (
	"errors"

	"github.com/airlockhq/airlock/sandbox/internal/guard"
	"github.com/airlockhq/airlock/sandbox/internal/linux"
)

// runGuards makes, in the order the helper hands them their descriptors
// (the TAP device after the network step, the mounts after the mount
// view, the notifier after seccomp), each guard's part of one run, or nil
// when the run has none. A new guard adds its entry here and its own
// file; spawn, Wait and the cleanup walk the list.
var runGuards = []func(p *Process) (guard.Run[Denial], error){
	newEgressRun,
	newDenyRun,
	newNotifierRun,
}

// newGuardRuns makes the run's guards and their hand-offs; on an error
// none is left open.
func (p *Process) newGuardRuns() error {
	for _, mk := range runGuards {
		r, err := mk(p)
		if err != nil {
			p.closeGuards()
			return err
		}
		if r != nil {
			p.guards = append(p.guards, r)
		}
	}
	return nil
}

// startGuards starts each guard in order, once the helper has its config.
// After a failure the rest are not started: their hand-offs close, and a
// helper waiting on one fails its step. An error of a helper that ended
// first is not returned, since the helper's own message says why.
func (p *Process) startGuards() error {
	var first error
	for _, r := range p.guards {
		if first == nil {
			if err := r.Start(); err != nil && !errors.Is(err, guard.ErrHelperGone) {
				first = &SetupError{Step: r.Step(), Err: err}
			} else if err != nil {
				first = err
			}
		}
		r.Handoff().Parent.Close()
	}
	if errors.Is(first, guard.ErrHelperGone) {
		return nil
	}
	return first
}

// closeGuards ends the run's guards, last started first, and returns
// what they refused. Safe to call more than once.
func (p *Process) closeGuards() []Denial {
	var out []Denial
	for i := len(p.guards) - 1; i >= 0; i-- {
		r := p.guards[i]
		r.Handoff().Parent.Close()
		r.Handoff().Child.Close()
		out = append(out, r.Close()...)
	}
	return out
}

// guardRun is what the runs share: the step name and the hand-off.
type guardRun struct {
	p    *Process
	step string
	h    *guard.Handoff
}

func (r *guardRun) Step() string            { return r.step }
func (r *guardRun) Handoff() *guard.Handoff { return r.h }

func newGuardRun(p *Process, step, name string) (guardRun, error) {
	h, err := guard.NewHandoff(name)
	if err != nil {
		return guardRun{}, &SetupError{Step: step, Err: err}
	}
	return guardRun{p: p, step: step, h: h}, nil
}

// egressRun serves the sandbox's TAP device with the egress gateway
// (egress.go).
type egressRun struct{ guardRun }

func newEgressRun(p *Process) (guard.Run[Denial], error) {
	if p.e.policy == nil {
		return nil, nil
	}
	r, err := newGuardRun(p, "egress", "tap")
	if err != nil {
		return nil, err
	}
	return &egressRun{r}, nil
}

func (r *egressRun) Configure(cfg *linux.Config, fd int) error {
	cfg.Network.FD = fd
	return nil
}
func (r *egressRun) Start() error    { return r.p.startGateway(r.h) }
func (r *egressRun) Close() []Denial { return r.p.closeGateway() }

// denyRun answers the fanotify permission events of the sandbox's mounts
// and masks (denywatch.go, maskwatch.go).
type denyRun struct{ guardRun }

func newDenyRun(p *Process) (guard.Run[Denial], error) {
	if !p.wantsDenyWatch() {
		return nil, nil
	}
	r, err := newGuardRun(p, "deny watch", "deny")
	if err != nil {
		return nil, err
	}
	return &denyRun{r}, nil
}

func (r *denyRun) Configure(cfg *linux.Config, fd int) error {
	cfg.DenyWatch = denyWatchConfig(fd, r.p.plan.denyWatch, r.p.plan.links, r.p.plan.config.Mounts)
	return nil
}
func (r *denyRun) Start() error    { return r.p.startDenyWatch(r.h) }
func (r *denyRun) Close() []Denial { return r.p.closeDenyWatch() }

// notifierRun answers the connect notifier: the connect broker, with the
// unix socket guard, the exec watch and the create guard on the same
// notifier (connect.go, unixguard.go, execwatch.go, createguard.go).
type notifierRun struct{ guardRun }

func newNotifierRun(p *Process) (guard.Run[Denial], error) {
	if !p.e.host.UnixGuard {
		return nil, nil
	}
	r, err := newGuardRun(p, "connect notifier", "notifier")
	if err != nil {
		return nil, err
	}
	return &notifierRun{r}, nil
}

func (r *notifierRun) Configure(cfg *linux.Config, fd int) error {
	p := r.p
	g := p.guardConfig()
	if l := p.plan.links; l != nil {
		// The hard-link check judges a file by its mode, which the
		// command must not change (linkwatch.go).
		if g == nil && !p.e.profile.Spec().ReadOnlyWorkspace {
			return errors.New("the hard-link check needs the create guard, which has nothing to guard")
		}
		if g != nil {
			g.LinksBornBefore = l.bornAfter
		}
	}
	cfg.Notifier = &linux.NotifierConfig{FD: fd, BrokerTCP: p.e.policy != nil && p.e.opts.Dialer == nil,
		ExecWatch: execWatched(p.e.profile.Spec()), Guard: g}
	return nil
}
func (r *notifierRun) Start() error    { return r.p.startNotifier(r.h) }
func (r *notifierRun) Close() []Denial { return r.p.closeBroker() }
