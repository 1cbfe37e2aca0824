package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

// spendSweepEvery is how many Spends pass between sweeps of entries an
// hour past their expiry (Redeem refuses an expired token before it
// spends, so they can never match again).
const spendSweepEvery = 512

var spends atomic.Int64

func (s *Store) Spend(ctx context.Context, mac [32]byte, expires time.Time) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO spent (mac, expires) VALUES (?, ?) ON CONFLICT (mac) DO NOTHING`, mac[:], ns(expires))
		if err != nil {
			return fmt.Errorf("sqlite: spend: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%w (%w)", store.ErrReplayed, grant.ErrReplayed)
		}
		if spends.Add(1)%spendSweepEvery == 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM spent WHERE expires < ?`, ns(time.Now().Add(-time.Hour))); err != nil {
				return fmt.Errorf("sqlite: sweep spent grants: %w", err)
			}
		}
		return nil
	})
}

func (s *Store) GrantKey(ctx context.Context, create func() ([]byte, error)) ([]byte, error) {
	var key []byte
	err := s.queryRow(ctx, `SELECT key FROM grant_key WHERE id = 1`).Scan(&key)
	if err == nil {
		return key, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: grant key: %w", err)
	}
	fresh, err := create()
	if err != nil {
		return nil, err
	}
	// Two processes may both get here: the first insert wins and both
	// read back the winner's key.
	err = s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO grant_key (id, key) VALUES (1, ?) ON CONFLICT (id) DO NOTHING`, fresh); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT key FROM grant_key WHERE id = 1`).Scan(&key)
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: grant key: %w", err)
	}
	return key, nil
}

// AppendAudit stores e, durable when it returns. Appends that arrive while
// one commits are committed together in the next transaction (a group
// commit): each caller still waits for the fsync that covers its event,
// but one fsync serves many decisions.
func (s *Store) AppendAudit(ctx context.Context, e audit.Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("sqlite: audit: %w", err)
	}
	// Grant tokens never reach the table, as they never reach the JSONL
	// log: the token alphabet is JSON-safe, so redacting the encoded
	// event is exact.
	data = []byte(grant.Redact(string(data)))
	return s.ac.Add(ctx, auditRow{time: ns(e.Time), tool: e.Tool, decision: e.Decision, event: data})
}

func (s *Store) Audit(ctx context.Context, f store.AuditFilter) ([]audit.Event, error) {
	q := `SELECT event FROM audit WHERE 1 = 1`
	var args []any
	if !f.Since.IsZero() {
		q += ` AND time >= ?`
		args = append(args, ns(f.Since))
	}
	if f.Tool != "" {
		q += ` AND tool = ?`
		args = append(args, f.Tool)
	}
	if f.Decision != "" {
		q += ` AND decision = ?`
		args = append(args, f.Decision)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 1000
	}
	q += ` ORDER BY seq LIMIT ?`
	args = append(args, limit)
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: audit: %w", err)
	}
	defer rows.Close()
	out := []audit.Event{}
	for rows.Next() {
		var data []byte
		if err := rows.Scan(&data); err != nil {
			return nil, fmt.Errorf("sqlite: audit: %w", err)
		}
		var e audit.Event
		if err := json.Unmarshal(data, &e); err != nil {
			return nil, fmt.Errorf("sqlite: audit: a stored event does not decode: %w", err)
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// auditRow is one audit event on its way to the table.
type auditRow struct {
	time           int64
	tool, decision string
	event          []byte
}

// maxAuditBatch bounds one group commit.
const maxAuditBatch = 256

// commitAudit writes one group commit's rows in one transaction.
func commitAudit(db *sql.DB, batch []auditRow) error {
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: audit: %w", err)
	}
	for _, r := range batch {
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (time, tool, decision, event) VALUES (?, ?, ?, ?)`, r.time, r.tool, r.decision, r.event); err != nil {
			tx.Rollback()
			return fmt.Errorf("sqlite: audit: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: audit: %w", err)
	}
	return nil
}
