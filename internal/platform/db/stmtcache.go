package db

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// stmtCache is a Querier that prepares each distinct query text once. The
// queries are the program's own constant SQL, so the cache stays small; a
// *sql.Stmt is safe for concurrent use and re-prepares itself on whichever
// pooled connection runs it.
type stmtCache struct {
	db    *sql.DB
	stmts sync.Map // query → *sql.Stmt
	// size counts the statements held, so that they stay bounded.
	size atomic.Int32
}

// maxCachedStatements bounds a cache should some caller build its SQL text
// from data (an IN list per length, say): past it, new texts run unprepared.
const maxCachedStatements = 2000

// cached is the prepared statement of query, if the cache holds one.
func (c *stmtCache) cached(query string) *sql.Stmt {
	if s, ok := c.stmts.Load(query); ok {
		return s.(*sql.Stmt)
	}
	return nil
}

// stmt is the prepared statement of query, prepared now if need be; nil
// (and no error) when the cache is full.
func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s := c.cached(query); s != nil {
		return s, nil
	}
	if c.size.Load() >= maxCachedStatements {
		return nil, nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	c.size.Add(1)
	return s, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.db.ExecContext(ctx, query, args...)
	}
	return s.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if s == nil {
		return c.db.QueryContext(ctx, query, args...)
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext reports a preparation error through the returned row, as
// *sql.DB does, by running the query unprepared.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil || s == nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

// prepareAll prepares the queries a transaction ran unprepared (see
// Tx.stmt), now that the transaction no longer holds the connection. A
// failure leaves the query to run unprepared again next time.
func (c *stmtCache) prepareAll(ctx context.Context, queries []string) {
	for _, q := range queries {
		if _, err := c.stmt(ctx, q); err != nil {
			return
		}
	}
}

func (c *stmtCache) close() {
	c.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
}
