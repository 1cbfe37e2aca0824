// Package postgres is the daemon's store.Store on PostgreSQL, for several
// airlock serve replicas that share one database: any replica answers an
// approval another opened, and a grant spent on one is refused on all.
//
// Every state change is one transaction. Races between replicas are
// settled by the database, not by the processes: an answer locks the
// approval's row (SELECT ... FOR UPDATE) and checks it is still pending and
// unexpired, so of two concurrent answers exactly one wins; a grant is spent
// with INSERT ... ON CONFLICT DO NOTHING, so of two concurrent spends
// exactly one inserts; the grant key is created the same way and read back,
// so every replica uses the first key written.
//
// [Open] runs the schema migrations (see migrate.go) under an advisory
// lock, so replicas starting together do not race to create tables. The
// tables live in the connection's current schema: a DSN may pick one with
// the search_path parameter, which is how the tests keep apart.
//
// Importing the package registers the postgres:// and postgresql://
// schemes with store.Open.
//
// What this package does not do: decide anything, expire approvals on its
// own (the server calls ExpireApprovals), or push events (the server polls
// Events).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/airlockhq/airlock/server/store"
)

// Store is a store.Store on one PostgreSQL database (schema). It is safe
// for concurrent use, and any number of Stores in any number of processes
// may share the database.
type Store struct {
	pool  *pgxpool.Pool
	audit *store.GroupCommit[auditRow]
	// closeOnce makes Close safe to call twice.
	closeOnce sync.Once
	// spends counts Spend calls, to sweep long-expired ledger rows now and
	// then instead of on every call.
	spends atomic.Uint64
}

var _ store.Store = (*Store)(nil)

// init registers the postgres scheme (store.Scheme maps postgresql://
// to it too), so store.Open("postgres://...") opens a Store here.
func init() {
	store.Register("postgres", func(ctx context.Context, dsn string) (store.Store, error) {
		return Open(ctx, dsn)
	})
}

// Open connects to the database dsn names (postgres://user:pass@host:port/db,
// with any libpq-style parameters pgx accepts, e.g. sslmode, search_path or
// pool_max_conns) and brings its schema up to date.
func Open(ctx context.Context, dsn string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: reading the DSN: %w (want postgres://USER:PASSWORD@HOST:PORT/DB?sslmode=...)", err)
	}
	if !strings.Contains(dsn, "pool_max_conns") {
		// pgxpool's default, max(4, CPUs), makes a busy daemon queue for
		// connections while each holds one through a round trip and a
		// WAL flush; more connections let PostgreSQL flush many commits
		// at once. Two replicas at this size stay well under the server's
		// default max_connections (100).
		cfg.MaxConns = max(cfg.MaxConns, defaultMaxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("postgres: connecting to %s:%d: %w; check that the server runs and the DSN's user and password", cfg.ConnConfig.Host, cfg.ConnConfig.Port, err)
	}
	s := &Store{pool: pool}
	if err := s.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	s.audit = store.NewGroupCommit(maxAuditBatch, func(b []auditRow) error { return commitAudit(pool, b) })
	return s, nil
}

// defaultMaxConns is the pool size unless the DSN sets pool_max_conns.
const defaultMaxConns = 16

// Close finishes the audit batch in progress and closes the connection
// pool.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		s.audit.Close()
		s.pool.Close()
	})
	return nil
}

// inTx runs fn in one transaction and commits it. A serialization failure
// or a deadlock that PostgreSQL broke runs fn again, from the start, in a
// new transaction: neither can happen with the statements this package
// uses at READ COMMITTED as far as we know, but a retry is cheap insurance
// and fn is always safe to repeat.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	const attempts = 5
	var err error
	for range attempts {
		err = pgx.BeginFunc(ctx, s.pool, fn)
		if !retryable(err) {
			return err
		}
	}
	return err
}

func retryable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01": // serialization_failure, deadlock_detected
			return true
		}
	}
	return false
}

// Advisory lock keys: the first half of pg_advisory_xact_lock(int, int)
// names what is locked, the second is the hash of the current schema, so
// stores in different schemas of one database (the tests) do not wait on
// each other.
const (
	lockMigrate = 0x61697201 // "air" 1
	lockEvents  = 0x61697202 // "air" 2
	lockOpen    = 0x61697203 // "air" 3
)

func advisoryLock(ctx context.Context, tx pgx.Tx, key int32) error {
	_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(coalesce(current_schema(), '')))`, key)
	return err
}
