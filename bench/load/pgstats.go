package main

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the pgx driver for database/sql
)

// pgCounter counts the statements and transactions a PostgreSQL database
// ran between start and per, so that a scenario can say what one of its
// operations costs in round trips. Statements come from pg_stat_statements
// (the server must load it: shared_preload_libraries=pg_stat_statements,
// pg_stat_statements.track=all); transactions from pg_stat_database's
// commits and rollbacks. Everything the server does in between counts,
// its background jobs included, which is what an operation costs.
type pgCounter struct {
	db   *sql.DB
	name string
	at   pgCount
}

// pgCount is what the database has run: statements, of them the
// transaction control ones (BEGIN, COMMIT, ROLLBACK), and transactions.
type pgCount struct{ statements, control, xacts int64 }

// startPGCounter opens the counter on database when it names PostgreSQL,
// and returns nil otherwise or when pg_stat_statements is not loaded
// (saying so), so a run on SQLite or on a plain cluster still measures
// throughput.
func startPGCounter(database string) *pgCounter {
	if !strings.HasPrefix(database, "postgres://") && !strings.HasPrefix(database, "postgresql://") {
		return nil
	}
	u, err := url.Parse(database)
	if err != nil {
		return nil
	}
	db, err := sql.Open("pgx", database)
	if err != nil {
		return nil
	}
	c := &pgCounter{db: db, name: strings.TrimPrefix(u.Path, "/")}
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
		fmt.Printf("  (statements not counted: %v)\n", err)
		db.Close()
		return nil
	}
	if c.at, err = c.read(ctx); err != nil {
		fmt.Printf("  (statements not counted: %v; start PostgreSQL with -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all)\n", err)
		db.Close()
		return nil
	}
	return c
}

// read returns the statements run so far in the database and its
// transactions, leaving out the counter's own.
func (c *pgCounter) read(ctx context.Context) (n pgCount, err error) {
	err = c.db.QueryRowContext(ctx, `WITH s AS (
	      SELECT s.calls, upper(s.query) ~ '^\s*(BEGIN|COMMIT|ROLLBACK|START TRANSACTION)' AS control
	      FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
	      WHERE d.datname = $1 AND s.query NOT LIKE '%pg_stat_%' AND s.query NOT LIKE '%pg_sleep%')
	    SELECT (SELECT coalesce(sum(calls), 0)::bigint FROM s),
	      (SELECT coalesce(sum(calls), 0)::bigint FROM s WHERE control),
	      (SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = $1)`, c.name).Scan(&n.statements, &n.control, &n.xacts)
	return n, err
}

// per prints the statements and transactions per operation since start.
// pg_stat_database is updated when a backend reports (at most every half
// second of activity), which blurs a short run's transactions by a few.
func (c *pgCounter) per(operations int) {
	if c == nil || operations == 0 {
		return
	}
	defer c.db.Close()
	// Let the server's backends report their last transactions.
	_, _ = c.db.ExecContext(context.Background(), "SELECT pg_sleep(1.2)")
	n, err := c.read(context.Background())
	if err != nil {
		fmt.Printf("  statements: %v\n", err)
		return
	}
	per := func(v int64) float64 { return float64(v) / float64(operations) }
	xacts := n.xacts - c.at.xacts - 2 // the sleep and the read itself
	fmt.Printf("  per operation on PostgreSQL: %.1f statements (%.1f besides BEGIN/COMMIT/ROLLBACK), %.1f transactions (%d operations)\n",
		per(n.statements-c.at.statements), per(n.statements-c.at.statements-(n.control-c.at.control)), per(xacts), operations)
}
