package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

func testTokens(t *testing.T, s store.Store) {
	now := base()
	want := store.Token{ID: "tok_1", Name: "alice's laptop", Hash: sha256.Sum256([]byte("alk_secret")), CreatedAt: now, Role: store.RolePerson}
	if err := s.CreateToken(ctx(t), want); err != nil {
		t.Fatal(err)
	}
	got, err := s.LookupToken(ctx(t), sha256.Sum256([]byte("alk_secret")))
	if err != nil {
		t.Fatalf("LookupToken: %v", err)
	}
	if got.ID != want.ID || got.Name != want.Name || got.Hash != want.Hash {
		t.Errorf("LookupToken = %+v, want %+v", got, want)
	}
	checkTime(t, "CreatedAt", got.CreatedAt, want.CreatedAt)
	if _, err := s.LookupToken(ctx(t), sha256.Sum256([]byte("alk_wrong"))); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("LookupToken(wrong) err = %v, want ErrNotFound", err)
	}
	// A second token with the same hash would make lookups ambiguous.
	if err := s.CreateToken(ctx(t), store.Token{ID: "tok_2", Hash: want.Hash, CreatedAt: now, Role: store.RolePerson}); err == nil {
		t.Error("CreateToken with a hash already stored succeeded")
	}
}

func testRules(t *testing.T, s store.Store) {
	now := base()
	mustOpen(t, s, newApproval("apr_1", now, 5*time.Minute))
	rules := []store.Rule{
		{Workspace: "/work/ws", Effect: "allow", Text: "Bash(git status)", CreatedAt: now, Approval: "apr_1"},
		{Workspace: "/work/ws", Effect: "deny", Text: "Bash(rm -rf /)", Expires: now.Add(10 * time.Minute), CreatedAt: now, Approval: "apr_1"},
		{Workspace: "/work/other", Effect: "allow", Text: "Bash(ls)", CreatedAt: now, Approval: "apr_1"},
	}
	if _, err := s.AnswerApproval(ctx(t), "apr_1", "always", 10*time.Minute, "tok", now, rules); err != nil {
		t.Fatal(err)
	}
	got, err := s.Rules(ctx(t), "/work/ws", now.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("Rules(/work/ws) = %+v, want its two rules", got)
	}
	for i, r := range got {
		w := rules[i]
		if r.Workspace != w.Workspace || r.Effect != w.Effect || r.Text != w.Text || r.Approval != w.Approval {
			t.Errorf("rule %d = %+v, want %+v", i, r, w)
		}
		checkTime(t, "Expires", r.Expires, w.Expires)
		checkTime(t, "CreatedAt", r.CreatedAt, w.CreatedAt)
	}
	// Past the deny rule's expiry only the rule without one is left.
	got, err = s.Rules(ctx(t), "/work/ws", now.Add(11*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Text != "Bash(git status)" || !got[0].Expires.IsZero() {
		t.Errorf("Rules after the expiry = %+v, want only Bash(git status), with no expiry", got)
	}
	if got, _ := s.Rules(ctx(t), "/work/none", now); len(got) != 0 {
		t.Errorf("Rules for a workspace with none = %+v", got)
	}
}

func mac(t *testing.T) [32]byte {
	var m [32]byte
	copy(m[:], randomBytes(t, 32))
	return m
}

func testSpend(t *testing.T, s store.Store) {
	m, other := mac(t), mac(t)
	exp := time.Now().Add(time.Minute)
	if err := s.Spend(ctx(t), m, exp); err != nil {
		t.Fatalf("first Spend: %v", err)
	}
	err := s.Spend(ctx(t), m, exp)
	if !errors.Is(err, store.ErrReplayed) || !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("replayed Spend err = %v, want store.ErrReplayed and grant.ErrReplayed", err)
	}
	if err := s.Spend(ctx(t), other, exp); err != nil {
		t.Errorf("Spend of another grant: %v", err)
	}
}

func testConcurrentSpend(t *testing.T, s store.Store) {
	m := mac(t)
	errs := race(concurrency, func(int) error { return s.Spend(ctx(t), m, time.Now().Add(time.Minute)) })
	oneNil(t, errs, func(err error) bool { return errors.Is(err, store.ErrReplayed) })
}

// ledger adapts a Store to grant.Ledger, the way the server does.
type ledger struct {
	ctx context.Context
	s   store.Store
}

func (l ledger) Spend(mac [32]byte, expires time.Time) error { return l.s.Spend(l.ctx, mac, expires) }

// testSpendAsLedger redeems a real grant token twice through the store.
func testSpendAsLedger(t *testing.T, s store.Store) {
	key, err := s.GrantKey(ctx(t), func() ([]byte, error) { return randomBytes(t, 32), nil })
	if err != nil {
		t.Fatal(err)
	}
	iss, err := grant.NewIssuer(key, ledger{ctx(t), s})
	if err != nil {
		t.Fatal(err)
	}
	b := grant.Binding{ExecutionID: "exec-1", Argv: []string{"git", "push"}, Dir: "/work/ws",
		Profile: "ab", Kind: "command.execute", Target: "git push"}
	tok, err := iss.Issue(b, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := iss.Redeem(tok, b); err != nil {
		t.Fatalf("first Redeem: %v", err)
	}
	// Another replica: same key from the store, its own Issuer.
	key2, err := s.GrantKey(ctx(t), func() ([]byte, error) { return nil, errors.New("a key exists; create must not be called") })
	if err != nil {
		t.Fatal(err)
	}
	other, err := grant.NewIssuer(key2, ledger{ctx(t), s})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Redeem(tok, b); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("replay on another issuer: err = %v, want grant.ErrReplayed", err)
	}
}

func testGrantKey(t *testing.T, s store.Store) {
	keys := make([][]byte, concurrency)
	var created atomic.Int32
	made := make([][]byte, concurrency)
	errs := race(concurrency, func(i int) error {
		var err error
		keys[i], err = s.GrantKey(ctx(t), func() ([]byte, error) {
			created.Add(1)
			made[i] = randomBytes(t, 32)
			return made[i], nil
		})
		return err
	})
	for i, err := range errs {
		if err != nil {
			t.Fatalf("GrantKey %d: %v", i, err)
		}
		if !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("caller %d got a different key than caller 0", i)
		}
	}
	if created.Load() == 0 {
		t.Fatal("no caller's create was used, yet a key came back")
	}
	found := false
	for _, m := range made {
		found = found || (m != nil && bytes.Equal(m, keys[0]))
	}
	if !found {
		t.Error("the shared key is none of the keys create returned")
	}
	again, err := s.GrantKey(ctx(t), func() ([]byte, error) { return nil, errors.New("create called although a key exists") })
	if err != nil || !bytes.Equal(again, keys[0]) {
		t.Errorf("GrantKey later = %x, %v; want the first key, create not called", again, err)
	}
}

func testGrantKeyCreateFails(t *testing.T, s store.Store) {
	boom := errors.New("no entropy")
	if _, err := s.GrantKey(ctx(t), func() ([]byte, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Errorf("GrantKey with a failing create: err = %v, want it passed on", err)
	}
	// Nothing was stored: the next caller creates the key.
	want := randomBytes(t, 32)
	got, err := s.GrantKey(ctx(t), func() ([]byte, error) { return want, nil })
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("GrantKey after a failure = %x, %v; want the new key %x", got, err, want)
	}
}
