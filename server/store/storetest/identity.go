package storetest

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// testTokenRoles: a token's role, agent, user and workspaces come back as
// stored, and a token without workspaces has none.
func testTokenRoles(t *testing.T, s store.Store) {
	now := base()
	agent := store.Token{ID: "tok_a", Name: "ci", Hash: sha256.Sum256([]byte("alk_a")), CreatedAt: now,
		Role: store.RoleAgent, Agent: "deployer", User: "ci-bot", Workspaces: []string{"/work/a", "/work/b"},
		ExpiresAt: now.Add(24 * time.Hour)}
	person := store.Token{ID: "tok_p", Name: "alice", Hash: sha256.Sum256([]byte("alk_p")), CreatedAt: now.Add(time.Second),
		Role: store.RolePerson}
	for _, tok := range []store.Token{agent, person} {
		if err := s.CreateToken(ctx(t), tok); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LookupToken(ctx(t), agent.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.Role != store.RoleAgent || got.Agent != "deployer" || got.User != "ci-bot" || !slices.Equal(got.Workspaces, agent.Workspaces) {
		t.Errorf("LookupToken = %+v, want %+v", got, agent)
	}
	checkTime(t, "ExpiresAt", got.ExpiresAt, agent.ExpiresAt)
	if !got.RevokedAt.IsZero() {
		t.Errorf("a new token is revoked at %v", got.RevokedAt)
	}
	got, err = s.LookupToken(ctx(t), person.Hash)
	if err != nil {
		t.Fatal(err)
	}
	if got.Role != store.RolePerson || got.Workspaces != nil || !got.ExpiresAt.IsZero() {
		t.Errorf("LookupToken(person) = %+v", got)
	}
	list, err := s.Tokens(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != "tok_a" || list[1].ID != "tok_p" {
		t.Fatalf("Tokens = %+v, want tok_a then tok_p", list)
	}
}

// testRevokeToken: a revoked token is found with its revocation time
// (the first one, however often it is revoked); an unknown id is
// ErrNotFound.
func testRevokeToken(t *testing.T, s store.Store) {
	now := base()
	tok := store.Token{ID: "tok_r", Hash: sha256.Sum256([]byte("alk_r")), CreatedAt: now, Role: store.RolePerson}
	if err := s.CreateToken(ctx(t), tok); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx(t), "tok_r", now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeToken(ctx(t), "tok_r", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, err := s.LookupToken(ctx(t), tok.Hash)
	if err != nil {
		t.Fatal(err)
	}
	checkTime(t, "RevokedAt", got.RevokedAt, now.Add(time.Minute))
	if err := s.RevokeToken(ctx(t), "tok_nope", now); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RevokeToken(unknown) = %v, want ErrNotFound", err)
	}
}

func testWorkspaces(t *testing.T, s store.Store) {
	now := base()
	for _, p := range []string{"/work/b", "/work/a", "/work/b"} {
		if err := s.AddWorkspace(ctx(t), store.Workspace{Path: p, AddedAt: now}); err != nil {
			t.Fatalf("AddWorkspace(%s): %v", p, err)
		}
	}
	list, err := s.Workspaces(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Path != "/work/a" || list[1].Path != "/work/b" {
		t.Fatalf("Workspaces = %+v, want /work/a and /work/b once each", list)
	}
	for p, want := range map[string]bool{"/work/a": true, "/work/c": false, "/work": false, "/work/a/": false} {
		if got, err := s.WorkspaceRegistered(ctx(t), p); err != nil || got != want {
			t.Errorf("WorkspaceRegistered(%s) = %v, %v; want %v", p, got, err, want)
		}
	}
	if err := s.RemoveWorkspace(ctx(t), "/work/a"); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveWorkspace(ctx(t), "/work/a"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("second RemoveWorkspace = %v, want ErrNotFound", err)
	}
	if got, _ := s.WorkspaceRegistered(ctx(t), "/work/a"); got {
		t.Error("a removed workspace is still registered")
	}
}

// testPendingPage: pages follow (created_at, id) order without a gap or a
// repeat, filter by agent and workspace, and CountPending agrees.
func testPendingPage(t *testing.T, s store.Store) {
	now := base()
	for i := range 7 {
		a := newApproval(fmt.Sprintf("apr_%d", i), now.Add(time.Duration(i)*time.Millisecond), 5*time.Minute)
		if i%2 == 1 {
			a.Agent = "agent-2"
		}
		if i%3 == 2 {
			a.Workspace = "/work/other"
		}
		mustOpen(t, s, a)
	}
	later := now.Add(time.Second)
	var all []string
	after := ""
	for range 10 {
		page, err := s.PendingPage(ctx(t), later, store.PendingFilter{After: after, Limit: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(page) > 3 {
			t.Fatalf("a page of %d with Limit 3", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			all = append(all, a.ID)
		}
		after = page[len(page)-1].ID
	}
	if want := []string{"apr_0", "apr_1", "apr_2", "apr_3", "apr_4", "apr_5", "apr_6"}; !slices.Equal(all, want) {
		t.Errorf("pages = %v, want %v", all, want)
	}
	ids := func(f store.PendingFilter) []string {
		page, err := s.PendingPage(ctx(t), later, f)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, a := range page {
			out = append(out, a.ID)
		}
		return out
	}
	if got, want := ids(store.PendingFilter{Agent: "agent-2"}), []string{"apr_1", "apr_3", "apr_5"}; !slices.Equal(got, want) {
		t.Errorf("agent-2's = %v, want %v", got, want)
	}
	if got, want := ids(store.PendingFilter{Workspaces: []string{"/work/other"}}), []string{"apr_2", "apr_5"}; !slices.Equal(got, want) {
		t.Errorf("/work/other's = %v, want %v", got, want)
	}
	if got, want := ids(store.PendingFilter{Agent: "agent-1", Workspaces: []string{"/work/ws", "/nowhere"}}), []string{"apr_0", "apr_4", "apr_6"}; !slices.Equal(got, want) {
		t.Errorf("agent-1's in /work/ws = %v, want %v", got, want)
	}
	byAgent, byWS, err := s.CountPending(ctx(t), later, "agent-2", "/work/other")
	if err != nil || byAgent != 3 || byWS != 2 {
		t.Errorf("CountPending = %d, %d, %v; want 3, 2", byAgent, byWS, err)
	}
	// Past their expiry they count no more.
	byAgent, byWS, err = s.CountPending(ctx(t), now.Add(time.Hour), "agent-2", "/work/other")
	if err != nil || byAgent != 0 || byWS != 0 {
		t.Errorf("CountPending after expiry = %d, %d, %v; want 0, 0", byAgent, byWS, err)
	}
}
