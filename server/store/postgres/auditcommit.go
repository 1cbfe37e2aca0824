package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// auditRow is one audit event on its way to the table.
type auditRow struct {
	time           time.Time
	tool, decision string
	event          string
}

// maxAuditBatch bounds one group commit.
const maxAuditBatch = 256

// commitAudit inserts one group commit's rows in one statement, one
// implicit transaction.
func commitAudit(pool *pgxpool.Pool, batch []auditRow) error {
	times := make([]time.Time, len(batch))
	tools := make([]string, len(batch))
	decisions := make([]string, len(batch))
	events := make([]string, len(batch))
	for i, r := range batch {
		times[i], tools[i], decisions[i], events[i] = r.time, r.tool, r.decision, r.event
	}
	// Not the callers' contexts: the batch is theirs together, and one
	// caller giving up must not fail the others' appends.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := pool.Exec(ctx, `INSERT INTO audit (time, tool, decision, event)
	SELECT t.time, t.tool, t.decision, t.event
	FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(time, tool, decision, event, n)
	ORDER BY t.n`, times, tools, decisions, events)
	return err
}
