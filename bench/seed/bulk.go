package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// order is the order buffered rows are written in, so every foreign key
// finds its row already stored.
var order = []string{
	"organizations", "subscription_acknowledgements", "users", "memberships", "devices", "sessions",
	"ledger_accounts", "journal_entries", "postings", "transactions", "payment_contacts", "quotes",
	"approvals", "payments", "sudo_sessions", "step_up_authentications", "assurance_challenges",
	"domain_events", "idempotency_keys", "jobs", "cards", "card_authorizations", "bills", "expenses",
	"card_spend", "transaction_day_sums",
}

// maxParams bounds the values of one INSERT: SQLite (modernc) binds long
// lists slowly, so its statements stay short; PostgreSQL takes up to 65535.
func maxParams(d db.Dialect) int {
	if d == db.Postgres {
		return 20000
	}
	return 500
}

type buffer struct {
	cols string
	n    int // columns
	rows [][]any
}

// bulk buffers rows per table and writes them with multi-row INSERTs, in
// large transactions committed every commitRows rows, on a connection of
// its own (see openBulk).
type bulk struct {
	ctx        context.Context
	conn       *sql.DB
	dialect    db.Dialect
	tx         *sql.Tx
	buffers    map[string]*buffer
	pending    int // rows buffered
	inTx       int // rows written in the open transaction
	commitRows int
	maxParams  int
	Total      map[string]int
}

// openBulk opens dsn for bulk writing. On SQLite that is one connection
// with a large page cache, statement journals in memory and no syncing (a
// seed that fails is started again), with the server's time format.
func openBulk(ctx context.Context, dsn string, dialect db.Dialect, commitRows int) (*bulk, error) {
	var conn *sql.DB
	var err error
	if dialect == db.SQLite {
		params := url.Values{}
		for _, p := range []string{"busy_timeout(10000)", "journal_mode(WAL)", "foreign_keys(1)", "synchronous(OFF)",
			"temp_store(MEMORY)", "cache_size(-1048576)"} {
			params.Add("_pragma", p)
		}
		params.Set("_time_format", "sqlite")
		conn, err = sql.Open("sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")+"?"+params.Encode())
		if err == nil {
			conn.SetMaxOpenConns(1)
		}
	} else {
		conn, err = sql.Open("pgx", dsn)
	}
	if err != nil {
		return nil, err
	}
	return &bulk{ctx: ctx, conn: conn, dialect: dialect, buffers: map[string]*buffer{}, commitRows: commitRows,
		maxParams: maxParams(dialect), Total: map[string]int{}}, nil
}

// add buffers one row of table; cols lists the columns, comma-separated,
// the same for every row of the table.
func (b *bulk) add(table, cols string, vals ...any) error {
	buf := b.buffers[table]
	if buf == nil {
		buf = &buffer{cols: cols, n: strings.Count(cols, ",") + 1}
		b.buffers[table] = buf
	}
	if len(vals) != buf.n {
		panic(fmt.Sprintf("%s: %d values for %d columns", table, len(vals), buf.n))
	}
	buf.rows = append(buf.rows, vals)
	b.pending++
	if len(buf.rows)*buf.n >= b.maxParams {
		return b.flush()
	}
	return nil
}

// flush writes every buffered row, in dependency order.
func (b *bulk) flush() error {
	if b.pending == 0 {
		return nil
	}
	if b.tx == nil {
		if err := b.begin(); err != nil {
			return err
		}
	}
	for _, table := range order {
		buf := b.buffers[table]
		if buf == nil {
			continue
		}
		for len(buf.rows) > 0 {
			n := max(1, min(len(buf.rows), b.maxParams/buf.n))
			if err := b.insert(table, buf, buf.rows[:n]); err != nil {
				return err
			}
			buf.rows = buf.rows[n:]
		}
		buf.rows = nil
	}
	b.inTx += b.pending
	b.pending = 0
	if b.inTx >= b.commitRows {
		return b.end()
	}
	return nil
}

func (b *bulk) insert(table string, buf *buffer, rows [][]any) error {
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (" + buf.cols + ") VALUES ")
	args := make([]any, 0, len(rows)*buf.n)
	for i, r := range rows {
		if i > 0 {
			sb.WriteByte(',')
		}
		if b.dialect == db.SQLite {
			// Anonymous parameters: SQLite looks each $n up by name.
			sb.WriteString("(" + strings.Repeat("?,", buf.n-1) + "?)")
		} else {
			sb.WriteString("(" + db.Placeholders(len(args)+1, buf.n) + ")")
		}
		args = append(args, r...)
	}
	if _, err := b.tx.ExecContext(b.ctx, sb.String(), args...); err != nil {
		return fmt.Errorf("insert into %s: %w", table, err)
	}
	b.Total[table] += len(rows)
	return nil
}

func (b *bulk) begin() error {
	tx, err := b.conn.BeginTx(b.ctx, nil)
	b.tx = tx
	return err
}

func (b *bulk) end() error {
	if b.tx == nil {
		return nil
	}
	err := b.tx.Commit()
	b.tx, b.inTx = nil, 0
	return err
}

// close writes what is left, commits and closes the connection.
func (b *bulk) close() error {
	err := b.flush()
	if err == nil {
		err = b.end()
	} else if b.tx != nil {
		_ = b.tx.Rollback()
	}
	return errors.Join(err, b.conn.Close())
}

// idAt is a UUID v7 of instant t: ids sort as the history they name, as the
// server's own (time-ordered) ids do.
func idAt(t time.Time) uuid.UUID {
	var u uuid.UUID
	_, _ = rand.Read(u[:])
	ms := uint64(t.UnixMilli())
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(u[:6], ts[2:])
	u[6] = 0x70 | (u[6] & 0x0f)
	u[8] = 0x80 | (u[8] & 0x3f)
	return u
}
