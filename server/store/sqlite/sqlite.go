// Package sqlite is the daemon's embedded Store: one SQLite database file
// through the pure-Go driver modernc.org/sqlite (no cgo). It registers the
// "sqlite" scheme with package store: sqlite:PATH.
//
// Durability: the database runs in WAL mode with synchronous=FULL, so the
// WAL is fsynced at every commit and a state change is on disk when its
// method returns, even if the machine loses power right after. (With
// synchronous=NORMAL a WAL database stays consistent but may lose the last
// commits on power loss, which would lose an acknowledged answer.) Every
// state change is one transaction. Writes go through one connection, so
// they queue in the process instead of spinning on SQLite's busy handler;
// the busy timeout covers other processes (airlock serve token create
// while the daemon runs). Reads use a pool of their own.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/airlockhq/airlock/server/store"
)

func init() {
	store.Register("sqlite", func(ctx context.Context, dsn string) (store.Store, error) {
		path, ok := strings.CutPrefix(dsn, "sqlite:")
		if !ok || path == "" {
			return nil, fmt.Errorf("sqlite: %q: write sqlite:PATH", dsn)
		}
		return Open(ctx, path)
	})
}

// Store is the SQLite Store. Create it with Open.
type Store struct {
	path string
	w    *sql.DB // one connection: every write
	r    *sql.DB // reads
	ac   *store.GroupCommit[auditRow]

	stmts sync.Map // query text → *sql.Stmt on r: SQLite's parser is a read's largest cost

	closeOnce sync.Once
	closeErr  error
}

var _ store.Store = (*Store)(nil)

// busyTimeoutMS is how long a write waits for another process's write.
const busyTimeoutMS = 10000

// Open opens (creating it and its directory if needed) the database at
// path and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("sqlite: no database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("sqlite: create the database's directory: %w", err)
	}
	// The file holds token hashes and the grant key: only its owner reads it.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("sqlite: open %s: %w", abs, err)
	}
	f.Close()
	q := url.Values{}
	for _, p := range []string{
		fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS),
		"journal_mode(WAL)",
		"synchronous(FULL)",
		"foreign_keys(1)",
		// Reads through a memory map instead of a pread per page.
		"mmap_size(268435456)",
	} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate") // a write transaction takes the lock at BEGIN, never upgrades
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	w, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	r, err := sql.Open("sqlite", dsn)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlite: %w", err)
	}
	r.SetMaxOpenConns(4)
	r.SetMaxIdleConns(4)
	s := &Store{path: abs, w: w, r: r}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("sqlite: %s: %w", abs, err)
	}
	s.ac = store.NewGroupCommit(maxAuditBatch, func(b []auditRow) error { return commitAudit(w, b) })
	return s, nil
}

// Path is the database file.
func (s *Store) Path() string { return s.path }

// Close stops the audit writer and closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.ac != nil {
			s.ac.Close()
		}
		s.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
		s.closeErr = errors.Join(s.w.Close(), s.r.Close())
	})
	return s.closeErr
}

// tx runs fn in one write transaction, committed when fn returns nil.
func (s *Store) tx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: commit: %w", err)
	}
	return nil
}

// prepared returns the read statement for q, prepared once.
func (s *Store) prepared(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.r.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// query runs a read through its prepared statement.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := s.prepared(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

// rowScanner is *sql.Row, or the error preparing it.
type rowScanner struct {
	row *sql.Row
	err error
}

func (r rowScanner) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	return r.row.Scan(dest...)
}

// queryRow runs a one-row read through its prepared statement.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) rowScanner {
	st, err := s.prepared(ctx, q)
	if err != nil {
		return rowScanner{err: err}
	}
	return rowScanner{row: st.QueryRowContext(ctx, args...)}
}
