package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func openTest(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrationsAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	s := openTest(t, path)
	v, err := s.SchemaVersion(ctx)
	if err != nil || v != len(migrations) {
		t.Fatalf("version %d, %v; want %d", v, err, len(migrations))
	}
	if err := s.OpenApproval(ctx, store.Approval{ID: "apr_1", CallHash: "h", Tool: "Bash", Input: []byte(`{}`),
		CreatedAt: t0, ExpiresAt: t0.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Reopening runs no migration twice and keeps the data.
	s2 := openTest(t, path)
	a, err := s2.Approval(ctx, "apr_1")
	if err != nil || a.State != store.Pending || !a.CreatedAt.Equal(t0) {
		t.Fatalf("after reopen: %+v, %v", a, err)
	}
	// A database from a newer airlock is refused.
	if _, err := s2.w.Exec(`UPDATE schema_version SET version = 99`); err != nil {
		t.Fatal(err)
	}
	s2.Close()
	if _, err := Open(ctx, path); err == nil {
		t.Fatal("a newer schema was accepted")
	}
}

func TestApprovalLifecycle(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "a.db"))
	open := func(id string, exp time.Time) {
		t.Helper()
		if err := s.OpenApproval(ctx, store.Approval{ID: id, CallHash: "call-" + id, Tool: "Bash", Input: []byte(`{"command":"ls"}`),
			Workspace: "/w", CreatedAt: t0, ExpiresAt: exp, View: []byte(`{"summary":"ls"}`)}); err != nil {
			t.Fatal(err)
		}
	}
	open("a", t0.Add(time.Minute))
	open("b", t0.Add(time.Second))
	p, err := s.PendingApprovals(ctx, t0)
	if err != nil || len(p) != 2 {
		t.Fatalf("pending %v %v", p, err)
	}
	if _, err := s.ApprovalForCall(ctx, "call-a", t0); err != nil {
		t.Fatal("pending approval not found by call:", err)
	}
	rule := store.Rule{Workspace: "/w", Effect: "allow", Text: "Bash(ls)", CreatedAt: t0, Approval: "a"}
	a, err := s.AnswerApproval(ctx, "a", "always", 0, "tok_1", t0, []store.Rule{rule})
	if err != nil || a.State != store.Answered || a.Answer != "always" {
		t.Fatalf("answer: %+v %v", a, err)
	}
	if _, err := s.AnswerApproval(ctx, "a", "deny", 0, "tok_1", t0, []store.Rule{rule}); !errors.Is(err, store.ErrAnswered) {
		t.Fatalf("second answer: %v", err)
	}
	if _, err := s.AnswerApproval(ctx, "zz", "deny", 0, "", t0, nil); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := s.AnswerApproval(ctx, "b", "once", 0, "", t0.Add(2*time.Second), nil); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("late answer: %v", err)
	}
	if r, _ := s.Rules(ctx, "/w", t0); len(r) != 1 {
		t.Fatalf("rules after the refused answers: %v", r)
	}
	exp, err := s.ExpireApprovals(ctx, t0.Add(2*time.Second))
	if err != nil || len(exp) != 1 || exp[0].ID != "b" || exp[0].Answer != "deny" {
		t.Fatalf("expire: %+v %v", exp, err)
	}
	if err := s.UseAnswer(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.UseAnswer(ctx, "a"); !errors.Is(err, store.ErrAnswered) {
		t.Fatalf("second use: %v", err)
	}
	if _, err := s.ApprovalForCall(ctx, "call-a", t0); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("used answer still found: %v", err)
	}
	ev, err := s.Events(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []store.EventKind
	for _, e := range ev {
		kinds = append(kinds, e.Kind)
	}
	want := []store.EventKind{store.EventOpened, store.EventOpened, store.EventAnswered, store.EventExpired}
	if len(kinds) != len(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	for i := range want {
		if kinds[i] != want[i] {
			t.Fatalf("events %v, want %v", kinds, want)
		}
	}
	if more, _ := s.Events(ctx, ev[1].Seq, 1); len(more) != 1 || more[0].Seq != ev[2].Seq {
		t.Fatalf("events after %d: %v", ev[1].Seq, more)
	}
}

func TestConcurrentAnswersOneWins(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "a.db"))
	if err := s.OpenApproval(ctx, store.Approval{ID: "a", CallHash: "h", Tool: "Bash", Input: []byte(`{}`), CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AnswerApproval(ctx, "a", "once", 0, "", t0, nil)
		}()
	}
	wg.Wait()
	ok := 0
	for _, err := range errs {
		if err == nil {
			ok++
		} else if !errors.Is(err, store.ErrAnswered) {
			t.Fatal(err)
		}
	}
	if ok != 1 {
		t.Fatalf("%d answers won", ok)
	}
}

func TestGrantsAndTokens(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	s := openTest(t, path)
	var mac [32]byte
	mac[0] = 1
	if err := s.Spend(ctx, mac, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.Spend(ctx, mac, t0); !errors.Is(err, store.ErrReplayed) || !errors.Is(err, grant.ErrReplayed) {
		t.Fatalf("replay: %v", err)
	}
	calls := 0
	mk := func() ([]byte, error) { calls++; return make([]byte, 32), nil }
	k1, err := s.GrantKey(ctx, mk)
	if err != nil {
		t.Fatal(err)
	}
	k1[0] = 9
	mk2 := func() ([]byte, error) { calls++; b := make([]byte, 32); b[0] = 7; return b, nil }
	k2, err := s.GrantKey(ctx, mk2)
	if err != nil || calls != 1 || k2[0] != 0 {
		t.Fatalf("second GrantKey: %v calls=%d %v", k2, calls, err)
	}
	tok := store.Token{ID: "tok_a", Name: "n", Hash: [32]byte{3}, CreatedAt: t0, Role: store.RolePerson}
	if err := s.CreateToken(ctx, tok); err != nil {
		t.Fatal(err)
	}
	got, err := s.LookupToken(ctx, [32]byte{3})
	if err != nil || !reflect.DeepEqual(got, tok) {
		t.Fatalf("lookup %+v %v", got, err)
	}
	if _, err := s.LookupToken(ctx, [32]byte{4}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown token: %v", err)
	}
}

func TestAuditFilters(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, filepath.Join(t.TempDir(), "a.db"))
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := "allow"
			if i%2 == 0 {
				d = "deny"
			}
			if err := s.AppendAudit(ctx, audit.Event{Time: t0.Add(time.Duration(i) * time.Second), Type: audit.TypeDecision, Tool: "Bash", Decision: d}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	all, err := s.Audit(ctx, store.AuditFilter{})
	if err != nil || len(all) != 20 {
		t.Fatalf("all: %d %v", len(all), err)
	}
	deny, _ := s.Audit(ctx, store.AuditFilter{Decision: "deny", Since: t0.Add(10 * time.Second)})
	if len(deny) != 5 {
		t.Fatalf("deny since +10s: %d", len(deny))
	}
	if l, _ := s.Audit(ctx, store.AuditFilter{Limit: 3}); len(l) != 3 {
		t.Fatalf("limit: %d", len(l))
	}
	if n, _ := s.Audit(ctx, store.AuditFilter{Tool: "Read"}); len(n) != 0 {
		t.Fatalf("tool Read: %d", len(n))
	}
}
