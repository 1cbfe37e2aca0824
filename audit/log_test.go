package audit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
)

func openLog(t *testing.T, path string) *audit.Log {
	t.Helper()
	l, err := audit.Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// readFile reads every event in path; it fails the test on any error but a
// *TornLineError, which it returns.
func readFile(t *testing.T, path string) ([]audit.Event, *audit.TornLineError) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var events []audit.Event
	err = audit.Read(f, func(e audit.Event) error {
		events = append(events, e)
		return nil
	})
	var torn *audit.TornLineError
	if err != nil && !errors.As(err, &torn) {
		t.Fatalf("Read: %v", err)
	}
	return events, torn
}

func TestAppendAndReadBack(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "airlock", "audit.jsonl")
	l := openLog(t, path)

	when := time.Date(2025, 3, 4, 5, 6, 7, 890, time.FixedZone("X", 3600))
	want := []audit.Event{
		{
			Time: when, Type: audit.TypeDecision, ExecutionID: "e1", Tool: "Bash",
			Decision: "deny", Reason: "matches a deny rule", Rule: `Bash(git push --force *)`, Layer: "project",
			Requirement: &audit.Requirement{Kind: "command.execute", Target: "git push --force origin main"},
			Profile:     strings.Repeat("0f", 32),
		},
		{Time: when, Type: audit.TypeSpawn, ExecutionID: "e1", Profile: "ab",
			Detail: map[string]any{"pid": json.Number("4242"), "guarantees": []any{"landlock", "seccomp"}, "big": json.Number("9007199254740993")}},
		{Time: when, Type: audit.TypeEnforcement, ExecutionID: "e1", Layer: "egress",
			Requirement: &audit.Requirement{Kind: "net.connect", Target: "10.0.0.1:22"}, Reason: "private range\nsecond line"},
		{Time: when, Type: audit.TypeExit, ExecutionID: "e1", Detail: map[string]any{"code": json.Number("0")}},
	}
	for _, e := range want {
		if err := l.Append(e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	got, torn := readFile(t, path)
	if torn != nil {
		t.Fatalf("Read reported %v", torn)
	}
	if len(got) != len(want) {
		t.Fatalf("read %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Time.Equal(want[i].Time) || got[i].Time.Location() != time.UTC {
			t.Errorf("event %d: Time = %v, want %v in UTC", i, got[i].Time, want[i].Time)
		}
		got[i].Time, want[i].Time = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("event %d:\n got %#v\nwant %#v", i, got[i], want[i])
		}
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != len(want) {
		t.Errorf("file has %d newlines, want one per event (%d)", n, len(want))
	}
	for p, mode := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != mode {
			t.Errorf("%s has mode %v, want %v", p, fi.Mode(), mode)
		}
	}
}

func TestAppendSetsTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	before := time.Now()
	if err := l.Append(audit.Event{Type: audit.TypeExit}); err != nil {
		t.Fatal(err)
	}
	got, _ := readFile(t, path)
	if len(got) != 1 || got[0].Time.Before(before.Add(-time.Second)) || got[0].Time.After(time.Now()) {
		t.Fatalf("events = %+v, want one stamped about now", got)
	}
}

func TestAppendNeverWritesGrantTokens(t *testing.T) {
	issuer := grant.NewRandomIssuer()
	tok, err := issuer.Issue(grant.Binding{ExecutionID: "e1", Argv: []string{"ls"}, Dir: "/", Kind: "command.execute", Target: "ls"}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	text := string(tok)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	events := []audit.Event{
		{Type: audit.TypeDecision, Detail: map[string]any{"grant": tok}},
		{Type: audit.TypeDecision, Detail: map[string]any{"grants": []grant.Token{tok, tok}}},
		{Type: audit.TypeDecision, Detail: map[string]any{"raw": text}},
		{Type: audit.TypeDecision, Detail: map[string]any{"nested": map[string]any{"list": []any{"x", text}}}},
		{Type: audit.TypeDecision, Detail: map[string]any{"in a struct": struct{ Header string }{"Bearer " + text}}},
		{Type: audit.TypeDecision, Reason: "approved with " + text},
		{Type: audit.TypeSpawn, Requirement: &audit.Requirement{Kind: "k", Target: text}},
	}
	for _, e := range events {
		if err := l.Append(e); err != nil {
			t.Fatalf("Append: %v", err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), text) || strings.Contains(string(data), "airlock-grant1") {
		t.Fatalf("the log contains grant token text:\n%s", data)
	}
	got, torn := readFile(t, path)
	if torn != nil || len(got) != len(events) {
		t.Fatalf("read %d events (torn: %v), want %d", len(got), torn, len(events))
	}
	if got[0].Detail["grant"] != grant.Redacted || got[5].Reason != "approved with "+grant.Redacted {
		t.Errorf("redacted values read back as %v and %q", got[0].Detail["grant"], got[5].Reason)
	}
	// The token is still good: the log only saw it, never spent it.
	if _, err := issuer.Redeem(tok, grant.Binding{ExecutionID: "e1", Argv: []string{"ls"}, Dir: "/", Kind: "command.execute", Target: "ls"}); err != nil {
		t.Errorf("Redeem after logging: %v", err)
	}
}

func TestAppendRefuses(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	if err := l.Append(audit.Event{Type: "x", Detail: map[string]any{"blob": strings.Repeat("a", audit.MaxLineSize)}}); !errors.Is(err, audit.ErrTooLarge) {
		t.Errorf("oversized event: err = %v, want ErrTooLarge", err)
	}
	if err := l.Append(audit.Event{Type: "x", Detail: map[string]any{"ch": make(chan int)}}); err == nil {
		t.Error("an event that cannot be encoded was accepted")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(audit.Event{Type: "x"}); !errors.Is(err, audit.ErrClosed) {
		t.Errorf("Append after Close: err = %v, want ErrClosed", err)
	}
	if data, _ := os.ReadFile(path); len(data) != 0 {
		t.Errorf("refused events left %q in the file", data)
	}
}

func TestOpenFails(t *testing.T) {
	dir := t.TempDir()
	if _, err := audit.Open(""); err == nil || !strings.Contains(err.Error(), "AIRLOCK_AUDIT_LOG") {
		t.Errorf(`Open(""): err = %v, want a hint to set AIRLOCK_AUDIT_LOG`, err)
	}
	if _, err := audit.Open(dir); err == nil {
		t.Error("Open of a directory succeeded")
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := audit.Open(filepath.Join(file, "audit.jsonl")); err == nil {
		t.Error("Open under a regular file succeeded")
	}
}

func TestDefaultPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, tc := range []struct{ log, xdg, want string }{
		{"/var/log/a.jsonl", "/state", "/var/log/a.jsonl"},
		{"", "/state", "/state/airlock/audit.jsonl"},
		{"", "relative/state", filepath.Join(home, ".local/state/airlock/audit.jsonl")},
		{"", "", filepath.Join(home, ".local/state/airlock/audit.jsonl")},
	} {
		t.Setenv("AIRLOCK_AUDIT_LOG", tc.log)
		t.Setenv("XDG_STATE_HOME", tc.xdg)
		if got := audit.DefaultPath(); got != tc.want {
			t.Errorf("AIRLOCK_AUDIT_LOG=%q XDG_STATE_HOME=%q: DefaultPath() = %q, want %q", tc.log, tc.xdg, got, tc.want)
		}
	}
}

// detailFor makes some events longer than PIPE_BUF (4096 bytes), the size
// up to which the kernel keeps writes to a pipe whole; on a file only the
// lock keeps them from interleaving.
func detailFor(writer string, seq int) map[string]any {
	d := map[string]any{"writer": writer, "seq": seq}
	if seq%3 == 0 {
		d["pad"] = strings.Repeat(fmt.Sprintf("%s-%d|", writer, seq), 2000)
	}
	return d
}

// checkExact verifies that path holds exactly one event for each
// (writer, seq) in want, and nothing else.
func checkExact(t *testing.T, path string, want map[string]int) {
	t.Helper()
	events, torn := readFile(t, path)
	if torn != nil {
		t.Fatalf("Read reported %v", torn)
	}
	seen := map[string]bool{}
	total := 0
	for _, e := range events {
		writer, _ := e.Detail["writer"].(string)
		key := fmt.Sprintf("%s/%v", writer, e.Detail["seq"])
		if seen[key] {
			t.Errorf("event %s appears twice", key)
		}
		seen[key] = true
		if pad, ok := e.Detail["pad"].(string); ok && pad != strings.Repeat(fmt.Sprintf("%s-%v|", writer, e.Detail["seq"]), 2000) {
			t.Errorf("event %s has a damaged pad", key)
		}
		total++
	}
	wantTotal := 0
	for writer, n := range want {
		wantTotal += n
		for seq := range n {
			if !seen[fmt.Sprintf("%s/%d", writer, seq)] {
				t.Errorf("event %s/%d is missing", writer, seq)
			}
		}
	}
	if total != wantTotal {
		t.Errorf("read %d events, want %d", total, wantTotal)
	}
}

func TestConcurrentAppends(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	const writers, each = 16, 40
	var wg sync.WaitGroup
	want := map[string]int{}
	for w := range writers {
		name := fmt.Sprintf("g%d", w)
		want[name] = each
		wg.Go(func() {
			for seq := range each {
				if err := l.Append(audit.Event{Type: audit.TypeDecision, Detail: detailFor(name, seq)}); err != nil {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	checkExact(t, path, want)
}
