package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// migrations are the schema's versions: migrations[i] takes the schema
// from version i to i+1. Append only; never edit a released step.
// Times are Unix nanoseconds (UTC), 0 for none.
var migrations = []string{
	// 1: the first schema.
	`
CREATE TABLE tokens (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL,
	hash       BLOB NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);
CREATE TABLE approvals (
	id          TEXT PRIMARY KEY,
	call_hash   TEXT NOT NULL,
	tool        TEXT NOT NULL,
	input       BLOB NOT NULL,
	workspace   TEXT NOT NULL,
	agent       TEXT NOT NULL,
	session     TEXT NOT NULL,
	view        BLOB NOT NULL,
	state       TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	answer      TEXT NOT NULL DEFAULT '',
	for_ns      INTEGER NOT NULL DEFAULT 0,
	answered_at INTEGER NOT NULL DEFAULT 0,
	answered_by TEXT NOT NULL DEFAULT '',
	used        INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX approvals_pending ON approvals (state, expires_at);
CREATE INDEX approvals_call ON approvals (call_hash, created_at);
CREATE TABLE rules (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	workspace  TEXT NOT NULL,
	effect     TEXT NOT NULL,
	text       TEXT NOT NULL,
	expires    INTEGER NOT NULL,
	created_at INTEGER NOT NULL,
	approval   TEXT NOT NULL
);
CREATE INDEX rules_workspace ON rules (workspace);
CREATE TABLE spent (
	mac     BLOB PRIMARY KEY,
	expires INTEGER NOT NULL
);
CREATE TABLE grant_key (
	id  INTEGER PRIMARY KEY CHECK (id = 1),
	key BLOB NOT NULL
);
CREATE TABLE audit (
	seq      INTEGER PRIMARY KEY AUTOINCREMENT,
	time     INTEGER NOT NULL,
	tool     TEXT NOT NULL,
	decision TEXT NOT NULL,
	event    BLOB NOT NULL
);
CREATE INDEX audit_time ON audit (time);
CREATE TABLE events (
	seq      INTEGER PRIMARY KEY AUTOINCREMENT,
	kind     TEXT NOT NULL,
	approval TEXT NOT NULL,
	time     INTEGER NOT NULL
);
`,
	// 2: token roles, scopes, expiry and revocation; registered
	// workspaces. Tokens made before roles become person tokens: they can
	// still answer, but no longer decide as any agent they name.
	`
ALTER TABLE tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'person';
ALTER TABLE tokens ADD COLUMN agent TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN user_name TEXT NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN workspaces BLOB NOT NULL DEFAULT '[]';
ALTER TABLE tokens ADD COLUMN expires_at INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tokens ADD COLUMN revoked_at INTEGER NOT NULL DEFAULT 0;
CREATE TABLE workspaces (
	path     TEXT PRIMARY KEY,
	added_at INTEGER NOT NULL
);
CREATE INDEX approvals_pending_agent ON approvals (agent, state);
CREATE INDEX approvals_pending_workspace ON approvals (workspace, state);
`,
}

// migrate brings the schema up to the newest version in one transaction
// with the version bump (SQLite's DDL is transactional), so a crash
// mid-way leaves the schema as it was. A database from a newer airlock is
// refused.
func (s *Store) migrate(ctx context.Context) error {
	return s.tx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return fmt.Errorf("migrate: %w", err)
		}
		var v int
		err := tx.QueryRowContext(ctx, `SELECT version FROM schema_version`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (0)`); err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
		case err != nil:
			return fmt.Errorf("migrate: read the schema version: %w", err)
		}
		if v > len(migrations) {
			return fmt.Errorf("the database has schema version %d, newer than this airlock knows (%d): use a newer airlock", v, len(migrations))
		}
		for ; v < len(migrations); v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate to version %d: %w", v+1, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE schema_version SET version = ?`, v+1); err != nil {
				return fmt.Errorf("migrate: %w", err)
			}
		}
		return nil
	})
}

// SchemaVersion returns the database's schema version.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.queryRow(ctx, `SELECT version FROM schema_version`).Scan(&v)
	return v, err
}
