package storetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

func testApprovalRoundTrip(t *testing.T, s store.Store) {
	now := base().Add(123456 * time.Microsecond)
	want := newApproval("apr_1", now, 5*time.Minute)
	mustOpen(t, s, want)
	got := mustGet(t, s, "apr_1")
	if got.ID != want.ID || got.CallHash != want.CallHash || got.Tool != want.Tool ||
		got.Workspace != want.Workspace || got.Agent != want.Agent || got.Session != want.Session {
		t.Errorf("Approval = %+v, want %+v", got, want)
	}
	// The answer binds to the exact call: the input comes back byte for
	// byte, spacing and key order included.
	if !bytes.Equal(got.Input, want.Input) {
		t.Errorf("Input = %s, want %s byte for byte", got.Input, want.Input)
	}
	if !bytes.Equal(got.View, want.View) {
		t.Errorf("View = %s, want %s", got.View, want.View)
	}
	if got.State != store.Pending || got.Answer != "" || got.AnsweredBy != "" || !got.AnsweredAt.IsZero() || got.Used {
		t.Errorf("new approval = %+v, want pending with no answer", got)
	}
	checkTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	checkTime(t, "ExpiresAt", got.ExpiresAt, want.ExpiresAt)

	if _, err := s.Approval(ctx(t), "apr_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Approval(unknown) err = %v, want ErrNotFound", err)
	}
	// A second approval with the same id is refused and changes nothing.
	dup := newApproval("apr_1", now, time.Hour)
	dup.Tool = "Write"
	if err := s.OpenApproval(ctx(t), dup); err == nil {
		t.Error("OpenApproval with a taken id succeeded")
	}
	if got := mustGet(t, s, "apr_1"); got.Tool != "Bash" || !sameTime(got.ExpiresAt, want.ExpiresAt) {
		t.Errorf("after the duplicate: %+v, want the first approval unchanged", got)
	}
	if n := countEvents(mustEvents(t, s, 0), store.EventOpened, "apr_1"); n != 1 {
		t.Errorf("%d opened events for apr_1, want 1", n)
	}
}

func testPendingApprovals(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_a", now, 10*time.Minute))
	mustOpen(t, s, newApproval("apr_b", now.Add(time.Second), 10*time.Minute))
	mustOpen(t, s, newApproval("apr_c", now.Add(2*time.Second), time.Minute))
	if _, err := s.AnswerApproval(ctx(t), "apr_b", "once", 0, "tok", now.Add(3*time.Second), nil); err != nil {
		t.Fatal(err)
	}
	ids := func(at time.Time) []string {
		list, err := s.PendingApprovals(ctx(t), at)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range list {
			out = append(out, a.ID)
		}
		return out
	}
	if got := ids(now.Add(4 * time.Second)); !slices.Equal(got, []string{"apr_a", "apr_c"}) {
		t.Errorf("pending = %v, want [apr_a apr_c] (oldest first, answered left out)", got)
	}
	// apr_c is past its expiry: no longer pending, even before
	// ExpireApprovals marks it.
	if got := ids(now.Add(5 * time.Minute)); !slices.Equal(got, []string{"apr_a"}) {
		t.Errorf("pending after apr_c's expiry = %v, want [apr_a]", got)
	}
}

func testAnswerApproval(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, 5*time.Minute))
	at := now.Add(10 * time.Second)
	got, err := s.AnswerApproval(ctx(t), "apr_1", "always", 10*time.Minute, "tok_alice", at, nil)
	if err != nil {
		t.Fatalf("AnswerApproval: %v", err)
	}
	check := func(what string, a store.Approval) {
		t.Helper()
		if a.State != store.Answered || a.Answer != "always" || a.For != 10*time.Minute || a.AnsweredBy != "tok_alice" || a.Used {
			t.Errorf("%s = %+v, want answered always for 10m by tok_alice, unused", what, a)
		}
		checkTime(t, what+".AnsweredAt", a.AnsweredAt, at)
		if a.Tool != "Bash" || a.CallHash != "hash-apr_1" {
			t.Errorf("%s lost the call: %+v", what, a)
		}
	}
	check("returned approval", got)
	check("stored approval", mustGet(t, s, "apr_1"))

	// Answering again is refused, whatever the answer, and changes nothing.
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "deny", 0, "tok_bob", at.Add(time.Second), nil); !errors.Is(err, store.ErrAnswered) {
		t.Errorf("second answer err = %v, want ErrAnswered", err)
	}
	check("after the second answer", mustGet(t, s, "apr_1"))
	if _, err := s.AnswerApproval(ctx(t), "apr_unknown", "once", 0, "tok", at, nil); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("answering an unknown id: err = %v, want ErrNotFound", err)
	}
	if n := countEvents(mustEvents(t, s, 0), store.EventAnswered, "apr_1"); n != 1 {
		t.Errorf("%d answered events, want 1", n)
	}
}

func testAnswerExpired(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, time.Minute))
	rule := store.Rule{Workspace: "/work/ws", Effect: "allow", Text: "Bash(git push origin main)", CreatedAt: now, Approval: "apr_1"}
	late := now.Add(2 * time.Minute)
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "always", 0, "tok", late, []store.Rule{rule}); !errors.Is(err, store.ErrExpired) {
		t.Fatalf("answer after expiry: err = %v, want ErrExpired", err)
	}
	if a := mustGet(t, s, "apr_1"); a.State != store.Pending || a.Answer != "" {
		t.Errorf("after a refused late answer: %+v, want unchanged", a)
	}
	if rules, _ := s.Rules(ctx(t), "/work/ws", now); len(rules) != 0 {
		t.Errorf("a refused answer saved rules: %+v", rules)
	}
	if n := countEvents(mustEvents(t, s, 0), store.EventAnswered, "apr_1"); n != 0 {
		t.Errorf("a refused answer appended %d answered events", n)
	}
	// Once expired for good, an answer even "in time" is refused.
	if _, err := s.ExpireApprovals(ctx(t), late); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "once", 0, "tok", now, nil); !errors.Is(err, store.ErrExpired) {
		t.Errorf("answering an expired approval: err = %v, want ErrExpired", err)
	}
}

func testAnswerSavesRules(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, 5*time.Minute))
	rules := []store.Rule{
		{Workspace: "/work/ws", Effect: "allow", Text: "Bash(git push origin main)", CreatedAt: now, Approval: "apr_1"},
		{Workspace: "/work/ws", Effect: "allow", Text: "Bash(echo ok)", Expires: now.Add(10 * time.Minute), CreatedAt: now, Approval: "apr_1"},
	}
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "always", 10*time.Minute, "tok", now, rules); err != nil {
		t.Fatal(err)
	}
	got, err := s.Rules(ctx(t), "/work/ws", now)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text != rules[0].Text || got[1].Text != rules[1].Text {
		t.Fatalf("Rules = %+v, want the two saved with the answer, in order", got)
	}
	// A refused answer saves none of its rules.
	extra := store.Rule{Workspace: "/work/ws", Effect: "deny", Text: "Bash(rm -rf /)", CreatedAt: now, Approval: "apr_1"}
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "always_deny", 0, "tok", now, []store.Rule{extra}); !errors.Is(err, store.ErrAnswered) {
		t.Fatalf("second answer err = %v, want ErrAnswered", err)
	}
	if got, _ := s.Rules(ctx(t), "/work/ws", now); len(got) != 2 {
		t.Errorf("after a refused answer, Rules = %+v, want still the two", got)
	}
}

// testConcurrentAnswers races answers to one approval, several times over
// (one round rarely interleaves the racers badly enough to show a lost
// update on two cores).
func testConcurrentAnswers(t *testing.T, s store.Store) {
	for round := range 8 {
		concurrentAnswersRound(t, s, fmt.Sprintf("apr_%d", round))
	}
}

func concurrentAnswersRound(t *testing.T, s store.Store, id string) {
	now := base()
	ws := "/work/" + id
	mustOpen(t, s, newApproval(id, now, 5*time.Minute))
	answers := []string{"once", "always", "deny", "always_deny"}
	errs := race(concurrency, func(i int) error {
		rule := store.Rule{Workspace: ws, Effect: "allow", Text: fmt.Sprintf("Bash(racer %d)", i), CreatedAt: now, Approval: id}
		_, err := s.AnswerApproval(ctx(t), id, answers[i%len(answers)], 0, fmt.Sprintf("tok_%d", i), now.Add(time.Second), []store.Rule{rule})
		return err
	})
	w := oneNil(t, errs, func(err error) bool { return errors.Is(err, store.ErrAnswered) })
	a := mustGet(t, s, id)
	if a.AnsweredBy != fmt.Sprintf("tok_%d", w) || a.Answer != answers[w%len(answers)] {
		t.Errorf("%s: stored answer %q by %q, but racer %d won", id, a.Answer, a.AnsweredBy, w)
	}
	// Only the winner's rule was saved.
	rules, err := s.Rules(ctx(t), ws, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 1 || rules[0].Text != fmt.Sprintf("Bash(racer %d)", w) {
		t.Errorf("%s: Rules = %+v, want only racer %d's", id, rules, w)
	}
	if n := countEvents(mustEvents(t, s, 0), store.EventAnswered, id); n != 1 {
		t.Errorf("%s: %d answered events, want 1", id, n)
	}
}

func testExpire(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_soon", now, time.Minute))
	mustOpen(t, s, newApproval("apr_later", now, 10*time.Minute))
	mustOpen(t, s, newApproval("apr_answered", now, time.Minute))
	if _, err := s.AnswerApproval(ctx(t), "apr_answered", "once", 0, "tok", now, nil); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ExpireApprovals(ctx(t), now.Add(30*time.Second)); err != nil || len(got) != 0 {
		t.Fatalf("ExpireApprovals before any expiry = %+v, %v; want none", got, err)
	}
	at := now.Add(2 * time.Minute)
	got, err := s.ExpireApprovals(ctx(t), at)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "apr_soon" {
		t.Fatalf("ExpireApprovals = %+v, want apr_soon only", got)
	}
	for _, a := range []store.Approval{got[0], mustGet(t, s, "apr_soon")} {
		if a.State != store.Expired || a.Answer != "deny" || a.AnsweredBy != "" {
			t.Errorf("expired approval = %+v, want expired, answer deny, by nobody", a)
		}
		checkTime(t, "AnsweredAt", a.AnsweredAt, at)
	}
	if a := mustGet(t, s, "apr_later"); a.State != store.Pending {
		t.Errorf("apr_later = %s, want still pending", a.State)
	}
	if a := mustGet(t, s, "apr_answered"); a.State != store.Answered || a.Answer != "once" {
		t.Errorf("apr_answered = %+v, want its answer kept", a)
	}
	if got, err := s.ExpireApprovals(ctx(t), at); err != nil || len(got) != 0 {
		t.Errorf("second ExpireApprovals = %+v, %v; want none", got, err)
	}
	evs := mustEvents(t, s, 0)
	if n := countEvents(evs, store.EventExpired, "apr_soon"); n != 1 {
		t.Errorf("%d expired events for apr_soon, want 1", n)
	}
	if n := countEvents(evs, store.EventExpired, "apr_answered"); n != 0 {
		t.Errorf("an answered approval got %d expired events", n)
	}
}

func testConcurrentExpire(t *testing.T, s store.Store) {
	now := base()
	const n = 20
	for i := range n {
		mustOpen(t, s, newApproval(fmt.Sprintf("apr_%02d", i), now, time.Minute))
	}
	results := make([][]store.Approval, concurrency/2)
	errs := race(len(results), func(i int) error {
		var err error
		results[i], err = s.ExpireApprovals(ctx(t), now.Add(2*time.Minute))
		return err
	})
	seen := map[string]int{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("ExpireApprovals %d: %v", i, err)
		}
		for _, a := range results[i] {
			seen[a.ID]++
		}
	}
	evs := mustEvents(t, s, 0)
	for i := range n {
		id := fmt.Sprintf("apr_%02d", i)
		if seen[id] != 1 {
			t.Errorf("%s was returned by %d ExpireApprovals calls, want exactly 1", id, seen[id])
		}
		if c := countEvents(evs, store.EventExpired, id); c != 1 {
			t.Errorf("%s has %d expired events, want 1", id, c)
		}
	}
}

// testAnswerRacesExpiry answers approvals while another goroutine expires
// them with a clock past their expiry: each approval ends either answered
// (and not expired) or expired (and the answer refused), never both.
func testAnswerRacesExpiry(t *testing.T, s store.Store) {
	now := base()
	const n = 10
	for i := range n {
		mustOpen(t, s, newApproval(fmt.Sprintf("apr_%02d", i), now, time.Minute))
	}
	answerErrs := make([]error, n)
	var expired []store.Approval
	errs := race(n+1, func(i int) error {
		if i == n {
			var err error
			expired, err = s.ExpireApprovals(ctx(t), now.Add(2*time.Minute))
			return err
		}
		_, answerErrs[i] = s.AnswerApproval(ctx(t), fmt.Sprintf("apr_%02d", i), "once", 0, "tok", now.Add(time.Second), nil)
		return nil
	})
	if errs[n] != nil {
		t.Fatal(errs[n])
	}
	wasExpired := map[string]bool{}
	for _, a := range expired {
		wasExpired[a.ID] = true
	}
	for i := range n {
		id := fmt.Sprintf("apr_%02d", i)
		a := mustGet(t, s, id)
		switch {
		case answerErrs[i] == nil && (wasExpired[id] || a.State != store.Answered):
			t.Errorf("%s: answer accepted but ExpireApprovals returned it=%v, state %s", id, wasExpired[id], a.State)
		case answerErrs[i] != nil && (!errors.Is(answerErrs[i], store.ErrExpired) || !wasExpired[id] || a.State != store.Expired):
			t.Errorf("%s: answer err %v, expired=%v, state %s; want ErrExpired, expired", id, answerErrs[i], wasExpired[id], a.State)
		}
	}
}

func testApprovalForCall(t *testing.T, s store.Store) {
	now := base()
	forCall := func(at time.Time) string {
		t.Helper()
		a, err := s.ApprovalForCall(ctx(t), "hash-call", at)
		if errors.Is(err, store.ErrNotFound) {
			return "none"
		}
		if err != nil {
			t.Fatalf("ApprovalForCall: %v", err)
		}
		return a.ID
	}
	open := func(id string, created time.Time, ttl time.Duration) {
		a := newApproval(id, created, ttl)
		a.CallHash = "hash-call"
		mustOpen(t, s, a)
	}
	if got := forCall(now); got != "none" {
		t.Errorf("before any approval: %s, want ErrNotFound", got)
	}
	open("apr_old", now, time.Minute)
	mustOpen(t, s, newApproval("apr_other", now.Add(time.Second), time.Hour)) // another call
	if got := forCall(now); got != "apr_old" {
		t.Errorf("one pending: %s, want apr_old", got)
	}
	// While apr_old is pending, a second open of the call stores nothing.
	dup := newApproval("apr_dup", now.Add(time.Second), time.Hour)
	dup.CallHash = "hash-call"
	if err := s.OpenApproval(ctx(t), dup); !errors.Is(err, store.ErrCallPending) {
		t.Errorf("second open of a pending call: %v, want ErrCallPending", err)
	}
	if _, err := s.Approval(ctx(t), "apr_dup"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the refused open was stored: %v", err)
	}
	// Answered but not yet used: still the call's approval.
	if _, err := s.AnswerApproval(ctx(t), "apr_old", "once", 0, "tok", now.Add(time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if got := forCall(now.Add(2 * time.Second)); got != "apr_old" {
		t.Errorf("answered, unused: %s, want apr_old", got)
	}
	// Answered, the call may open anew; the newest approval is the call's.
	open("apr_new", now.Add(2*time.Second), time.Minute)
	if got := forCall(now.Add(3 * time.Second)); got != "apr_new" {
		t.Errorf("pending after an answered one: %s, want the newest, apr_new", got)
	}
	if err := s.UseAnswer(ctx(t), "apr_old"); err != nil {
		t.Fatal(err)
	}
	if got := forCall(now.Add(3 * time.Second)); got != "apr_new" {
		t.Errorf("older answer used: %s, want apr_new", got)
	}
	// Past its expiry apr_new is not pending any more...
	if got := forCall(now.Add(2 * time.Minute)); got != "none" {
		t.Errorf("pending past its expiry: %s, want ErrNotFound", got)
	}
	// ...until it is expired: then its answer (deny) is there to be used.
	if _, err := s.ExpireApprovals(ctx(t), now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := forCall(now.Add(2 * time.Minute)); got != "apr_new" {
		t.Errorf("expired, unused: %s, want apr_new", got)
	}
}

// testConcurrentOpens: of concurrent opens of one call exactly one
// stores; the others get ErrCallPending and join it.
func testConcurrentOpens(t *testing.T, s store.Store) {
	now := base()
	errs := race(concurrency, func(i int) error {
		a := newApproval(fmt.Sprintf("apr_%02d", i), now, time.Hour)
		a.CallHash = "hash-same-call"
		return s.OpenApproval(ctx(t), a)
	})
	oneNil(t, errs, func(err error) bool { return errors.Is(err, store.ErrCallPending) })
	list, err := s.PendingApprovals(ctx(t), now)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 {
		t.Errorf("%d pending approvals for one call, want 1", len(list))
	}
}

func testUseAnswer(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, 5*time.Minute))
	if err := s.UseAnswer(ctx(t), "apr_1"); err == nil {
		t.Error("UseAnswer on a pending approval succeeded; it has no answer to use")
	}
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "once", 0, "tok", now, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.UseAnswer(ctx(t), "apr_1"); err != nil {
		t.Fatalf("first UseAnswer: %v", err)
	}
	if !mustGet(t, s, "apr_1").Used {
		t.Error("Used is false after UseAnswer")
	}
	if err := s.UseAnswer(ctx(t), "apr_1"); !errors.Is(err, store.ErrAnswered) {
		t.Errorf("second UseAnswer err = %v, want ErrAnswered", err)
	}
	if err := s.UseAnswer(ctx(t), "apr_unknown"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("UseAnswer(unknown) err = %v, want ErrNotFound", err)
	}
}

func testConcurrentUseAnswer(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, 5*time.Minute))
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "once", 0, "tok", now, nil); err != nil {
		t.Fatal(err)
	}
	errs := race(concurrency, func(int) error { return s.UseAnswer(ctx(t), "apr_1") })
	oneNil(t, errs, func(err error) bool { return errors.Is(err, store.ErrAnswered) })
}
