package daemontest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	cat := filepath.Join(t.TempDir(), "sandboxes.toml")
	if err := os.WriteFile(cat, []byte("[sandbox.deploy]\nprovider = \"local\"\n\n[agent.deployer]\nsandboxes = [\"deploy\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--providers", cat, "--max-pending-agent", "3"}
	_, a := e.start(t, flags...)
	_, b := e.start(t, flags...)
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

	// The body names another agent: refused, for deciding and for
	// running code in the deployer's sandbox; the deployer's own token
	// runs there (control).
	if _, err := b.Decide(ctx, e.ws, "git push origin main", map[string]any{"agent": "deployer"}); status(err) != 403 {
		t.Fatalf("decide as another agent: %v, want 403", err)
	}
	run := map[string]any{"sandbox": "deploy", "agent": "deployer", "argv": []string{"echo", "deployed"}}
	if err := b.Do(ctx, "POST", "/v1/exec", run, nil); status(err) != 403 {
		t.Fatalf("exec as another agent: %v, want 403", err)
	}
	deployer, err := daemontest.CreateToken(e.bin, e.db, e.env, "--role", "agent", "--agent", "deployer")
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Stdout string }
	if err := (&daemontest.Client{URL: b.URL, Token: deployer}).Do(ctx, "POST", "/v1/exec", run, &res); err != nil || res.Stdout != "deployed\n" {
		t.Fatalf("the deployer's own run: %+v %v", res, err)
	}

	// Another project's protected file: its workspace is not registered,
	// so the Write of "" that would put .git/config into a diff is
	// refused and nothing is read.
	other := t.TempDir()
	if err := os.MkdirAll(filepath.Join(other, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, ".git", "config"), []byte("url = https://u:SECRET@x/y\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	write := map[string]any{"tool": "Write", "workspace": other,
		"input": map[string]any{"file_path": filepath.Join(other, ".git", "config"), "content": ""}}
	if err := b.Do(ctx, "POST", "/v1/decide", write, nil); status(err) != 403 {
		t.Fatalf("decide in another project: %v, want 403", err)
	}
	var list struct{ Approvals []json.RawMessage }
	if err := b.Do(ctx, "GET", "/v1/approvals", nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, ap := range list.Approvals {
		if strings.Contains(string(ap), "SECRET") {
			t.Fatalf("an approval discloses the other project's file: %s", ap)
		}
	}

	// "Always" on a card of this workspace, whose .airlock became a
	// symlink into the other project meanwhile: no rule lands there.
	card, err := a.Decide(ctx, e.ws, "make release", nil)
	if err != nil || card.Decision != "ask" {
		t.Fatalf("decide make release: %+v %v", card, err)
	}
	if err := os.Mkdir(filepath.Join(other, ".airlock"), 0o700); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(e.ws, ".airlock")
	if err := os.Rename(own, own+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(other, ".airlock"), own); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Answer(ctx, card.ApprovalID, "always"); status(err) != 500 {
		t.Fatalf("always through a symlinked .airlock: %v, want the write refused", err)
	}
	if _, err := os.Stat(filepath.Join(other, ".airlock", "policy.local.toml")); !os.IsNotExist(err) {
		t.Fatalf("the rule landed in the other project: %v", err)
	}
	if err := os.Remove(own); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(own+".real", own); err != nil {
		t.Fatal(err)
	}

	// The exact rule of a card with git -C allows no other repository.
	gc, err := a.Decide(ctx, e.ws, "git -C /repo/a push origin main", nil)
	if err != nil || gc.Decision != "ask" {
		t.Fatalf("decide git -C: %+v %v", gc, err)
	}
	if _, err := b.Answer(ctx, gc.ApprovalID, "always"); err != nil {
		t.Fatal(err)
	}
	if got, err := a.Decide(ctx, e.ws, "git -C /repo/a push origin main", nil); err != nil || got.Decision != "allow" {
		t.Fatalf("the card's call after always: %+v %v", got, err)
	}
	if got, err := a.Decide(ctx, e.ws, "git -C /repo/b push origin main", nil); err != nil || got.Decision != "ask" {
		t.Fatalf("another repository after always: %+v %v, want ask", got, err)
	}

	// Pending approvals are capped per agent (3 here): the fourth is 429.
	for i := 0; ; i++ {
		_, err := b.Decide(ctx, e.ws, fmt.Sprintf("make cap%d", i), nil)
		if status(err) == 429 {
			if i == 0 {
				t.Fatal("the first capped call was refused")
			}
			break
		}
		if err != nil || i > 3 {
			t.Fatalf("call %d under a cap of 3: %v", i, err)
		}
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
