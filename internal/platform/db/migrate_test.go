package db_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// Instances of one deployment starting together migrate one at a time, but
// deployments (and parallel test servers) on other schemas of the same
// PostgreSQL database do not wait for each other.
func TestStorePostgresMigrationLocksOnlyItsSchema(t *testing.T) {
	dsnA, dsnB := dbtest.PostgresDSN(t), dbtest.PostgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, err := db.Open(ctx, dsnA)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := db.Open(ctx, dsnB)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// Another instance of deployment A is migrating: it holds A's lock.
	other, err := sql.Open("pgx", dsnA)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var schemaA string
	if err := conn.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schemaA); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, db.MigrationLockID(schemaA)); err != nil {
		t.Fatal(err)
	}

	if err := b.Migrate(ctx); err != nil {
		t.Fatalf("deployment B waited for A's migration: %v", err)
	}
	migrated := make(chan error, 1)
	go func() { migrated <- a.Migrate(ctx) }()
	// Asked through a handle of its own: a's provider is busy migrating.
	probe, err := db.Open(ctx, dsnA)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close()
	if err := probe.Ready(ctx); err == nil {
		t.Fatal("A migrated while another instance held its lock")
	}
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, db.MigrationLockID(schemaA)); err != nil {
		t.Fatal(err)
	}
	if err := <-migrated; err != nil {
		t.Fatalf("A, once the lock is free: %v", err)
	}
	if err := a.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}
