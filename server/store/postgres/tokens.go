package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/server/store"
)

const tokenColumns = `id, name, hash, created_at, role, agent, user_name, workspaces, expires_at, revoked_at`

// CreateToken stores t; a token whose id or hash is taken is refused.
func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	ws := t.Workspaces
	if ws == nil {
		ws = []string{}
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		t.ID, t.Name, t.Hash[:], t.CreatedAt, string(t.Role), t.Agent, t.User, ws, nullTime(t.ExpiresAt), nullTime(t.RevokedAt))
	if err != nil {
		return fmt.Errorf("postgres: storing token %s: %w", t.ID, err)
	}
	return nil
}

func scanToken(row pgx.Row) (store.Token, error) {
	var (
		t                store.Token
		raw              []byte
		role             string
		expires, revoked *time.Time
	)
	if err := row.Scan(&t.ID, &t.Name, &raw, &t.CreatedAt, &role, &t.Agent, &t.User, &t.Workspaces, &expires, &revoked); err != nil {
		return t, err
	}
	copy(t.Hash[:], raw)
	t.Role = store.Role(role)
	if len(t.Workspaces) == 0 {
		t.Workspaces = nil
	}
	if expires != nil {
		t.ExpiresAt = *expires
	}
	if revoked != nil {
		t.RevokedAt = *revoked
	}
	return t, nil
}

// LookupToken finds the token whose text hashes to hash.
func (s *Store) LookupToken(ctx context.Context, hash [32]byte) (store.Token, error) {
	t, err := scanToken(s.pool.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens WHERE hash = $1`, hash[:]))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Token{}, fmt.Errorf("token: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("postgres: looking up a token: %w", err)
	}
	return t, nil
}

// Tokens lists every token, oldest first.
func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+tokenColumns+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Token, error) { return scanToken(r) })
	if err != nil {
		return nil, fmt.Errorf("postgres: listing tokens: %w", err)
	}
	return list, nil
}

// RevokeToken marks a token revoked; the first revocation's time stays.
func (s *Store) RevokeToken(ctx context.Context, id string, now time.Time) error {
	tag, err := s.pool.Exec(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, now, id)
	if err != nil {
		return fmt.Errorf("postgres: revoking token %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("token %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// AddWorkspace registers a workspace; a second add keeps the first.
func (s *Store) AddWorkspace(ctx context.Context, w store.Workspace) error {
	if _, err := s.pool.Exec(ctx, `INSERT INTO workspaces (path, added_at) VALUES ($1, $2) ON CONFLICT (path) DO NOTHING`, w.Path, w.AddedAt); err != nil {
		return fmt.Errorf("postgres: registering workspace %s: %w", w.Path, err)
	}
	return nil
}

// RemoveWorkspace unregisters a workspace.
func (s *Store) RemoveWorkspace(ctx context.Context, path string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM workspaces WHERE path = $1`, path)
	if err != nil {
		return fmt.Errorf("postgres: removing workspace %s: %w", path, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("workspace %s: %w", path, store.ErrNotFound)
	}
	return nil
}

// Workspaces lists the registered workspaces by path.
func (s *Store) Workspaces(ctx context.Context) ([]store.Workspace, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, added_at FROM workspaces ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing workspaces: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Workspace, error) {
		var w store.Workspace
		err := r.Scan(&w.Path, &w.AddedAt)
		return w, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: listing workspaces: %w", err)
	}
	return list, nil
}

// WorkspaceRegistered reports whether path is registered.
func (s *Store) WorkspaceRegistered(ctx context.Context, path string) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workspaces WHERE path = $1)`, path).Scan(&ok); err != nil {
		return false, fmt.Errorf("postgres: looking up workspace %s: %w", path, err)
	}
	return ok, nil
}

// PendingPage lists one page of the pending approvals f selects.
func (s *Store) PendingPage(ctx context.Context, now time.Time, f store.PendingFilter) ([]store.Approval, error) {
	ws := f.Workspaces
	if ws == nil {
		ws = []string{}
	}
	limit := any(nil)
	if f.Limit > 0 {
		limit = f.Limit
	}
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+` FROM approvals
	WHERE state = 'pending' AND expires_at > $1
	AND ($2 = '' OR agent = $2)
	AND (cardinality($3::text[]) = 0 OR workspace = ANY($3))
	AND ($4 = '' OR (created_at, id) > (SELECT created_at, id FROM approvals WHERE id = $4))
	ORDER BY created_at, id LIMIT $5`, now, f.Agent, ws, f.After, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing pending approvals: %w", err)
	}
	list, err := collectApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing pending approvals: %w", err)
	}
	return list, nil
}

// CountPending counts the pending approvals of an agent and of a workspace.
func (s *Store) CountPending(ctx context.Context, now time.Time, agent, workspace string) (int, int, error) {
	var byAgent, byWS int
	err := s.pool.QueryRow(ctx, `SELECT
	(SELECT count(*) FROM approvals WHERE state = 'pending' AND expires_at > $1 AND agent = $2),
	(SELECT count(*) FROM approvals WHERE state = 'pending' AND expires_at > $1 AND workspace = $3)`,
		now, agent, workspace).Scan(&byAgent, &byWS)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: counting pending approvals: %w", err)
	}
	return byAgent, byWS, nil
}
