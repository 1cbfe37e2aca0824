package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

const tokenCols = `id, name, hash, created_at, role, agent, user_name, workspaces, expires_at, revoked_at`

func (s *Store) CreateToken(ctx context.Context, t store.Token) error {
	ws, err := json.Marshal(nonNil(t.Workspaces))
	if err != nil {
		return err
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO tokens (`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			t.ID, t.Name, t.Hash[:], ns(t.CreatedAt), string(t.Role), t.Agent, t.User, ws, ns(t.ExpiresAt), ns(t.RevokedAt))
		if err != nil {
			return fmt.Errorf("sqlite: create token: %w", err)
		}
		return nil
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func scanToken(row scanner) (store.Token, error) {
	var t store.Token
	var h, ws []byte
	var created, expires, revoked int64
	var role string
	if err := row.Scan(&t.ID, &t.Name, &h, &created, &role, &t.Agent, &t.User, &ws, &expires, &revoked); err != nil {
		return t, err
	}
	copy(t.Hash[:], h)
	t.Role = store.Role(role)
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = fromNS(created), fromNS(expires), fromNS(revoked)
	if err := json.Unmarshal(ws, &t.Workspaces); err != nil {
		return t, fmt.Errorf("token %s's workspaces: %w", t.ID, err)
	}
	if len(t.Workspaces) == 0 {
		t.Workspaces = nil
	}
	return t, nil
}

func (s *Store) LookupToken(ctx context.Context, hash [32]byte) (store.Token, error) {
	t, err := scanToken(s.queryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, hash[:]))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Token{}, store.ErrNotFound
	}
	if err != nil {
		return store.Token{}, fmt.Errorf("sqlite: look up token: %w", err)
	}
	return t, nil
}

func (s *Store) Tokens(ctx context.Context) ([]store.Token, error) {
	rows, err := s.query(ctx, `SELECT `+tokenCols+` FROM tokens ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list tokens: %w", err)
	}
	defer rows.Close()
	var out []store.Token
	for rows.Next() {
		t, err := scanToken(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list tokens: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func (s *Store) RevokeToken(ctx context.Context, id string, now time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END WHERE id = ?`, ns(now), id)
		if err != nil {
			return fmt.Errorf("sqlite: revoke token: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("token %s: %w", id, store.ErrNotFound)
		}
		return nil
	})
}

func (s *Store) AddWorkspace(ctx context.Context, w store.Workspace) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO workspaces (path, added_at) VALUES (?, ?) ON CONFLICT (path) DO NOTHING`, w.Path, ns(w.AddedAt)); err != nil {
			return fmt.Errorf("sqlite: add workspace: %w", err)
		}
		return nil
	})
}

func (s *Store) RemoveWorkspace(ctx context.Context, path string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM workspaces WHERE path = ?`, path)
		if err != nil {
			return fmt.Errorf("sqlite: remove workspace: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("workspace %s: %w", path, store.ErrNotFound)
		}
		return nil
	})
}

func (s *Store) Workspaces(ctx context.Context) ([]store.Workspace, error) {
	rows, err := s.query(ctx, `SELECT path, added_at FROM workspaces ORDER BY path`)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list workspaces: %w", err)
	}
	defer rows.Close()
	var out []store.Workspace
	for rows.Next() {
		var w store.Workspace
		var added int64
		if err := rows.Scan(&w.Path, &added); err != nil {
			return nil, fmt.Errorf("sqlite: list workspaces: %w", err)
		}
		w.AddedAt = fromNS(added)
		out = append(out, w)
	}
	return out, rows.Err()
}

func (s *Store) WorkspaceRegistered(ctx context.Context, path string) (bool, error) {
	var one int
	err := s.queryRow(ctx, `SELECT 1 FROM workspaces WHERE path = ?`, path).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("sqlite: look up workspace: %w", err)
	}
	return true, nil
}

func (s *Store) PendingPage(ctx context.Context, now time.Time, f store.PendingFilter) ([]store.Approval, error) {
	q := `SELECT ` + approvalCols + ` FROM approvals WHERE state = 'pending' AND expires_at > ?`
	args := []any{ns(now)}
	if f.Agent != "" {
		q += ` AND agent = ?`
		args = append(args, f.Agent)
	}
	if len(f.Workspaces) > 0 {
		q += ` AND workspace IN (?` + strings.Repeat(`, ?`, len(f.Workspaces)-1) + `)`
		for _, w := range f.Workspaces {
			args = append(args, w)
		}
	}
	if f.After != "" {
		q += ` AND (created_at, id) > (SELECT created_at, id FROM approvals WHERE id = ?)`
		args = append(args, f.After)
	}
	q += ` ORDER BY created_at, id`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	// Not through prepared: the text varies with the filter.
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list pending approvals: %w", err)
	}
	defer rows.Close()
	var out []store.Approval
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list pending approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *Store) CountPending(ctx context.Context, now time.Time, agent, workspace string) (int, int, error) {
	var byAgent, byWS int
	err := s.queryRow(ctx, `SELECT
	(SELECT count(*) FROM approvals WHERE state = 'pending' AND expires_at > ? AND agent = ?),
	(SELECT count(*) FROM approvals WHERE state = 'pending' AND expires_at > ? AND workspace = ?)`,
		ns(now), agent, ns(now), workspace).Scan(&byAgent, &byWS)
	if err != nil {
		return 0, 0, fmt.Errorf("sqlite: count pending approvals: %w", err)
	}
	return byAgent, byWS, nil
}
