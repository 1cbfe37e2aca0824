package daemontest_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server"
	"github.com/airlockhq/airlock/server/daemontest"
	"github.com/airlockhq/airlock/server/store/postgres"
	"github.com/airlockhq/airlock/server/store/postgres/pgtest"
)

// TestTwoReplicasShareApprovals runs two airlock serve processes on one
// PostgreSQL database. A client on A waits on a call that needs approval;
// B's event stream shows the approval A opened, B lists it, a person
// answers it on B, and A's waiting client gets the answer.
func TestTwoReplicasShareApprovals(t *testing.T) {
	e := newEnv(t, pgtest.DSN(t))
	_, a := e.start(t)
	_, b := e.start(t)
	ctx := ctxBound(t)

	evs, err := b.Events(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		d   daemontest.Decision
		err error
	}
	waiting := make(chan result, 1)
	go func() {
		d, err := a.Decide(ctx, e.ws, "git push origin main", map[string]any{"wait": "5m"})
		waiting <- result{d, err}
	}()

	opened := waitEvent(t, evs, "opened", "")
	id := opened.Approval.ID
	if opened.Approval.State != "pending" {
		t.Errorf("B's opened event shows %+v, want pending", opened.Approval)
	}
	var list struct{ Approvals []daemontest.Approval }
	if err := b.Do(ctx, "GET", "/v1/approvals", nil, &list); err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(list.Approvals, func(ap daemontest.Approval) bool { return ap.ID == id }) {
		t.Fatalf("B's pending list %+v lacks %s, opened on A", list.Approvals, id)
	}
	select {
	case r := <-waiting:
		t.Fatalf("A's client got %+v before anyone answered", r)
	default:
	}

	ans, err := b.Answer(ctx, id, "once")
	if err != nil {
		t.Fatalf("answering on B: %v", err)
	}
	if ans.State != "answered" || ans.Decision != "allow" {
		t.Errorf("B's answer returned %+v, want answered, allow", ans)
	}
	r := <-waiting // bounded by ctx
	if r.err != nil {
		t.Fatalf("A's waiting client: %v", r.err)
	}
	if r.d.Decision != "allow" || r.d.ApprovalID != id {
		t.Errorf("A's waiting client got %+v, want allow for %s", r.d, id)
	}
	waitEvent(t, evs, "answered", id)

	// The answer is recorded once for the whole cluster: A refuses a
	// second one.
	if _, err := a.Answer(ctx, id, "deny"); status(err) != http.StatusConflict {
		t.Errorf("answering again on A: %v, want 409 already_answered", err)
	}
}

// TestTwoReplicasAnswerRace answers one approval on both replicas at once,
// several times: exactly one answer is accepted, the other gets 409.
func TestTwoReplicasAnswerRace(t *testing.T) {
	e := newEnv(t, pgtest.DSN(t))
	_, a := e.start(t)
	_, b := e.start(t)
	ctx := ctxBound(t)
	for i := range 5 {
		d, err := a.Decide(ctx, e.ws, fmt.Sprintf("git push origin branch-%d", i), nil)
		if err != nil || d.Decision != "ask" || d.ApprovalID == "" {
			t.Fatalf("decide: %+v, %v; want ask with an approval", d, err)
		}
		errs := make(chan error, 2)
		for _, c := range []*daemontest.Client{a, b} {
			go func() {
				_, err := c.Answer(ctx, d.ApprovalID, "once")
				errs <- err
			}()
		}
		e1, e2 := <-errs, <-errs
		ok := 0
		for _, err := range []error{e1, e2} {
			switch {
			case err == nil:
				ok++
			case status(err) != http.StatusConflict:
				t.Errorf("round %d: %v, want 200 or 409", i, err)
			}
		}
		if ok != 1 {
			t.Errorf("round %d: %d answers accepted (%v, %v), want exactly 1", i, ok, e1, e2)
		}
	}
}

// TestTwoReplicasGrantReplay: a grant that airlock serve A issued is
// redeemed by one replica and refused on replay by another. The daemon
// has no HTTP endpoint that redeems (its grants go to whatever runs the
// call), so the replicas here are the daemon's own server.Server on
// their own connection pools to the database A and B use, as a process
// redeeming on the daemon's key and ledger would be.
func TestTwoReplicasGrantReplay(t *testing.T) {
	dsn := pgtest.DSN(t)
	e := newEnv(t, dsn)
	_, a := e.start(t)
	_, b := e.start(t)
	ctx := ctxBound(t)

	d, err := a.Decide(ctx, e.ws, "echo hello", map[string]any{"execution_id": "exec-1"})
	if err != nil || d.Decision != "allow" || len(d.Grants) != 1 {
		t.Fatalf("decide on A: %+v, %v; want allow with one grant", d, err)
	}
	// The decision's audit event, read on B (the audit log is shared),
	// gives the profile fingerprint the grant is bound to.
	var au struct{ Events []audit.Event }
	if err := b.Do(ctx, "GET", "/v1/audit?tool=Bash&decision=allow", nil, &au); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(au.Events, func(ev audit.Event) bool { return ev.ExecutionID == "exec-1" })
	if i < 0 {
		t.Fatalf("B's audit log lacks A's decision for exec-1: %+v", au.Events)
	}
	want := grant.Binding{ExecutionID: "exec-1", Command: "echo hello", Dir: e.ws, Profile: au.Events[i].Profile,
		Kind: d.Grants[0].Kind, Target: d.Grants[0].Target}
	tok := grant.Token(d.Grants[0].Token)

	replica := func() *server.Server {
		st, err := postgres.Open(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		srv, err := server.New(server.Config{Store: st, Policy: func(string) (server.Policy, error) {
			return server.Policy{}, errors.New("not used")
		}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		return srv
	}
	r1, r2 := replica(), replica()
	if _, err := r1.Issuer().Redeem(tok, want); err != nil {
		t.Fatalf("redeeming A's grant on replica 1: %v", err)
	}
	if _, err := r2.Issuer().Redeem(tok, want); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("replaying it on replica 2: %v, want grant.ErrReplayed", err)
	}
	if _, err := r1.Issuer().Redeem(tok, want); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("replaying it on replica 1: %v, want grant.ErrReplayed", err)
	}
	// Positive control: a fresh grant from B for another execution
	// redeems (on the key both daemons share) — the refusal above is the
	// ledger's, not a key or binding mismatch.
	d2, err := b.Decide(ctx, e.ws, "echo hello", map[string]any{"execution_id": "exec-2"})
	if err != nil || len(d2.Grants) != 1 {
		t.Fatalf("decide on B: %+v, %v", d2, err)
	}
	want.ExecutionID = "exec-2"
	if _, err := r2.Issuer().Redeem(grant.Token(d2.Grants[0].Token), want); err != nil {
		t.Errorf("redeeming B's fresh grant on replica 2: %v", err)
	}
}
