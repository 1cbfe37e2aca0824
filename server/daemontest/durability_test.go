package daemontest_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/server/daemontest"
	"github.com/airlockhq/airlock/server/store/postgres/pgtest"
)

// databases are the two stores the durability tests run on.
var databases = []struct {
	name string
	db   func(t *testing.T) string
}{
	{"sqlite", sqliteDB},
	{"postgres", func(t *testing.T) string { return pgtest.DSN(t) }},
}

// TestPendingApprovalSurvivesRestart: an approval opened before the
// daemon is SIGKILLed is pending after it starts again, can be answered
// there, and the answer decides the call (once).
func TestPendingApprovalSurvivesRestart(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.db(t))
			ctx := ctxBound(t)
			d1, c1 := e.start(t)
			d, err := c1.Decide(ctx, e.ws, "git push origin main", nil)
			if err != nil || d.Decision != "ask" || d.ApprovalID == "" {
				t.Fatalf("decide: %+v, %v; want ask with an approval", d, err)
			}
			d1.Kill()

			_, c2 := e.start(t)
			var list struct{ Approvals []daemontest.Approval }
			if err := c2.Do(ctx, "GET", "/v1/approvals", nil, &list); err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(list.Approvals, func(a daemontest.Approval) bool { return a.ID == d.ApprovalID && a.State == "pending" }) {
				t.Fatalf("after the restart the pending approvals are %+v; %s is missing", list.Approvals, d.ApprovalID)
			}
			if _, err := c2.Answer(ctx, d.ApprovalID, "once"); err != nil {
				t.Fatalf("answering after the restart: %v", err)
			}
			again, err := c2.Decide(ctx, e.ws, "git push origin main", nil)
			if err != nil || again.Decision != "allow" || again.ApprovalID != d.ApprovalID {
				t.Errorf("the same call after the answer: %+v, %v; want allow by %s", again, err, d.ApprovalID)
			}
			// Used once: the next identical call asks again.
			third, err := c2.Decide(ctx, e.ws, "git push origin main", nil)
			if err != nil || third.Decision != "ask" || third.ApprovalID == d.ApprovalID {
				t.Errorf("the call a third time: %+v, %v; want a new ask", third, err)
			}
		})
	}
}

// TestKilledDaemonLosesNothingAcknowledged SIGKILLs a daemon in the middle
// of a stream of decisions and answers, right after it acknowledged one,
// with more in flight. After a restart on the same database every
// decision that got its 200 is in the audit log and every acknowledged
// answer is recorded; what was in flight may or may not be, but nothing
// acknowledged is lost.
func TestKilledDaemonLosesNothingAcknowledged(t *testing.T) {
	for _, db := range databases {
		t.Run(db.name, func(t *testing.T) {
			e := newEnv(t, db.db(t))
			ctx := ctxBound(t)
			d1, c1 := e.start(t)

			const deciders, killAfter = 6, 150
			var (
				mu       sync.Mutex
				decided  []string              // execution ids of acknowledged decisions
				answered = map[string]string{} // approval id -> acknowledged answer
				killOnce sync.Once
				wg       sync.WaitGroup
			)
			kill := func() { killOnce.Do(d1.Kill) }
			for g := range deciders {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						id := fmt.Sprintf("exec-%d-%d", g, i)
						d, err := c1.Decide(ctx, e.ws, "echo hello", map[string]any{"execution_id": id})
						if err != nil {
							return // the daemon is gone
						}
						if d.Decision != "allow" {
							t.Errorf("decide %s: %+v, want allow", id, d)
							return
						}
						mu.Lock()
						decided = append(decided, id)
						n := len(decided)
						mu.Unlock()
						if n == killAfter {
							kill() // right after this acknowledgement
						}
					}
				}()
			}
			// One client opens approvals and answers them, alongside.
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers := []string{"once", "deny"}
				for i := 0; ; i++ {
					d, err := c1.Decide(ctx, e.ws, fmt.Sprintf("git push origin b%d", i), nil)
					if err != nil {
						return
					}
					a, err := c1.Answer(ctx, d.ApprovalID, answers[i%2])
					if err != nil {
						return
					}
					mu.Lock()
					answered[a.ID] = a.Answer
					mu.Unlock()
				}
			}()
			wg.Wait()
			kill() // in case every client stopped first (they should not)
			if t.Failed() {
				return
			}
			if len(decided) < killAfter {
				t.Fatalf("only %d decisions were acknowledged before the daemon went away", len(decided))
			}

			_, c2 := e.start(t)
			var au struct{ Events []audit.Event }
			if err := c2.Do(ctx, "GET", "/v1/audit?tool=Bash&decision=allow&limit=10000", nil, &au); err != nil {
				t.Fatal(err)
			}
			logged := map[string]bool{}
			for _, ev := range au.Events {
				logged[ev.ExecutionID] = true
			}
			lost := 0
			for _, id := range decided {
				if !logged[id] {
					lost++
					t.Errorf("decision %s was acknowledged but is not in the audit log after the restart", id)
				}
			}
			for id, answer := range answered {
				var a daemontest.Approval
				if err := c2.Do(ctx, "GET", "/v1/approvals/"+id, nil, &a); err != nil {
					t.Errorf("approval %s, answered %s before the kill: %v", id, answer, err)
					continue
				}
				if a.State != "answered" || a.Answer != answer {
					lost++
					t.Errorf("approval %s was answered %s before the kill, now %+v", id, answer, a)
				}
			}
			t.Logf("%d decisions and %d answers acknowledged before SIGKILL; %d lost; the audit log holds %d allow events",
				len(decided), len(answered), lost, len(au.Events))
		})
	}
}
