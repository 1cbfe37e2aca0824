package grant_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/airlockhq/airlock/grant"
)

func argvBinding() grant.Binding {
	return grant.Binding{
		ExecutionID: "exec-1",
		Argv:        []string{"git", "push", "origin", "main"},
		Dir:         "/work/repo",
		Profile:     strings.Repeat("ab", 32),
		Kind:        "command.execute",
		Target:      "git push origin main",
	}
}

func commandBinding() grant.Binding {
	b := argvBinding()
	b.Argv = nil
	b.Command = "git push origin main && echo done"
	return b
}

func mustIssue(t *testing.T, i *grant.Issuer, b grant.Binding, ttl time.Duration) grant.Token {
	t.Helper()
	tok, err := i.Issue(b, ttl)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return tok
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    grant.Binding
		want grant.Binding // what the executor passes; zero means b
	}{
		{name: "argv", b: argvBinding()},
		{name: "command", b: commandBinding()},
		{name: "dir is cleaned on both sides", b: func() grant.Binding {
			b := argvBinding()
			b.Dir = "/work/./repo/"
			return b
		}(), want: func() grant.Binding {
			b := argvBinding()
			b.Dir = "/work/x/../repo"
			return b
		}()},
		{name: "want expiry and nonce ignored", b: argvBinding(), want: func() grant.Binding {
			b := argvBinding()
			b.Expires = time.Unix(1, 0)
			b.Nonce = [16]byte{1, 2, 3}
			return b
		}()},
		{name: "empty strings survive", b: grant.Binding{ExecutionID: "e", Dir: "/", Kind: "k"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := grant.NewRandomIssuer()
			before := time.Now()
			tok := mustIssue(t, i, tc.b, time.Minute)
			want := tc.want
			if want.ExecutionID == "" {
				want = tc.b
			}
			got, err := i.Redeem(tok, want)
			if err != nil {
				t.Fatalf("Redeem: %v", err)
			}
			if got.ExecutionID != tc.b.ExecutionID || !slices.Equal(got.Argv, tc.b.Argv) ||
				got.Command != tc.b.Command || got.Profile != tc.b.Profile ||
				got.Kind != tc.b.Kind || got.Target != tc.b.Target {
				t.Errorf("Redeem returned %+v, want the fields of %+v", got, tc.b)
			}
			if got.Expires.Before(before.Add(time.Minute-time.Second)) || got.Expires.After(time.Now().Add(time.Minute)) {
				t.Errorf("Expires = %v, want about a minute from %v", got.Expires, before)
			}
			if got.Nonce == ([16]byte{}) {
				t.Error("Nonce is zero")
			}
		})
	}
}

func TestNoncesDiffer(t *testing.T) {
	i := grant.NewRandomIssuer()
	a, b := mustIssue(t, i, argvBinding(), time.Minute), mustIssue(t, i, argvBinding(), time.Minute)
	if a == b {
		t.Fatal("two tokens for the same binding are identical")
	}
}

func TestRedeemMismatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		issued grant.Binding
		edit   func(*grant.Binding)
		field  string
		err    error
	}{
		{"execution", argvBinding(), func(b *grant.Binding) { b.ExecutionID = "exec-2" }, "ExecutionID", grant.ErrWrongExecution},
		{"argv extra arg", argvBinding(), func(b *grant.Binding) { b.Argv = append(b.Argv, "--force") }, "Argv", grant.ErrWrongCommand},
		{"argv split differently", argvBinding(), func(b *grant.Binding) { b.Argv = []string{"git", "push", "origin main"} }, "Argv", grant.ErrWrongCommand},
		{"argv as command text", argvBinding(), func(b *grant.Binding) { b.Argv, b.Command = nil, "git push origin main" }, "Argv", grant.ErrWrongCommand},
		{"command", commandBinding(), func(b *grant.Binding) { b.Command = "git push --force origin main" }, "Command", grant.ErrWrongCommand},
		{"command as argv", commandBinding(), func(b *grant.Binding) { b.Command, b.Argv = "", []string{"sh", "-c", b.Command} }, "Argv", grant.ErrWrongCommand},
		{"dir", argvBinding(), func(b *grant.Binding) { b.Dir = "/work/other" }, "Dir", grant.ErrWrongDir},
		{"dir relative", argvBinding(), func(b *grant.Binding) { b.Dir = "work/repo" }, "Dir", grant.ErrWrongDir},
		{"profile", argvBinding(), func(b *grant.Binding) { b.Profile = strings.Repeat("cd", 32) }, "Profile", grant.ErrWrongProfile},
		{"kind", argvBinding(), func(b *grant.Binding) { b.Kind = "fs.write" }, "Kind", grant.ErrWrongRequirement},
		{"target", argvBinding(), func(b *grant.Binding) { b.Target = "git push origin release" }, "Target", grant.ErrWrongRequirement},
		{"kind/target boundary", argvBinding(), func(b *grant.Binding) { b.Kind, b.Target = b.Kind+"g", b.Target[1:] }, "Kind", grant.ErrWrongRequirement},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := grant.NewRandomIssuer()
			tok := mustIssue(t, i, tc.issued, time.Minute)
			want := tc.issued
			want.Argv = slices.Clone(want.Argv)
			tc.edit(&want)
			_, err := i.Redeem(tok, want)
			if !errors.Is(err, tc.err) {
				t.Fatalf("Redeem err = %v, want %v", err, tc.err)
			}
			var m *grant.MismatchError
			if !errors.As(err, &m) {
				t.Fatalf("Redeem err = %T, want *MismatchError", err)
			}
			if m.Field != tc.field || m.Want == m.Got {
				t.Errorf("MismatchError = %+v, want Field %q and differing values", m, tc.field)
			}
			for _, other := range []error{grant.ErrTampered, grant.ErrExpired, grant.ErrReplayed, grant.ErrMalformed} {
				if errors.Is(err, other) {
					t.Errorf("err %v also matches %v", err, other)
				}
			}
			// A failed check must not spend the token.
			if _, err := i.Redeem(tok, tc.issued); err != nil {
				t.Errorf("Redeem with the right binding after a mismatch: %v", err)
			}
		})
	}
}

func TestMismatchValues(t *testing.T) {
	i := grant.NewRandomIssuer()
	tok := mustIssue(t, i, commandBinding(), time.Minute)
	want := commandBinding()
	want.Command = "rm -rf /"
	_, err := i.Redeem(tok, want)
	var m *grant.MismatchError
	if !errors.As(err, &m) {
		t.Fatalf("err = %v", err)
	}
	if m.Want != "rm -rf /" || m.Got != commandBinding().Command {
		t.Errorf("Want/Got = %q/%q", m.Want, m.Got)
	}
}

// splitToken returns the decoded payload and MAC of a token.
func splitToken(t *testing.T, tok grant.Token) (payload, mac []byte) {
	t.Helper()
	rest, ok := strings.CutPrefix(string(tok), "airlock-grant1.")
	p, m, ok2 := strings.Cut(rest, ".")
	if !ok || !ok2 {
		t.Fatalf("token has an unexpected shape")
	}
	var err error
	if payload, err = base64.RawURLEncoding.DecodeString(p); err != nil {
		t.Fatal(err)
	}
	if mac, err = base64.RawURLEncoding.DecodeString(m); err != nil {
		t.Fatal(err)
	}
	return payload, mac
}

func joinToken(payload, mac []byte) grant.Token {
	enc := base64.RawURLEncoding
	return grant.Token("airlock-grant1." + enc.EncodeToString(payload) + "." + enc.EncodeToString(mac))
}

func TestTampered(t *testing.T) {
	i := grant.NewRandomIssuer()
	b := argvBinding()
	tok := mustIssue(t, i, b, time.Minute)
	payload, mac := splitToken(t, tok)

	cases := map[string]grant.Token{
		"token from another key": mustIssue(t, grant.NewRandomIssuer(), b, time.Minute),
	}
	for _, at := range []int{0, 1, len(payload) / 2, len(payload) - 1} {
		p := bytes.Clone(payload)
		p[at] ^= 0x01
		cases[fmt.Sprintf("payload byte %d", at)] = joinToken(p, mac)
	}
	for _, at := range []int{0, 17, 31} {
		m := bytes.Clone(mac)
		m[at] ^= 0x80
		cases[fmt.Sprintf("mac byte %d", at)] = joinToken(payload, m)
	}
	cases["payload truncated"] = joinToken(payload[:len(payload)-1], mac)
	cases["payload extended"] = joinToken(append(bytes.Clone(payload), 0), mac)

	for name, bad := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := i.Redeem(bad, b)
			if !errors.Is(err, grant.ErrTampered) {
				t.Fatalf("Redeem err = %v, want ErrTampered", err)
			}
			var m *grant.MismatchError
			if errors.As(err, &m) {
				t.Errorf("a tampered token reported a field mismatch: %v", m)
			}
		})
	}
	if _, err := i.Redeem(tok, b); err != nil {
		t.Errorf("the genuine token after tampered attempts: %v", err)
	}
}

func TestMalformed(t *testing.T) {
	i := grant.NewRandomIssuer()
	tok := string(mustIssue(t, i, argvBinding(), time.Minute))
	p, _, _ := strings.Cut(strings.TrimPrefix(tok, "airlock-grant1."), ".")
	for name, bad := range map[string]string{
		"empty":          "",
		"no prefix":      strings.TrimPrefix(tok, "airlock-grant1."),
		"other version":  strings.Replace(tok, "grant1.", "grant2.", 1),
		"no mac":         "airlock-grant1." + p,
		"short mac":      tok[:len(tok)-2],
		"not base64":     "airlock-grant1.!!!." + tok[len(tok)-43:],
		"padding":        tok + "=",
		"whitespace":     tok + "\n",
		"huge":           "airlock-grant1." + strings.Repeat("A", 2<<20) + ".x",
		"two dots in it": "airlock-grant1." + p + ".." + tok[len(tok)-43:],
	} {
		t.Run(name, func(t *testing.T) {
			_, err := i.Redeem(grant.Token(bad), argvBinding())
			if !errors.Is(err, grant.ErrMalformed) {
				t.Fatalf("Redeem err = %v, want ErrMalformed", err)
			}
		})
	}
}

func TestExpired(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	issuer, err := grant.NewIssuer(key, grant.NewMemoryLedger())
	if err != nil {
		t.Fatal(err)
	}
	// Another process with the same key: it has no monotonic reading for
	// the token and falls back to the wall clock.
	other, err := grant.NewIssuer(key, grant.NewMemoryLedger())
	if err != nil {
		t.Fatal(err)
	}
	for name, redeemer := range map[string]*grant.Issuer{"same issuer": issuer, "other process": other} {
		t.Run(name, func(t *testing.T) {
			tok := mustIssue(t, issuer, argvBinding(), time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			want := argvBinding()
			want.ExecutionID = "someone-else" // expiry is checked before fields
			if _, err := redeemer.Redeem(tok, want); !errors.Is(err, grant.ErrExpired) {
				t.Fatalf("Redeem err = %v, want ErrExpired", err)
			}
		})
	}
	t.Run("other process, not expired", func(t *testing.T) {
		tok := mustIssue(t, issuer, argvBinding(), time.Minute)
		if _, err := other.Redeem(tok, argvBinding()); err != nil {
			t.Fatalf("Redeem: %v", err)
		}
	})
}

func TestReplay(t *testing.T) {
	i := grant.NewRandomIssuer()
	tok := mustIssue(t, i, argvBinding(), time.Minute)
	if _, err := i.Redeem(tok, argvBinding()); err != nil {
		t.Fatalf("first Redeem: %v", err)
	}
	for range 3 {
		if _, err := i.Redeem(tok, argvBinding()); !errors.Is(err, grant.ErrReplayed) {
			t.Fatalf("Redeem again: err = %v, want ErrReplayed", err)
		}
	}
}

func TestConcurrentRedeem(t *testing.T) {
	i := grant.NewRandomIssuer()
	tok := mustIssue(t, i, argvBinding(), time.Minute)
	var ok, replayed atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range 100 {
		wg.Go(func() {
			<-start
			_, err := i.Redeem(tok, argvBinding())
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, grant.ErrReplayed):
				replayed.Add(1)
			default:
				t.Errorf("Redeem: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if ok.Load() != 1 || replayed.Load() != 99 {
		t.Fatalf("%d succeeded and %d were replays; want 1 and 99", ok.Load(), replayed.Load())
	}
}

// failingLedger is a mock for a failure we cannot cause for real in a
// memory ledger: the ledger's storage is unavailable.
type failingLedger struct{}

func (failingLedger) Spend([32]byte, time.Time) error { return errors.New("database is down") }

func TestLedgerFailureFailsClosed(t *testing.T) {
	i, err := grant.NewIssuer(make([]byte, 32), failingLedger{})
	if err != nil {
		t.Fatal(err)
	}
	tok := mustIssue(t, i, argvBinding(), time.Minute)
	if _, err := i.Redeem(tok, argvBinding()); err == nil || !strings.Contains(err.Error(), "database is down") {
		t.Fatalf("Redeem err = %v, want the ledger's error", err)
	}
}

func TestIssueRejects(t *testing.T) {
	i := grant.NewRandomIssuer()
	for name, tc := range map[string]struct {
		edit func(*grant.Binding)
		ttl  time.Duration
	}{
		"zero ttl":         {func(*grant.Binding) {}, 0},
		"negative ttl":     {func(*grant.Binding) {}, -time.Second},
		"no execution":     {func(b *grant.Binding) { b.ExecutionID = "" }, time.Minute},
		"no kind":          {func(b *grant.Binding) { b.Kind = "" }, time.Minute},
		"relative dir":     {func(b *grant.Binding) { b.Dir = "repo" }, time.Minute},
		"empty dir":        {func(b *grant.Binding) { b.Dir = "" }, time.Minute},
		"argv and command": {func(b *grant.Binding) { b.Command = "ls" }, time.Minute},
	} {
		t.Run(name, func(t *testing.T) {
			b := argvBinding()
			tc.edit(&b)
			if _, err := i.Issue(b, tc.ttl); !errors.Is(err, grant.ErrInvalidBinding) {
				t.Fatalf("Issue err = %v, want ErrInvalidBinding", err)
			}
		})
	}
}

func TestNewIssuer(t *testing.T) {
	if _, err := grant.NewIssuer(make([]byte, 31), grant.NewMemoryLedger()); err == nil {
		t.Error("NewIssuer accepted a 31-byte key")
	}
	if _, err := grant.NewIssuer(make([]byte, 32), nil); err == nil {
		t.Error("NewIssuer accepted a nil ledger")
	}
	key := bytes.Repeat([]byte{1}, 32)
	i, err := grant.NewIssuer(key, grant.NewMemoryLedger())
	if err != nil {
		t.Fatal(err)
	}
	tok := mustIssue(t, i, argvBinding(), time.Minute)
	key[0] = 2 // the Issuer must have its own copy
	if _, err := i.Redeem(tok, argvBinding()); err != nil {
		t.Fatalf("Redeem after the caller changed its key slice: %v", err)
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	tok := mustIssue(t, grant.NewRandomIssuer(), argvBinding(), time.Minute)
	text := string(tok)
	type wrapper struct {
		Tok  grant.Token
		Ptr  *grant.Token
		Toks []grant.Token
	}
	w := wrapper{Tok: tok, Ptr: &tok, Toks: []grant.Token{tok}}

	var outputs []string
	outputs = append(outputs,
		fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, tok),
		fmt.Sprintf("%q %x %X %d %10s %v", tok, tok, tok, tok, tok, []grant.Token{tok}),
		fmt.Sprintf("%v %+v %#v", w, w, w),
		fmt.Sprint(tok), fmt.Sprintln(tok), tok.String(), tok.GoString(),
	)
	for _, v := range []any{tok, w, map[string]any{"t": tok}} {
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		outputs = append(outputs, string(j))
	}
	var logBuf bytes.Buffer
	slog.New(slog.NewJSONHandler(&logBuf, nil)).Info("issued", "token", tok)
	slog.New(slog.NewTextHandler(&logBuf, nil)).Info("issued", "token", tok)
	outputs = append(outputs, logBuf.String())

	for _, out := range outputs {
		if strings.Contains(out, text) || strings.Contains(out, "airlock-grant1") {
			t.Errorf("token text leaked into %q", out)
		}
		if !strings.Contains(out, grant.Redacted) {
			t.Errorf("output %q does not say the token was redacted", out)
		}
	}
}

func TestRedact(t *testing.T) {
	tok := string(mustIssue(t, grant.NewRandomIssuer(), argvBinding(), time.Minute))
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{tok, grant.Redacted},
		{"token=" + tok + "&x=1", "token=" + grant.Redacted + "&x=1"},
		{`{"a":"` + tok + `","b":"` + tok + `"}`, `{"a":"` + grant.Redacted + `","b":"` + grant.Redacted + `"}`},
		{"cut " + tok[:30], "cut " + grant.Redacted},
		{"airlock-grant1.", grant.Redacted},
	} {
		if got := grant.Redact(tc.in); got != tc.want {
			t.Errorf("Redact(%.40q...) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
