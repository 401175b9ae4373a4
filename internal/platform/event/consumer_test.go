package event_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/event"
)

// handled counts, per aggregate, the events a consumer handled in
// transactions that committed.
type handled struct {
	mu     sync.Mutex
	counts map[string]int
	order  []string
}

func newHandled() *handled { return &handled{counts: map[string]int{}} }

// handler records each batch once its transaction committed.
func (h *handled) handler(ctx context.Context, tx *db.Tx, events []event.Event) error {
	tx.AfterCommit(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, e := range events {
			h.counts[e.AggregateID]++
			h.order = append(h.order, e.AggregateID)
		}
	})
	return nil
}

func (h *handled) count(agg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.counts[agg]
}

func (h *handled) total() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.order)
}

// consumeUntil runs passes of consumer name until done holds (on
// PostgreSQL other tests' transactions can hold events back a while).
func consumeUntil(t *testing.T, d *db.DB, name string, fn event.Handler, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !done(); time.Sleep(5 * time.Millisecond) {
		if _, err := event.Consume(context.Background(), d, name, 10, fn); err != nil {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatal("consumer did not get there within 30 s")
		}
	}
}

// startConsumer creates the consumer's position (at the end of the table).
func startConsumer(t *testing.T, d *db.DB, name string) {
	t.Helper()
	n, err := event.Consume(context.Background(), d, name, 10, func(context.Context, *db.Tx, []event.Event) error {
		t.Error("a new consumer handed out history")
		return nil
	})
	if err != nil || n != 0 {
		t.Fatalf("first pass = %d, %v", n, err)
	}
}

func TestNewConsumerStartsAtTheEndOfTheTable(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		org := uuid.New()
		appendFor(t, d, org, "before-1", t0)
		appendFor(t, d, uuid.Nil, "before-2", t0) // of no organization
		settle(t, d)
		startConsumer(t, d, "c")
		appendFor(t, d, org, "after-1", t0)
		appendFor(t, d, uuid.Nil, "after-2", t0)
		h := newHandled()
		consumeUntil(t, d, "c", h.handler, func() bool { return h.total() >= 2 })
		if h.count("after-1") != 1 || h.count("after-2") != 1 || h.count("before-1")+h.count("before-2") != 0 {
			t.Fatalf("handled %v, want after-1 and after-2 once each", h.order)
		}
		// Another consumer keeps its own position.
		startConsumer(t, d, "other")
		n, err := event.Consume(context.Background(), d, "other", 10, h.handler)
		if err != nil || n != 0 {
			t.Fatalf("other consumer's second pass = %d, %v; want nothing new", n, err)
		}
	})
}

func TestConsumerRedoesTheBatchAfterAFailure(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		startConsumer(t, d, "c")
		for i := range 3 {
			appendFor(t, d, uuid.New(), fmt.Sprint("e", i), t0)
		}
		settle(t, d)
		boom := errors.New("boom")
		var seen int
		n, err := event.Consume(ctx, d, "c", 10, func(ctx context.Context, tx *db.Tx, events []event.Event) error {
			seen = len(events)
			// Its writes roll back with it.
			if _, err := event.Append(ctx, tx, uuid.Nil, "s", "from-failed-pass", "thing.updated", nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) || n != 0 || seen != 3 {
			t.Fatalf("failing pass = %d, %v after seeing %d events", n, err, seen)
		}
		h := newHandled()
		consumeUntil(t, d, "c", h.handler, func() bool { return h.total() >= 3 })
		if want := []string{"e0", "e1", "e2"}; fmt.Sprint(h.order) != fmt.Sprint(want) {
			t.Fatalf("handled %v after the failure, want %v", h.order, want)
		}
		var left int
		if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM domain_events WHERE aggregate_id = 'from-failed-pass'`).Scan(&left); err != nil || left != 0 {
			t.Fatalf("the failed pass's event: %d, %v", left, err)
		}
	})
}

// The handler's own events (a consumer that appends events as it reacts)
// come after its position, so a later pass hands them out too.
func TestConsumerHandsOutTheEventsItsHandlerAppended(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		startConsumer(t, d, "c")
		appendFor(t, d, uuid.New(), "cause", t0)
		h := newHandled()
		fn := func(ctx context.Context, tx *db.Tx, events []event.Event) error {
			for _, e := range events {
				if e.AggregateID == "cause" {
					if _, err := event.Append(ctx, tx, uuid.Nil, "s", "effect", "thing.updated", nil); err != nil {
						return err
					}
				}
			}
			return h.handler(ctx, tx, events)
		}
		consumeUntil(t, d, "c", fn, func() bool { return h.count("effect") > 0 })
		if h.count("cause") != 1 || h.count("effect") != 1 {
			t.Fatalf("handled %v", h.order)
		}
	})
}

// On PostgreSQL an older transaction can draw the later sequence number and
// a younger one commit first: the consumer follows (transaction id, seq)
// below the oldest running transaction and hands out both, once each.
func TestConsumerHandlesEventsCommittedOutOfSequenceOrderOnce(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite commits sequence numbers in order")
		}
		startConsumer(t, d, "c")
		h := newHandled()
		olderDrawsLaterSequence(t, d, uuid.New(),
			func() {
				consumeUntil(t, d, "c", h.handler, func() bool { return h.count("older") > 0 })
				if h.count("younger") != 0 {
					t.Fatal("handed out the younger transaction's event before it committed")
				}
			},
			func() {
				consumeUntil(t, d, "c", h.handler, func() bool { return h.count("younger") > 0 })
			})
		if h.count("older") != 1 || h.count("younger") != 1 || h.total() != 2 {
			t.Fatalf("handled %v", h.order)
		}
	})
}

// appendConcurrently appends writers × per events from concurrent
// transactions (two events in each) and returns their aggregates, named
// with prefix.
func appendConcurrently(t *testing.T, d *db.DB, prefix string, writers, per int) []string {
	t.Helper()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		aggs []string
	)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := 0; i < per; i += 2 {
				a, b := fmt.Sprintf("%sw%d-%d", prefix, w, i), fmt.Sprintf("%sw%d-%d", prefix, w, i+1)
				err := d.Tx(context.Background(), func(tx *db.Tx) error {
					for _, agg := range []string{a, b} {
						if _, err := event.Append(context.Background(), tx, uuid.New(), "s", agg, "thing.updated", nil); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				aggs = append(aggs, a, b)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return aggs
}

// runConsumer runs a Consumer until the test ends.
func runConsumer(t *testing.T, d *db.DB, name string, fn event.Handler, batch int) {
	t.Helper()
	c := event.NewConsumer(d, nil, name, fn, event.WithBatch(batch), event.WithPoll(20*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { c.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
}

func waitHandled(t *testing.T, h *handled, aggs []string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		missing := 0
		for _, a := range aggs {
			if h.count(a) == 0 {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never handled", missing, len(aggs))
		}
	}
	// Give a duplicate time to show.
	time.Sleep(100 * time.Millisecond)
	for _, a := range aggs {
		if n := h.count(a); n != 1 {
			t.Fatalf("event %s handled %d times", a, n)
		}
	}
	if h.total() != len(aggs) {
		t.Fatalf("handled %d events, appended %d", h.total(), len(aggs))
	}
}

func TestConsumerHandlesEveryEventOfConcurrentTransactionsOnce(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		startConsumer(t, d, "c")
		h := newHandled()
		runConsumer(t, d, "c", h.handler, 7)
		waitHandled(t, h, appendConcurrently(t, d, "", 8, 40))
	})
}

// Two instances on one PostgreSQL database run the same consumer: each
// batch is handled by one of them, never by both.
func TestTwoInstancesOfAConsumerNeverHandleAnEventTwice(t *testing.T) {
	var pg *dbtest.Engine
	for _, e := range dbtest.Engines() {
		if e.Name == "postgres" {
			pg = &e
		}
	}
	if pg == nil {
		t.Skip(dbtest.PostgresEnv + " is not set")
	}
	dsn := pg.Migrated(t)
	a, b := dbtest.Open(t, dsn), dbtest.Open(t, dsn)
	startConsumer(t, a, "c")
	h := newHandled()
	var mu sync.Mutex
	by := map[string]int{}
	// Each instance's handler takes a while, so their passes overlap.
	slow := func(instance string) event.Handler {
		return func(ctx context.Context, tx *db.Tx, events []event.Event) error {
			time.Sleep(2 * time.Millisecond)
			tx.AfterCommit(func() { mu.Lock(); by[instance] += len(events); mu.Unlock() })
			return h.handler(ctx, tx, events)
		}
	}
	runConsumer(t, a, "c", slow("a"), 5)
	runConsumer(t, b, "c", slow("b"), 5)
	var (
		wg     sync.WaitGroup
		ma, mb []string
	)
	wg.Go(func() { ma = appendConcurrently(t, a, "a-", 4, 50) })
	wg.Go(func() { mb = appendConcurrently(t, b, "b-", 4, 50) })
	wg.Wait()
	waitHandled(t, h, append(ma, mb...))
	t.Logf("events handled by instance: %v", by)
}
