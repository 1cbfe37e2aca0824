package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

func insertRule(ctx context.Context, tx pgx.Tx, r store.Rule) error {
	_, err := tx.Exec(ctx, `INSERT INTO rules (workspace, effect, text, expires, created_at, approval)
	VALUES ($1, $2, $3, $4, $5, $6)`,
		r.Workspace, r.Effect, r.Text, nullTime(r.Expires), r.CreatedAt, r.Approval)
	if err != nil {
		return fmt.Errorf("saving rule %q: %w", r.Text, err)
	}
	return nil
}

// Rules returns workspace's saved rules that have not expired at now, in
// the order they were saved.
func (s *Store) Rules(ctx context.Context, workspace string, now time.Time) ([]store.Rule, error) {
	rows, err := s.pool.Query(ctx, `SELECT workspace, effect, text, expires, created_at, approval FROM rules
	WHERE workspace = $1 AND (expires IS NULL OR expires > $2) ORDER BY id`, workspace, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading rules: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Rule, error) {
		var (
			r       store.Rule
			expires *time.Time
		)
		err := row.Scan(&r.Workspace, &r.Effect, &r.Text, &expires, &r.CreatedAt, &r.Approval)
		if expires != nil {
			r.Expires = *expires
		}
		return r, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading rules: %w", err)
	}
	return list, nil
}

// sweepEvery is how many Spend calls pass between two sweeps of the
// ledger; sweepMargin is how long past its expiry a spent grant is kept.
// The margin covers replicas whose clocks run behind the database's: a
// grant.Issuer checks expiry by its own clock before it calls Spend, so the
// row must outlive the token on every replica's clock, not just this one's.
const (
	sweepEvery  = 1024
	sweepMargin = 24 * time.Hour
)

// Spend records mac as spent. The primary key makes the insert the
// arbiter: of concurrent spends of one mac, on any replica, exactly one
// inserts a row; the others insert nothing and get ErrReplayed.
func (s *Store) Spend(ctx context.Context, mac [32]byte, expires time.Time) error {
	if s.spends.Add(1)%sweepEvery == 0 {
		// Best effort: a failed sweep leaves rows for the next one.
		_, _ = s.pool.Exec(ctx, `DELETE FROM spent_grants WHERE expires < $1`, time.Now().Add(-sweepMargin))
	}
	tag, err := s.pool.Exec(ctx, `INSERT INTO spent_grants (mac, expires) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		mac[:], expires)
	if err != nil {
		return fmt.Errorf("postgres: spending a grant: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w (%w)", store.ErrReplayed, grant.ErrReplayed)
	}
	return nil
}

// GrantKey returns the key every replica shares. The first callers race
// to insert their fresh key; ON CONFLICT DO NOTHING lets exactly one win,
// and everyone returns what was stored, never their own key unread.
func (s *Store) GrantKey(ctx context.Context, create func() ([]byte, error)) ([]byte, error) {
	var key []byte
	err := s.pool.QueryRow(ctx, `SELECT key FROM grant_key WHERE id = 1`).Scan(&key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: reading the grant key: %w", err)
	}
	fresh, err := create()
	if err != nil {
		return nil, fmt.Errorf("postgres: making the grant key: %w", err)
	}
	if len(fresh) == 0 {
		return nil, errors.New("postgres: making the grant key: create returned no bytes")
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO grant_key (id, key) VALUES (1, $1) ON CONFLICT DO NOTHING`, fresh); err != nil {
		return nil, fmt.Errorf("postgres: storing the grant key: %w", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT key FROM grant_key WHERE id = 1`).Scan(&key); err != nil {
		return nil, fmt.Errorf("postgres: reading the grant key: %w", err)
	}
	return key, nil
}

// nullTime stores the zero time as NULL ("no expiry").
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
