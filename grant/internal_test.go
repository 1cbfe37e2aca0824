package grant

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

var fuzzKey = bytes.Repeat([]byte("k"), 32)

func testBinding() Binding {
	return Binding{
		ExecutionID: "exec-1",
		Argv:        []string{"git", "push"},
		Dir:         "/work",
		Profile:     "ff",
		Kind:        "command.execute",
		Target:      "git push",
	}
}

// FuzzDecodeToken feeds arbitrary text to the decoder. It must never panic,
// and it must never accept a token unless an independent HMAC over the
// token's payload matches the token's MAC, and the payload is the one
// canonical encoding of the Binding it decodes to.
func FuzzDecodeToken(f *testing.F) {
	i, err := NewIssuer(fuzzKey, NewMemoryLedger())
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range []Binding{testBinding(), {ExecutionID: "e", Dir: "/", Kind: "k", Command: "ls | wc"}} {
		tok, err := i.Issue(b, time.Hour)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(tok))
		f.Add(string(tok[:len(tok)/2]))
		f.Add(strings.Replace(string(tok), "A", "B", 1))
	}
	f.Add("")
	f.Add(tokenPrefix)
	f.Add(tokenPrefix + ".")
	f.Add(tokenPrefix + "AQ." + strings.Repeat("A", 43))

	f.Fuzz(func(t *testing.T, s string) {
		b, mac, err := decodeToken(fuzzKey, Token(s))
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTampered) {
				t.Fatalf("decode error %v is neither ErrMalformed nor ErrTampered", err)
			}
			return
		}
		rest := strings.TrimPrefix(s, tokenPrefix)
		p64, m64, _ := strings.Cut(rest, ".")
		payload, err1 := base64.RawURLEncoding.DecodeString(p64)
		gotMAC, err2 := base64.RawURLEncoding.DecodeString(m64)
		if err1 != nil || err2 != nil {
			t.Fatalf("accepted a token whose parts are not base64url: %q", s)
		}
		h := hmac.New(sha256.New, fuzzKey)
		h.Write(payload)
		want := h.Sum(nil)
		if !bytes.Equal(gotMAC, want) || !bytes.Equal(mac[:], want) {
			t.Fatalf("accepted a token whose MAC does not verify: %q", s)
		}
		again, err := encodePayload(b)
		if err != nil || !bytes.Equal(again, payload) {
			t.Fatalf("decoded payload is not canonical: %q", s)
		}
		if canon, _ := encodeToken(fuzzKey, again); string(canon) != s {
			t.Fatalf("accepted a second spelling of a token: %q", s)
		}
	})
}

// TestEncodingIsUnambiguous checks that moving bytes across a field
// boundary always changes the encoding.
func TestEncodingIsUnambiguous(t *testing.T) {
	base := testBinding()
	variants := []func(*Binding){
		func(b *Binding) {},
		func(b *Binding) { b.Argv = []string{"gitp", "ush"} },
		func(b *Binding) { b.Argv = []string{"git", "push", ""} },
		func(b *Binding) { b.Argv = []string{"git push"} },
		func(b *Binding) { b.Argv, b.Command = nil, "git push" },
		func(b *Binding) { b.Argv, b.ExecutionID = []string{"exec-1git", "push"}, "" },
		func(b *Binding) { b.Kind, b.Target = "command.executeg", "it push" },
		func(b *Binding) { b.Profile, b.Kind = "ffcommand.execute", "" },
		func(b *Binding) { b.Dir, b.Profile = "/workff", "" },
	}
	seen := map[string]int{}
	for n, edit := range variants {
		b := base
		edit(&b)
		p, err := encodePayload(b)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := seen[string(p)]; ok {
			t.Errorf("variants %d and %d encode the same", prev, n)
		}
		seen[string(p)] = n
		back, err := decodePayload(p)
		if err != nil {
			t.Fatalf("variant %d: %v", n, err)
		}
		if again, _ := encodePayload(back); !bytes.Equal(again, p) {
			t.Errorf("variant %d does not survive a round trip", n)
		}
	}
}

// TestOwnTokensUseMonotonicDeadline forges a token (we hold the key) whose
// wall-clock expiry and remembered monotonic deadline disagree, as they do
// after the system clock is changed, and checks which one wins.
func TestOwnTokensUseMonotonicDeadline(t *testing.T) {
	i, err := NewIssuer(fuzzKey, NewMemoryLedger())
	if err != nil {
		t.Fatal(err)
	}
	forge := func(wall time.Time, mono time.Time) Token {
		b := testBinding()
		b.Expires = wall
		p, err := encodePayload(b)
		if err != nil {
			t.Fatal(err)
		}
		tok, mac := encodeToken(i.key, p)
		i.mu.Lock()
		i.deadlines[mac] = mono
		i.mu.Unlock()
		return tok
	}
	now := time.Now()
	// The wall clock jumped forward past the expiry; the monotonic deadline
	// has not passed: still valid.
	if _, err := i.Redeem(forge(now.Add(-time.Hour).Round(0), now.Add(time.Hour)), testBinding()); err != nil {
		t.Errorf("wall expired, monotonic not: %v", err)
	}
	// The wall clock was set back; the monotonic deadline has passed: expired.
	if _, err := i.Redeem(forge(now.Add(time.Hour).Round(0), now.Add(-time.Millisecond)), testBinding()); !errors.Is(err, ErrExpired) {
		t.Errorf("monotonic expired, wall not: err = %v, want ErrExpired", err)
	}
}

func TestIssuerForgetsExpiredDeadlines(t *testing.T) {
	i := NewRandomIssuer()
	for range minSweep - 1 {
		if _, err := i.Issue(testBinding(), time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := i.Issue(testBinding(), time.Hour); err != nil { // triggers a sweep
		t.Fatal(err)
	}
	i.mu.Lock()
	n := len(i.deadlines)
	i.mu.Unlock()
	if n != 1 {
		t.Errorf("issuer remembers %d deadlines, want 1", n)
	}
}

func TestMemoryLedger(t *testing.T) {
	l := NewMemoryLedger()
	mac := [32]byte{1}
	if err := l.Spend(mac, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := l.Spend(mac, time.Now().Add(time.Hour)); !errors.Is(err, ErrReplayed) {
		t.Fatalf("second Spend: err = %v, want ErrReplayed", err)
	}

	// Entries past their expiry are dropped once the ledger has grown.
	for n := range minSweep * 2 {
		if err := l.Spend([32]byte{2, byte(n)}, time.Now().Add(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(5 * time.Millisecond)
	for n := range minSweep * 2 {
		if err := l.Spend([32]byte{3, byte(n)}, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if got, max := l.Len(), 1+minSweep*2; got > max {
		t.Errorf("ledger holds %d entries, want at most %d after expiry", got, max)
	}
	if err := l.Spend(mac, time.Now().Add(time.Hour)); !errors.Is(err, ErrReplayed) {
		t.Errorf("an unexpired entry was dropped: err = %v", err)
	}
}
