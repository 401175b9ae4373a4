package apitest

import (
	"os"
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
		return dbtest.MigratedPostgresDSN(t)
	}
	return dbtest.MigratedSQLiteDSN(t)
}

// OpenDatabase opens dsn (a server's database) for a test's own queries,
// closing it when t ends.
func OpenDatabase(t testing.TB, dsn string) *db.DB {
	t.Helper()
	return dbtest.Open(t, dsn)
}
