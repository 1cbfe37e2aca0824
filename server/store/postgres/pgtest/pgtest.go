// Package pgtest gives tests a PostgreSQL database of their own on the
// server that $AIRLOCK_TEST_POSTGRES names (.ci/postgres.sh starts one and
// .ci/run exports it). Each call makes a fresh schema and returns a DSN
// whose search_path selects it, so tests running at once never see each
// other's tables; the schema is dropped when the test ends.
//
// Without AIRLOCK_TEST_POSTGRES the test is skipped, unless
// AIRLOCK_REQUIRE_POSTGRES=1 (CI), where it fails instead.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// DSN returns a DSN for a new, empty schema, dropped at the end of t.
func DSN(t testing.TB) string {
	t.Helper()
	base := BaseDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to AIRLOCK_TEST_POSTGRES: %v", err)
	}
	defer conn.Close(context.Background())
	schema := "airlock_test_" + randomHex(t)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("AIRLOCK_TEST_POSTGRES is not a URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// BaseDSN returns $AIRLOCK_TEST_POSTGRES, skipping t (or failing it, with
// AIRLOCK_REQUIRE_POSTGRES=1) when it is not set.
func BaseDSN(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("AIRLOCK_TEST_POSTGRES")
	if dsn != "" {
		return dsn
	}
	const how = "AIRLOCK_TEST_POSTGRES is not set; start a server with .ci/postgres.sh start DIR and export AIRLOCK_TEST_POSTGRES=$(cat DIR/dsn)"
	if os.Getenv("AIRLOCK_REQUIRE_POSTGRES") == "1" {
		t.Fatal(how + " (AIRLOCK_REQUIRE_POSTGRES=1 makes this a failure)")
	}
	t.Skip(how)
	return ""
}

func randomHex(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
