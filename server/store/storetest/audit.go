package storetest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

func testAudit(t *testing.T, s store.Store) {
	// An hour ago, so the event appended with a zero time (now) is last.
	now := base().Add(-time.Hour)
	events := []audit.Event{
		{Time: now, Type: audit.TypeDecision, Tool: "Bash", Decision: "allow", Reason: "rule", Rule: "Bash(ls)",
			SessionID: "s1", ToolUseID: "tu1", Layer: "project",
			Requirement: &audit.Requirement{Kind: "command.execute", Target: "ls"},
			Detail:      map[string]any{"n": 3, "who": "tok_1"}},
		{Time: now.Add(time.Second), Type: audit.TypeDecision, Tool: "Bash", Decision: "deny", Reason: "no"},
		{Time: now.Add(2 * time.Second), Type: audit.TypeDecision, Tool: "Write", Decision: "ask"},
		{Time: now.Add(3 * time.Second), Type: audit.TypeDecision, Tool: "Bash", Decision: "deny", Reason: "still no"},
	}
	for _, e := range events {
		if err := s.AppendAudit(ctx(t), e); err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
	}
	// A zero time is set to now.
	before := time.Now()
	if err := s.AppendAudit(ctx(t), audit.Event{Type: audit.TypeDecision, Tool: "Read", Decision: "allow"}); err != nil {
		t.Fatal(err)
	}

	all, err := s.Audit(ctx(t), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 5 {
		t.Fatalf("Audit() returned %d events, want 5", len(all))
	}
	first := all[0]
	if first.Type != audit.TypeDecision || first.Tool != "Bash" || first.Decision != "allow" || first.Reason != "rule" ||
		first.Rule != "Bash(ls)" || first.SessionID != "s1" || first.ToolUseID != "tu1" || first.Layer != "project" {
		t.Errorf("first event = %+v, want %+v", first, events[0])
	}
	checkTime(t, "Time", first.Time, now)
	if first.Requirement == nil || *first.Requirement != *events[0].Requirement {
		t.Errorf("Requirement = %+v, want %+v", first.Requirement, events[0].Requirement)
	}
	// Detail comes back as JSON decodes it. audit.Read gives numbers as
	// json.Number; a store may give float64 (the API re-encodes either the
	// same way), but the value must survive.
	if fmt.Sprint(first.Detail["n"]) != "3" || first.Detail["who"] != "tok_1" {
		t.Errorf("Detail = %#v, want n: 3, who: tok_1", first.Detail)
	}
	if _, isInt := first.Detail["n"].(int); isInt {
		t.Errorf("Detail[n] is the int the caller passed, not what the store decoded: was it stored at all?")
	}
	if last := all[4]; last.Tool != "Read" || last.Time.Before(before.Add(-time.Second)) || last.Time.After(time.Now().Add(time.Second)) {
		t.Errorf("event with a zero time came back as %+v, want Time set to about now", last)
	}

	tools := func(f store.AuditFilter) []string {
		t.Helper()
		list, err := s.Audit(ctx(t), f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.Tool+":"+e.Decision)
		}
		return out
	}
	for _, tc := range []struct {
		name string
		f    store.AuditFilter
		want []string
	}{
		{"tool", store.AuditFilter{Tool: "Bash"}, []string{"Bash:allow", "Bash:deny", "Bash:deny"}},
		{"decision", store.AuditFilter{Decision: "deny"}, []string{"Bash:deny", "Bash:deny"}},
		{"tool and decision", store.AuditFilter{Tool: "Write", Decision: "ask"}, []string{"Write:ask"}},
		{"since", store.AuditFilter{Since: now.Add(2 * time.Second), Tool: "Bash"}, []string{"Bash:deny"}},
		{"since is inclusive", store.AuditFilter{Since: now.Add(time.Second), Decision: "deny"}, []string{"Bash:deny", "Bash:deny"}},
		{"limit takes the oldest", store.AuditFilter{Tool: "Bash", Limit: 2}, []string{"Bash:allow", "Bash:deny"}},
		{"no match", store.AuditFilter{Tool: "Nope"}, nil},
	} {
		if got := tools(tc.f); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Audit(%+v) = %v, want %v", tc.name, tc.f, got, tc.want)
		}
	}
}

// testConcurrentAudit appends from many goroutines at once (a store may
// commit them together): every append that returned nil is there, once.
func testConcurrentAudit(t *testing.T, s store.Store) {
	const each = 20
	errs := race(concurrency, func(g int) error {
		for i := range each {
			e := audit.Event{Type: audit.TypeDecision, Tool: "Bash", Decision: "allow", ExecutionID: fmt.Sprintf("exec-%d-%d", g, i)}
			if err := s.AppendAudit(ctx(t), e); err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		if err != nil {
			t.Fatalf("AppendAudit: %v", err)
		}
	}
	list, err := s.Audit(ctx(t), store.AuditFilter{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, e := range list {
		seen[e.ExecutionID]++
	}
	for g := range concurrency {
		for i := range each {
			if id := fmt.Sprintf("exec-%d-%d", g, i); seen[id] != 1 {
				t.Errorf("event %s is there %d times, want 1", id, seen[id])
			}
		}
	}
}

func testEvents(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_a", now, time.Minute))
	mustOpen(t, s, newApproval("apr_b", now, 10*time.Minute))
	if _, err := s.AnswerApproval(ctx(t), "apr_b", "deny", 0, "tok", now.Add(time.Second), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ExpireApprovals(ctx(t), now.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	evs := mustEvents(t, s, 0)
	var got []string
	for i, e := range evs {
		got = append(got, string(e.Kind)+":"+e.Approval)
		if i > 0 && e.Seq <= evs[i-1].Seq {
			t.Errorf("Seq %d after %d: not increasing", e.Seq, evs[i-1].Seq)
		}
		if e.Time.IsZero() {
			t.Errorf("event %d has no time", e.Seq)
		}
	}
	want := []string{"opened:apr_a", "opened:apr_b", "answered:apr_b", "expired:apr_a"}
	if !slices.Equal(got, want) {
		t.Fatalf("Events = %v, want %v", got, want)
	}
	if after := mustEvents(t, s, evs[1].Seq); len(after) != 2 || after[0].Seq != evs[2].Seq {
		t.Errorf("Events(after %d) = %+v, want the last two", evs[1].Seq, after)
	}
	limited, err := s.Events(ctx(t), evs[0].Seq, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(limited) != 2 || limited[0].Seq != evs[1].Seq || limited[1].Seq != evs[2].Seq {
		t.Errorf("Events(after %d, limit 2) = %+v, want events 2 and 3", evs[0].Seq, limited)
	}
	if rest := mustEvents(t, s, evs[3].Seq); len(rest) != 0 {
		t.Errorf("Events after the last = %+v, want none", rest)
	}
}

// testEventsPoller has writers open approvals at once while a poller
// follows the feed the way /v1/events does, keeping only a cursor (the
// last Seq it saw). However the writers' transactions interleave, the
// poller must end up having seen every event exactly once: a store whose
// Seq can become visible out of order would let the cursor skip one.
func testEventsPoller(t *testing.T, s store.Store) {
	const writers, each = 8, 25
	now := base()
	var wg sync.WaitGroup
	writeErrs := make(chan error, writers)
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := s.OpenApproval(ctx(t), newApproval(fmt.Sprintf("apr_%d_%d", w, i), now, time.Hour)); err != nil {
					writeErrs <- err
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()

	seen := map[string]int{}
	var cursor int64
	poll := func() {
		evs, err := s.Events(ctx(t), cursor, 0)
		if err != nil {
			t.Fatalf("Events: %v", err)
		}
		for _, e := range evs {
			seen[e.Approval]++
			cursor = e.Seq
		}
	}
	for finished := false; !finished; {
		select {
		case <-done:
			finished = true
		default:
		}
		poll() // after done, one last poll sees everything committed
	}
	close(writeErrs)
	for err := range writeErrs {
		t.Fatalf("OpenApproval: %v", err)
	}
	for w := range writers {
		for i := range each {
			if id := fmt.Sprintf("apr_%d_%d", w, i); seen[id] != 1 {
				t.Errorf("the poller saw %s's opened event %d times, want 1", id, seen[id])
			}
		}
	}
}

// testAuditRedactsGrants: like the JSONL log, a store never holds a grant
// token's text, wherever in the event it appears.
func testAuditRedactsGrants(t *testing.T, s store.Store) {
	iss := grant.NewRandomIssuer()
	tok, err := iss.Issue(grant.Binding{ExecutionID: "e", Argv: []string{"true"}, Dir: "/", Profile: "p", Kind: "command.execute", Target: "true"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	text := string(tok)
	e := audit.Event{Type: audit.TypeDecision, Reason: "grant " + text, Detail: map[string]any{"token": text}}
	if err := s.AppendAudit(ctx(t), e); err != nil {
		t.Fatal(err)
	}
	evs, err := s.Audit(ctx(t), store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("got %d events, want 1", len(evs))
	}
	got, _ := json.Marshal(evs[0])
	if strings.Contains(string(got), text) || !strings.Contains(evs[0].Reason, grant.Redacted) {
		t.Errorf("stored event = %s, want the token redacted", got)
	}
}
