package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/audit"
	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
)

// defaultAuditLimit is how many events Audit returns when the filter sets
// no limit.
const defaultAuditLimit = 1000

// AppendAudit stores e; it is durable when it returns (the commit waits
// for the WAL flush unless the server runs with synchronous_commit off).
// Like audit.Log.Append, a zero Time is set to now, times are kept in UTC
// and the text of any grant token in the event is redacted.
//
// Every decision appends one event, so this is the daemon's hottest write:
// appends that arrive while one batch commits go together in the next
// (see auditCommitter), one transaction and one WAL flush for many events.
func (s *Store) AppendAudit(ctx context.Context, e audit.Event) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	e.Time = e.Time.UTC()
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("postgres: encoding a %q audit event: %w", e.Type, err)
	}
	row := auditRow{time: e.Time, tool: e.Tool, decision: e.Decision, event: grant.Redact(string(line))}
	if err := s.audit.Add(ctx, row); err != nil {
		return fmt.Errorf("postgres: appending an audit event: %w", err)
	}
	return nil
}

// Audit returns the events f selects, oldest first: the first f.Limit of
// them from f.Since on.
func (s *Store) Audit(ctx context.Context, f store.AuditFilter) ([]audit.Event, error) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if !f.Since.IsZero() {
		add("time >= $%d", f.Since)
	}
	if f.Tool != "" {
		add("tool = $%d", f.Tool)
	}
	if f.Decision != "" {
		add("decision = $%d", f.Decision)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = defaultAuditLimit
	}
	q := `SELECT event FROM audit`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	args = append(args, limit)
	q += fmt.Sprintf(` ORDER BY time, seq LIMIT $%d`, len(args))
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the audit log: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (audit.Event, error) {
		var line string
		if err := r.Scan(&line); err != nil {
			return audit.Event{}, err
		}
		// Numbers in Detail read back as json.Number, as audit.Read gives them.
		dec := json.NewDecoder(bytes.NewReader([]byte(line)))
		dec.UseNumber()
		var e audit.Event
		if err := dec.Decode(&e); err != nil {
			return audit.Event{}, fmt.Errorf("decoding a stored event: %w", err)
		}
		return e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the audit log: %w", err)
	}
	return list, nil
}
