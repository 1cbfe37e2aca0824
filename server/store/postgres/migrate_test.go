package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/store/postgres"
	"github.com/airlockhq/airlock/server/store/postgres/pgtest"
)

// TestMigrateTokensToRoles: a schema at version 1 with a token migrates,
// and the token made before roles is a person's.
func TestMigrateTokensToRoles(t *testing.T) {
	dsn := pgtest.DSN(t)
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	for _, q := range []string{
		`CREATE TABLE schema_version (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
		postgres.Migrations[0],
		`INSERT INTO schema_version (version) VALUES (1)`,
		`INSERT INTO tokens (id, name, hash, created_at) VALUES ('tok_old', 'laptop', '\x0102', now())`,
	} {
		if _, err := conn.Exec(t.Context(), q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	s := open(t, dsn)
	list, err := s.Tokens(t.Context())
	if err != nil || len(list) != 1 {
		t.Fatalf("tokens %+v, %v", list, err)
	}
	if tok := list[0]; tok.ID != "tok_old" || tok.Role != store.RolePerson || tok.Agent != "" || tok.Workspaces != nil || !tok.RevokedAt.IsZero() || !tok.ExpiresAt.IsZero() {
		t.Fatalf("the old token after migration: %+v", tok)
	}
}
