// Package db opens Strongroom's database (embedded SQLite or PostgreSQL),
// applies the embedded migrations and runs operations in transactions.
//
// One SQL text serves both engines: both accept $1 placeholders, RETURNING
// and UPDATE … FROM-less conditional updates. Where they differ (row locks)
// the Dialect tells.
package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/migrations"
)

// Dialect names the database engine.
type Dialect string

// The engines Strongroom runs on.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Reader runs queries: the database's read handle (DB.Reader) or an open
// transaction. Code that only reads takes a Reader, so it serves a request
// outside a transaction as well as its caller's transaction. It has no
// ExecContext: a write outside a transaction (on SQLite, through a read
// connection beside the single writer) does not compile.
//
// Now is the time rules applied to what is read see: a transaction's begin
// time (Tx.Now), or the database's clock when the read handle was handed out
// (DB.Reader), so one operation's reads all see one instant. A read that
// applies a time rule (an invoice overdue, this month's card spending)
// reads it here rather than taking a now parameter.
type Reader interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	Now() time.Time
}

// Querier runs SQL, writes included: an open transaction (*Tx), or the
// PostgreSQL pool a single self-contained statement may run on (see
// DB.Autocommit). Store code that writes takes a Querier or a *Tx so that a
// feature can run inside its caller's transaction.
type Querier interface {
	Reader
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// DB is the opened database.
type DB struct {
	dialect Dialect
	// write runs transactions. On SQLite it is a single connection, so writers
	// queue in the pool instead of failing with SQLITE_BUSY.
	write *sql.DB
	// read serves reads outside transactions. On SQLite it is a pool of
	// connections that read in parallel with the writer (WAL); on PostgreSQL it
	// is the write pool.
	read       *sql.DB
	migrations *goose.Provider
	// reader runs reads outside transactions through prepared statements.
	reader *stmtCache
	// writeStmts holds statements prepared on SQLite's single write
	// connection, which transactions reuse instead of parsing their SQL
	// again (nil on PostgreSQL, whose driver caches statements per
	// connection itself).
	writeStmts *stmtCache
	// group commits SQLite's write transactions together (nil on PostgreSQL).
	group *groupCommit
	// clock gives each transaction its Now.
	clock clock.Clock
	// hub carries committed notifications to subscribers.
	hub *hub
}

// Open connects to dsn: "sqlite:PATH" or a postgres:// (postgresql://) URL.
// It does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, opts ...Option) (*DB, error) {
	var d *DB
	var err error
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		d, err = openSQLite(ctx, strings.TrimPrefix(dsn, "sqlite:"))
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		d, err = openPostgres(ctx, dsn)
	default:
		return nil, fmt.Errorf("database %q: expected sqlite:PATH or a postgres:// URL", redactDSN(dsn))
	}
	if err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// sqliteURI names a file as an SQLite URI: SQLite decodes %XX in the path,
// so a '?', '#' or '%' in a directory or file name (a subtest named "#00")
// stays part of the name instead of starting the query or fragment.
func sqliteURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func openSQLite(ctx context.Context, path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("database: sqlite: needs a file path, as in sqlite:strongroom.db")
	}
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("database: %w", err)
		}
	}
	params := url.Values{}
	params.Add("_pragma", "busy_timeout(10000)")
	params.Add("_pragma", "journal_mode(WAL)")
	params.Add("_pragma", "foreign_keys(1)")
	params.Add("_pragma", "synchronous(NORMAL)")
	params.Set("_time_format", "sqlite")
	// The read pool is query-only: a write reaches the database through the
	// single writer alone (DB.Reader's type has no ExecContext; this stops
	// an INSERT … RETURNING sent as a query too).
	readDSN := sqliteURI(path) + "?" + params.Encode() + "&_pragma=query_only(1)"
	// The writer keeps its statement and savepoint journals (the pages a
	// failing statement or transaction of a group commit would restore) in
	// memory instead of a temporary file written on every change; they last
	// one group and hold only the pages it changes. Readers keep the default,
	// so a large sort spills to disk.
	params.Add("_pragma", "temp_store(MEMORY)")
	writeDSN := sqliteURI(path) + "?" + params.Encode() + "&_txlock=immediate"

	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	write.SetConnMaxIdleTime(0)
	if err := write.PingContext(ctx); err != nil {
		write.Close()
		return nil, fmt.Errorf("database: open %s: %w", path, err)
	}
	read, err := sql.Open("sqlite", readDSN)
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	return newDB(SQLite, write, read, migrations.SQLite(), "")
}

func openPostgres(ctx context.Context, dsn string) (*DB, error) {
	pool, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("database: %w", err)
	}
	pool.SetMaxOpenConns(20)
	pool.SetMaxIdleConns(10)
	if err := pool.PingContext(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: connect to %s: %w", redactDSN(dsn), err)
	}
	var schema sql.NullString
	if err := pool.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	if !schema.Valid {
		schema.String = "public"
	}
	d, err := newDB(Postgres, pool, pool, migrations.Postgres(), schema.String)
	if err != nil {
		return nil, err
	}
	d.hub.channel = notifyChannel(schema.String)
	d.hub.listen = listenPostgres(dsn, d.hub)
	return d, nil
}

// migrationLockID is the advisory lock that lets one of several instances
// starting at once migrate a schema. It is the schema's own: migrations of
// other schemas in the same database (other deployments, parallel tests)
// neither wait for it nor touch what it guards.
func migrationLockID(schema string) int64 {
	h := fnv.New64a()
	h.Write([]byte("strongroom.migrate." + schema))
	return int64(h.Sum64())
}

// newDB wraps the pools; schema (PostgreSQL only) names what migrations lock.
func newDB(dialect Dialect, write, read *sql.DB, files fs.FS, schema string) (*DB, error) {
	d := &DB{dialect: dialect, write: write, read: read, reader: &stmtCache{db: read}, clock: clock.System{}, hub: newHub(dialect == Postgres)}
	if dialect == SQLite {
		d.writeStmts = &stmtCache{db: write}
		d.group = &groupCommit{write: write}
	}
	var (
		gooseDialect goose.Dialect
		opts         []goose.ProviderOption
	)
	switch dialect {
	case SQLite:
		gooseDialect = goose.DialectSQLite3
	case Postgres:
		gooseDialect = goose.DialectPostgres
		// Several instances may start at once; an advisory lock lets one
		// migrate while the others retry each second (goose's default is
		// every five) for up to five minutes.
		locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID(schema)), lock.WithLockTimeout(1, 300))
		if err != nil {
			d.Close()
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(gooseDialect, write, files, opts...)
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("database: migrations: %w", err)
	}
	d.migrations = p
	return d, nil
}

// Dialect tells which engine this is.
func (d *DB) Dialect() Dialect { return d.dialect }

// Close closes every connection.
func (d *DB) Close() error {
	d.hub.close()
	d.reader.close()
	if d.writeStmts != nil {
		d.writeStmts.close()
	}
	err := d.write.Close()
	if d.read != d.write {
		err = errors.Join(err, d.read.Close())
	}
	return err
}

// Migrate applies pending migrations, each in its own transaction.
func (d *DB) Migrate(ctx context.Context) error {
	_, err := d.MigrateReport(ctx)
	return err
}

// Ready reports an error unless the database answers and every migration is applied.
func (d *DB) Ready(ctx context.Context) error {
	if err := d.read.PingContext(ctx); err != nil {
		return fmt.Errorf("database unreachable: %w", err)
	}
	pending, err := d.migrations.HasPending(ctx)
	if err != nil {
		return fmt.Errorf("database migrations unknown: %w", err)
	}
	if pending {
		return errors.New("database migrations pending")
	}
	return nil
}

// Reader returns the handle for reads outside a transaction; it cannot
// write (every write runs in DB.Tx, or in DB.Autocommit's statement). Its
// statements are prepared once and reused: parsing SQL is a large share of
// a short read on SQLite. On SQLite its connections are also opened
// query-only, so not even a query can change the database through them.
// Its Now is the database's clock read now: an operation takes one handle
// and every rule it applies sees that instant, as in a transaction.
func (d *DB) Reader() Reader { return readHandle{d.reader, d.clock.Now()} }

// readHandle is DB.Reader: the read statements and the time it was handed
// out, and no way to write, not even by a type assertion.
type readHandle struct {
	stmts *stmtCache
	now   time.Time
}

func (r readHandle) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return r.stmts.QueryContext(ctx, query, args...)
}

func (r readHandle) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return r.stmts.QueryRowContext(ctx, query, args...)
}

func (r readHandle) Now() time.Time { return r.now }

// autocommitHandle is DB.Autocommit: the read handle that may also write.
type autocommitHandle struct{ readHandle }

func (a autocommitHandle) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return a.stmts.ExecContext(ctx, query, args...)
}

// Autocommit returns, on PostgreSQL, a Querier on the write pool whose every
// statement is a transaction of its own, for a hot write that is one atomic
// statement (a rate-limit bucket's upsert) and so is spared a BEGIN and a
// COMMIT. ok is false on SQLite, where every write joins the single
// writer's group commit through Tx.
func (d *DB) Autocommit() (q Querier, ok bool) {
	if d.dialect != Postgres {
		return nil, false
	}
	// On PostgreSQL the read statements' pool is the write pool.
	return autocommitHandle{readHandle{d.reader, d.clock.Now()}}, true
}

// Pools returns the connection pools by name, for pool gauges.
func (d *DB) Pools() map[string]*sql.DB {
	if d.read == d.write {
		return map[string]*sql.DB{"main": d.write}
	}
	return map[string]*sql.DB{"write": d.write, "read": d.read}
}

// ForUpdate is the row-lock clause to append to a SELECT that reads a row the
// transaction will change. SQLite has one writer, so the lock is implicit.
func (d *DB) ForUpdate() string {
	if d.dialect == Postgres {
		return " FOR UPDATE"
	}
	return ""
}

// ForUpdateOf is ForUpdate limited to the rows of the tables of a join
// named in tables (names or aliases, separated by commas), so a statement
// can lock a parent row alone, or several tables' rows in the order named.
func (d *DB) ForUpdateOf(tables string) string {
	if d.dialect == Postgres {
		return " FOR UPDATE OF " + tables
	}
	return ""
}

// SkipLocked is ForUpdate for queue claims: rows other instances hold are skipped.
func (d *DB) SkipLocked() string {
	if d.dialect == Postgres {
		return " FOR UPDATE SKIP LOCKED"
	}
	return ""
}

// redactDSN drops the password from a connection URL before it is shown.
func redactDSN(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil || u.User == nil {
		return dsn
	}
	return u.Redacted()
}
