package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// auditRow is one audit event on its way to the table; done receives the
// outcome of the transaction that carried it.
type auditRow struct {
	time           time.Time
	tool, decision string
	event          string
	done           chan error
}

// maxAuditBatch bounds one group commit.
const maxAuditBatch = 256

// auditCommitter is the group commit behind AppendAudit: one goroutine
// takes the rows waiting, inserts them in one statement and commits, and
// tells each appender the outcome. While it waits for a commit, the next
// batch gathers; so under load each commit (a round trip and a WAL flush)
// carries many events, and with one appender it costs one channel hop.
type auditCommitter struct {
	pool *pgxpool.Pool
	in   chan auditRow
	quit chan struct{}
	done chan struct{}
}

var errClosed = errors.New("the store is closed")

func newAuditCommitter(pool *pgxpool.Pool) *auditCommitter {
	c := &auditCommitter{pool: pool, in: make(chan auditRow), quit: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

func (c *auditCommitter) append(ctx context.Context, r auditRow) error {
	r.done = make(chan error, 1)
	select {
	case c.in <- r:
	case <-c.quit:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once handed over, the row is committed or refused whatever ctx
	// does: wait for the outcome, so a caller never reports as lost an
	// event that is then written, or as written one that was not.
	return <-r.done
}

// close stops the loop after the batch in progress.
func (c *auditCommitter) close() {
	close(c.quit)
	<-c.done
}

func (c *auditCommitter) loop() {
	defer close(c.done)
	for {
		var batch []auditRow
		select {
		case r := <-c.in:
			batch = append(batch, r)
		case <-c.quit:
			return
		}
	gather:
		for len(batch) < maxAuditBatch {
			select {
			case r := <-c.in:
				batch = append(batch, r)
			default:
				break gather
			}
		}
		err := c.commit(batch)
		for _, r := range batch {
			r.done <- err
		}
	}
}

// commit inserts batch in one statement, one implicit transaction.
func (c *auditCommitter) commit(batch []auditRow) error {
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
	_, err := c.pool.Exec(ctx, `INSERT INTO audit (time, tool, decision, event)
	SELECT t.time, t.tool, t.decision, t.event
	FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(time, tool, decision, event, n)
	ORDER BY t.n`, times, tools, decisions, events)
	return err
}
