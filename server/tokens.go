package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// tokenOut is a token as GET /v1/tokens lists it: never its text or hash.
type tokenOut struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Role       store.Role `json:"role"`
	Agent      string     `json:"agent,omitempty"`
	User       string     `json:"user,omitempty"`
	Workspaces []string   `json:"workspaces"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// listTokens is GET /v1/tokens, for operators.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, "listing tokens", store.RoleOperator) {
		return
	}
	if len(r.URL.Query()) > 0 {
		writeError(w, http.StatusBadRequest, "bad_request", "/v1/tokens takes no query parameters")
		return
	}
	list, err := s.st.Tokens(r.Context())
	if err != nil {
		s.internal(w, "listing tokens", err)
		return
	}
	out := make([]tokenOut, 0, len(list))
	for _, t := range list {
		ws := t.Workspaces
		if ws == nil {
			ws = []string{}
		}
		out = append(out, tokenOut{ID: t.ID, Name: t.Name, Role: t.Role, Agent: t.Agent, User: t.User, Workspaces: ws,
			CreatedAt: t.CreatedAt.UTC(), ExpiresAt: timePtr(t.ExpiresAt), RevokedAt: timePtr(t.RevokedAt)})
	}
	writeJSON(w, http.StatusOK, map[string][]tokenOut{"tokens": out})
}

// revokeToken is POST /v1/tokens/{id}/revoke, for operators: the token is
// refused from its next request on, on every replica.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) {
	if !allow(w, r, "revoking a token", store.RoleOperator) {
		return
	}
	var body struct{}
	if bad := decodeBody(w, r, &body); bad != nil {
		writeError(w, bad.status, bad.code, bad.msg)
		return
	}
	id := r.PathValue("id")
	switch err := s.st.RevokeToken(r.Context(), id, s.now()); {
	case errors.Is(err, store.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("no token has the id %q; see GET /v1/tokens", id))
	case err != nil:
		s.internal(w, "revoking the token", err)
	default:
		writeJSON(w, http.StatusOK, map[string]string{"revoked": id})
	}
}
