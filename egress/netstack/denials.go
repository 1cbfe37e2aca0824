package netstack

import (
	"sync"

	"github.com/airlockhq/airlock/egress"
)

// maxDenials caps the distinct denials one run keeps: a program that
// scans the address space must not grow the supervisor's memory.
const maxDenials = 1000

// denialLog keeps the distinct denials of one run, in order, and calls
// notify once for each new one.
type denialLog struct {
	notify func(egress.Denial)

	mu      sync.Mutex
	seen    map[egress.Denial]bool
	list    []egress.Denial
	dropped int
}

func (l *denialLog) add(d egress.Denial) {
	l.mu.Lock()
	if l.seen[d] {
		l.mu.Unlock()
		return
	}
	if len(l.list) >= maxDenials {
		l.dropped++
		l.mu.Unlock()
		return
	}
	if l.seen == nil {
		l.seen = map[egress.Denial]bool{}
	}
	l.seen[d] = true
	l.list = append(l.list, d)
	l.mu.Unlock()
	if l.notify != nil {
		l.notify(d)
	}
}

func (l *denialLog) snapshot() ([]egress.Denial, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]egress.Denial(nil), l.list...), l.dropped
}
