// Package dbtest opens throw-away databases for tests: an SQLite file
// always, and a PostgreSQL database (or schema) of the test's own when
// STRONGROOM_TEST_POSTGRES holds a URL (CI sets it). A test gets a copy of a
// database migrated once (Each, Engine.Migrated), or an empty one to migrate
// itself when migrations are what it tests (Engine.DSN).
package dbtest

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// PostgresEnv names the variable holding the PostgreSQL test server's URL.
const PostgresEnv = "STRONGROOM_TEST_POSTGRES"

// Engine is one database a test can run on.
type Engine struct {
	Name string
	// DSN returns a connection string to a new, empty database for t.
	DSN func(t testing.TB) string
	// Migrated returns a connection string to a new database for t that
	// already holds every migration.
	Migrated func(t testing.TB) string
}

// Engines lists SQLite, and PostgreSQL when configured.
func Engines() []Engine {
	engines := []Engine{{Name: "sqlite", DSN: SQLiteDSN, Migrated: MigratedSQLiteDSN}}
	if os.Getenv(PostgresEnv) != "" {
		engines = append(engines, Engine{Name: "postgres", DSN: PostgresDSN, Migrated: MigratedPostgresDSN})
	}
	return engines
}

// Each runs test once per engine, each time on a new migrated database
// opened with opts.
func Each(t *testing.T, test func(t *testing.T, d *db.DB), opts ...db.Option) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) {
			test(t, Open(t, e.Migrated(t), opts...))
		})
	}
}

// Open opens and migrates dsn (on a database from Engine.Migrated there is
// nothing left to apply), closing it when t ends.
func Open(t testing.TB, dsn string, opts ...db.Option) *db.DB {
	t.Helper()
	ctx := context.Background()
	d, err := db.Open(ctx, dsn, opts...)
	if err != nil {
		t.Fatalf("open database: %v", err)
	}
	t.Cleanup(func() { d.Close() })
	if err := d.Migrate(ctx); err != nil {
		t.Fatalf("migrate: %v", err)
	}
	return d
}

// SQLiteDSN returns a new, empty SQLite file in t's temporary directory.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "strongroom.db")
}

// PostgresDSN creates an empty schema of its own on the test server for t
// (dropped when t ends) and returns a URL whose search_path points at it.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set")
	}
	admin, err := postgresAdmin()
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	schema := "t_" + randomHex(6)
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() { _, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE") })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
