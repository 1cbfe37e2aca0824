package audit_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
)

const (
	ev1 = `{"time":"2025-01-01T00:00:00Z","type":"decision","execution_id":"1"}`
	ev2 = `{"time":"2025-01-01T00:00:01Z","type":"spawn","execution_id":"2"}`
)

func TestReadTolerance(t *testing.T) {
	long := `{"time":"2025-01-01T00:00:00Z","type":"x","reason":"` + strings.Repeat("a", audit.MaxLineSize) + `"}`
	for _, tc := range []struct {
		name    string
		in      string
		ids     []string
		skipped []int // nil: Read returns nil
	}{
		{"empty", "", nil, nil},
		{"two", ev1 + "\n" + ev2 + "\n", []string{"1", "2"}, nil},
		{"torn last line", ev1 + "\n" + ev2[:20], []string{"1"}, nil},
		{"whole last line without newline", ev1 + "\n" + ev2, []string{"1", "2"}, nil},
		{"torn line ended by a later append", ev1[:30] + "\n" + ev2 + "\n", []string{"2"}, []int{1}},
		{"garbage in the middle", ev1 + "\nnot json\n" + ev2 + "\n", []string{"1", "2"}, []int{2}},
		{"two objects on a line", ev1 + ev2 + "\n" + ev2 + "\n", []string{"2"}, []int{1}},
		{"not an object", "null\n[1]\n\"s\"\n" + ev1 + "\n", []string{"1"}, []int{1, 2, 3}},
		{"blank lines", "\n" + ev1 + "\n\n\n" + ev2 + "\n", []string{"1", "2"}, nil},
		{"crlf", ev1 + "\r\n" + ev2 + "\r\n", []string{"1", "2"}, nil},
		{"bad time", `{"time":"yesterday","type":"x"}` + "\n" + ev1 + "\n", []string{"1"}, []int{1}},
		{"line over MaxLineSize", ev1 + "\n" + long + "\n" + ev2 + "\n", []string{"1", "2"}, []int{2}},
		{"unterminated line over MaxLineSize", ev1 + "\n" + long, []string{"1"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ids []string
			err := audit.Read(strings.NewReader(tc.in), func(e audit.Event) error {
				ids = append(ids, e.ExecutionID)
				return nil
			})
			if !slices.Equal(ids, tc.ids) {
				t.Errorf("events %q, want %q", ids, tc.ids)
			}
			var torn *audit.TornLineError
			switch {
			case tc.skipped == nil && err != nil:
				t.Errorf("Read: %v, want nil", err)
			case tc.skipped != nil && !errors.As(err, &torn):
				t.Errorf("Read: %v, want a *TornLineError", err)
			case tc.skipped != nil && !slices.Equal(torn.Lines, tc.skipped):
				t.Errorf("skipped lines %v, want %v", torn.Lines, tc.skipped)
			}
		})
	}
}

func TestReadStopsOnCallbackError(t *testing.T) {
	stop := errors.New("stop")
	n := 0
	err := audit.Read(strings.NewReader(ev1+"\n"+ev2+"\n"), func(audit.Event) error {
		n++
		return stop
	})
	if err != stop || n != 1 {
		t.Fatalf("Read = %v after %d events, want the callback's error after 1", err, n)
	}
}

// collector gathers events from Follow's goroutine.
type collector struct {
	mu     sync.Mutex
	ids    []string
	notify chan struct{}
}

func newCollector() *collector { return &collector{notify: make(chan struct{}, 1000)} }

func (c *collector) add(e audit.Event) error {
	c.mu.Lock()
	c.ids = append(c.ids, e.ExecutionID)
	c.mu.Unlock()
	c.notify <- struct{}{}
	return nil
}

// waitFor waits until the collector has seen want, in order.
func (c *collector) waitFor(t *testing.T, want ...string) {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		c.mu.Lock()
		got := slices.Clone(c.ids)
		c.mu.Unlock()
		if slices.Equal(got, want) {
			return
		}
		if len(got) > len(want) {
			t.Fatalf("Follow delivered %q, want %q", got, want)
		}
		select {
		case <-c.notify:
		case <-deadline:
			t.Fatalf("Follow delivered %q, want %q", got, want)
		}
	}
}

func startFollow(t *testing.T, path string) (*collector, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c := newCollector()
	done := make(chan error, 1)
	go func() { done <- audit.Follow(ctx, path, c.add) }()
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(5 * time.Second):
			t.Fatal("Follow did not return after cancel")
			return nil
		}
	}
	t.Cleanup(func() { cancel() })
	return c, stop
}

func TestFollowSeesExistingThenNewEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l := openLog(t, path)
	for _, id := range []string{"a", "b"} {
		if err := l.Append(audit.Event{Type: audit.TypeDecision, ExecutionID: id}); err != nil {
			t.Fatal(err)
		}
	}
	c, stop := startFollow(t, path)
	c.waitFor(t, "a", "b")

	if err := l.Append(audit.Event{Type: audit.TypeSpawn, ExecutionID: "c"}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "a", "b", "c")

	// A line arriving in pieces is delivered once, when it is whole.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line := `{"time":"2025-01-01T00:00:00Z","type":"exit","execution_id":"d"}` + "\n"
	f.WriteString(line[:25])
	time.Sleep(250 * time.Millisecond)
	f.WriteString(line[25:])
	c.waitFor(t, "a", "b", "c", "d")

	if err := stop(); !errors.Is(err, context.Canceled) {
		t.Errorf("Follow returned %v, want context.Canceled", err)
	}
}

func TestFollowWaitsForTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "later", "audit.jsonl")
	c, stop := startFollow(t, path)
	time.Sleep(150 * time.Millisecond)
	l := openLog(t, path)
	if err := l.Append(audit.Event{Type: audit.TypeDecision, ExecutionID: "first"}); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "first")
	stop()
}

func TestFollowStartsOverOnReplacedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	if err := os.WriteFile(path, []byte(ev1+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, stop := startFollow(t, path)
	c.waitFor(t, "1")
	next := filepath.Join(dir, "next.jsonl")
	if err := os.WriteFile(next, []byte(ev2+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, path); err != nil {
		t.Fatal(err)
	}
	c.waitFor(t, "1", "2")
	stop()
}

func TestFollowReturnsCallbackError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, []byte(ev1+"\n"+ev2+"\n"), 0o600)
	stop := errors.New("stop")
	err := audit.Follow(context.Background(), path, func(audit.Event) error { return stop })
	if err != stop {
		t.Fatalf("Follow = %v, want the callback's error", err)
	}
}
