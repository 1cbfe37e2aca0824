// Package storetest is the conformance suite for store.Store: every
// implementation (store/sqlite, store/postgres) runs [Run] against a real
// database, so the daemon behaves the same on either.
//
// The suite pins the contract the interface's comments state, including
// the races that matter with several replicas: of concurrent answers to one
// approval exactly one wins (and only its rules are saved), a grant is spent
// exactly once, concurrent first callers of GrantKey get one key, an answer
// is used once, concurrent expiries expire each approval once, concurrent
// audit appends are all kept, and a poller
// following Events never misses an event however the writers interleave.
//
// Boundaries it does not pin: what happens exactly at an approval's
// ExpiresAt (the tests stay a second away from it), and the store's own
// audit limit default beyond "at least the events appended here".
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// Run runs the suite. open must return a new, empty store for t (a fresh
// database or schema); Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"Tokens", testTokens},
		{"TokenRoles", testTokenRoles},
		{"RevokeToken", testRevokeToken},
		{"Workspaces", testWorkspaces},
		{"PendingPage", testPendingPage},
		{"ApprovalRoundTrip", testApprovalRoundTrip},
		{"PendingApprovals", testPendingApprovals},
		{"AnswerApproval", testAnswerApproval},
		{"AnswerExpiredApproval", testAnswerExpired},
		{"AnswerSavesRulesAtomically", testAnswerSavesRules},
		{"ConcurrentAnswersOneWins", testConcurrentAnswers},
		{"ExpireApprovals", testExpire},
		{"ConcurrentExpiresOnce", testConcurrentExpire},
		{"AnswerRacesExpiry", testAnswerRacesExpiry},
		{"ApprovalForCall", testApprovalForCall},
		{"ConcurrentOpensOneStores", testConcurrentOpens},
		{"UseAnswerOnce", testUseAnswer},
		{"ConcurrentUseAnswerOnce", testConcurrentUseAnswer},
		{"RulesWithExpiry", testRules},
		{"SpendOnce", testSpend},
		{"ConcurrentSpendOnce", testConcurrentSpend},
		{"SpendAsGrantLedger", testSpendAsLedger},
		{"GrantKeyShared", testGrantKey},
		{"GrantKeyCreateFails", testGrantKeyCreateFails},
		{"AuditAppendAndFilter", testAudit},
		{"ConcurrentAuditAppends", testConcurrentAudit},
		{"AuditRedactsGrants", testAuditRedactsGrants},
		{"EventsInOrder", testEvents},
		{"EventsPollerMissesNothing", testEventsPoller},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// concurrency is how many goroutines race in the concurrent tests: enough
// to make a race likely on two cores, few enough to stay quick.
const concurrency = 16

func ctx(t *testing.T) context.Context { return t.Context() }

// base is the suite's "now": the real clock's, since a store may compare
// with it (a ledger sweeping expired grants), at whole microseconds so that
// a database keeping microseconds returns exactly what it was given.
func base() time.Time { return time.Now().UTC().Truncate(time.Second) }

// newApproval is a pending approval opened at now, expiring in ttl.
func newApproval(id string, now time.Time, ttl time.Duration) store.Approval {
	return store.Approval{
		ID:        id,
		CallHash:  "hash-" + id,
		Tool:      "Bash",
		Input:     json.RawMessage(`{"command": "git push origin main",  "description":"push"}`),
		Workspace: "/work/ws",
		Agent:     "agent-1",
		Session:   "session-1",
		View:      json.RawMessage(`{"summary":"git push origin main"}`),
		State:     store.Pending,
		CreatedAt: now,
		ExpiresAt: now.Add(ttl),
	}
}

func mustOpen(t *testing.T, s store.Store, a store.Approval) {
	t.Helper()
	if err := s.OpenApproval(ctx(t), a); err != nil {
		t.Fatalf("OpenApproval(%s): %v", a.ID, err)
	}
}

func mustGet(t *testing.T, s store.Store, id string) store.Approval {
	t.Helper()
	a, err := s.Approval(ctx(t), id)
	if err != nil {
		t.Fatalf("Approval(%s): %v", id, err)
	}
	return a
}

func mustEvents(t *testing.T, s store.Store, after int64) []store.Event {
	t.Helper()
	evs, err := s.Events(ctx(t), after, 0)
	if err != nil {
		t.Fatalf("Events(%d): %v", after, err)
	}
	return evs
}

// countEvents counts the events of kind for approval id.
func countEvents(evs []store.Event, kind store.EventKind, id string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind && e.Approval == id {
			n++
		}
	}
	return n
}

func sameTime(a, b time.Time) bool {
	d := a.Sub(b)
	return d < time.Microsecond && d > -time.Microsecond
}

// checkTime fails t unless got is want to the microsecond (databases keep
// microseconds at best).
func checkTime(t *testing.T, what string, got, want time.Time) {
	t.Helper()
	if !sameTime(got, want) {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func randomBytes(t *testing.T, n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// race runs fn(i) for i in [0, n) at once, released together, and returns
// their errors by i.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	done := make(chan struct{})
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			errs[i] = fn(i)
		}()
	}
	close(start)
	for range n {
		<-done
	}
	return errs
}

// oneNil checks that exactly one of errs is nil and every other one
// satisfies ok; it returns the winner's index.
func oneNil(t *testing.T, errs []error, ok func(error) bool) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("both %d and %d succeeded; exactly one may", winner, i)
		case err == nil:
			winner = i
		case !ok(err):
			t.Errorf("racer %d: unexpected error %v", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no racer succeeded; errors: %v", fmt.Sprint(errs))
	}
	return winner
}
