// Package dbtest opens throw-away migrated databases for tests: an SQLite
// file always, and a fresh PostgreSQL schema when STRONGROOM_TEST_POSTGRES
// holds a URL (CI sets it).
package dbtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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
}

// Engines lists SQLite, and PostgreSQL when configured.
func Engines() []Engine {
	engines := []Engine{{Name: "sqlite", DSN: SQLiteDSN}}
	if os.Getenv(PostgresEnv) != "" {
		engines = append(engines, Engine{Name: "postgres", DSN: PostgresDSN})
	}
	return engines
}

// Each runs test once per engine, each time on a new migrated database
// opened with opts.
func Each(t *testing.T, test func(t *testing.T, d *db.DB), opts ...db.Option) {
	t.Helper()
	for _, e := range Engines() {
		t.Run(e.Name, func(t *testing.T) {
			test(t, Open(t, e.DSN(t), opts...))
		})
	}
}

// Open opens and migrates dsn, closing it when t ends.
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

// SQLiteDSN returns a new SQLite file in t's temporary directory.
func SQLiteDSN(t testing.TB) string {
	return "sqlite:" + filepath.Join(t.TempDir(), "strongroom.db")
}

// PostgresDSN creates a schema of its own on the test server for t (dropped
// when t ends) and returns a URL whose search_path points at it.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_" + hex.EncodeToString(b[:])
	admin, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("postgres: create schema: %v", err)
	}
	t.Cleanup(func() {
		admin, err := sql.Open("pgx", base)
		if err != nil {
			return
		}
		defer admin.Close()
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
