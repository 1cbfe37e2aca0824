package daemontest_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/server/daemontest"
)

// The airlock binary, built once for the whole test binary and only when a
// test gets that far (a run without PostgreSQL skips before).
var (
	buildOnce sync.Once
	buildDir  string
	builtBin  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "airlock-daemontest-")
		if buildErr == nil {
			builtBin, buildErr = daemontest.Build(buildDir)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return builtBin
}

// env is one test's daemons' world: a binary, an environment whose home
// and state are the test's, a workspace allowing "echo hello", and a
// token in the database db.
type env struct {
	bin, db, ws, token, person string
	env                        []string
}

func newEnv(t *testing.T, db string) *env {
	t.Helper()
	bin := binary(t)
	dir := t.TempDir()
	e := &env{bin: bin, db: db, env: daemontest.Env(dir)}
	var err error
	if e.ws, err = daemontest.Workspace(dir, "echo hello"); err != nil {
		t.Fatal(err)
	}
	if e.token, err = daemontest.CreateToken(bin, db, e.env, "--role", "agent", "--agent", "test", "--workspace", e.ws); err != nil {
		t.Fatal(err)
	}
	if e.person, err = daemontest.CreateToken(bin, db, e.env, "--role", "person"); err != nil {
		t.Fatal(err)
	}

	return e
}

// sqliteDB is a fresh SQLite database for t.
func sqliteDB(t *testing.T) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "airlock.db")
}

// start starts a daemon on e's database; it is stopped when t ends (and
// its log shown if t failed).
func (e *env) start(t *testing.T, args ...string) (*daemontest.Daemon, *daemontest.Client) {
	t.Helper()
	d, err := daemontest.Start(t.Context(), daemontest.Options{Bin: e.bin, DB: e.db, Env: e.env, Args: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.Kill()
		if t.Failed() {
			t.Logf("daemon %s log:\n%s", d.URL, d.Logs())
		}
	})
	return d, &daemontest.Client{URL: d.URL, Token: e.token, Person: e.person}
}

// bound is how long a test waits for something that must happen before
// it gives up: a guard against hanging, not a timing assertion.
const bound = 90 * time.Second

// waitEvent reads evs until an event named name for approval id ("" for
// any) arrives.
func waitEvent(t *testing.T, evs <-chan daemontest.Event, name, id string) daemontest.Event {
	t.Helper()
	timeout := time.After(bound)
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("the event stream ended before a %s event", name)
			}
			if ev.Name == name && (id == "" || ev.Approval.ID == id) {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %s event within %v", name, bound)
		}
	}
}

// status is the HTTP status of err (0 when it is not an API error).
func status(err error) int {
	var e *daemontest.Error
	if errors.As(err, &e) {
		return e.Status
	}
	return 0
}

func ctxBound(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	t.Cleanup(cancel)
	return ctx
}
