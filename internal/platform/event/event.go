// Package event records domain events in the transaction of the change they
// describe and fans them out after commit to durable subscribers.
//
// Delivery is at least once, in sequence order per subscriber: a subscriber's
// position is stored only after its handler returned, so a crash in between
// repeats the event. Handlers must therefore be idempotent.
package event

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Event is one stored domain event.
type Event struct {
	Seq int64
	ID  uuid.UUID
	// OrganizationID is the organization whose realtime channel carries the
	// event; uuid.Nil when it concerns none (and for events stored before
	// organizations were recorded).
	OrganizationID uuid.UUID
	Stream         string
	AggregateID    string
	Type           string
	Data           json.RawMessage
	OccurredAt     time.Time
}

// Ref is what records carry to point at the event that recorded them.
type Ref struct {
	EventID     uuid.UUID `json:"event_id"`
	Stream      string    `json:"stream"`
	AggregateID string    `json:"aggregate_id"`
	Type        string    `json:"type"`
}

// Append writes one event in tx, the caller's open transaction, so the event
// exists if and only if the change it describes commits; it occurred at
// tx.Now(). data is stored as JSON. orgID names the organization whose
// realtime channel carries the event (uuid.Nil: none). Dispatchers and
// tails (in every instance, on PostgreSQL) wake as soon as tx commits.
func Append(ctx context.Context, tx *db.Tx, orgID uuid.UUID, stream, aggregateID, typ string, data any) (Ref, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Ref{}, fmt.Errorf("event %s: encode data: %w", typ, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Ref{}, fmt.Errorf("event %s: %w", typ, err)
	}
	// seq comes from the table (and on PostgreSQL tx_id from its default), so
	// the same text serves both engines.
	_, err = tx.ExecContext(ctx, `
		INSERT INTO domain_events (id, organization_id, stream, aggregate_id, type, data, occurred_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, uuid.NullUUID{UUID: orgID, Valid: orgID != uuid.Nil}, stream, aggregateID, typ, string(body), tx.Now().UTC())
	if err != nil {
		return Ref{}, fmt.Errorf("event %s: append: %w", typ, err)
	}
	tx.Notify(Topic)
	return Ref{EventID: id, Stream: stream, AggregateID: aggregateID, Type: typ}, nil
}

// Topic is the notification topic a committed Append wakes dispatchers on.
const Topic = "events"

// Handler receives one event. An error leaves the subscriber's position at
// this event, so it is delivered again on the next pass.
type Handler func(ctx context.Context, e Event) error

// Option configures a Dispatcher.
type Option func(*Dispatcher)

// WithPollInterval sets how long Run waits for a Notify before looking for
// events anyway (events appended by other server instances only show up so).
func WithPollInterval(d time.Duration) Option {
	return func(x *Dispatcher) {
		if d > 0 {
			x.poll = d
		}
	}
}

// WithBatchSize sets how many events a subscriber reads at a time.
func WithBatchSize(n int) Option {
	return func(x *Dispatcher) {
		if n > 0 {
			x.batch = n
		}
	}
}

// Dispatcher delivers stored events to subscribers.
type Dispatcher struct {
	db     *db.DB
	logger *slog.Logger
	poll   time.Duration
	batch  int
	wake   chan struct{}

	mu   sync.Mutex // guards subs
	subs []*subscriber

	// pass serializes passes within the process; other instances are kept
	// out by the per-subscriber claim.
	pass sync.Mutex
	// heldBack (guarded by pass) records that the pass left committed events
	// unread because an older transaction was still running.
	heldBack bool
}

type subscriber struct {
	name    string
	handler Handler
	created bool // the event_subscriptions row is known to exist
}

// NewDispatcher returns a dispatcher over d. By default Run polls every
// 500 ms and subscribers read 100 events at a time.
func NewDispatcher(d *db.DB, logger *slog.Logger, opts ...Option) *Dispatcher {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	x := &Dispatcher{db: d, logger: logger, poll: 500 * time.Millisecond, batch: 100, wake: make(chan struct{}, 1)}
	for _, o := range opts {
		o(x)
	}
	return x
}

// HasSubscribers reports whether anything subscribed: without subscribers
// there is nothing to dispatch and Run need not start.
func (d *Dispatcher) HasSubscribers() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.subs) > 0
}

// Subscribe registers a durable subscriber. name identifies its position in
// event_subscriptions across restarts and instances, so it must stay stable.
//
// A subscriber seen for the first time starts at the beginning of the event
// table (seq 0) rather than at its end: a subscriber added in a release then
// catches up on the history it missed, and one whose row was created by
// another instance a moment earlier cannot lose events in between. A
// subscriber that must not replay history should ignore old events itself.
//
// Subscribe panics if name is already registered.
func (d *Dispatcher) Subscribe(name string, h Handler) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range d.subs {
		if s.name == name {
			panic("event: subscriber " + name + " registered twice")
		}
	}
	d.subs = append(d.subs, &subscriber{name: name, handler: h})
}

// Notify wakes Run at once. It never blocks: wake-ups while a pass is
// pending merge into one.
func (d *Dispatcher) Notify() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// HandlerError reports the event a subscriber's handler failed on.
type HandlerError struct {
	Subscriber string
	Event      Event
	Err        error
}

func (e *HandlerError) Error() string {
	return fmt.Sprintf("event subscriber %s: %s #%d (%s): %v", e.Subscriber, e.Event.Type, e.Event.Seq, e.Event.ID, e.Err)
}

func (e *HandlerError) Unwrap() error { return e.Err }

// DispatchPending makes one pass: each subscriber receives the events after
// its position, batch after batch, until it is caught up or its handler
// fails. A failing subscriber does not hold up the others. The error joins
// every subscriber's failure (*HandlerError for handler errors).
func (d *Dispatcher) DispatchPending(ctx context.Context) error {
	_, err := d.dispatchPending(ctx)
	return err
}

// dispatchPending is DispatchPending that also tells whether committed
// events had to be left for a later pass.
func (d *Dispatcher) dispatchPending(ctx context.Context) (heldBack bool, err error) {
	d.pass.Lock()
	defer d.pass.Unlock()
	d.heldBack = false
	d.mu.Lock()
	subs := append([]*subscriber(nil), d.subs...)
	d.mu.Unlock()
	var errs []error
	for _, s := range subs {
		if err := ctx.Err(); err != nil {
			errs = append(errs, err)
			break
		}
		if err := d.dispatch(ctx, s); err != nil {
			errs = append(errs, err)
		}
	}
	return d.heldBack, errors.Join(errs...)
}

func (d *Dispatcher) dispatch(ctx context.Context, s *subscriber) error {
	if !s.created {
		err := d.db.Tx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `
				INSERT INTO event_subscriptions (name, last_seq) VALUES ($1, 0)
				ON CONFLICT (name) DO NOTHING`, s.name)
			return err
		})
		if err != nil {
			return fmt.Errorf("event subscriber %s: create position: %w", s.name, err)
		}
		s.created = true
	}
	for {
		n, err := d.dispatchBatch(ctx, s)
		if err != nil || n < d.batch {
			return err
		}
	}
}

// dispatchBatch delivers up to one batch and reports how many events it read.
//
// Handlers run outside any transaction that holds a write lock: they are
// free to open their own (on SQLite a transaction holds the only writer, so
// a handler's d.Tx would wait forever), and on PostgreSQL a transaction with
// a transaction id held open across slow handlers would hold back
// pg_snapshot_xmin and so stall every subscriber on every instance.
//
// Instead, on PostgreSQL the batch holds a transaction-level advisory lock
// keyed by the subscriber's name; it takes no transaction id, and an
// instance that cannot get it skips the subscriber for this pass. SQLite is
// a single node, so an in-process lock per database does. On both engines the
// position moves by a conditional update (last_seq = the value read), so a
// concurrent pass that slipped through can cause a repeat, never a
// position moving backwards.
func (d *Dispatcher) dispatchBatch(ctx context.Context, s *subscriber) (int, error) {
	if d.db.Dialect() != db.Postgres {
		l, _ := sqliteLocks.LoadOrStore(d.db, new(sync.Mutex))
		l.(*sync.Mutex).Lock()
		defer l.(*sync.Mutex).Unlock()
		return d.deliver(ctx, s, d.db.Reader(), func(from, to Position) error {
			return d.db.Tx(ctx, func(tx *db.Tx) error { return advance(ctx, tx, s.name, from, to) })
		})
	}
	var (
		n       int
		deliver error
	)
	err := d.db.Tx(ctx, func(tx *db.Tx) error {
		var got bool
		// Two int4 keys live apart from goose's single bigint key.
		if err := tx.QueryRowContext(ctx,
			`SELECT pg_try_advisory_xact_lock(72390, hashtext($1))`, s.name).Scan(&got); err != nil {
			return err
		}
		if !got {
			return nil
		}
		n, deliver = d.deliver(ctx, s, tx, func(from, to Position) error { return advance(ctx, tx, s.name, from, to) })
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("event subscriber %s: %w", s.name, err)
	}
	return n, deliver
}

// deliver reads one batch after the stored position through q, hands it to
// the subscriber and stores the new position with save.
func (d *Dispatcher) deliver(ctx context.Context, s *subscriber, q db.Querier, save func(from, to Position) error) (int, error) {
	var pos Position
	var tx int64
	if err := q.QueryRowContext(ctx,
		`SELECT last_seq, last_tx FROM event_subscriptions WHERE name = $1`, s.name).Scan(&pos.Seq, &tx); err != nil {
		return 0, fmt.Errorf("event subscriber %s: read position: %w", s.name, err)
	}
	pos.Tx = uint64(tx)
	events, positions, heldBack, err := readAfter(ctx, d.db, q, pos, d.batch, "")
	if err != nil {
		return 0, fmt.Errorf("event subscriber %s: read events: %w", s.name, err)
	}
	d.heldBack = d.heldBack || heldBack
	to := pos
	var failed error
	for i, e := range events {
		if err := call(ctx, s.handler, e); err != nil {
			failed = &HandlerError{Subscriber: s.name, Event: e, Err: err}
			break
		}
		to = positions[i]
	}
	if to != pos {
		if err := save(pos, to); err != nil {
			return len(events), errors.Join(failed, fmt.Errorf("event subscriber %s: save position: %w", s.name, err))
		}
	}
	if failed != nil {
		return len(events), failed
	}
	return len(events), nil
}

const eventColumns = `seq, id, organization_id, stream, aggregate_id, type, data, occurred_at`

// scanEvents reads rows of eventColumns, followed by the transaction id as
// text when tx is not nil (PostgreSQL), and closes them.
func scanEvents(rows *sql.Rows, tx *[]uint64) ([]Event, error) {
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var (
			e    Event
			org  uuid.NullUUID
			data string
			xid  string
		)
		dest := []any{&e.Seq, &e.ID, &org, &e.Stream, &e.AggregateID, &e.Type, &data, &e.OccurredAt}
		if tx != nil {
			dest = append(dest, &xid)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if tx != nil {
			n, err := strconv.ParseUint(xid, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("event #%d: transaction id %q: %w", e.Seq, xid, err)
			}
			*tx = append(*tx, n)
		}
		e.OrganizationID = org.UUID
		e.Data = json.RawMessage(data)
		e.OccurredAt = e.OccurredAt.UTC()
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return events, rows.Close()
}

// sqliteLocks holds a *sync.Mutex per *db.DB on SQLite, so that several
// Dispatchers in one process take turns.
var sqliteLocks sync.Map

// advance moves subscriber name's position from from to to, unless another
// pass moved it meanwhile.
func advance(ctx context.Context, tx *db.Tx, name string, from, to Position) error {
	_, err := tx.ExecContext(ctx, `UPDATE event_subscriptions SET last_seq = $1, last_tx = $2
		WHERE name = $3 AND last_seq = $4 AND last_tx = $5`, to.Seq, int64(to.Tx), name, from.Seq, int64(from.Tx))
	return err
}

// call runs h, turning a panic into an error so that one bad event cannot
// take the process down and is retried like any failure.
func call(ctx context.Context, h Handler, e Event) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, e)
}

// Run dispatches until ctx is done: a pass at start, then one after each
// Notify or poll interval. Failures are logged (without event data, which
// may be personal) and retried on the next pass.
func (d *Dispatcher) Run(ctx context.Context) {
	appended, unsubscribe := d.db.Subscribe(Topic)
	defer unsubscribe()
	t := time.NewTimer(0)
	defer t.Stop()
	var retry time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-d.wake:
		case <-appended:
		case <-t.C:
		}
		heldBack, err := d.dispatchPending(ctx)
		d.log(ctx, err)
		if ctx.Err() != nil {
			return
		}
		// Held-back events usually wait for a transaction of a few
		// milliseconds; back off in case it is a long one.
		next := d.poll
		if heldBack {
			retry = min(max(2*retry, 10*time.Millisecond), d.poll)
			next = retry
		} else {
			retry = 0
		}
		t.Reset(next)
	}
}

func (d *Dispatcher) log(ctx context.Context, err error) {
	if err == nil || ctx.Err() != nil {
		return
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, err := range errs {
		var he *HandlerError
		if errors.As(err, &he) {
			d.logger.LogAttrs(ctx, slog.LevelError, "event handler failed",
				slog.String("subscriber", he.Subscriber), slog.Int64("seq", he.Event.Seq),
				slog.String("event_id", he.Event.ID.String()), slog.String("type", he.Event.Type),
				slog.String("error", err.Error()))
			continue
		}
		d.logger.LogAttrs(ctx, slog.LevelError, "event dispatch failed", slog.String("error", err.Error()))
	}
}
