package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/gate"
	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/tool"
)

type decideRequest struct {
	Tool        string          `json:"tool"`
	Input       json.RawMessage `json:"input"`
	Workspace   string          `json:"workspace"`
	Agent       string          `json:"agent"`
	Session     string          `json:"session"`
	Wait        string          `json:"wait"`
	ExecutionID string          `json:"execution_id"`
}

type grantOut struct {
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Token  string `json:"token"`
}

type decideResponse struct {
	Decision   string     `json:"decision"`
	Reason     string     `json:"reason"`
	Rule       string     `json:"rule,omitempty"`
	ApprovalID string     `json:"approval_id,omitempty"`
	Approval   string     `json:"approval,omitempty"`
	Grant      string     `json:"grant,omitempty"`
	Grants     []grantOut `json:"grants,omitempty"`
}

// call is a decide request checked and made canonical.
type call struct {
	tool.Call
	hash string
	wait time.Duration
}

// parseDecide checks a decide request; a *bodyError says what is wrong.
func parseDecide(req decideRequest) (call, *bodyError) {
	var c call
	if req.Tool == "" {
		return c, badRequest(`"tool" is required: the tool's name, as in "Bash"`)
	}
	if len(req.Input) == 0 {
		return c, badRequest(`"input" is required: the tool's input as a JSON object (or a string holding one)`)
	}
	raw := bytes.TrimSpace(req.Input)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return c, badRequest(`"input" is not a JSON string: %v`, err)
		}
		raw = []byte(s)
		if err := checkJSON(raw); err != nil {
			return c, badRequest(`"input" holds a string that %v`, err)
		}
	} else if raw[0] != '{' {
		return c, badRequest(`"input" must be a JSON object or a string holding one`)
	}
	input, err := canonicalJSON(raw)
	if err != nil {
		return c, badRequest(`"input" %v`, err)
	}
	if !filepath.IsAbs(req.Workspace) {
		return c, badRequest(`"workspace" must be an absolute path, not %q`, req.Workspace)
	}
	ws := filepath.Clean(req.Workspace)
	wait, bad := parseWait(req.Wait, `"wait"`)
	if bad != nil {
		return c, bad
	}
	c.Call = tool.Call{Tool: req.Tool, Input: input, Workspace: ws, ExecutionID: req.ExecutionID,
		Identity: tool.Identity{Agent: req.Agent, Session: req.Session}}
	c.hash = callHash(c.Call)
	c.wait = wait
	return c, nil
}

// parseWait reads a wait duration: "" is none; at most MaxWait.
func parseWait(s, name string) (time.Duration, *bodyError) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 || d > MaxWait {
		return 0, badRequest("%s %q: use a duration from 0s to %v, such as 30s", name, s, MaxWait)
	}
	return d, nil
}

// canonicalJSON re-encodes an object with sorted keys and no space, so
// the same input always hashes alike. Invalid UTF-8 and unpaired surrogate
// escapes are refused: decoding would replace them, and the call decided
// would not be the call the agent runs.
func canonicalJSON(raw []byte) (json.RawMessage, error) {
	if !utf8.Valid(raw) {
		return nil, errors.New("is not valid UTF-8")
	}
	if loneSurrogate(raw) {
		return nil, errors.New("has an unpaired UTF-16 surrogate escape")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("is not JSON: %v", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// loneSurrogate reports a \uD800-\uDFFF escape that is not a high-low pair.
func loneSurrogate(data []byte) bool {
	for i := 0; i+5 < len(data); i++ {
		if data[i] != '\\' {
			continue
		}
		if data[i+1] != 'u' {
			i++ // an escaped character, maybe a backslash
			continue
		}
		r := hex4(data[i+2:])
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(data) && data[i+6] == '\\' && data[i+7] == 'u' {
				if lo := hex4(data[i+8:]); lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11
					continue
				}
			}
			return true
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		}
		i += 5
	}
	return false
}

func hex4(b []byte) int {
	if len(b) < 4 {
		return -1
	}
	n := 0
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			n = n*16 + int(c-'0')
		case c >= 'a' && c <= 'f':
			n = n*16 + int(c-'a'+10)
		case c >= 'A' && c <= 'F':
			n = n*16 + int(c-'A'+10)
		default:
			return -1
		}
	}
	return n
}

// callHash is SHA-256 over the tool, the canonical input and the identity,
// each length-prefixed: an answer binds to exactly this call.
func callHash(c tool.Call) string {
	h := sha256.New()
	// v2: the user and the execution are part of the call, so an answer
	// (and the grant it mints) goes to the one execution the card was for.
	h.Write([]byte("airlock-call-v2"))
	for _, f := range []string{c.Tool, string(c.Input), c.Workspace, c.Identity.Agent, c.Identity.User, c.Identity.Session, c.ExecutionID} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(f)))
		h.Write(n[:])
		h.Write([]byte(f))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func newApprovalID() string {
	b := make([]byte, 16)
	rand.Read(b) // never fails; it crashes the program instead
	return "apr_" + hex.EncodeToString(b)
}

func (s *Server) decide(w http.ResponseWriter, r *http.Request) {
	var req decideRequest
	if bad := decodeBody(w, r, &req); bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	c, bad := parseDecide(req)
	if bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	if !s.identify(w, r, &c) {
		return
	}
	pol, err := s.policy(r.Context(), c.Workspace)
	if err != nil {
		// A workspace whose rules or profile do not load decides nothing.
		resp := decideResponse{Decision: string(rules.Deny),
			Reason: "the workspace's rules or profile do not load, so nothing is allowed: " + err.Error()}
		ev := audit.Event{Time: s.now(), Type: audit.TypeDecision, Tool: c.Tool, Decision: resp.Decision,
			Reason: resp.Reason, Layer: gate.LayerTool, SessionID: c.Identity.Session,
			Detail: map[string]any{"identity": c.Identity, "workspace": c.Workspace}}
		if err := s.st.AppendAudit(context.WithoutCancel(r.Context()), ev); err != nil {
			s.log.Error("recording a denial", "err", err)
		}
		writeJSON(w, http.StatusOK, resp)
		return
	}
	if resp, ok := s.steering(r.Context(), c, pol); ok {
		writeJSON(w, http.StatusOK, resp)
		return
	}
	ap := &approver{s: s, c: c, profile: pol.Profile}
	ev := &gate.Evaluator{Profile: pol.Profile, Rules: pol.Rules, Approver: ap,
		Recorder: &recorder{s: s, ctx: context.WithoutCancel(r.Context()), ap: ap},
		Issuer:   s.issuer, Preparers: s.preparers(c.Tool), Now: s.now}
	d, _ := ev.Decide(r.Context(), c.Call) // on error d is a denial saying why
	if ap.capped != "" {
		writeError(w, http.StatusTooManyRequests, "too_many_pending", ap.capped)
		return
	}
	resp := decideResponse{Decision: string(d.Effect), Reason: d.Reason, Rule: d.Rule, Approval: d.Approval, ApprovalID: ap.id}
	if ap.pending && d.Layer != gate.LayerAudit {
		resp.Decision, resp.Reason = string(rules.Ask), ap.askReason(d.Reason)
	}
	for _, g := range d.Grants {
		resp.Grants = append(resp.Grants, grantOut{Kind: g.Kind, Target: g.Target, Token: string(g.Token)})
	}
	if len(resp.Grants) > 0 {
		resp.Grant = resp.Grants[0].Token
	}
	writeJSON(w, http.StatusOK, resp)
}

// errPending is what the approver returns while no answer has come.
var errPending = errors.New("waiting for an answer")

// approver is the gate.Approver of one /v1/decide: it finds the answer
// given to this exact call, or opens (or joins) its pending approval and
// waits as long as the request asked.
type approver struct {
	s       *Server
	c       call
	profile gate.ProfileAccess

	id      string // the approval, once one is found or opened
	pending bool   // no answer: the decision is "ask"
	capped  string // why no approval could open: too many pending
}

// askReason turns the gate's reason for an approver error back into the
// reason it had for asking.
func (a *approver) askReason(reason string) string {
	reason, _, _ = strings.Cut(reason, "; the approver failed: ")
	return reason
}

func (a *approver) Approve(ctx context.Context, req gate.Request) (gate.Answer, error) {
	s := a.s
	deadline := time.Now().Add(a.c.wait)
	for {
		ans, done, err := a.join(ctx, req)
		if done || err != nil {
			return ans, err
		}
		wait := time.Until(deadline)
		if a.c.wait <= 0 || wait <= 0 {
			break
		}
		got, err := s.waitFor(ctx, a.id, wait)
		if err != nil || got.State == store.Pending {
			break
		}
		switch err := s.st.UseAnswer(context.WithoutCancel(ctx), got.ID); {
		case err == nil:
			return answerOf(got), nil
		case !errors.Is(err, store.ErrAnswered):
			return gate.Answer{}, err
		}
		// Another request of the same call took the answer (an answer is
		// used once): this one waits for an answer of its own.
	}
	a.pending = true
	return gate.Answer{}, errPending
}

// join finds the call's answer not yet used (done: it decides), or the
// approval pending for the call, or opens one; a.id names the approval.
func (a *approver) join(ctx context.Context, req gate.Request) (gate.Answer, bool, error) {
	s := a.s
	a.id = ""
	ap, err := s.st.ApprovalForCall(ctx, a.c.hash, s.now())
	switch {
	case err == nil && ap.State != store.Pending:
		if err := s.st.UseAnswer(ctx, ap.ID); err == nil {
			a.id = ap.ID
			return answerOf(ap), true, nil
		} else if !errors.Is(err, store.ErrAnswered) {
			return gate.Answer{}, false, err
		}
		// Another request of the same call took this answer: ask anew.
	case err == nil:
		a.id = ap.ID
		return gate.Answer{}, false, nil
	case !errors.Is(err, store.ErrNotFound):
		return gate.Answer{}, false, err
	}
	if msg, err := s.overCap(ctx, a.c); err != nil || msg != "" {
		if err == nil {
			a.capped = msg
			err = errCapped
		}
		return gate.Answer{}, false, err
	}
	view, err := json.Marshal(s.buildView(a.c.Call, req, a.profile))
	if err != nil {
		return gate.Answer{}, false, err
	}
	now := s.now()
	ap = store.Approval{ID: newApprovalID(), CallHash: a.c.hash, Tool: a.c.Tool, Input: a.c.Input,
		Workspace: a.c.Workspace, Agent: a.c.Identity.Agent, Session: a.c.Identity.Session, View: view,
		State: store.Pending, CreatedAt: now.UTC(), ExpiresAt: now.Add(s.cfg.ApprovalTTL).UTC()}
	switch err := s.st.OpenApproval(ctx, ap); {
	case errors.Is(err, store.ErrCallPending):
		// Another request of the same call, here or on another replica,
		// opened it first: wait on that one.
		other, err := s.st.ApprovalForCall(ctx, a.c.hash, s.now())
		if err != nil {
			return gate.Answer{}, false, err
		}
		a.id = other.ID
	case err != nil:
		return gate.Answer{}, false, err
	default:
		a.id = ap.ID
		s.notify()
		// A request that waits records its decision only when it returns;
		// one that does not wait records its "ask" now anyway.
		if a.c.wait > 0 {
			if err := s.recordOpened(ctx, a.c, ap, req); err != nil {
				return gate.Answer{}, false, err
			}
		}
	}
	return gate.Answer{}, false, nil
}

// recordOpened writes the audit event of an approval that a waiting
// request opens: the call waits for a person from now on, and the Audit
// tab shows it before the decision, which the request records when it
// returns.
func (s *Server) recordOpened(ctx context.Context, c call, ap store.Approval, req gate.Request) error {
	reason := "waiting for a person"
	ev := audit.Event{Time: s.now(), Type: audit.TypeDecision, ExecutionID: c.ExecutionID, Tool: c.Tool,
		Decision: string(rules.Ask), Layer: gate.LayerApprover, SessionID: c.Identity.Session,
		Detail: map[string]any{"approval_id": ap.ID, "approval": "opened", "expires_at": ap.ExpiresAt,
			"identity": c.Identity, "workspace": c.Workspace}}
	if len(req.Pending) > 0 {
		p := req.Pending[0]
		ev.Requirement = &audit.Requirement{Kind: p.Requirement.Kind, Target: p.Requirement.Target}
		reason = fmt.Sprintf("%s %s needs approval: %s; waiting for a person", p.Requirement.Kind, p.Requirement.Target, p.Why)
	}
	ev.Reason = reason + " (approval " + ap.ID + " opened)"
	if err := s.st.AppendAudit(context.WithoutCancel(ctx), ev); err != nil {
		return fmt.Errorf("recording the approval that opened: %w", err)
	}
	return nil
}

// answerOf is the gate's Answer for an answered or expired approval.
func answerOf(a store.Approval) gate.Answer {
	if a.State == store.Expired {
		return gate.Answer{Verdict: gate.DenyOnce, Reason: "no one answered before the approval expired"}
	}
	switch a.Answer {
	case "once":
		return gate.Answer{Verdict: gate.ApproveOnce}
	case "always":
		if a.For > 0 {
			return gate.Answer{Verdict: gate.ApproveFor, For: a.For}
		}
		return gate.Answer{Verdict: gate.ApproveAlways}
	case "always_deny":
		return gate.Answer{Verdict: gate.DenyAlways}
	}
	return gate.Answer{Verdict: gate.DenyOnce}
}

// recorder is the Store as the gate's audit Recorder for one request.
type recorder struct {
	s   *Server
	ctx context.Context
	ap  *approver
}

func (r *recorder) Append(e audit.Event) error {
	if e.Detail == nil {
		e.Detail = map[string]any{}
	}
	if r.ap.id != "" {
		e.Detail["approval_id"] = r.ap.id
	}
	if r.ap.pending {
		e.Decision, e.Reason = string(rules.Ask), r.ap.askReason(e.Reason)
	}
	e.SessionID = r.ap.c.Identity.Session
	if e.Time.IsZero() {
		e.Time = r.s.now()
	}
	return r.s.st.AppendAudit(r.ctx, e)
}
