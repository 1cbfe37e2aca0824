package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/airlockhq/airlock/rules"
	"github.com/airlockhq/airlock/server/store"
)

// Approval is an approval as the API shows it (docs/API.md).
type Approval struct {
	ID         string          `json:"id"`
	State      store.State     `json:"state"`
	Tool       string          `json:"tool"`
	Input      json.RawMessage `json:"input"`
	Workspace  string          `json:"workspace"`
	Agent      string          `json:"agent"`
	Session    string          `json:"session"`
	CreatedAt  time.Time       `json:"created_at"`
	ExpiresAt  time.Time       `json:"expires_at"`
	Answer     string          `json:"answer,omitempty"`
	For        string          `json:"for,omitempty"`
	AnsweredAt *time.Time      `json:"answered_at,omitempty"`
	Decision   string          `json:"decision,omitempty"`
	View       json.RawMessage `json:"view"`
}

func apiApproval(a store.Approval) Approval {
	out := Approval{ID: a.ID, State: a.State, Tool: a.Tool, Input: a.Input, Workspace: a.Workspace,
		Agent: a.Agent, Session: a.Session, CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC(),
		Answer: a.Answer, View: a.View}
	if len(out.View) == 0 {
		out.View = json.RawMessage("null")
	}
	if a.For > 0 {
		out.For = a.For.String()
	}
	if a.State != store.Pending {
		t := a.AnsweredAt.UTC()
		out.AnsweredAt = &t
		out.Decision = "deny"
		if a.State == store.Answered && (a.Answer == "once" || a.Answer == "always") {
			out.Decision = "allow"
		}
	}
	return out
}

// Paging of GET /v1/approvals. A page also ends once its approvals'
// inputs and views pass maxPageBytes (it always holds one), so a list of
// large calls costs the daemon a bounded amount per request.
const (
	defaultPage  = 50
	maxPage      = 200
	maxPageBytes = 8 << 20
)

func (s *Server) listApprovals(w http.ResponseWriter, r *http.Request) {
	t := tokenFrom(r.Context())
	f := store.PendingFilter{Limit: defaultPage, Workspaces: t.Workspaces}
	if t.Role == store.RoleAgent {
		f.Agent = t.Agent
	}
	for k, v := range r.URL.Query() {
		if len(v) != 1 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("%s given %d times", k, len(v)))
			return
		}
		switch k {
		case "limit":
			n, err := strconv.Atoi(v[0])
			if err != nil || n < 1 || n > maxPage {
				writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("limit %q: use 1 to %d", v[0], maxPage))
				return
			}
			f.Limit = n
		case "after":
			f.After = v[0]
		default:
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("unknown query parameter %q; /v1/approvals takes limit and after", k))
			return
		}
	}
	list, err := s.st.PendingPage(r.Context(), s.now(), f)
	if err != nil {
		s.internal(w, "listing approvals", err)
		return
	}
	out := struct {
		Approvals []Approval `json:"approvals"`
		Next      string     `json:"next,omitempty"`
	}{Approvals: make([]Approval, 0, len(list))}
	size := 0
	for i, a := range list {
		size += len(a.Input) + len(a.View)
		if i > 0 && size > maxPageBytes {
			out.Next = list[i-1].ID
			break
		}
		out.Approvals = append(out.Approvals, apiApprovalFor(t, a))
	}
	if out.Next == "" && len(list) == f.Limit {
		out.Next = list[len(list)-1].ID
	}
	writeJSON(w, http.StatusOK, out)
}

// apiApprovalFor is a as token t may see it: an agent's token gets no
// diff, which holds the file's content as the daemon read it (a file the
// agent's sandbox may hide from it).
func apiApprovalFor(t store.Token, a store.Approval) Approval {
	out := apiApproval(a)
	if t.Role != store.RoleAgent || len(out.View) == 0 {
		return out
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(out.View, &v) != nil || v == nil {
		out.View = json.RawMessage("null")
		return out
	}
	if _, ok := v["diff"]; ok {
		delete(v, "diff")
		if b, err := json.Marshal(v); err == nil {
			out.View = b
		} else {
			out.View = json.RawMessage("null")
		}
	}
	return out
}

func (s *Server) getApproval(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for k := range q {
		if k != "wait" {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("unknown query parameter %q; only wait is known", k))
			return
		}
	}
	if len(q["wait"]) > 1 {
		writeError(w, http.StatusBadRequest, "bad_request", "wait given twice")
		return
	}
	wait, bad := parseWait(q.Get("wait"), "wait")
	if bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	t := tokenFrom(r.Context())
	if a, err := s.st.Approval(r.Context(), r.PathValue("id")); err == nil && !sees(t, a) {
		// Another agent's approval, or another workspace's: as if it did
		// not exist, so its id says nothing either.
		writeError(w, http.StatusNotFound, "not_found", "no approval has the id "+fmt.Sprintf("%q", r.PathValue("id"))+" that this token may see")
		return
	}
	a, err := s.waitFor(r.Context(), r.PathValue("id"), wait)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "no approval has the id "+fmt.Sprintf("%q", r.PathValue("id")))
	case err != nil && r.Context().Err() != nil:
		// The client went away.
	case err != nil:
		s.internal(w, "reading the approval", err)
	default:
		writeJSON(w, http.StatusOK, apiApprovalFor(t, a))
	}
}

// waitFor returns approval id once it is no longer pending, or as it is
// when wait passes. It polls the Store (another replica may answer) and
// wakes early when this process changes an approval.
func (s *Server) waitFor(ctx context.Context, id string, wait time.Duration) (store.Approval, error) {
	s.waiting.Add(1)
	defer s.waiting.Add(-1)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	for {
		ch := s.changes()
		a, err := s.st.Approval(ctx, id)
		if err != nil || a.State != store.Pending {
			return a, err
		}
		if !s.now().Before(a.ExpiresAt) {
			s.expire(ctx)
			continue
		}
		if wait <= 0 {
			return a, nil
		}
		select {
		case <-ch:
		case <-poll.C:
		case <-deadline.C:
			return s.st.Approval(ctx, id)
		case <-s.stop:
			return s.st.Approval(ctx, id)
		case <-ctx.Done():
			return a, ctx.Err()
		}
	}
}

type answerRequest struct {
	Answer string `json:"answer"`
	For    string `json:"for"`
}

// maxFor bounds an "always" answer's duration.
const maxFor = 365 * 24 * time.Hour

func (s *Server) answerApproval(w http.ResponseWriter, r *http.Request) {
	// An agent never answers, not even its own approval: "a person
	// answers" is the promise.
	if !allow(w, r, "answering an approval", store.RolePerson, store.RoleOperator) {
		return
	}
	var req answerRequest
	if bad := decodeBody(w, r, &req); bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	switch req.Answer {
	case "once", "always", "deny", "always_deny":
	default:
		writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"answer" %q: use once, always, deny or always_deny`, req.Answer))
		return
	}
	var forDur time.Duration
	if req.For != "" {
		d, err := time.ParseDuration(req.For)
		switch {
		case req.Answer != "always":
			writeError(w, http.StatusBadRequest, "bad_request", `"for" goes only with the answer "always"`)
			return
		case err != nil || d <= 0 || d > maxFor:
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf(`"for" %q: use a positive duration up to a year, such as 10m or 8h`, req.For))
			return
		}
		forDur = d
	}
	id := r.PathValue("id")
	ctx := r.Context()

	s.answerMu.Lock()
	defer s.answerMu.Unlock()
	a, err := s.st.Approval(ctx, id)
	if errors.Is(err, store.ErrNotFound) || err == nil && !sees(tokenFrom(ctx), a) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no approval has the id %q that this token may see", id))
		return
	} else if err != nil {
		s.internal(w, "reading the approval", err)
		return
	}
	now := s.now()
	saved, recs, err := rulesOf(a, req.Answer, forDur, now)
	if err != nil {
		s.internal(w, "reading the rules the approval would save", err)
		return
	}
	// The Store decides, in one transaction, whether this answer is the
	// one (pending, not expired, not answered by anyone else); only then
	// are its rules written to the workspace's local layer.
	got, err := s.st.AnswerApproval(context.WithoutCancel(ctx), id, req.Answer, forDur, tokenFrom(ctx).ID, now, saved)
	switch {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no approval has the id %q", id))
		return
	case errors.Is(err, store.ErrAnswered):
		writeError(w, http.StatusConflict, "already_answered", "the approval was answered before; an approval takes one answer")
		return
	case errors.Is(err, store.ErrExpired):
		s.expire(ctx)
		writeError(w, http.StatusGone, "expired", "the approval expired before this answer (it counts as denied); the agent must ask again")
		return
	case err != nil:
		s.internal(w, "recording the answer", err)
		return
	}
	s.notify()
	if len(recs) > 0 {
		s.forget(a.Workspace)
		// Root keeps the writer inside the workspace whatever symlinks it
		// holds: a card that shows workspace A never writes into B.
		wr := rules.Writer{Root: a.Workspace, Path: rules.LocalPath(a.Workspace)}
		if err := wr.Append(recs...); err != nil {
			s.internal(w, "the answer is recorded and its rules apply through the daemon, but writing them to "+wr.Path+" failed", err)
			return
		}
	}
	writeJSON(w, http.StatusOK, apiApproval(got))
}

// rulesOf returns the rules an answer saves: the approval's view lists
// them (the page showed exactly these), as Store rules and as records for
// the local layer's file.
func rulesOf(a store.Approval, answer string, forDur time.Duration, now time.Time) ([]store.Rule, []rules.NewRecord, error) {
	if answer != "always" && answer != "always_deny" {
		return nil, nil, nil
	}
	var v View
	if err := json.Unmarshal(a.View, &v); err != nil {
		return nil, nil, err
	}
	effect, list, reason := rules.Allow, v.AlwaysRules, ""
	if answer == "always_deny" {
		effect, list, reason = rules.Deny, v.AlwaysDenyRules, "denied by the user"
	}
	var expires time.Time
	if forDur > 0 {
		expires = now.Add(forDur).Truncate(time.Second).UTC()
	}
	var saved []store.Rule
	var recs []rules.NewRecord
	for _, m := range list {
		saved = append(saved, store.Rule{Workspace: a.Workspace, Effect: string(effect), Text: m, Expires: expires, CreatedAt: now.UTC(), Approval: a.ID})
		recs = append(recs, rules.NewRecord{Effect: effect, Match: m, Expires: expires, Reason: reason})
	}
	return saved, recs, nil
}
