package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/server/store"
)

// eventBatch bounds one read of the feed.
const eventBatch = 100

func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	if len(r.URL.Query()) > 0 {
		writeError(w, http.StatusBadRequest, "bad_request", "/v1/events takes no query parameters; resume with the Last-Event-ID header")
		return
	}
	ctx := r.Context()
	tok := tokenFrom(ctx)
	var after int64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("Last-Event-ID %q is not an event id (a whole number)", v))
			return
		}
		after = n
	} else {
		last, err := s.lastSeq(ctx)
		if err != nil {
			s.internal(w, "reading the event feed", err)
			return
		}
		after = last
	}
	flusher, ok := w.(http.Flusher)
	if !ok {
		s.internal(w, "streaming", errors.New("the connection cannot stream"))
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": airlock events\n\n")
	flusher.Flush()

	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	beat := time.NewTicker(heartbeat)
	defer beat.Stop()
	for {
		ch := s.changes()
		evs, err := s.st.Events(ctx, after, eventBatch)
		if err != nil {
			if ctx.Err() == nil {
				s.log.Error("reading the event feed", "err", err)
			}
			return
		}
		for _, e := range evs {
			a, err := s.st.Approval(ctx, e.Approval)
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("reading an approval for the event feed", "err", err)
				}
				return
			}
			after = e.Seq
			if !sees(tok, a) {
				continue
			}
			data, err := json.Marshal(apiApprovalFor(tok, a))
			if err != nil {
				return
			}
			if _, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Kind, data); err != nil {
				return
			}
			after = e.Seq
		}
		if len(evs) > 0 {
			flusher.Flush()
		}
		if len(evs) == eventBatch {
			continue
		}
		select {
		case <-ch:
		case <-poll.C:
		case <-beat.C:
			if _, err := fmt.Fprint(w, ": ping\n\n"); err != nil {
				return
			}
			flusher.Flush()
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// lastSeq finds the feed's newest Seq with a few Events(after, 1) reads:
// doubling to pass it, then halving the gap (Seqs grow, possibly with
// gaps, so "is there an event after x" is monotonic in x).
func (s *Server) lastSeq(ctx context.Context) (int64, error) {
	exists := func(after int64) (bool, error) {
		evs, err := s.st.Events(ctx, after, 1)
		return len(evs) > 0, err
	}
	lo, hi := int64(0), int64(1)
	for {
		ok, err := exists(hi)
		if err != nil {
			return 0, err
		}
		if !ok {
			break
		}
		lo, hi = hi, hi*2
	}
	ok, err := exists(lo)
	if err != nil || !ok {
		return lo, err // nothing after lo: lo is the newest (or 0)
	}
	// An event exists after lo and none after hi: the newest is in (lo, hi].
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := exists(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

func (s *Server) audit(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, "reading the audit log", store.RolePerson, store.RoleOperator) {
		return
	}
	if t := tokenFrom(r.Context()); len(t.Workspaces) > 0 {
		writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("the audit log spans every workspace and token %s may see only %v; read it with a token made without --workspace", t.ID, t.Workspaces))
		return
	}
	var f store.AuditFilter
	for k, v := range r.URL.Query() {
		if len(v) != 1 {
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("%s given %d times", k, len(v)))
			return
		}
		val := v[0]
		switch k {
		case "since":
			t, err := time.Parse(time.RFC3339Nano, val)
			if err != nil {
				writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("since %q: use an RFC 3339 time such as 2026-06-01T12:00:00Z", val))
				return
			}
			f.Since = t
		case "tool":
			if val == "" {
				writeError(w, http.StatusBadRequest, "bad_request", "tool is empty; leave it out to see every tool")
				return
			}
			f.Tool = val
		case "decision":
			if val != "allow" && val != "ask" && val != "deny" {
				writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("decision %q: use allow, ask or deny", val))
				return
			}
			f.Decision = val
		case "limit":
			n, err := strconv.Atoi(val)
			if err != nil || n < 1 || n > 10000 {
				writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("limit %q: use a whole number from 1 to 10000", val))
				return
			}
			f.Limit = n
		default:
			writeError(w, http.StatusBadRequest, "bad_request", fmt.Sprintf("unknown query parameter %q; use since, tool, decision, limit", k))
			return
		}
	}
	evs, err := s.st.Audit(r.Context(), f)
	if err != nil {
		s.internal(w, "reading the audit log", err)
		return
	}
	if evs == nil {
		evs = []audit.Event{}
	}
	writeJSON(w, http.StatusOK, map[string][]audit.Event{"events": evs})
}
