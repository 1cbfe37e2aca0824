package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// migrations are the schema's versions: migrations[i] takes the schema
// from version i to i+1. Append only; never edit a migration that has
// shipped, since databases already at its version will not run it again.
var migrations = []string{
	// 1: everything the daemon keeps.
	`
CREATE TABLE tokens (
	id         text PRIMARY KEY,
	name       text NOT NULL,
	hash       bytea NOT NULL UNIQUE,
	created_at timestamptz NOT NULL
);

-- input and view are bytea, not jsonb: they come back byte for byte as the
-- server stored them (the call hash covers the input's exact bytes), and
-- jsonb would refuse a \u0000 that JSON allows.
CREATE TABLE approvals (
	id          text PRIMARY KEY,
	call_hash   text NOT NULL,
	tool        text NOT NULL,
	input       bytea NOT NULL,
	workspace   text NOT NULL,
	agent       text NOT NULL,
	session     text NOT NULL,
	view        bytea,
	state       text NOT NULL CHECK (state IN ('pending', 'answered', 'expired')),
	created_at  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL,
	answer      text NOT NULL DEFAULT '',
	for_ns      bigint NOT NULL DEFAULT 0,
	answered_at timestamptz,
	answered_by text NOT NULL DEFAULT '',
	used        boolean NOT NULL DEFAULT false
);
CREATE INDEX approvals_pending ON approvals (created_at, id) WHERE state = 'pending';
CREATE INDEX approvals_call ON approvals (call_hash, created_at DESC, id DESC);

CREATE TABLE rules (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	workspace  text NOT NULL,
	effect     text NOT NULL CHECK (effect IN ('allow', 'deny')),
	text       text NOT NULL,
	expires    timestamptz,
	created_at timestamptz NOT NULL,
	approval   text NOT NULL
);
CREATE INDEX rules_workspace ON rules (workspace, id);

CREATE TABLE spent_grants (
	mac     bytea PRIMARY KEY,
	expires timestamptz NOT NULL
);

CREATE TABLE grant_key (
	id  int PRIMARY KEY CHECK (id = 1),
	key bytea NOT NULL
);

-- The event as JSON (text: json.Marshal's output is valid UTF-8), with the
-- columns the filters use beside it.
CREATE TABLE audit (
	seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time     timestamptz NOT NULL,
	tool     text NOT NULL,
	decision text NOT NULL,
	event    text NOT NULL
);
CREATE INDEX audit_time ON audit (time, seq);

CREATE TABLE events (
	seq      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	kind     text NOT NULL,
	approval text NOT NULL,
	time     timestamptz NOT NULL
);
`,
	// 2: token roles, scopes, expiry and revocation; registered
	// workspaces. Tokens made before roles become person tokens: they can
	// still answer, but no longer decide as any agent they name.
	`
ALTER TABLE tokens ADD COLUMN role text NOT NULL DEFAULT 'person' CHECK (role IN ('agent', 'person', 'operator'));
ALTER TABLE tokens ADD COLUMN agent text NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN user_name text NOT NULL DEFAULT '';
ALTER TABLE tokens ADD COLUMN workspaces text[] NOT NULL DEFAULT '{}';
ALTER TABLE tokens ADD COLUMN expires_at timestamptz;
ALTER TABLE tokens ADD COLUMN revoked_at timestamptz;
CREATE TABLE workspaces (
	path     text PRIMARY KEY,
	added_at timestamptz NOT NULL
);
CREATE INDEX approvals_pending_agent ON approvals (agent) WHERE state = 'pending';
CREATE INDEX approvals_pending_workspace ON approvals (workspace) WHERE state = 'pending';
`,
}

// migrate brings the schema to len(migrations), in one transaction under
// an advisory lock: replicas starting together queue here, and the first
// one migrates while the others then find nothing to do. (CREATE TABLE IF
// NOT EXISTS alone is not enough: two sessions creating one table at once
// can both pass the check and one fails on the catalog's unique index.)
// DDL is transactional in PostgreSQL, so a migration that fails leaves the
// schema at the version before it.
func (s *Store) migrate(ctx context.Context) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if err := advisoryLock(ctx, tx, lockMigrate); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (
	version    int PRIMARY KEY,
	applied_at timestamptz NOT NULL DEFAULT now()
)`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_version`).Scan(&have); err != nil {
			return err
		}
		if have > len(migrations) {
			return fmt.Errorf("the database's schema is at version %d but this airlock knows only up to %d: upgrade airlock, or point --db at another database", have, len(migrations))
		}
		for v := have; v < len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migration %d: %w", v+1, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES ($1)`, v+1); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: migrating the schema: %w", err)
	}
	return nil
}
