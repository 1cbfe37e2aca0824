package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/airlockhq/airlock/server/store"
)

// ns is t as stored: Unix nanoseconds, 0 for the zero time.
func ns(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// fromNS reads a stored time back, in UTC.
func fromNS(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

const approvalCols = `id, call_hash, tool, input, workspace, agent, session, view, state,
	created_at, expires_at, answer, for_ns, answered_at, answered_by, used`

type scanner interface{ Scan(...any) error }

func scanApproval(row scanner) (store.Approval, error) {
	var a store.Approval
	var input, view []byte
	var created, expires, forNS, answered int64
	var used int
	err := row.Scan(&a.ID, &a.CallHash, &a.Tool, &input, &a.Workspace, &a.Agent, &a.Session, &view, &a.State,
		&created, &expires, &a.Answer, &forNS, &answered, &a.AnsweredBy, &used)
	if err != nil {
		return a, err
	}
	a.Input, a.View = input, view
	a.CreatedAt, a.ExpiresAt, a.AnsweredAt = fromNS(created), fromNS(expires), fromNS(answered)
	a.For = time.Duration(forNS)
	a.Used = used != 0
	return a, nil
}

func appendEvent(ctx context.Context, tx *sql.Tx, kind store.EventKind, id string, now time.Time) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO events (kind, approval, time) VALUES (?, ?, ?)`, string(kind), id, ns(now)); err != nil {
		return fmt.Errorf("sqlite: append event: %w", err)
	}
	return nil
}

func (s *Store) OpenApproval(ctx context.Context, a store.Approval) error {
	if a.State == "" {
		a.State = store.Pending
	}
	if a.View == nil {
		a.View = []byte("null")
	}
	return s.tx(ctx, func(tx *sql.Tx) error {
		// Writes go through one connection, so nothing opens the same
		// call between this check and the insert.
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM approvals WHERE call_hash = ? AND state = 'pending' AND expires_at > ? LIMIT 1`,
			a.CallHash, ns(a.CreatedAt)).Scan(&one)
		if err == nil {
			return store.ErrCallPending
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("sqlite: open approval: %w", err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO approvals (`+approvalCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			a.ID, a.CallHash, a.Tool, []byte(a.Input), a.Workspace, a.Agent, a.Session, []byte(a.View), string(a.State),
			ns(a.CreatedAt), ns(a.ExpiresAt), a.Answer, int64(a.For), ns(a.AnsweredAt), a.AnsweredBy, boolInt(a.Used))
		if err != nil {
			return fmt.Errorf("sqlite: open approval: %w", err)
		}
		return appendEvent(ctx, tx, store.EventOpened, a.ID, a.CreatedAt)
	})
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Store) Approval(ctx context.Context, id string) (store.Approval, error) {
	a, err := scanApproval(s.queryRow(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Approval{}, store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: approval: %w", err)
	}
	return a, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func getApproval(ctx context.Context, q querier, id string) (store.Approval, error) {
	a, err := scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Approval{}, store.ErrNotFound
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("sqlite: approval: %w", err)
	}
	return a, nil
}

func (s *Store) queryApprovals(ctx context.Context, q string, args ...any) ([]store.Approval, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: approvals: %w", err)
	}
	defer rows.Close()
	out := []store.Approval{}
	for rows.Next() {
		a, err := scanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: approvals: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

func (s *Store) PendingApprovals(ctx context.Context, now time.Time) ([]store.Approval, error) {
	return s.queryApprovals(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE state = 'pending' AND expires_at > ? ORDER BY created_at, id`, ns(now))
}

func (s *Store) ApprovalForCall(ctx context.Context, callHash string, now time.Time) (store.Approval, error) {
	list, err := s.queryApprovals(ctx, `SELECT `+approvalCols+` FROM approvals
		WHERE call_hash = ? AND ((state = 'pending' AND expires_at > ?) OR (state != 'pending' AND used = 0))
		ORDER BY created_at DESC, id DESC LIMIT 1`, callHash, ns(now))
	if err != nil {
		return store.Approval{}, err
	}
	if len(list) == 0 {
		return store.Approval{}, store.ErrNotFound
	}
	return list[0], nil
}

func (s *Store) AnswerApproval(ctx context.Context, id, answer string, forDur time.Duration, by string, now time.Time, rules []store.Rule) (store.Approval, error) {
	var out store.Approval
	err := s.tx(ctx, func(tx *sql.Tx) error {
		a, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		switch {
		case a.State == store.Answered:
			return store.ErrAnswered
		case a.State == store.Expired || !now.Before(a.ExpiresAt):
			return store.ErrExpired
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'answered', answer = ?, for_ns = ?, answered_at = ?, answered_by = ?
			WHERE id = ? AND state = 'pending'`, answer, int64(forDur), ns(now), by, id); err != nil {
			return fmt.Errorf("sqlite: answer approval: %w", err)
		}
		for _, r := range rules {
			if _, err := tx.ExecContext(ctx, `INSERT INTO rules (workspace, effect, text, expires, created_at, approval) VALUES (?, ?, ?, ?, ?, ?)`,
				r.Workspace, r.Effect, r.Text, ns(r.Expires), ns(r.CreatedAt), r.Approval); err != nil {
				return fmt.Errorf("sqlite: save rule: %w", err)
			}
		}
		if err := appendEvent(ctx, tx, store.EventAnswered, id, now); err != nil {
			return err
		}
		a.State, a.Answer, a.For, a.AnsweredAt, a.AnsweredBy = store.Answered, answer, forDur, fromNS(ns(now)), by
		out = a
		return nil
	})
	return out, err
}

func (s *Store) ExpireApprovals(ctx context.Context, now time.Time) ([]store.Approval, error) {
	// Most calls find nothing: look with a read first, so the write lock
	// is taken only when something expires.
	var n int
	if err := s.queryRow(ctx, `SELECT count(*) FROM approvals WHERE state = 'pending' AND expires_at <= ?`, ns(now)).Scan(&n); err != nil {
		return nil, fmt.Errorf("sqlite: expire: %w", err)
	}
	if n == 0 {
		return nil, nil
	}
	var out []store.Approval
	err := s.tx(ctx, func(tx *sql.Tx) error {
		out = nil
		rows, err := tx.QueryContext(ctx, `SELECT `+approvalCols+` FROM approvals WHERE state = 'pending' AND expires_at <= ? ORDER BY created_at, id`, ns(now))
		if err != nil {
			return fmt.Errorf("sqlite: expire: %w", err)
		}
		for rows.Next() {
			a, err := scanApproval(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("sqlite: expire: %w", err)
			}
			out = append(out, a)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("sqlite: expire: %w", err)
		}
		for i := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET state = 'expired', answer = 'deny', answered_at = ? WHERE id = ?`, ns(now), out[i].ID); err != nil {
				return fmt.Errorf("sqlite: expire: %w", err)
			}
			if err := appendEvent(ctx, tx, store.EventExpired, out[i].ID, now); err != nil {
				return err
			}
			out[i].State, out[i].Answer, out[i].AnsweredAt = store.Expired, "deny", fromNS(ns(now))
		}
		return nil
	})
	return out, err
}

func (s *Store) UseAnswer(ctx context.Context, id string) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		a, err := getApproval(ctx, tx, id)
		if err != nil {
			return err
		}
		if a.State == store.Pending {
			return fmt.Errorf("sqlite: approval %s has no answer yet", id)
		}
		res, err := tx.ExecContext(ctx, `UPDATE approvals SET used = 1 WHERE id = ? AND used = 0`, id)
		if err != nil {
			return fmt.Errorf("sqlite: use answer: %w", err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return store.ErrAnswered
		}
		return nil
	})
}

func (s *Store) Rules(ctx context.Context, workspace string, now time.Time) ([]store.Rule, error) {
	rows, err := s.query(ctx, `SELECT workspace, effect, text, expires, created_at, approval FROM rules
		WHERE workspace = ? AND (expires = 0 OR expires > ?) ORDER BY id`, workspace, ns(now))
	if err != nil {
		return nil, fmt.Errorf("sqlite: rules: %w", err)
	}
	defer rows.Close()
	var out []store.Rule
	for rows.Next() {
		var r store.Rule
		var exp, created int64
		if err := rows.Scan(&r.Workspace, &r.Effect, &r.Text, &exp, &created, &r.Approval); err != nil {
			return nil, fmt.Errorf("sqlite: rules: %w", err)
		}
		r.Expires, r.CreatedAt = fromNS(exp), fromNS(created)
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *Store) Events(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	q := `SELECT seq, kind, approval, time FROM events WHERE seq > ? ORDER BY seq`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlite: events: %w", err)
	}
	defer rows.Close()
	var out []store.Event
	for rows.Next() {
		var e store.Event
		var t int64
		if err := rows.Scan(&e.Seq, &e.Kind, &e.Approval, &t); err != nil {
			return nil, fmt.Errorf("sqlite: events: %w", err)
		}
		e.Time = fromNS(t)
		out = append(out, e)
	}
	return out, rows.Err()
}
