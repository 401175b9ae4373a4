package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Handler handles one batch of committed events in tx, the transaction that
// also advances the consumer's position past them: the handler's writes and
// the new position commit together, or neither does and the batch is
// handed out again. A handler that fails on one event fails the whole batch
// (and every later pass until it stops failing), so it should deal with an
// event it cannot use itself (skip it) and fail only when it may succeed
// later (the database is away).
type Handler func(ctx context.Context, tx *db.Tx, events []Event) error

// DefaultBatch is how many events a consumer pass reads at most unless told.
const DefaultBatch = 100

// Consume runs one pass of the durable consumer named name: it reads up to
// batch committed events after the consumer's stored position, calls fn
// with one transaction and those events, and stores the new position in
// that transaction. It returns how many events fn handled: 0 when there were
// none, when another instance holds the consumer (PostgreSQL: a row lock,
// skipped rather than waited for) or on the consumer's first pass, which
// only records its position at the current end of the table (a new consumer
// handles what commits after it first ran, not the history before).
//
// Events come in the order the realtime tail delivers them (see Position):
// by seq on SQLite; on PostgreSQL by (transaction id, seq), and only those
// of transactions older than every transaction still running, so no event
// can later commit behind the position. Every event is handed to each
// consumer exactly once, events of any organization or of none.
//
// fn's error rolls the pass back and is returned: the position stays and
// the next pass hands out the same batch.
func Consume(ctx context.Context, d *db.DB, name string, batch int, fn Handler) (int, error) {
	n, _, err := consume(ctx, d, name, batch, fn)
	return n, err
}

// consume is Consume; heldBack also reports committed events left for a
// later pass because an older transaction is still running (PostgreSQL).
func consume(ctx context.Context, d *db.DB, name string, batch int, fn Handler) (n int, heldBack bool, err error) {
	if batch <= 0 {
		batch = DefaultBatch
	}
	err = d.Tx(ctx, func(tx *db.Tx) error {
		n, heldBack = 0, false
		pos, ok, err := lockConsumer(ctx, tx, name)
		if err != nil || !ok {
			return err
		}
		// The events are read in the consumer's own transaction, which has
		// an id already (the row lock gave it one). The oldest running
		// transaction is then at most this one, so the pass reads only
		// events of transactions older than itself: every one of them has
		// ended, and the events this pass appends (tx_id its own id) come
		// after every position it reads, so a later pass hands them out too.
		// Reading past its own id would skip them.
		events, positions, held, err := readAfter(ctx, d, tx, pos, batch, "")
		if err != nil {
			return fmt.Errorf("event consumer %s: read: %w", name, err)
		}
		heldBack = held
		if len(events) == 0 {
			return nil
		}
		if err := fn(ctx, tx, events); err != nil {
			return err
		}
		last := positions[len(positions)-1]
		if _, err := tx.ExecContext(ctx, `UPDATE event_consumers
			SET position_tx = $2, position_seq = $3, updated_at = $4 WHERE name = $1`,
			name, int64(last.Tx), last.Seq, tx.Now().UTC()); err != nil {
			return fmt.Errorf("event consumer %s: store position: %w", name, err)
		}
		n = len(events)
		return nil
	})
	if err != nil {
		return 0, false, err
	}
	return n, heldBack, nil
}

// lockConsumer returns the stored position of consumer name, locked for the
// rest of tx. ok is false when another transaction holds it (PostgreSQL) or
// when the consumer had no row yet: then a row at the current end of the
// table is made, and this pass handles nothing.
func lockConsumer(ctx context.Context, tx *db.Tx, name string) (pos Position, ok bool, err error) {
	pg := tx.Dialect() == db.Postgres
	lock := ""
	if pg {
		lock = " FOR UPDATE SKIP LOCKED"
	}
	var posTx int64
	err = tx.QueryRowContext(ctx, `SELECT position_tx, position_seq FROM event_consumers WHERE name = $1`+lock, name).
		Scan(&posTx, &pos.Seq)
	if err == nil {
		pos.Tx = uint64(posTx)
		return pos, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return pos, false, fmt.Errorf("event consumer %s: lock: %w", name, err)
	}
	// No row, or (PostgreSQL) one that another instance holds: in that case
	// the insert below finds it and does nothing, without waiting.
	end, err := endPosition(ctx, tx)
	if err != nil {
		return pos, false, fmt.Errorf("event consumer %s: end of the table: %w", name, err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO event_consumers (name, position_tx, position_seq, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING`, name, int64(end.Tx), end.Seq, tx.Now().UTC())
	if err != nil {
		return pos, false, fmt.Errorf("event consumer %s: create: %w", name, err)
	}
	return pos, false, nil
}

// endPosition is the position of now for a consumer starting in tx: every
// event at or before it has committed or never will.
func endPosition(ctx context.Context, tx *db.Tx) (Position, error) {
	if tx.Dialect() == db.Postgres {
		xmin, err := oldestRunning(ctx, tx)
		return Position{Tx: xmin}, err
	}
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM domain_events`).Scan(&seq)
	return Position{Seq: seq}, err
}

// Consumer runs a durable consumer (Consume) in this process until its
// context ends: a pass after every commit that appended events (in any
// instance sharing a PostgreSQL database, through the database's
// notifications) and at least every poll interval, batch after batch while
// full batches come. Several instances may each run the same consumer; one
// of them handles a given batch.
type Consumer struct {
	db     *db.DB
	logger *slog.Logger
	name   string
	fn     Handler
	batch  int
	poll   time.Duration
	// spacing is the least time between the starts of two passes.
	spacing time.Duration
	wake    chan struct{}
}

// ConsumerOption configures NewConsumer.
type ConsumerOption func(*Consumer)

// WithBatch sets how many events one pass hands to the handler at most
// (DefaultBatch unless set).
func WithBatch(n int) ConsumerOption {
	return func(c *Consumer) {
		if n > 0 {
			c.batch = n
		}
	}
}

// WithPoll sets how long the consumer waits for a notification before
// looking anyway (1 s unless set): a lost notification, or another
// instance's pass that held the consumer, costs at most that long.
func WithPoll(d time.Duration) ConsumerOption {
	return func(c *Consumer) {
		if d > 0 {
			c.poll = d
		}
	}
}

// DefaultSpacing is the least time between the starts of two passes.
// Every commit that appends events notifies the consumer; under load a
// pass per notification would cost a transaction per commit for a batch of
// one commit's events. Passes spaced apart take the events of every commit
// in between in one batch, for at most this much delay. A pass is a
// transaction of four statements whether it finds one event or a hundred:
// at 20 ms the two consumers' passes were 9 statements of a payment's 83 on
// PostgreSQL at 75 payments a second, and the machine's CPU was the bound
// (bench/RESULTS.md, issue 28); a tenth of a second is nothing to a webhook.
const DefaultSpacing = 100 * time.Millisecond

// NewConsumer returns the consumer named name over d, handing batches to
// fn; Run runs it.
func NewConsumer(d *db.DB, logger *slog.Logger, name string, fn Handler, opts ...ConsumerOption) *Consumer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	c := &Consumer{db: d, logger: logger, name: name, fn: fn, batch: DefaultBatch, poll: time.Second,
		spacing: DefaultSpacing, wake: make(chan struct{}, 1)}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Name is the consumer's name.
func (c *Consumer) Name() string { return c.name }

// Wake makes the consumer look for events now rather than at its next
// notification or poll.
func (c *Consumer) Wake() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// maxBackoff bounds the wait after failed passes.
const maxBackoff = 30 * time.Second

// Run consumes until ctx is done. A failed pass is logged and tried again
// after a wait that doubles while passes keep failing (at most 30 s).
func (c *Consumer) Run(ctx context.Context) {
	appended, unsubscribe := c.db.Subscribe(Topic)
	defer unsubscribe()
	timer := time.NewTimer(0) // the first pass at once
	defer timer.Stop()
	var retry, backoff time.Duration
	var lastPass time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.wake:
		case <-appended:
		case <-timer.C:
		}
		if wait := c.spacing - time.Since(lastPass); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		lastPass = time.Now()
		heldBack, err := c.pass(ctx)
		next := c.poll
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return
			}
			backoff = min(max(2*backoff, 100*time.Millisecond), maxBackoff)
			next = backoff
			c.logger.LogAttrs(ctx, slog.LevelError, "event consumer failed",
				slog.String("consumer", c.name), slog.String("error", err.Error()),
				slog.Duration("retry_in", backoff))
		case heldBack:
			backoff = 0
			retry = min(max(2*retry, 10*time.Millisecond), c.poll)
			next = retry
		default:
			backoff, retry = 0, 0
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(next)
	}
}

// pass consumes batch after batch until one is not full.
func (c *Consumer) pass(ctx context.Context) (heldBack bool, err error) {
	for ctx.Err() == nil {
		n, held, err := consume(ctx, c.db, c.name, c.batch, c.fn)
		if err != nil {
			return false, err
		}
		if n < c.batch {
			return held, nil
		}
	}
	return false, ctx.Err()
}

// String is the position as transaction id/seq, for logs.
func (p Position) String() string {
	return strconv.FormatUint(p.Tx, 10) + "/" + strconv.FormatInt(p.Seq, 10)
}
