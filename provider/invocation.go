package provider

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"path"
	"slices"
	"sort"
	"sync"
	"time"
)

// Catalog is the set of named sandboxes and the agents' assignments.
// Being in the catalog grants nothing: an Invocation reaches a sandbox
// only through its agent's assignment.
type Catalog struct {
	sandboxes map[string]*entry
	agents    map[string][]string

	mu     sync.Mutex
	closed bool
}

// entry is one sandbox: its configuration, its driver, the provider
// opened on first use and the slots its executions queue for.
type entry struct {
	cfg    Config
	driver Driver
	slots  chan struct{}

	mu   sync.Mutex
	prov Provider
}

func (e *entry) provider() (Provider, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.prov == nil {
		p, err := e.driver.Open(e.cfg)
		if err != nil {
			return nil, Sanitize(e.cfg.Name, "open", err, "the provider could not start; run 'airlock exec --list' and check the provider's daemon")
		}
		e.prov = p
	}
	return e.prov, nil
}

// Close closes every provider the catalog opened; afterwards every
// handle is unavailable.
func (c *Catalog) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	var errs []error
	for _, e := range c.sandboxes {
		e.mu.Lock()
		if e.prov != nil {
			errs = append(errs, e.prov.Close())
			e.prov = nil
		}
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Sandboxes lists the configuration of every sandbox, by name.
func (c *Catalog) Sandboxes() []Config {
	var out []Config
	for _, n := range sortedKeys(c.sandboxes) {
		out = append(out, c.sandboxes[n].cfg)
	}
	return out
}

// Invocation is one agent invocation: the only source of handles, and
// their lifetime. End or Revoke it and every handle it gave becomes
// unavailable, running executions are cancelled and queued ones never
// start.
type Invocation struct {
	cat      *Catalog
	id       Identity
	operator bool
	ctx      context.Context
	cancel   context.CancelCauseFunc
}

var (
	errEnded   = errors.New("invocation ended")
	errRevoked = errors.New("invocation revoked")
	// errDeadline is the cause of a context the all-in deadline ended.
	errDeadline = errors.New("all-in deadline passed")
)

// Begin starts an invocation for id.Agent; it may use only the
// sandboxes the catalog assigns to that agent.
func (c *Catalog) Begin(id Identity) *Invocation {
	return c.begin(context.Background(), id, false)
}

// Operator starts an invocation for the operator who wrote the catalog
// (the CLI without --agent): every sandbox is usable.
func (c *Catalog) Operator(id Identity) *Invocation {
	return c.begin(context.Background(), id, true)
}

func (c *Catalog) begin(parent context.Context, id Identity, operator bool) *Invocation {
	if id.Invocation == "" {
		id.Invocation = NewID()
	}
	ctx, cancel := context.WithCancelCause(parent)
	return &Invocation{cat: c, id: id, operator: operator, ctx: ctx, cancel: cancel}
}

// Child starts a sub-agent's invocation within this one (same user and
// session). It gets its own agent's assignments, never this one's, and
// ends when this one does.
func (inv *Invocation) Child(agent string) *Invocation {
	id := inv.id
	id.Agent, id.Invocation = agent, ""
	return inv.cat.begin(inv.ctx, id, false)
}

// Identity is the invocation's identity.
func (inv *Invocation) Identity() Identity { return inv.id }

// End ends the invocation normally.
func (inv *Invocation) End() { inv.cancel(errEnded) }

// Revoke ends the invocation because its rights were withdrawn.
func (inv *Invocation) Revoke() { inv.cancel(errRevoked) }

func (inv *Invocation) alive() error {
	inv.cat.mu.Lock()
	closed := inv.cat.closed
	inv.cat.mu.Unlock()
	if closed {
		return &Error{Class: ErrUnavailable, Msg: "the catalog was closed"}
	}
	if cause := context.Cause(inv.ctx); cause != nil {
		return &Error{Class: ErrUnavailable, Msg: "the handle's " + cause.Error() + "; begin a new invocation"}
	}
	return nil
}

func (inv *Invocation) assigned(name string) bool {
	return inv.operator || slices.Contains(inv.cat.agents[inv.id.Agent], name)
}

// List is the catalog as this invocation's agent sees it.
func (inv *Invocation) List() []Config {
	var out []Config
	for _, n := range sortedKeys(inv.cat.sandboxes) {
		if inv.assigned(n) {
			out = append(out, inv.cat.sandboxes[n].cfg)
		}
	}
	return out
}

// Sandbox returns a handle to a sandbox the agent is assigned. An
// unknown name and an unassigned one give the same ErrNotAssigned, so
// an agent learns nothing about the rest of the catalog.
func (inv *Invocation) Sandbox(name string) (*Handle, error) {
	if err := inv.alive(); err != nil {
		return nil, err
	}
	e, ok := inv.cat.sandboxes[name]
	if !ok || !inv.assigned(name) {
		who := "agent " + inv.id.Agent
		if inv.id.Agent == "" {
			who = "this caller"
		}
		return nil, &Error{Class: ErrNotAssigned, Sandbox: name,
			Msg: who + " is not assigned this sandbox; add it to [agent." + inv.id.Agent + "] sandboxes in the catalog"}
	}
	return &Handle{inv: inv, e: e}, nil
}

// Handle is an invocation's right to use one sandbox.
type Handle struct {
	inv *Invocation
	e   *entry
}

// Busy is the number of executions of this sandbox holding a slot now
// (running or starting); the rest are queued.
func (h *Handle) Busy() int { return len(h.e.slots) }

// Config is the sandbox's configuration.
func (h *Handle) Config() Config { return h.e.cfg }

// Execute runs req in the sandbox under the all-in deadline. It returns
// a Result whenever the execution was accepted, whatever its Status; an
// error only when nothing could run (typed, see the Err* classes).
func (h *Handle) Execute(ctx context.Context, req Request) (Result, error) {
	cfg := h.e.cfg
	if err := h.inv.alive(); err != nil {
		err.(*Error).Sandbox = cfg.Name
		return Result{}, err
	}
	req, err := prepareRequest(cfg, req, h.inv.id)
	if err != nil {
		return Result{}, err
	}
	timeout := cfg.Timeout
	if req.Timeout > 0 && req.Timeout < timeout {
		timeout = req.Timeout
	}
	req.Timeout = timeout
	begun := time.Now()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(h.inv.ctx, func() { cancel(context.Cause(h.inv.ctx)) })
	defer stop()
	ctx, cancelT := context.WithTimeoutCause(ctx, timeout, errDeadline)
	defer cancelT()

	ended := func(queued time.Duration) (Result, error) {
		if err := h.inv.alive(); err != nil {
			err.(*Error).Sandbox = cfg.Name
			return Result{}, err
		}
		return Result{ExecutionID: req.ExecutionID, Status: Ended(ctx), ExitCode: -1,
			Metadata: map[string]string{"provider": cfg.Provider, "ended": "queued"},
			Timings:  Timings{Queue: queued}}, nil
	}
	select {
	case h.e.slots <- struct{}{}:
	case <-ctx.Done():
		return ended(time.Since(begun))
	}
	defer func() { <-h.e.slots }()
	queued := time.Since(begun)
	// Re-checked after the wait: work cancelled or revoked while queued
	// never starts late.
	if ctx.Err() != nil || h.inv.alive() != nil {
		return ended(queued)
	}
	prov, err := h.e.provider()
	if err != nil {
		return Result{}, err
	}
	res, err := prov.Execute(ctx, req)
	if err != nil {
		return Result{}, Sanitize(cfg.Name, "execute", err, "the provider failed; see its log")
	}
	res.ExecutionID = req.ExecutionID
	res.Timings.Queue = queued
	if res.Status == StatusSucceeded && res.ExitCode != 0 {
		res.Status = StatusFailed // a non-zero exit is never success
	}
	return res, nil
}

// Ended is the Status of an execution whose context is done: timed out
// when the all-in deadline passed, cancelled otherwise.
func Ended(ctx context.Context) Status {
	if errors.Is(context.Cause(ctx), errDeadline) {
		return StatusTimedOut
	}
	return StatusCancelled
}

// prepareRequest validates req against cfg and returns the copy the
// provider gets: identity from the invocation, fresh slices and maps,
// frozen metadata.
func prepareRequest(cfg Config, req Request, id Identity) (Request, error) {
	bad := func(msg string) (Request, error) {
		return Request{}, &Error{Class: ErrInvalidRequest, Sandbox: cfg.Name, Msg: msg}
	}
	switch {
	case req.Code == "" && len(req.Argv) == 0:
		return bad("neither code nor argv given; pass one")
	case req.Code != "" && len(req.Argv) > 0:
		return bad("both code and argv given; pass one")
	case len(req.Argv) > 0 && req.Argv[0] == "":
		return bad("argv[0] is empty")
	}
	if req.Code != "" {
		if req.Lang == "" {
			req.Lang = LangPython
		}
		if req.Lang != LangPython && req.Lang != LangSh {
			return bad("language " + req.Lang + " is not supported; use python or sh")
		}
	}
	switch req.Network {
	case "", cfg.Network.String():
	case NetworkNone:
	default:
		return bad("a request may only narrow the network to none; the sandbox's is " + cfg.Network.String())
	}
	files := make(map[string][]byte, len(req.Files))
	for name, data := range req.Files {
		if !plainName(name) {
			return bad("file name " + name + " must be one path element (no /, not . or ..)")
		}
		files[name] = slices.Clone(data)
	}
	for _, name := range req.OutputFiles {
		if !plainName(name) {
			return bad("output file name " + name + " must be one path element (no /, not . or ..)")
		}
	}
	req.Files = files
	req.OutputFiles = slices.Clone(req.OutputFiles)
	sort.Strings(req.OutputFiles)
	req.Argv = slices.Clone(req.Argv)
	req.Stdin = slices.Clone(req.Stdin)
	req.Metadata = slices.Clone(req.Metadata)
	req.Identity = id
	if req.ExecutionID == "" {
		req.ExecutionID = NewID()
	}
	return req, nil
}

func plainName(n string) bool {
	return n != "" && n != "." && n != ".." && path.Base(n) == n && len(n) <= 255 && !containsNUL(n)
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// NewID returns a random identifier for an execution or invocation.
func NewID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
