package storetest_test

import (
	"path/filepath"
	"testing"

	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/store/sqlite"
	"github.com/airlockhq/airlock/server/store/storetest"
)

// The SQLite store runs the suite here, through store.Open as airlock
// serve --db opens it (package postgres runs it on PostgreSQL).

func TestSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := store.Open(t.Context(), "sqlite:"+filepath.Join(t.TempDir(), "airlock.db"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// The import registers the scheme; naming it keeps it imported.
var _ = sqlite.Open
