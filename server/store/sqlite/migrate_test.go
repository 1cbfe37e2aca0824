package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/server/store"
)

// TestMigrateTokensToRoles: a database at schema version 1 with a token
// opens at the newest version, and the token made before roles is a
// person's (it answers, it decides as no agent).
func TestMigrateTokensToRoles(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_version (version INTEGER NOT NULL)`,
		migrations[0],
		`INSERT INTO schema_version (version) VALUES (1)`,
		`INSERT INTO tokens (id, name, hash, created_at) VALUES ('tok_old', 'laptop', x'0102', 1)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}
	db.Close()
	s := openTest(t, path)
	if v, err := s.SchemaVersion(ctx); err != nil || v != len(migrations) {
		t.Fatalf("version %d, %v; want %d", v, err, len(migrations))
	}
	list, err := s.Tokens(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("tokens %+v, %v", list, err)
	}
	if tok := list[0]; tok.ID != "tok_old" || tok.Role != store.RolePerson || tok.Agent != "" || tok.Workspaces != nil || !tok.RevokedAt.IsZero() || !tok.ExpiresAt.IsZero() {
		t.Fatalf("the old token after migration: %+v", tok)
	}
	if ws, err := s.Workspaces(ctx); err != nil || len(ws) != 0 {
		t.Fatalf("workspaces after migration: %+v, %v", ws, err)
	}
}
