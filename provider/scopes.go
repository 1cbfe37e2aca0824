package provider

import (
	"context"
	"errors"
	"sync"
)

// Scopes keeps the workspaces or containers of invocation and session
// scopes, at most Max of them, evicting the least recently used idle one.
// Calls in one scope run one at a time. Destroying a scope (eviction, a
// poisoned lease, Close) completes before anything replaces it, so a
// replacement never overlaps the thing it replaces.
type Scopes[T any] struct {
	Max     int
	Create  func(ctx context.Context, key string) (T, error)
	Destroy func(T) error

	mu    sync.Mutex
	m     map[string]*scopeSlot[T]
	clock uint64
}

type scopeSlot[T any] struct {
	key   string
	turn  chan struct{} // held by the one call running in the scope
	val   T
	live  bool   // val exists
	used  uint64 // clock of the last Acquire, for LRU
	users int    // calls holding or waiting for the turn
}

// Lease is one call's use of a scope.
type Lease[T any] struct {
	s    *Scopes[T]
	slot *scopeSlot[T]
	// Reused is true when the scope existed before this call.
	Reused bool
}

// Value is the scope's workspace or container.
func (l *Lease[T]) Value() T { return l.slot.val }

// ErrScopesFull is returned when every scope is in use and none can be
// evicted; a Handle's slots make this unreachable through the catalog.
var ErrScopesFull = errors.New("every scope is in use")

// Acquire returns the scope for key, creating it (after evicting the
// least recently used idle scope when Max are kept) and waiting for
// the call already running in it.
func (s *Scopes[T]) Acquire(ctx context.Context, key string) (*Lease[T], error) {
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]*scopeSlot[T]{}
	}
	slot := s.m[key]
	var victim *scopeSlot[T]
	if slot == nil {
		if len(s.m) >= s.Max {
			for _, c := range s.m {
				if c.users == 0 && (victim == nil || c.used < victim.used) {
					victim = c
				}
			}
			if victim == nil {
				s.mu.Unlock()
				return nil, ErrScopesFull
			}
			delete(s.m, victim.key)
		}
		slot = &scopeSlot[T]{key: key, turn: make(chan struct{}, 1)}
		s.m[key] = slot
	}
	s.clock++
	slot.used = s.clock
	slot.users++
	s.mu.Unlock()

	if victim != nil && victim.live {
		// Confirmed gone before the new scope is created.
		if err := s.Destroy(victim.val); err != nil {
			s.drop(slot)
			return nil, err
		}
	}
	select {
	case slot.turn <- struct{}{}:
	case <-ctx.Done():
		s.drop(slot)
		return nil, ctx.Err()
	}
	l := &Lease[T]{s: s, slot: slot, Reused: slot.live}
	if !slot.live {
		v, err := s.Create(ctx, key)
		if err != nil {
			<-slot.turn
			s.drop(slot)
			return nil, err
		}
		slot.val, slot.live = v, true
	}
	return l, nil
}

// drop ends one user's interest in slot; an empty slot with no value is
// forgotten.
func (s *Scopes[T]) drop(slot *scopeSlot[T]) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot.users--
	if slot.users == 0 && !slot.live && s.m[slot.key] == slot {
		delete(s.m, slot.key)
	}
}

// Release ends the call. A poisoned scope (timeout, cancellation, output
// overflow, a failed start) is destroyed before the next call in it can
// create its replacement.
func (l *Lease[T]) Release(poison bool) error {
	var err error
	if poison && l.slot.live {
		err = l.s.Destroy(l.slot.val)
		var zero T
		l.slot.val, l.slot.live = zero, false
	}
	<-l.slot.turn
	l.s.drop(l.slot)
	return err
}

// Len is the number of scopes kept.
func (s *Scopes[T]) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.m {
		if c.live {
			n++
		}
	}
	return n
}

// Close destroys every scope; calls still running keep theirs until
// they release it.
func (s *Scopes[T]) Close() error {
	s.mu.Lock()
	slots := s.m
	s.m = nil
	s.mu.Unlock()
	var errs []error
	for _, c := range slots {
		c.turn <- struct{}{} // wait for the running call
		if c.live {
			errs = append(errs, s.Destroy(c.val))
			c.live = false
		}
		<-c.turn
	}
	return errors.Join(errs...)
}
