package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/server/store"
)

const approvalColumns = `id, call_hash, tool, input, workspace, agent, session, view,
	state, created_at, expires_at, answer, for_ns, answered_at, answered_by, used`

func scanApproval(row pgx.Row) (store.Approval, error) {
	var (
		a          store.Approval
		state      string
		forNS      int64
		answeredAt *time.Time
	)
	err := row.Scan(&a.ID, &a.CallHash, &a.Tool, &a.Input, &a.Workspace, &a.Agent, &a.Session, &a.View,
		&state, &a.CreatedAt, &a.ExpiresAt, &a.Answer, &forNS, &answeredAt, &a.AnsweredBy, &a.Used)
	if err != nil {
		return store.Approval{}, err
	}
	a.State = store.State(state)
	a.For = time.Duration(forNS)
	if answeredAt != nil {
		a.AnsweredAt = *answeredAt
	}
	return a, nil
}

func collectApprovals(rows pgx.Rows) ([]store.Approval, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Approval, error) { return scanApproval(r) })
}

// OpenApproval stores a as pending and appends its EventOpened.
func (s *Store) OpenApproval(ctx context.Context, a store.Approval) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Opens queue on one lock (they are rare next to decisions), so
		// no other replica opens the same call between the check and the
		// insert.
		if err := advisoryLock(ctx, tx, lockOpen); err != nil {
			return err
		}
		var pending bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM approvals
	WHERE call_hash = $1 AND state = 'pending' AND expires_at > $2)`, a.CallHash, a.CreatedAt).Scan(&pending); err != nil {
			return err
		}
		if pending {
			return store.ErrCallPending
		}
		_, err := tx.Exec(ctx, `INSERT INTO approvals
	(id, call_hash, tool, input, workspace, agent, session, view, state, created_at, expires_at)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'pending', $9, $10)`,
			a.ID, a.CallHash, a.Tool, []byte(a.Input), a.Workspace, a.Agent, a.Session, []byte(a.View),
			a.CreatedAt, a.ExpiresAt)
		if err != nil {
			return err
		}
		return appendEvents(ctx, tx, store.EventOpened, a.CreatedAt, a.ID)
	})
	if err != nil {
		return fmt.Errorf("postgres: opening approval %s: %w", a.ID, err)
	}
	return nil
}

// Approval returns the approval id names.
func (s *Store) Approval(ctx context.Context, id string) (store.Approval, error) {
	a, err := scanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("postgres: reading approval %s: %w", id, err)
	}
	return a, nil
}

// PendingApprovals lists the approvals still pending at now (an approval
// past its expiry that ExpireApprovals has not reached yet is left out),
// oldest first.
func (s *Store) PendingApprovals(ctx context.Context, now time.Time) ([]store.Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+` FROM approvals
	WHERE state = 'pending' AND expires_at > $1 ORDER BY created_at, id`, now)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing pending approvals: %w", err)
	}
	list, err := collectApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: listing pending approvals: %w", err)
	}
	return list, nil
}

// ApprovalForCall returns the newest approval of the call callHash names
// that is pending at now, or answered or expired with its answer unused.
func (s *Store) ApprovalForCall(ctx context.Context, callHash string, now time.Time) (store.Approval, error) {
	a, err := scanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalColumns+` FROM approvals
	WHERE call_hash = $1 AND ((state = 'pending' AND expires_at > $2) OR (state <> 'pending' AND NOT used))
	ORDER BY created_at DESC, id DESC LIMIT 1`, callHash, now))
	if errors.Is(err, pgx.ErrNoRows) {
		return store.Approval{}, fmt.Errorf("approval for call %s: %w", callHash, store.ErrNotFound)
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("postgres: finding the approval of a call: %w", err)
	}
	return a, nil
}

// AnswerApproval answers the approval if it is pending and expires after
// now. The row stays locked from the check to the commit, so of
// concurrent answers (on any replica) exactly one finds it pending.
func (s *Store) AnswerApproval(ctx context.Context, id, answer string, forDur time.Duration, by string, now time.Time, rules []store.Rule) (store.Approval, error) {
	var out store.Approval
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			state   string
			expires time.Time
		)
		err := tx.QueryRow(ctx, `SELECT state, expires_at FROM approvals WHERE id = $1 FOR UPDATE`, id).Scan(&state, &expires)
		if errors.Is(err, pgx.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return err
		}
		switch {
		case state == string(store.Answered):
			return store.ErrAnswered
		case state == string(store.Expired) || !expires.After(now):
			return store.ErrExpired
		}
		out, err = scanApproval(tx.QueryRow(ctx, `UPDATE approvals
	SET state = 'answered', answer = $2, for_ns = $3, answered_at = $4, answered_by = $5
	WHERE id = $1 RETURNING `+approvalColumns, id, answer, int64(forDur), now, by))
		if err != nil {
			return err
		}
		for _, r := range rules {
			if err := insertRule(ctx, tx, r); err != nil {
				return err
			}
		}
		return appendEvents(ctx, tx, store.EventAnswered, now, id)
	})
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrAnswered) || errors.Is(err, store.ErrExpired) {
		return store.Approval{}, fmt.Errorf("approval %s: %w", id, err)
	}
	if err != nil {
		return store.Approval{}, fmt.Errorf("postgres: answering approval %s: %w", id, err)
	}
	return out, nil
}

// ExpireApprovals denies every approval pending past its expiry at now.
// SKIP LOCKED leaves alone the rows another transaction holds: an answer
// being committed (which wins or fails on its own), or another replica's
// ExpireApprovals (which expires them itself), so concurrent calls never
// wait on each other and no approval is expired twice.
func (s *Store) ExpireApprovals(ctx context.Context, now time.Time) ([]store.Approval, error) {
	var out []store.Approval
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `UPDATE approvals
	SET state = 'expired', answer = 'deny', answered_at = $1, answered_by = ''
	WHERE id IN (
		SELECT id FROM approvals WHERE state = 'pending' AND expires_at <= $1
		ORDER BY id FOR UPDATE SKIP LOCKED)
	RETURNING `+approvalColumns, now)
		if err != nil {
			return err
		}
		if out, err = collectApprovals(rows); err != nil {
			return err
		}
		ids := make([]string, len(out))
		for i, a := range out {
			ids[i] = a.ID
		}
		return appendEvents(ctx, tx, store.EventExpired, now, ids...)
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: expiring approvals: %w", err)
	}
	return out, nil
}

// UseAnswer marks the answer of an answered (or expired) approval as taken.
func (s *Store) UseAnswer(ctx context.Context, id string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE approvals SET used = true
	WHERE id = $1 AND state <> 'pending' AND NOT used`, id)
	if err != nil {
		return fmt.Errorf("postgres: using the answer of approval %s: %w", id, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	a, err := s.Approval(ctx, id)
	if err != nil {
		return err
	}
	if a.State == store.Pending {
		return fmt.Errorf("approval %s is still pending: there is no answer to use", id)
	}
	return fmt.Errorf("approval %s: its answer was used already: %w", id, store.ErrAnswered)
}

// appendEvents appends one event of kind per approval id, in the caller's
// transaction.
//
// Events' Seq comes from an identity column, and a sequence hands out
// numbers when the INSERT runs, not when its transaction commits: left
// alone, a transaction could take 7, another take 8 and commit first, and
// a replica polling Events(after=6) would see 8, move its cursor past 7 and
// never see 7. So the insert takes a transaction-level advisory lock first,
// held until commit: one transaction at a time holds numbers it has not
// committed, and PostgreSQL makes a commit visible before it releases the
// transaction's locks, so by the time anyone can take number n+1, n is
// either visible or rolled back (a gap, which pollers skip harmlessly).
// The lock is taken last in every transaction, after all row locks, so it
// is held only for the insert and the commit, and no transaction holding
// it waits on a row lock (which keeps it free of deadlocks).
func appendEvents(ctx context.Context, tx pgx.Tx, kind store.EventKind, at time.Time, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := advisoryLock(ctx, tx, lockEvents); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO events (kind, approval, time)
	SELECT $1, id, $3 FROM unnest($2::text[]) WITH ORDINALITY AS t(id, n) ORDER BY n`,
		string(kind), ids, at)
	return err
}

// Events returns the feed events after the Seq after, oldest first, at
// most limit of them (0: all).
func (s *Store) Events(ctx context.Context, after int64, limit int) ([]store.Event, error) {
	q := `SELECT seq, kind, approval, time FROM events WHERE seq > $1 ORDER BY seq`
	args := []any{after}
	if limit > 0 {
		q += ` LIMIT $2`
		args = append(args, limit)
	}
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading events: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Event, error) {
		var (
			e    store.Event
			kind string
		)
		err := r.Scan(&e.Seq, &kind, &e.Approval, &e.Time)
		e.Kind = store.EventKind(kind)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading events: %w", err)
	}
	return list, nil
}
