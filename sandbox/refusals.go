package sandbox

import "sync"

// refusals is what a guard refused in one run: one Denial per target, at
// most maxDistinctDenials, each said on the run's stderr as it happens
// when note is set. The unix socket guard and the create guard keep theirs
// in one each.
type refusals struct {
	kind string       // the Denial kind: "unix-socket", "filesystem"
	note func(Denial) // nil says nothing until the end of the run

	mu      sync.Mutex
	denials []Denial
	seen    map[string]bool
}

// maxDistinctDenials caps the refusals one guard lists for a run.
const maxDistinctDenials = 1000

// deny records a refusal, once per target. The line is written outside
// the lock, so a slow stderr holds up no other refusal's bookkeeping.
func (r *refusals) deny(target, why string) {
	r.mu.Lock()
	if r.seen[target] || len(r.seen) >= maxDistinctDenials {
		r.mu.Unlock()
		return
	}
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	r.seen[target] = true
	d := Denial{Kind: r.kind, Target: target, Reason: why, Live: r.note != nil}
	r.denials = append(r.denials, d)
	r.mu.Unlock()
	if r.note != nil {
		r.note(d)
	}
}

// takeDenials returns the refusals recorded so far and forgets them.
func (r *refusals) takeDenials() []Denial {
	r.mu.Lock()
	defer r.mu.Unlock()
	d := r.denials
	r.denials = nil
	return d
}
