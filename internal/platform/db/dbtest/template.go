package dbtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/migrations"
)

// Running every migration costs a new database about two seconds under the
// race detector, more than most tests that use it. So each engine migrates
// one template, and a test gets a copy of it: Open then finds nothing to do.

// MigratedSQLiteDSN returns a new SQLite file in t's temporary directory
// holding every migration: a copy of a template migrated once per test
// process.
func MigratedSQLiteDSN(t testing.TB) string {
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

// sqliteTemplate is the bytes of an SQLite database file with every
// migration applied, made once per test process. The file itself lives only
// while it is made: a copy is the bytes written to a new file.
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

// MigratedPostgresDSN returns the URL of a new PostgreSQL database of t's
// own (dropped when t ends) holding every migration: a copy, made by CREATE
// DATABASE … TEMPLATE, of a template database migrated once per set of
// migrations. Where the test server's role may not create databases it falls
// back to PostgresDSN's new schema, which Open (or a server) then migrates.
func MigratedPostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresEnv)
	if base == "" {
		t.Skip(PostgresEnv + " is not set")
	}
	tpl, err := postgresTemplate()
	if err != nil {
		t.Logf("no PostgreSQL template database (%v): migrating a new schema instead", err)
		return PostgresDSN(t)
	}
	admin, err := postgresAdmin()
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	name := "strongroom_t_" + randomHex(8)
	if _, err := admin.Exec("CREATE DATABASE " + name + " TEMPLATE " + tpl); err != nil {
		t.Fatalf("postgres: copy the template: %v", err)
	}
	t.Cleanup(func() {
		// FORCE ends what the test left connected (a listener, a second handle).
		_, _ = admin.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
	})
	dsn, err := withDatabase(base, name)
	if err != nil {
		t.Fatalf("postgres: %v", err)
	}
	return dsn
}

// postgresAdmin is one pool on the test server's database for the whole
// test process, which creates and drops the databases of tests.
var postgresAdmin = sync.OnceValues(func() (*sql.DB, error) {
	admin, err := sql.Open("pgx", os.Getenv(PostgresEnv))
	if err != nil {
		return nil, err
	}
	admin.SetMaxIdleConns(1)
	admin.SetConnMaxIdleTime(10 * time.Second)
	return admin, nil
})

// postgresTemplate returns the name of the template database for the
// embedded migrations, making it first if no test process has yet.
//
// The name holds a digest of the migrations, so test processes of the same
// tree (go test runs packages in parallel) share one template, and trees
// with other migrations (other branches on the same server) use their own.
// A process makes it under an advisory lock, in a database of another name
// that it renames when migrated: a template is never seen half-made. It then
// disallows connections to it: CREATE DATABASE refuses to copy a database
// another session is connected to, and none ever is. Templates stay on the
// server for the next run; a throw-away server (CI) takes them with it.
var postgresTemplate = sync.OnceValues(func() (string, error) {
	sum, err := migrationsDigest(migrations.Postgres())
	if err != nil {
		return "", err
	}
	name := "strongroom_tpl_" + hex.EncodeToString(sum[:8])
	admin, err := postgresAdmin()
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	lock := int64(binary.BigEndian.Uint64(sum[8:16]))
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, lock); err != nil {
		return "", err
	}
	defer func() { _, _ = conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, lock) }()
	var exists bool
	if err := conn.QueryRowContext(ctx,
		`SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return name, nil
	}
	building := name + "_new"
	// A process that died while building left this behind.
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building); err != nil {
		return "", err
	}
	if err := migrateDatabase(ctx, building); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
		return "", err
	}
	if _, err := conn.ExecContext(ctx, "ALTER DATABASE "+building+" WITH ALLOW_CONNECTIONS false"); err != nil {
		return "", err
	}
	// A closed pool's server processes may still be exiting; they would make
	// the rename (and later copies) fail as "being accessed by other users".
	if _, err := conn.ExecContext(ctx,
		`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, building); err != nil {
		return "", err
	}
	var renameErr error
	for range 50 {
		if _, renameErr = conn.ExecContext(ctx, "ALTER DATABASE "+building+" RENAME TO "+name); renameErr == nil {
			return name, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return "", renameErr
})

// migrateDatabase applies every migration to the database named name on
// the test server.
func migrateDatabase(ctx context.Context, name string) error {
	dsn, err := withDatabase(os.Getenv(PostgresEnv), name)
	if err != nil {
		return err
	}
	d, err := db.Open(ctx, dsn)
	if err != nil {
		return err
	}
	return errors.Join(d.Migrate(ctx), d.Close())
}

// migrationsDigest is a SHA-256 of every migration's name and content.
func migrationsDigest(files fs.FS) ([sha256.Size]byte, error) {
	h := sha256.New()
	err := fs.WalkDir(files, ".", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := fs.ReadFile(files, path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", path, len(data))
		h.Write(data)
		return nil
	})
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	return sum, err
}

// withDatabase returns the URL base with its database replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
