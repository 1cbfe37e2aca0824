package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/airlockhq/airlock/grant"
	"github.com/airlockhq/airlock/server/store"
	"github.com/airlockhq/airlock/server/store/postgres"
	"github.com/airlockhq/airlock/server/store/postgres/pgtest"
	"github.com/airlockhq/airlock/server/store/storetest"
)

func open(t *testing.T, dsn string) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// TestConformance runs the suite through store.Open, as airlock serve
// --db opens the store, alternating the two schemes this package registers.
func TestConformance(t *testing.T) {
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		dsn := pgtest.DSN(t)
		if n++; n%2 == 0 {
			dsn = "postgresql" + strings.TrimPrefix(dsn, "postgres")
		}
		s, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestReplicasStartTogether opens many stores on one empty schema at once,
// as replicas starting together do: the migration runs once, under the
// advisory lock, and every Open succeeds.
func TestReplicasStartTogether(t *testing.T) {
	dsn := pgtest.DSN(t)
	const n = 8
	stores := make([]*postgres.Store, n)
	errs := make(chan error, n)
	for i := range n {
		go func() {
			var err error
			stores[i], err = postgres.Open(t.Context(), dsn)
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Errorf("Open: %v", err)
		}
	}
	for _, s := range stores {
		if s != nil {
			s.Close()
		}
	}
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var versions, applied int
	if err := conn.QueryRow(t.Context(), `SELECT count(*), coalesce(max(version), 0) FROM schema_version`).Scan(&versions, &applied); err != nil {
		t.Fatal(err)
	}
	if versions != applied || versions == 0 {
		t.Errorf("schema_version has %d rows up to version %d; want each version recorded once", versions, applied)
	}
}

// TestNewerSchemaRefused: a database migrated by a newer airlock is not
// touched by an older one.
func TestNewerSchemaRefused(t *testing.T) {
	dsn := pgtest.DSN(t)
	open(t, dsn).Close()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(t.Context(), `INSERT INTO schema_version (version) VALUES (1000)`); err != nil {
		t.Fatal(err)
	}
	_, err = postgres.Open(t.Context(), dsn)
	if err == nil || !strings.Contains(err.Error(), "upgrade airlock") {
		t.Fatalf("Open on a newer schema: err = %v, want a refusal saying to upgrade", err)
	}
}

func TestOpenBadDSN(t *testing.T) {
	base := pgtest.BaseDSN(t)
	bad := strings.Replace(base, "postgres://postgres:", "postgres://postgres:wrong", 1)
	_, err := postgres.Open(t.Context(), bad)
	if err == nil {
		t.Fatal("Open with a wrong password succeeded")
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestTwoReplicasOneDatabase races two Stores (two replicas' connection
// pools) on one schema: an approval opened on A is answered exactly once
// when both answer, and a grant spent on one is refused on the other.
func TestTwoReplicasOneDatabase(t *testing.T) {
	dsn := pgtest.DSN(t)
	a, b := open(t, dsn), open(t, dsn)
	defer a.Close()
	defer b.Close()
	ctx := t.Context()
	now := time.Now()
	for i := range 20 {
		id := fmt.Sprintf("apr_%d", i)
		if err := a.OpenApproval(ctx, store.Approval{ID: id, Tool: "Bash", Input: []byte(`{}`), CreatedAt: now, ExpiresAt: now.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 2)
		for _, s := range []*postgres.Store{a, b} {
			go func() {
				_, err := s.AnswerApproval(ctx, id, "once", 0, "tok", now, nil)
				errs <- err
			}()
		}
		e1, e2 := <-errs, <-errs
		if (e1 == nil) == (e2 == nil) {
			t.Fatalf("%s: answers from both replicas returned %v and %v; want exactly one nil", id, e1, e2)
		}
		if e := errors.Join(e1, e2); !errors.Is(e, store.ErrAnswered) {
			t.Errorf("%s: loser's error = %v, want ErrAnswered", id, e)
		}
	}
	var m [32]byte
	m[0] = 1
	if err := a.Spend(ctx, m, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := b.Spend(ctx, m, now.Add(time.Minute)); !errors.Is(err, grant.ErrReplayed) {
		t.Errorf("spend on replica B of a grant spent on A: err = %v, want ErrReplayed", err)
	}
}
