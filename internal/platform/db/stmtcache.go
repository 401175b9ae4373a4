package db

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache is a Querier that prepares each distinct query text once. The
// queries are the program's own constant SQL, so the cache stays small; a
// *sql.Stmt is safe for concurrent use and re-prepares itself on whichever
// pooled connection runs it.
type stmtCache struct {
	db    *sql.DB
	stmts sync.Map // query → *sql.Stmt
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if s, ok := c.stmts.Load(query); ok {
		return s.(*sql.Stmt), nil
	}
	s, err := c.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if prev, loaded := c.stmts.LoadOrStore(query, s); loaded {
		s.Close()
		return prev.(*sql.Stmt), nil
	}
	return s, nil
}

func (c *stmtCache) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.ExecContext(ctx, args...)
}

func (c *stmtCache) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return s.QueryContext(ctx, args...)
}

// QueryRowContext reports a preparation error through the returned row, as
// *sql.DB does, by running the query unprepared.
func (c *stmtCache) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	observe(query, args)
	s, err := c.stmt(ctx, query)
	if err != nil {
		return c.db.QueryRowContext(ctx, query, args...)
	}
	return s.QueryRowContext(ctx, args...)
}

func (c *stmtCache) close() {
	c.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
}
