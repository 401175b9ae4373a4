package db

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
)

// Option configures Open.
type Option func(*DB)

// WithClock makes transactions read their Now from clk (the system clock
// unless told otherwise), so the sandbox's manual clock reaches every rule.
func WithClock(clk clock.Clock) Option {
	return func(d *DB) {
		if clk != nil {
			d.clock = clk
		}
	}
}

// Tx is one open transaction. Now is the time read once when it began:
// every rule applied inside sees the same instant, and every row it stamps
// carries it (as wtf's sqlite.Tx does).
type Tx struct {
	tx          *sql.Tx
	db          *DB
	now         time.Time
	afterCommit []func()
	savepoints  int
	// unprepared are the queries this transaction ran without a cached
	// statement; they are prepared once it has let go of the connection.
	unprepared []string
	// topics are the topics Notify was called with.
	topics []string
	// grouped is set on SQLite, where the transaction is a member of a
	// group commit (see groupCommit).
	grouped bool
	// atCommit are the rows queued by InsertAtCommit, queued the work
	// queued by QueueAtCommit.
	atCommit []pendingInsert
	queued   []pendingWork
}

// statementContext is ctx for a statement of tx. A grouped transaction's
// statements run without its caller's cancellation: SQLite answers an
// interrupted write by rolling back the whole SQLite transaction, which
// would take the rest of the group with it.
func (tx *Tx) statementContext(ctx context.Context) context.Context {
	if tx.grouped {
		return context.WithoutCancel(ctx)
	}
	return ctx
}

// stmt is query's statement prepared on the transaction's connection, or
// nil when it is to run unprepared. On SQLite the single write connection
// is held by the transaction, so a statement cannot be prepared for the
// cache now: the query runs unprepared and is prepared after the
// transaction (DB.Tx), for the next one.
func (tx *Tx) stmt(ctx context.Context, query string) *sql.Stmt {
	if tx.db.writeStmts == nil {
		return nil
	}
	s := tx.db.writeStmts.cached(query)
	if s == nil {
		tx.unprepared = append(tx.unprepared, query)
		return nil
	}
	return tx.tx.StmtContext(ctx, s)
}

// ExecContext runs a statement in the transaction.
func (tx *Tx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	observe(query, args)
	ctx = tx.statementContext(ctx)
	if s := tx.stmt(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return tx.tx.ExecContext(ctx, query, args...)
}

// QueryContext runs a query in the transaction.
func (tx *Tx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	observe(query, args)
	ctx = tx.statementContext(ctx)
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return tx.tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a query for one row in the transaction.
func (tx *Tx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	observe(query, args)
	ctx = tx.statementContext(ctx)
	if s := tx.stmt(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return tx.tx.QueryRowContext(ctx, query, args...)
}

// Now is the time the transaction began, read once from the database's
// clock: every rule applied inside sees the same instant and every row it
// stamps carries it. Code running in a transaction reads its time here
// rather than taking a now parameter, so no caller can hand it another.
func (tx *Tx) Now() time.Time { return tx.now }

// ForUpdate is the row-lock clause of this engine (see DB.ForUpdate).
func (tx *Tx) ForUpdate() string { return tx.db.ForUpdate() }

// ForUpdateOf is the row-lock clause for tables of a join (see DB.ForUpdateOf).
func (tx *Tx) ForUpdateOf(tables string) string { return tx.db.ForUpdateOf(tables) }

// Dialect tells which engine the transaction runs on.
func (tx *Tx) Dialect() Dialect { return tx.db.dialect }

// AfterCommit runs f once the transaction has committed (never when it
// rolls back), in the order registered.
func (tx *Tx) AfterCommit(f func()) { tx.afterCommit = append(tx.afterCommit, f) }

// Savepoint runs fn inside a savepoint: when fn fails, what it changed is
// rolled back and the transaction goes on; fn's error is returned either way.
// On PostgreSQL a savepoint fn leaves in success stays open until the
// transaction ends (see below); the names never repeat, so that is never seen.
func (tx *Tx) Savepoint(ctx context.Context, fn func() error) error {
	tx.savepoints++
	name := fmt.Sprintf("sp_%d", tx.savepoints)
	ctx = tx.statementContext(ctx)
	if _, err := tx.tx.ExecContext(ctx, "SAVEPOINT "+name); err != nil {
		return err
	}
	queued := tx.markAtCommit()
	if err := fn(); err != nil {
		if _, rbErr := tx.tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT "+name); rbErr != nil {
			return rbErr
		}
		tx.rollbackAtCommit(queued)
		return err
	}
	if tx.db.dialect == Postgres {
		// The commit releases it with the transaction. Releasing it now
		// would cost a round trip, often while the transaction holds a row
		// others wait for (a payment's approval moves money in savepoints);
		// nor would it free anything sooner: a subtransaction's id stays
		// the transaction's until the end either way.
		return nil
	}
	_, err := tx.tx.ExecContext(ctx, "RELEASE SAVEPOINT "+name)
	return err
}

// Notify wakes, once the transaction commits, whoever subscribed to topic in
// this process and, on PostgreSQL, in every instance sharing the database.
//
// On PostgreSQL the topics are sent with one NOTIFY statement just before
// the commit (see beforeCommit), not one round trip each; so Notify itself
// cannot fail.
func (tx *Tx) Notify(topic string) {
	if slices.Contains(tx.topics, topic) {
		return
	}
	tx.topics = append(tx.topics, topic)
	tx.AfterCommit(func() { tx.db.hub.publish(topic) })
}

// beforeCommit runs the rows queued for commit (InsertAtCommit) and sends
// the transaction's topics to the other instances sharing a PostgreSQL
// database. PostgreSQL delivers a NOTIFY at commit, and not at all on
// rollback.
func (tx *Tx) beforeCommit(ctx context.Context) error {
	notified, err := tx.flushAtCommit(ctx)
	if err != nil || notified || tx.db.dialect != Postgres || len(tx.topics) == 0 {
		return err
	}
	_, err = tx.tx.ExecContext(ctx, `SELECT pg_notify($1, topic) FROM unnest($2::text[]) AS topic`, tx.db.hub.channel, tx.topics)
	return err
}

// Now is the time of the database's clock (see WithClock), for reads that
// need no transaction but apply a time rule (this month's card spending).
func (d *DB) Now() time.Time { return d.clock.Now() }

// ForShare is the dialect's clause that locks the rows read against
// change, not against other readers ("" on SQLite, whose single writer
// already serializes writes).
func (tx *Tx) ForShare() string {
	if tx.db.dialect == Postgres {
		return " FOR SHARE"
	}
	return ""
}

// Tx runs fn in one transaction, with Now read from the database's
// clock at begin: committed when fn returns nil, rolled back otherwise (and
// when fn panics). fn must use tx, never the DB itself: on SQLite the single
// writer is held by tx and a nested transaction would wait forever.
func (d *DB) Tx(ctx context.Context, fn func(tx *Tx) error) (err error) {
	if d.group != nil {
		return d.group.run(ctx, d, fn)
	}
	raw, err := d.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("database: begin: %w", err)
	}
	tx := &Tx{tx: raw, db: d, now: d.clock.Now()}
	defer func() {
		if p := recover(); p != nil {
			_ = raw.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		_ = raw.Rollback()
		return err
	}
	if err := tx.beforeCommit(ctx); err != nil {
		_ = raw.Rollback()
		return fmt.Errorf("database: before commit: %w", err)
	}
	if err := raw.Commit(); err != nil {
		return fmt.Errorf("database: commit: %w", err)
	}
	for _, f := range tx.afterCommit {
		f()
	}
	return nil
}

// InTx runs fn in one transaction of d (see DB.Tx) and returns its result.
func InTx[T any](ctx context.Context, d *DB, fn func(tx *Tx) (T, error)) (T, error) {
	var out T
	err := d.Tx(ctx, func(tx *Tx) error {
		var err error
		out, err = fn(tx)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}
