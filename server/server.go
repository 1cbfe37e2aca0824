// Package server is the approval daemon's HTTP API (docs/API.md): it
// decides tool calls with the gate, keeps the calls a person must answer
// as approvals in a store.Store, streams their changes as Server-Sent
// Events, serves the audit log and runs code in named sandboxes. Every
// state lives in the Store, so several replicas on one PostgreSQL database
// serve the same approvals; what a replica keeps in memory (a wake-up
// channel, a policy cache) only makes it faster.
package server

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/provider"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/web"
	"github.com/airlockhq/airlock/tool"
)

// Defaults of Config's zero fields.
const (
	DefaultApprovalTTL  = 5 * time.Minute
	DefaultPollInterval = 200 * time.Millisecond
	// MaxWait bounds every wait a client asks for.
	MaxWait = 10 * time.Minute
	// MaxBody bounds request bodies (a Write call's content comes in one).
	MaxBody = 4 << 20
	// Default caps on pending approvals (Config.MaxPendingPer...).
	DefaultMaxPendingPerAgent     = 20
	DefaultMaxPendingPerWorkspace = 50
	// heartbeat is how often an idle event stream gets a comment line.
	heartbeat = 15 * time.Second
)

// Policy is what decides the calls of one workspace: the profile's access
// (nil: every requirement gated) and the rules of every layer.
type Policy struct {
	Profile gate.ProfileAccess
	Rules   *rules.Set
}

// Config configures a Server.
type Config struct {
	// Store keeps every state; required.
	Store store.Store
	// Policy loads a workspace's profile and rules (cmd/airlock loads them
	// as 'airlock hook claude-code' does); required.
	Policy func(workspace string) (Policy, error)
	// Catalog is the named sandboxes /v1/exec runs in; nil answers 503.
	Catalog *provider.Catalog
	// Preparers derive requirements; nil means tool.Builtin().
	Preparers tool.Preparers
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// ApprovalTTL is how long an approval waits for an answer;
	// 0 means DefaultApprovalTTL.
	ApprovalTTL time.Duration
	// PollInterval is how often waiters and event streams look at the
	// Store for what another replica changed; 0 means DefaultPollInterval.
	PollInterval time.Duration
	// Log receives what goes wrong outside a request; nil discards.
	Log *slog.Logger
	// MaxPendingPerAgent and MaxPendingPerWorkspace cap the approvals
	// pending at once for one agent and in one workspace: a call that
	// would open one more is refused with 429 (0: DefaultMaxPendingPerAgent,
	// DefaultMaxPendingPerWorkspace).
	MaxPendingPerAgent     int
	MaxPendingPerWorkspace int
	// LoopbackHosts refuses requests whose Host header is not localhost
	// or a loopback address: a daemon that listens on loopback only is
	// then out of reach of a web page that rebinds its own name to
	// 127.0.0.1 (DNS rebinding) and so passes for same-origin.
	LoopbackHosts bool
}

// Server is the daemon's http.Handler. Close stops its expiry loop.
type Server struct {
	cfg    Config
	st     store.Store
	issuer *grant.Issuer
	mux    *http.ServeMux
	log    *slog.Logger

	// changed is closed and replaced whenever this process changes an
	// approval, waking its waiters before their next poll.
	mu      sync.Mutex
	changed chan struct{}
	// answerMu serialises this process's answers, so the rules file gets
	// the rules of the answer that won and no other.
	answerMu sync.Mutex
	// waiting counts the requests waiting for an answer right now.
	waiting atomic.Int64

	policies policyCache

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// New returns a Server on cfg and starts its expiry loop.
func New(cfg Config) (*Server, error) {
	if cfg.Store == nil || cfg.Policy == nil {
		return nil, errors.New("server: Config needs a Store and a Policy")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ApprovalTTL <= 0 {
		cfg.ApprovalTTL = DefaultApprovalTTL
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.MaxPendingPerAgent <= 0 {
		cfg.MaxPendingPerAgent = DefaultMaxPendingPerAgent
	}
	if cfg.MaxPendingPerWorkspace <= 0 {
		cfg.MaxPendingPerWorkspace = DefaultMaxPendingPerWorkspace
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	key, err := cfg.Store.GrantKey(context.Background(), func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("server: the grant key: %w", err)
	}
	issuer, err := grant.NewIssuer(key, ledger{cfg.Store})
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	s := &Server{cfg: cfg, st: cfg.Store, issuer: issuer, log: cfg.Log,
		changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	s.routes()
	go s.expiryLoop()
	return s, nil
}

// Close stops the expiry loop. It does not close the Store.
func (s *Server) Close() error {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	return nil
}

// Stopping is closed when Close is called; long requests (event streams,
// waits) end when it is, so an http.Server can shut down.
func (s *Server) Stopping() <-chan struct{} { return s.stop }

func (s *Server) now() time.Time { return s.cfg.Now() }

// notify wakes every waiter of this process.
func (s *Server) notify() {
	s.mu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// changes returns the channel the next notify closes.
func (s *Server) changes() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.changed
}

// expiryLoop turns approvals past their expiry into denials.
func (s *Server) expiryLoop() {
	defer close(s.done)
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.expire(context.Background())
		}
	}
}

// expire expires what is due now and wakes the waiters if anything did.
func (s *Server) expire(ctx context.Context) {
	exp, err := s.st.ExpireApprovals(ctx, s.now())
	if err != nil {
		s.log.Error("expiring approvals", "err", err)
		return
	}
	if len(exp) > 0 {
		s.notify()
	}
}

// ledger is the Store as grant.Ledger: a grant spent on one replica is
// refused on every other.
type ledger struct{ st store.Store }

func (l ledger) Spend(mac [32]byte, expires time.Time) error {
	return l.st.Spend(context.Background(), mac, expires)
}

// Issuer is the daemon's grant issuer (key and ledger in the Store), for
// redeeming the grants /v1/decide hands out.
func (s *Server) Issuer() *grant.Issuer { return s.issuer }

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("/healthz", s.only("GET", s.healthz))
	s.mux.Handle("/v1/decide", s.authed(s.only("POST", s.decide)))
	s.mux.Handle("/v1/approvals", s.authed(s.only("GET", s.listApprovals)))
	s.mux.Handle("/v1/approvals/{id}", s.authed(s.byMethod(map[string]http.HandlerFunc{
		"GET": s.getApproval, "POST": s.answerApproval})))
	s.mux.Handle("/v1/events", s.authed(s.only("GET", s.events)))
	s.mux.Handle("/v1/audit", s.authed(s.only("GET", s.audit)))
	s.mux.Handle("/v1/exec", s.authed(s.only("POST", s.exec)))
	s.mux.Handle("/v1/whoami", s.authed(s.only("GET", s.whoami)))
	s.mux.Handle("/v1/tokens", s.authed(s.only("GET", s.listTokens)))
	s.mux.Handle("/v1/tokens/{id}/revoke", s.authed(s.only("POST", s.revokeToken)))
	s.mux.Handle("/v1/", s.authed(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path+"; see docs/API.md")
	})))
	s.mux.Handle("/", s.only("GET", web.Handler().ServeHTTP))
}

// ServeHTTP refuses cross-origin state changes first, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Cache-Control", "no-store")
	if s.cfg.LoopbackHosts && !loopbackHost(r.Host) {
		writeError(w, http.StatusForbidden, "cross_origin", "the Host header names neither localhost nor a loopback address; this daemon answers only to its loopback address")
		return
	}
	if r.Method != "GET" && r.Method != "HEAD" && crossOrigin(r) {
		writeError(w, http.StatusForbidden, "cross_origin", "a state change from another origin is refused; send it from the daemon's own page or without an Origin header")
		return
	}
	s.mux.ServeHTTP(w, r)
}

// crossOrigin reports whether r carries an Origin that is not the
// daemon's own: a page on another site must not change state with a token
// it found (or a browser's ambient credentials).
func crossOrigin(r *http.Request) bool {
	origins, ok := r.Header["Origin"]
	if !ok {
		return false
	}
	if len(origins) != 1 {
		return true
	}
	o := origins[0]
	return o != "http://"+r.Host && o != "https://"+r.Host
}

// loopbackHost reports whether host (with or without a port) is
// localhost or a loopback IP literal.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (s *Server) only(method string, h http.HandlerFunc) http.HandlerFunc {
	return s.byMethod(map[string]http.HandlerFunc{method: h})
}

func (s *Server) byMethod(hs map[string]http.HandlerFunc) http.HandlerFunc {
	var allow []string
	for m := range hs {
		allow = append(allow, m)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		m := r.Method
		if m == "HEAD" {
			m = "GET"
		}
		h, ok := hs[m]
		if !ok {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed here; use "+strings.Join(allow, " or "))
			return
		}
		h(w, r)
	}
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
}
