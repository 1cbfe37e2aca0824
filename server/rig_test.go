package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/store/sqlite"
)

// clock is a settable clock for expiry tests.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// rig is a daemon over real HTTP on a real SQLite file, with a workspace
// and a token.
type rig struct {
	t     *testing.T
	st    *sqlite.Store
	srv   *Server
	ts    *httptest.Server
	token string // a person's: it answers, lists and reads the audit
	ws    string
	clock *clock

	agentMu sync.Mutex
	agents  map[string]string // agent name → its token, scoped to ws
}

// agentToken returns the token of agent name (made on first use), which
// may act on the rig's workspace.
func (r *rig) agentToken(name string) string {
	r.t.Helper()
	r.agentMu.Lock()
	defer r.agentMu.Unlock()
	if tok, ok := r.agents[name]; ok {
		return tok
	}
	tok, _, err := CreateToken(context.Background(), r.st, TokenSpec{Name: name, Role: store.RoleAgent, Agent: name, Workspaces: []string{r.ws}}, r.clock.Now())
	if err != nil {
		r.t.Fatal(err)
	}
	r.agents[name] = tok
	return tok
}

// tokenFor is the token a request of the rig goes with: an agent's for
// deciding and running code (the agent the body names, else "a"), the
// person's for everything else.
func (r *rig) tokenFor(method, path, body string) string {
	if method != "POST" || path != "/v1/decide" && path != "/v1/exec" {
		return r.token
	}
	var b struct {
		Agent string `json:"agent"`
	}
	if json.Unmarshal([]byte(body), &b) != nil || b.Agent == "" {
		b.Agent = "a"
	}
	return r.agentToken(b.Agent)
}

type rigOpt func(*Config)

func newRig(t *testing.T, opts ...rigOpt) *rig {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	home := filepath.Join(dir, "home")
	for _, d := range []string{ws, home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "airlock.db"))
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Now().UTC()}
	cfg := Config{Store: st, Now: c.Now, PollInterval: 20 * time.Millisecond,
		Policy: func(ws string) (Policy, error) {
			set, err := rules.Load(rules.Sources{Workspace: ws, Home: home, Managed: "-", User: "-"})
			return Policy{Rules: set}, err
		}}
	for _, o := range opts {
		o(&cfg)
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	tok, _, err := CreateToken(context.Background(), st, TokenSpec{Name: "person", Role: store.RolePerson}, c.Now())
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, st: st, srv: srv, ts: ts, token: tok, ws: ws, clock: c, agents: map[string]string{}}
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		st.Close()
	})
	return r
}

func withCatalog(cat *provider.Catalog) rigOpt {
	return func(c *Config) { c.Catalog = cat }
}

// do sends a request with the token tokenFor picks and returns the status
// and body.
func (r *rig) do(method, path, body string, hdr ...string) (int, []byte) {
	r.t.Helper()
	return r.doAs(r.tokenFor(method, path, body), method, path, body, hdr...)
}

// doAs sends a request with token tok.
func (r *rig) doAs(tok, method, path, body string, hdr ...string) (int, []byte) {
	r.t.Helper()
	req, err := http.NewRequest(method, r.ts.URL+path, strings.NewReader(body))
	if err != nil {
		r.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// must sends a request that must get want, decoding the body into out.
func (r *rig) must(want int, method, path, body string, out any) {
	r.t.Helper()
	code, data := r.do(method, path, body)
	if code != want {
		r.t.Fatalf("%s %s %s: %d %s, want %d", method, path, body, code, data, want)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			r.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
}

// wantError checks an error response's status and code.
func (r *rig) wantError(status int, code, method, path, body string, hdr ...string) {
	r.t.Helper()
	got, data := r.do(method, path, body, hdr...)
	var e apiError
	if err := json.Unmarshal(data, &e); err != nil || got != status || e.Code != code || e.Error == "" {
		r.t.Fatalf("%s %s %.80s: %d %s, want %d %s", method, path, body, got, data, status, code)
	}
}

func (r *rig) bash(cmd string, extra ...string) string {
	in, _ := json.Marshal(map[string]any{"command": cmd})
	b := map[string]any{"tool": "Bash", "input": json.RawMessage(in), "workspace": r.ws, "agent": "a", "session": "s"}
	for i := 0; i+1 < len(extra); i += 2 {
		b[extra[i]] = extra[i+1]
	}
	out, _ := json.Marshal(b)
	return string(out)
}

func (r *rig) decide(body string) decideResponse {
	r.t.Helper()
	var d decideResponse
	r.must(200, "POST", "/v1/decide", body, &d)
	return d
}

// snapshot is everything a refused request must leave as it was.
type snapshot struct {
	Pending []store.Approval
	Events  []store.Event
	Audit   []audit.Event
	Rules   []store.Rule
	File    string
}

func (r *rig) snapshot() snapshot {
	r.t.Helper()
	ctx := context.Background()
	var s snapshot
	var err error
	if s.Pending, err = r.st.PendingApprovals(ctx, r.clock.Now()); err != nil {
		r.t.Fatal(err)
	}
	if s.Events, err = r.st.Events(ctx, 0, 0); err != nil {
		r.t.Fatal(err)
	}
	if s.Audit, err = r.st.Audit(ctx, store.AuditFilter{}); err != nil {
		r.t.Fatal(err)
	}
	if s.Rules, err = r.st.Rules(ctx, r.ws, r.clock.Now()); err != nil {
		r.t.Fatal(err)
	}
	data, _ := os.ReadFile(rules.LocalPath(r.ws))
	s.File = string(data)
	return s
}

func (r *rig) unchanged(before snapshot, what string) {
	r.t.Helper()
	a, _ := json.Marshal(before)
	b, _ := json.Marshal(r.snapshot())
	if !bytes.Equal(a, b) {
		r.t.Fatalf("%s changed the store:\nbefore %s\nafter  %s", what, a, b)
	}
}

// sse reads one event stream.
type sse struct {
	resp *http.Response
	rd   *bufio.Reader
}

type sseEvent struct {
	ID, Event string
	Data      Approval
}

func (r *rig) events(lastID string) *sse {
	r.t.Helper()
	req, _ := http.NewRequest("GET", r.ts.URL+"/v1/events", nil)
	req.Header.Set("Authorization", "Bearer "+r.token)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		r.t.Fatalf("events: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	s := &sse{resp: resp, rd: bufio.NewReader(resp.Body)}
	r.t.Cleanup(func() { resp.Body.Close() })
	return s
}

// next returns the next event, skipping comments.
func (s *sse) next(t *testing.T) sseEvent {
	t.Helper()
	var e sseEvent
	for {
		line, err := s.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("event stream: %v", err)
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if e.Event != "" {
				return e
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			e.ID = line[4:]
		case strings.HasPrefix(line, "event: "):
			e.Event = line[7:]
		case strings.HasPrefix(line, "data: "):
			if err := json.Unmarshal([]byte(line[6:]), &e.Data); err != nil {
				t.Fatalf("event data: %v", err)
			}
		}
	}
}
