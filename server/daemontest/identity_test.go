package daemontest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/server/daemontest"
	"github.com/airlockhq/airlock/server/store/postgres/pgtest"
)

// The attacks of issue 23 against real daemons, on SQLite and on
// PostgreSQL (two replicas sharing the database: what one refuses the
// other refuses too).
func TestIdentityAttacksSQLite(t *testing.T) { identityAttacks(t, sqliteDB(t)) }

func TestIdentityAttacksPostgres(t *testing.T) { identityAttacks(t, pgtest.DSN(t)) }

func identityAttacks(t *testing.T, db string) {
	e := newEnv(t, db)
	_, a := e.start(t)
	_, b := e.start(t)
	ctx := ctxBound(t)
	agentOnly := &daemontest.Client{URL: b.URL, Token: e.token, Person: e.token}

	// An agent approves itself: refused, on either replica; no rule lands.
	d, err := a.Decide(ctx, e.ws, "git push origin main", map[string]any{"execution_id": "ex-1"})
	if err != nil || d.Decision != "ask" {
		t.Fatalf("decide: %+v %v", d, err)
	}
	if _, err := agentOnly.Answer(ctx, d.ApprovalID, "always"); status(err) != 403 {
		t.Fatalf("the agent's answer to its own approval: %v, want 403", err)
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".airlock", "policy.local.toml")); !os.IsNotExist(err) {
		t.Fatalf("a rule file exists after the agent's answer: %v", err)
	}
	if err := agentOnly.Do(ctx, "GET", "/v1/audit", nil, nil); status(err) != 403 {
		t.Fatalf("the agent read the audit: %v", err)
	}

	// The body names another agent: refused.
	if _, err := b.Decide(ctx, e.ws, "git push origin main", map[string]any{"agent": "deployer"}); status(err) != 403 {
		t.Fatalf("decide as another agent: %v, want 403", err)
	}
	// An unregistered workspace: refused, before any file of it is read.
	other := t.TempDir()
	if _, err := b.Decide(ctx, other, "ls", nil); status(err) != 403 {
		t.Fatalf("decide in another workspace: %v, want 403", err)
	}

	// A person answers "once" on B; another execution of the call does
	// not get it, the one it was given for does (on A).
	if _, err := b.Answer(ctx, d.ApprovalID, "once"); err != nil {
		t.Fatal(err)
	}
	if got, err := b.Decide(ctx, e.ws, "git push origin main", map[string]any{"execution_id": "ex-2"}); err != nil || got.Decision != "ask" || got.Grant != "" {
		t.Fatalf("another execution after once: %+v %v, want ask", got, err)
	}
	if got, err := a.Decide(ctx, e.ws, "git push origin main", map[string]any{"execution_id": "ex-1"}); err != nil || got.Decision != "allow" || got.Grant == "" {
		t.Fatalf("the answered execution: %+v %v, want allow with a grant", got, err)
	}

	// A revoked token is refused at once by both replicas.
	var who struct{ ID string }
	if err := a.Do(ctx, "GET", "/v1/whoami", nil, &who); err != nil || who.ID == "" {
		t.Fatalf("whoami: %+v %v", who, err)
	}
	if err := b.Do(ctx, "GET", "/v1/whoami", nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := daemontest.Serve(e.bin, e.db, e.env, "token", "revoke", who.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*daemontest.Client{a, b} {
		if err := c.Do(ctx, "GET", "/v1/whoami", nil, nil); status(err) != 401 {
			t.Fatalf("a revoked token on %s: %v, want 401", c.URL, err)
		}
	}
}
