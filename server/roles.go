package server

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// ErrTokenSpec marks a TokenSpec that CreateToken refuses.
var ErrTokenSpec = errors.New("server: bad token")

// TokenSpec says what a new token is for (docs/API.md, "Roles").
type TokenSpec struct {
	// Name is what the token is for, shown in listings.
	Name string
	// Role is required: store.RoleAgent, RolePerson or RoleOperator.
	Role store.Role
	// Agent is the agent an agent token acts as; required for RoleAgent,
	// refused for the others (a person is no agent).
	Agent string
	// User is who an agent token's calls and executions run for; "" for
	// none.
	User string
	// Workspaces are the directories the token may act on, made
	// canonical (CanonicalWorkspace); none: every registered workspace.
	Workspaces []string
	// TTL is how long the token works; 0: until revoked.
	TTL time.Duration
}

// CreateToken makes a new bearer token as spec says, stores its SHA-256
// and returns its text, which exists nowhere else: print it once.
func CreateToken(ctx context.Context, st store.Store, spec TokenSpec, now time.Time) (string, store.Token, error) {
	t := store.Token{Name: spec.Name, Role: spec.Role, Agent: spec.Agent, User: spec.User, CreatedAt: now.UTC()}
	switch spec.Role {
	case store.RoleAgent:
		if spec.Agent == "" {
			return "", t, fmt.Errorf("%w: an agent token needs the agent it acts as (--agent NAME)", ErrTokenSpec)
		}
	case store.RolePerson, store.RoleOperator:
		if spec.Agent != "" || spec.User != "" {
			return "", t, fmt.Errorf("%w: a %s token acts as no agent; leave out --agent and --user", ErrTokenSpec, spec.Role)
		}
	default:
		return "", t, fmt.Errorf("%w: role %q: use agent, person or operator", ErrTokenSpec, spec.Role)
	}
	if spec.TTL < 0 {
		return "", t, fmt.Errorf("%w: a negative lifetime %v", ErrTokenSpec, spec.TTL)
	}
	if spec.TTL > 0 {
		t.ExpiresAt = now.Add(spec.TTL).UTC()
	}
	for _, w := range spec.Workspaces {
		c, err := CanonicalWorkspace(w)
		if err != nil {
			return "", t, fmt.Errorf("%w: %v", ErrTokenSpec, err)
		}
		if !slices.Contains(t.Workspaces, c) {
			t.Workspaces = append(t.Workspaces, c)
		}
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return "", t, err
	}
	id := make([]byte, 6)
	if _, err := rand.Read(id); err != nil {
		return "", t, err
	}
	text := TokenPrefix + base64.RawURLEncoding.EncodeToString(secret)
	t.ID = "tok_" + hex.EncodeToString(id)
	t.Hash = sha256.Sum256([]byte(text))
	if err := st.CreateToken(ctx, t); err != nil {
		return "", store.Token{}, err
	}
	return text, t, nil
}

// isPerson reports a token that answers: a person's or an operator's.
func isPerson(t store.Token) bool { return t.Role == store.RolePerson || t.Role == store.RoleOperator }

// allow refuses the request with 403 unless its token has one of roles;
// it reports whether the request may go on.
func allow(w http.ResponseWriter, r *http.Request, what string, roles ...store.Role) bool {
	t := tokenFrom(r.Context())
	if slices.Contains(roles, t.Role) {
		return true
	}
	var need string
	for i, ro := range roles {
		if i > 0 {
			need += " or "
		}
		need += string(ro)
	}
	writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("token %s is a %s token; %s needs a %s token (airlock serve token create --role ...)", t.ID, roleName(t), what, need))
	return false
}

func roleName(t store.Token) string {
	if t.Role == store.RoleAgent {
		return "agent token of " + fmt.Sprintf("%q", t.Agent) + ", not a person's,"
	}
	return string(t.Role)
}

// inScope reports whether the token may act on workspace ws: one of its
// own, or any when it names none.
func inScope(t store.Token, ws string) bool {
	return len(t.Workspaces) == 0 || slices.Contains(t.Workspaces, ws)
}

// sees reports whether the token may see approval a: an agent sees only
// its own agent's, a person those of the workspaces in its scope.
func sees(t store.Token, a store.Approval) bool {
	if t.Role == store.RoleAgent && a.Agent != t.Agent {
		return false
	}
	return inScope(t, a.Workspace)
}

// whoami is GET /v1/whoami: the token's role and scope, so the page and
// an adapter know what they may do.
func (s *Server) whoami(w http.ResponseWriter, r *http.Request) {
	t := tokenFrom(r.Context())
	out := struct {
		ID         string     `json:"id"`
		Name       string     `json:"name"`
		Role       store.Role `json:"role"`
		Agent      string     `json:"agent,omitempty"`
		User       string     `json:"user,omitempty"`
		Workspaces []string   `json:"workspaces"`
		ExpiresAt  *time.Time `json:"expires_at,omitempty"`
		Answers    bool       `json:"answers"`
	}{ID: t.ID, Name: t.Name, Role: t.Role, Agent: t.Agent, User: t.User, Workspaces: t.Workspaces, Answers: isPerson(t)}
	if out.Workspaces == nil {
		out.Workspaces = []string{}
	}
	if !t.ExpiresAt.IsZero() {
		e := t.ExpiresAt.UTC()
		out.ExpiresAt = &e
	}
	writeJSON(w, http.StatusOK, out)
}

// identify makes the call the token's: its agent and user come from the
// token (a body that names another agent or user is refused, 403), its
// workspace must be one the token may act on, made canonical. It writes
// the refusal and reports false when the call may not go on.
func (s *Server) identify(w http.ResponseWriter, r *http.Request, c *call) bool {
	if !allow(w, r, "deciding a call", store.RoleAgent) {
		return false
	}
	t := tokenFrom(r.Context())
	if c.Identity.Agent != "" && c.Identity.Agent != t.Agent {
		writeError(w, http.StatusForbidden, "identity_mismatch", fmt.Sprintf("token %s belongs to the agent %q; it cannot ask as %q (leave \"agent\" out: the token says who asks)", t.ID, t.Agent, c.Identity.Agent))
		return false
	}
	ws, werr := s.workspaceFor(r.Context(), t, c.Workspace)
	if werr != nil {
		werr.write(w)
		return false
	}
	c.Workspace = ws
	c.Identity.Agent, c.Identity.User = t.Agent, t.User
	c.hash = callHash(c.Call)
	return true
}
