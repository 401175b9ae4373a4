package event

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Position orders events as a Tail delivers them. On PostgreSQL that is the
// order in which their transactions became visible to every reader:
// (transaction id, seq), read only below the oldest transaction still
// running. Sequence numbers alone do not do: they are drawn before commit,
// so an event of an older transaction can get a higher number than one of
// a younger transaction still running, and reading past that number would
// lose the younger one. Every transaction below the oldest running one has
// ended, and transactions that start later get higher ids, so nothing can
// appear below a position once it was read. On SQLite the single writer
// commits in seq order and Tx is 0.
type Position struct {
	Tx  uint64
	Seq int64
}

// Errors that end a Subscription, and the one of Replay.
var (
	// ErrTooSlow: the subscriber did not take its events as fast as they
	// came and its buffer filled up; it may subscribe again and replay.
	ErrTooSlow = errors.New("event: subscriber fell too far behind")
	// ErrClosed: the tail stopped (the server is stopping).
	ErrClosed = errors.New("event: tail closed")
	// ErrUnknownEvent: Replay was asked to start after an event that is not
	// one of the subscription's organization.
	ErrUnknownEvent = errors.New("event: no such event of this organization")
)

// Tail follows the domain events of this process's database as they
// commit and hands each event that names an organization to that
// organization's subscribers in this process: the realtime channel. It
// keeps no position in the database; a subscriber that missed events (it
// reconnected) reads them with Replay.
//
// The tail reads only while something is subscribed. On PostgreSQL a commit
// in any instance wakes it through the database's notifications; it polls
// as well, so a lost notification costs latency, never an event.
type Tail struct {
	db     *db.DB
	logger *slog.Logger
	poll   time.Duration
	buffer int
	batch  int
	wake   chan struct{}

	mu   sync.Mutex // guards what follows
	subs map[uuid.UUID]map[*Subscription]struct{}
	// live is set while the tail follows the table from pos; gen counts
	// the starts, so a pass read before a restart is not delivered.
	live   bool
	gen    int
	pos    Position
	closed bool
	owned  int           // subscriptions whose owner has not called Close
	idle   chan struct{} // closed when owned drops to 0 after Close
}

// NewTail returns a tail over d; Run makes it follow the table. poll is
// how long it waits for a notification before reading anyway, buffer how
// many events a subscriber may have waiting before it is dropped with
// ErrTooSlow; zero takes the defaults, 500 ms and 256.
func NewTail(d *db.DB, logger *slog.Logger, poll time.Duration, buffer int) *Tail {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if poll <= 0 {
		poll = 500 * time.Millisecond
	}
	if buffer <= 0 {
		buffer = 256
	}
	return &Tail{db: d, logger: logger, poll: poll, buffer: buffer, batch: 100,
		wake: make(chan struct{}, 1), subs: map[uuid.UUID]map[*Subscription]struct{}{}}
}

// Subscription receives the events of one organization after its start
// position, until its owner closes it or the tail ends it (Done). Those are
// the events committed after it was made and, on PostgreSQL, possibly some
// committed just before, by transactions younger than one still running
// when the tail started; Replay hands out exactly the events up to the
// start position, so together they give every event once.
type Subscription struct {
	tail *Tail
	org  uuid.UUID
	from Position
	// after is the position of the event the client named as its last
	// (zero: none): Replay starts there, and the live events at or before
	// it are not handed out again. Another instance's tail, or this one
	// held back by an older transaction, may stand behind it.
	after  Position
	events chan Event
	done   chan struct{}
	err    error // set before done is closed
	close  sync.Once
}

// Subscribe starts receiving orgID's events: those after the event with id
// after, which must be one of orgID's (else ErrUnknownEvent), when it is
// not uuid.Nil. The caller must Close the subscription when done with it.
func (t *Tail) Subscribe(ctx context.Context, orgID, after uuid.UUID) (*Subscription, error) {
	var from Position
	if after != uuid.Nil {
		var err error
		if from, err = t.position(ctx, orgID, after); err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, ErrClosed
	}
	if !t.live {
		pos, err := t.start(ctx)
		if err != nil {
			return nil, fmt.Errorf("event tail: start: %w", err)
		}
		t.live, t.pos = true, pos
		t.gen++
	}
	s := &Subscription{tail: t, org: orgID, from: t.pos, after: from, events: make(chan Event, t.buffer), done: make(chan struct{})}
	if t.subs[orgID] == nil {
		t.subs[orgID] = map[*Subscription]struct{}{}
	}
	t.subs[orgID][s] = struct{}{}
	t.owned++
	select {
	case t.wake <- struct{}{}:
	default:
	}
	return s, nil
}

// Events delivers the subscription's events in order.
func (s *Subscription) Events() <-chan Event { return s.events }

// Done is closed when the tail ended the subscription; Err tells why.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Err is ErrTooSlow or ErrClosed once Done is closed, else nil.
func (s *Subscription) Err() error {
	select {
	case <-s.done:
		return s.err
	default:
		return nil
	}
}

// Close ends the subscription. It may be called more than once.
func (s *Subscription) Close() {
	s.close.Do(func() {
		t := s.tail
		t.mu.Lock()
		defer t.mu.Unlock()
		t.drop(s, nil)
		t.owned--
		if t.owned == 0 && t.idle != nil {
			close(t.idle)
			t.idle = nil
		}
	})
}

// drop removes s (t.mu held) and, when err is set, ends it with err. With
// the last subscriber gone the tail stops reading until the next one.
func (t *Tail) drop(s *Subscription, err error) {
	subs := t.subs[s.org]
	if _, ok := subs[s]; !ok {
		return
	}
	delete(subs, s)
	if len(subs) == 0 {
		delete(t.subs, s.org)
	}
	if err != nil {
		s.err = err
		close(s.done)
	}
	if len(t.subs) == 0 {
		t.live = false
	}
}

// Close ends every subscription with ErrClosed and refuses new ones; the
// owners see Done and close theirs. Wait tells when they have.
func (t *Tail) Close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for _, subs := range t.subs {
		for s := range subs {
			t.drop(s, ErrClosed)
		}
	}
}

// Wait waits, after Close, until every subscription's owner has closed it,
// or ctx ends.
func (t *Tail) Wait(ctx context.Context) error {
	t.mu.Lock()
	if t.owned == 0 {
		t.mu.Unlock()
		return nil
	}
	if t.idle == nil {
		t.idle = make(chan struct{})
	}
	idle := t.idle
	t.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run follows the table until ctx is done: a pass after each notification,
// wake-up or poll interval while anything is subscribed.
func (t *Tail) Run(ctx context.Context) {
	appended, unsubscribe := t.db.Subscribe(Topic)
	defer unsubscribe()
	timer := time.NewTimer(t.poll)
	defer timer.Stop()
	var retry time.Duration
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		case <-appended:
		case <-timer.C:
		}
		heldBack, err := t.pass(ctx)
		if err != nil && ctx.Err() == nil {
			t.logger.LogAttrs(ctx, slog.LevelError, "event tail failed", slog.String("error", err.Error()))
		}
		next := t.poll
		if heldBack {
			retry = min(max(2*retry, 10*time.Millisecond), t.poll)
			next = retry
		} else {
			retry = 0
		}
		timer.Reset(next)
	}
}

// pass reads and hands out what committed since the last pass, batch after
// batch. heldBack reports committed events left for a later pass because an
// older transaction is still running (PostgreSQL).
func (t *Tail) pass(ctx context.Context) (heldBack bool, err error) {
	for {
		t.mu.Lock()
		live, gen, pos := t.live, t.gen, t.pos
		t.mu.Unlock()
		if !live {
			return false, nil
		}
		events, positions, held, err := t.read(ctx, pos)
		if err != nil {
			return false, err
		}
		t.mu.Lock()
		if t.gen != gen || !t.live {
			t.mu.Unlock()
			return false, nil
		}
		for i, e := range events {
			for s := range t.subs[e.OrganizationID] {
				if !positions[i].later(s.after) {
					continue
				}
				select {
				case s.events <- e:
				default:
					t.drop(s, ErrTooSlow)
				}
			}
			t.pos = positions[i]
		}
		t.mu.Unlock()
		if len(events) < t.batch {
			return held, nil
		}
	}
}

// start returns the position of now: every event at or before it has
// committed or never will, and the tail hands out what comes after.
func (t *Tail) start(ctx context.Context) (Position, error) {
	q := t.db.Reader()
	if t.db.Dialect() == db.Postgres {
		xmin, err := oldestRunning(ctx, q)
		return Position{Tx: xmin}, err
	}
	var seq int64
	err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM domain_events`).Scan(&seq)
	return Position{Seq: seq}, err
}

// oldestRunning is the id of the oldest transaction still running (or the
// next one to start): every transaction below it has ended.
func oldestRunning(ctx context.Context, q db.Reader) (uint64, error) {
	var xmin string
	if err := q.QueryRowContext(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot())::text`).Scan(&xmin); err != nil {
		return 0, err
	}
	return strconv.ParseUint(xmin, 10, 64)
}

// read returns the next batch of organizations' events after pos with
// their positions.
func (t *Tail) read(ctx context.Context, pos Position) (events []Event, positions []Position, heldBack bool, err error) {
	return readAfter(ctx, t.db, t.db.Reader(), pos, t.batch, ` AND organization_id IS NOT NULL`)
}

// readAfter returns up to batch events after pos that match filter (a SQL
// condition starting with AND, or ""), in an order no later commit can
// insert into, with their positions; heldBack tells that committed events
// wait behind an older transaction still running.
//
// On SQLite the single writer commits sequence numbers in order. On
// PostgreSQL sequence numbers are taken before commit, in any order across
// transactions, so events are read by (transaction id, seq), and only
// those of transactions below the oldest still running: every event before
// the last one read has then committed or rolled back. (Ordering by seq
// alone would skip the event of a transaction that drew an earlier seq but
// committed after a younger one.)
func readAfter(ctx context.Context, d *db.DB, q db.Reader, pos Position, batch int, filter string) (events []Event, positions []Position, heldBack bool, err error) {
	if d.Dialect() != db.Postgres {
		rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM domain_events
			WHERE seq > $1`+filter+` ORDER BY seq LIMIT $2`, pos.Seq, batch)
		if err != nil {
			return nil, nil, false, err
		}
		events, err := scanEvents(rows, nil)
		for _, e := range events {
			positions = append(positions, Position{Seq: e.Seq})
		}
		return events, positions, false, err
	}
	// Transactions below xmin have ended before the next statement's
	// snapshot is taken, so it sees every event they committed.
	xmin, err := oldestRunning(ctx, q)
	if err != nil {
		return nil, nil, false, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+`, tx_id::text FROM domain_events
		WHERE tx_id < $1::text::xid8 AND (tx_id, seq) > ($2::text::xid8, $3)`+filter+`
		ORDER BY tx_id, seq LIMIT $4`, strconv.FormatUint(xmin, 10), strconv.FormatUint(pos.Tx, 10), pos.Seq, batch)
	if err != nil {
		return nil, nil, false, err
	}
	var txs []uint64
	if events, err = scanEvents(rows, &txs); err != nil {
		return nil, nil, false, err
	}
	for i, e := range events {
		positions = append(positions, Position{Tx: txs[i], Seq: e.Seq})
	}
	if len(events) == batch {
		return events, positions, false, nil
	}
	// Committed events that wait only for an older transaction get no
	// notification of their own once it ends: look again soon.
	// Asked as "is the newest event at or past xmin", which reads one entry
	// at the end of domain_events_position_idx whatever the plan. ("Is there
	// an event at or past xmin" let a generic plan, blind to xmin, scan the
	// table from its start: nearly every event is below xmin.)
	err = q.QueryRowContext(ctx, `SELECT COALESCE(max(tx_id) >= $1::text::xid8, false) FROM domain_events
		WHERE true`+filter, strconv.FormatUint(xmin, 10)).Scan(&heldBack)
	return events, positions, heldBack, err
}

// Organization is the organization whose events the subscription receives.
func (s *Subscription) Organization() uuid.UUID { return s.org }

// position returns the position of the event with id, which must be one
// of org's (else ErrUnknownEvent).
func (t *Tail) position(ctx context.Context, org, id uuid.UUID) (Position, error) {
	var (
		pos Position
		xid string
	)
	query := `SELECT seq, '0' FROM domain_events WHERE id = $1 AND organization_id = $2`
	if t.db.Dialect() == db.Postgres {
		query = `SELECT seq, tx_id::text FROM domain_events WHERE id = $1 AND organization_id = $2`
	}
	err := t.db.Reader().QueryRowContext(ctx, query, id, org).Scan(&pos.Seq, &xid)
	if errors.Is(err, sql.ErrNoRows) {
		return pos, ErrUnknownEvent
	}
	if err != nil {
		return pos, err
	}
	pos.Tx, err = strconv.ParseUint(xid, 10, 64)
	return pos, err
}

// later reports whether p comes after q in the order the tail delivers.
func (p Position) later(q Position) bool {
	return p.Tx > q.Tx || p.Tx == q.Tx && p.Seq > q.Seq
}

// Replay calls fn with each event of the subscription's organization after
// the one it was subscribed after (or from the first, if none) that
// committed before the subscription was made and occurred at or after
// since, in the order the tail delivers events: together with Events that
// is every later event, each once. fn's error stops the replay and is
// returned.
func (s *Subscription) Replay(ctx context.Context, since time.Time, fn func(Event) error) error {
	t := s.tail
	pos := s.after
	q := t.db.Reader()
	pg := t.db.Dialect() == db.Postgres
	for {
		var (
			rows *sql.Rows
			err  error
			txs  []uint64
			txp  *[]uint64
		)
		if pg {
			txp = &txs
			rows, err = q.QueryContext(ctx, `SELECT `+eventColumns+`, tx_id::text FROM domain_events
				WHERE organization_id = $1 AND occurred_at >= $2
				  AND (tx_id, seq) > ($3::text::xid8, $4) AND (tx_id, seq) <= ($5::text::xid8, $6)
				ORDER BY tx_id, seq LIMIT $7`, s.org, since.UTC(), strconv.FormatUint(pos.Tx, 10), pos.Seq,
				strconv.FormatUint(s.from.Tx, 10), s.from.Seq, t.batch)
		} else {
			rows, err = q.QueryContext(ctx, `SELECT `+eventColumns+` FROM domain_events
				WHERE organization_id = $1 AND occurred_at >= $2 AND seq > $3 AND seq <= $4
				ORDER BY seq LIMIT $5`, s.org, since.UTC(), pos.Seq, s.from.Seq, t.batch)
		}
		if err != nil {
			return err
		}
		events, err := scanEvents(rows, txp)
		if err != nil {
			return err
		}
		for i, e := range events {
			if err := fn(e); err != nil {
				return err
			}
			pos = Position{Seq: e.Seq}
			if pg {
				pos.Tx = txs[i]
			}
		}
		if len(events) < t.batch {
			return nil
		}
	}
}
