package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// InsertAtCommit queues one row for an INSERT the transaction runs just
// before it commits: insert is the statement up to its VALUES ("INSERT INTO
// t (a, b)"), args the row's values, one per column. The rows queued with
// one insert text go in one multi-row statement (in chunks within the
// engines' bound on parameters), in the order queued; different texts run
// in the order each was first queued.
//
// It is for rows the transaction writes and never reads back, such as
// domain events: written one statement each, they cost a round trip apiece
// on PostgreSQL in the middle of a transaction that may hold a hot row.
// A failure of the insert fails the commit. Rows queued inside a savepoint
// that rolls back are dropped with it (Savepoint).
func (tx *Tx) InsertAtCommit(insert string, args ...any) {
	for i := range tx.atCommit {
		if tx.atCommit[i].insert == insert {
			tx.atCommit[i].rows = append(tx.atCommit[i].rows, args)
			return
		}
	}
	tx.atCommit = append(tx.atCommit, pendingInsert{insert: insert, rows: [][]any{args}})
}

// pendingInsert is the rows queued for one insert text.
type pendingInsert struct {
	insert string
	rows   [][]any
}

// QueueAtCommit queues item for flush, which runs just before the
// transaction commits (after the rows of InsertAtCommit) with every item
// queued under key, in the order queued; the keys' flushes run in the order
// each key was first queued. Items queued inside a savepoint that rolls
// back are dropped with it. A flush's error fails the commit.
//
// It is for work that must be the transaction's last, such as appending to
// a chain whose head row, once locked, makes every other writer of the chain
// wait until the commit.
func (tx *Tx) QueueAtCommit(key string, item any, flush func(ctx context.Context, tx *Tx, items []any) error) {
	for i := range tx.queued {
		if tx.queued[i].key == key {
			tx.queued[i].items = append(tx.queued[i].items, item)
			return
		}
	}
	tx.queued = append(tx.queued, pendingWork{key: key, items: []any{item}, flush: flush})
}

// pendingWork is the items queued under one key.
type pendingWork struct {
	key   string
	items []any
	flush func(ctx context.Context, tx *Tx, items []any) error
}

// atCommitMark is what was queued for commit at a savepoint.
type atCommitMark struct{ rows, items []int }

func (tx *Tx) markAtCommit() atCommitMark {
	var m atCommitMark
	for _, p := range tx.atCommit {
		m.rows = append(m.rows, len(p.rows))
	}
	for _, w := range tx.queued {
		m.items = append(m.items, len(w.items))
	}
	return m
}

// rollbackAtCommit drops what was queued since m.
func (tx *Tx) rollbackAtCommit(m atCommitMark) {
	tx.atCommit = tx.atCommit[:len(m.rows)]
	for i, n := range m.rows {
		tx.atCommit[i].rows = tx.atCommit[i].rows[:n]
	}
	tx.queued = tx.queued[:len(m.items)]
	for i, n := range m.items {
		tx.queued[i].items = tx.queued[i].items[:n]
	}
}

// maxRowsPerInsert keeps a multi-row insert's parameters well within both
// engines' bounds (SQLite 32,766, PostgreSQL 65,535) for rows of up to 60
// columns.
const maxRowsPerInsert = 500

// maxParamsPerStatement is how many parameters one statement of the
// PostgreSQL flush carries at most (its bound is 65,535).
const maxParamsPerStatement = 60000

// flushAtCommit runs the queued inserts, then the queued work. On
// PostgreSQL every queued insert goes in one statement (each a
// data-modifying WITH of it, which runs whether or not the query reads it,
// its foreign keys checked at the statement's end), and that statement also
// sends the transaction's notifications (see beforeCommit): a transaction
// that appended events and enqueued a job reaches its commit in one round
// trip (ExecTogether). notified reports that it sent them.
func (tx *Tx) flushAtCommit(ctx context.Context) (notified bool, err error) {
	ctx = tx.statementContext(ctx)
	var batch []Statement
	params := 0
	run := func(last bool) error {
		if last && tx.db.dialect == Postgres && len(tx.topics) > 0 {
			batch = append(batch, Statement{Query: `SELECT pg_notify($1, topic) FROM unnest($2::text[]) AS topic`,
				Args: []any{tx.db.hub.channel, tx.topics}})
			notified = true
		}
		// Through the statement cache: a transaction's queued rows take one
		// of a few shapes, each prepared once (SQLite parses it otherwise).
		if err := tx.ExecTogether(ctx, batch...); err != nil {
			return fmt.Errorf("database: insert at commit: %w", err)
		}
		batch, params = batch[:0], 0
		return nil
	}
	for i, p := range tx.atCommit {
		for start := 0; start < len(p.rows); start += maxRowsPerInsert {
			rows := p.rows[start:min(start+maxRowsPerInsert, len(p.rows))]
			if len(batch) > 0 && (tx.db.dialect != Postgres || params+len(rows)*len(rows[0]) > maxParamsPerStatement) {
				if err := run(false); err != nil {
					return false, err
				}
			}
			query, args := Values(p.insert, 1, rows)
			batch, params = append(batch, Statement{Query: query, Args: args}), params+len(args)
			if i == len(tx.atCommit)-1 && start+len(rows) == len(p.rows) {
				if err := run(true); err != nil {
					return false, err
				}
			}
		}
	}
	tx.atCommit = nil
	for _, w := range tx.queued {
		if err := w.flush(ctx, tx, w.items); err != nil {
			return false, err
		}
	}
	tx.queued = nil
	return notified, nil
}

// Values is insert followed by VALUES for rows, the parameters numbered
// from $first, and the rows' values as its arguments: one multi-row
// statement, which each engine runs in one step.
func Values(insert string, first int, rows [][]any) (string, []any) {
	var b strings.Builder
	b.WriteString(insert)
	b.WriteString(" VALUES ")
	args := make([]any, 0, len(rows)*len(rows[0]))
	for i, row := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(first + len(args) - 1))
		}
		b.WriteByte(')')
	}
	return b.String(), args
}
