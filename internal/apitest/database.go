package apitest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// NewDatabase returns the connection string of a new database on the engine
// the end-to-end tests run on (SQLite, or PostgreSQL when E2EDatabaseEnv
// says so), already migrated as a server would leave it. Pass it as
// STRONGROOM_DATABASE to Start when a test reads the stored rows itself, or
// runs two servers on one database.
func NewDatabase(t testing.TB) string {
	t.Helper()
	if os.Getenv(E2EDatabaseEnv) == "postgres" {
		return dbtest.PostgresDSN(t)
	}
	return migratedSQLite(t)
}

// OpenDatabase opens dsn (a server's database) for a test's own queries,
// closing it when t ends.
func OpenDatabase(t testing.TB, dsn string) *db.DB {
	t.Helper()
	return dbtest.Open(t, dsn)
}

// sqliteTemplate is an SQLite database file with every migration applied,
// made once per test process: a test server starts on a copy of it instead
// of migrating a new file, which is most of what starting one costs.
var sqliteTemplate = sync.OnceValues(func() ([]byte, error) {
	dir, err := os.MkdirTemp("", "strongroom-template")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "strongroom.db")
	ctx := context.Background()
	d, err := db.Open(ctx, "sqlite:"+path)
	if err != nil {
		return nil, err
	}
	err = d.Migrate(ctx)
	// Closing the last connection checkpoints the write-ahead log into the
	// file and removes the log, so the file alone holds the schema.
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return nil, fmt.Errorf("the write-ahead log of %s outlived its connections", path)
	}
	return os.ReadFile(path)
})

// migratedSQLite writes a copy of the migrated template into t's temporary
// directory and returns its connection string.
func migratedSQLite(t testing.TB) string {
	t.Helper()
	data, err := sqliteTemplate()
	if err != nil {
		t.Fatalf("migrated SQLite template: %v", err)
	}
	path := filepath.Join(t.TempDir(), "strongroom.db")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return "sqlite:" + path
}
