package event_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/event"
)

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 123456000, time.UTC)

// setClock is a clock a test sets to any time, earlier ones included: an
// event occurs at its transaction's time, and the tests append events at
// chosen times.
type setClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *setClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *setClock) set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// at is the clock of every test database of this package (its tests do not
// run in parallel).
var at = &setClock{now: t0}

// each runs test on every engine with a database whose transactions read
// their time from at, which starts at t0.
func each(t *testing.T, test func(t *testing.T, d *db.DB)) {
	t.Helper()
	at.set(t0)
	dbtest.Each(t, test, db.WithClock(at))
}

// appendN appends events agg-<from>…agg-<from+n-1>, each in its own transaction.
func appendN(t *testing.T, d *db.DB, from, n int) []event.Ref {
	t.Helper()
	var refs []event.Ref
	for i := from; i < from+n; i++ {
		at.set(t0.Add(time.Duration(i) * time.Second))
		err := d.Tx(context.Background(), func(tx *db.Tx) error {
			ref, err := event.Append(context.Background(), tx, uuid.Nil, "payment", fmt.Sprintf("agg-%d", i), "payment.created", map[string]int{"n": i})
			refs = append(refs, ref)
			return err
		})
		if err != nil {
			t.Fatalf("append: %v", err)
		}
	}
	settle(t, d)
	return refs
}

// settle waits until the dispatcher can see every committed event, or only
// those of aggregates when some are named. On PostgreSQL that takes every
// older transaction in the cluster to end, and other tests' transactions
// run there too.
func settle(t *testing.T, d *db.DB, aggregates ...string) {
	t.Helper()
	if d.Dialect() != db.Postgres {
		return
	}
	only := ""
	if len(aggregates) > 0 {
		only = ` AND aggregate_id = ANY($1)`
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var held bool
		args := []any{}
		if only != "" {
			args = append(args, aggregates)
		}
		err := d.Reader().QueryRowContext(context.Background(), `SELECT EXISTS (SELECT 1 FROM domain_events
			WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot())`+only+`)`, args...).Scan(&held)
		if err != nil {
			t.Fatal(err)
		}
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("events still held back by older transactions")
		}
	}
}

// recorder is a handler that remembers the aggregate ids it saw.
type recorder struct {
	mu     sync.Mutex
	seen   []string
	events []event.Event
	fail   func(e event.Event) error
}

func (r *recorder) handle(_ context.Context, e event.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen = append(r.seen, e.AggregateID)
	r.events = append(r.events, e)
	if r.fail != nil {
		return r.fail(e)
	}
	return nil
}

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.seen)
}

func aggs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("agg-%d", i))
	}
	return out
}

func TestAppendInRolledBackTransactionLeavesNothing(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		rollback := errors.New("rollback")
		err := d.Tx(ctx, func(tx *db.Tx) error {
			if _, err := event.Append(ctx, tx, uuid.Nil, "card", "c1", "card.frozen", nil); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatalf("Tx = %v", err)
		}
		var n int
		if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM domain_events`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Fatalf("%d events after rollback", n)
		}
		var r recorder
		disp := event.NewDispatcher(d, nil)
		disp.Subscribe("s", r.handle)
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		if len(r.got()) != 0 {
			t.Fatalf("delivered %v", r.got())
		}
	})
}

func TestEverySubscriberSeesEveryEventOnceInOrder(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		refs := appendN(t, d, 1, 4)
		// Several events in one transaction keep their order too.
		err := d.Tx(ctx, func(tx *db.Tx) error {
			for i := 5; i <= 7; i++ {
				ref, err := event.Append(ctx, tx, uuid.Nil, "payment", fmt.Sprintf("agg-%d", i), "payment.created", map[string]int{"n": i})
				if err != nil {
					return err
				}
				refs = append(refs, ref)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, d)

		var a, b recorder
		disp := event.NewDispatcher(d, nil, event.WithBatchSize(3)) // passes cross batch boundaries
		disp.Subscribe("a", a.handle)
		disp.Subscribe("b", b.handle)
		for range 2 {
			if err := disp.DispatchPending(ctx); err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range []*recorder{&a, &b} {
			if got := r.got(); !slices.Equal(got, aggs(1, 7)) {
				t.Fatalf("delivered %v", got)
			}
		}

		e, ref := a.events[0], refs[0]
		if e.ID != ref.EventID || e.Stream != "payment" || e.AggregateID != "agg-1" || e.Type != "payment.created" ||
			string(e.Data) != `{"n":1}` || !e.OccurredAt.Equal(t0.Add(time.Second)) || e.OccurredAt.Location() != time.UTC {
			t.Fatalf("event = %+v, ref = %+v", e, ref)
		}
		for i := 1; i < len(a.events); i++ {
			if a.events[i].Seq <= a.events[i-1].Seq {
				t.Fatalf("seq out of order: %d after %d", a.events[i].Seq, a.events[i-1].Seq)
			}
		}
		js, _ := json.Marshal(ref)
		want := fmt.Sprintf(`{"event_id":"%s","stream":"payment","aggregate_id":"agg-1","type":"payment.created"}`, ref.EventID)
		if string(js) != want {
			t.Fatalf("ref JSON = %s", js)
		}
		if ref.EventID.Version() != 7 {
			t.Fatalf("event id version %d", ref.EventID.Version())
		}

		appendN(t, d, 8, 2)
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		for _, r := range []*recorder{&a, &b} {
			if got := r.got(); !slices.Equal(got, aggs(1, 9)) {
				t.Fatalf("delivered %v", got)
			}
		}
	})
}

func TestFailingHandlerIsRetriedAndLaterEventsWait(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		appendN(t, d, 1, 5)
		broken := errors.New("downstream unavailable")
		var failing sync.Mutex
		failOn3 := true
		a := recorder{fail: func(e event.Event) error {
			failing.Lock()
			defer failing.Unlock()
			if failOn3 && e.AggregateID == "agg-3" {
				return broken
			}
			return nil
		}}
		panicky := 0
		var b, c recorder
		disp := event.NewDispatcher(d, nil)
		disp.Subscribe("a", a.handle)
		disp.Subscribe("b", b.handle)
		disp.Subscribe("c", func(ctx context.Context, e event.Event) error {
			if e.AggregateID == "agg-2" && panicky == 0 {
				panicky++
				panic("bug")
			}
			return c.handle(ctx, e)
		})

		err := disp.DispatchPending(ctx)
		var he *event.HandlerError
		if !errors.Is(err, broken) || !errors.As(err, &he) || he.Subscriber != "a" || he.Event.AggregateID != "agg-3" {
			t.Fatalf("DispatchPending = %v", err)
		}
		if got := a.got(); !slices.Equal(got, aggs(1, 3)) {
			t.Fatalf("a saw %v", got)
		}
		if got := b.got(); !slices.Equal(got, aggs(1, 5)) {
			t.Fatalf("b saw %v", got)
		}
		if got := c.got(); !slices.Equal(got, aggs(1, 1)) {
			t.Fatalf("c saw %v (a panic must stop it like an error)", got)
		}

		if err := disp.DispatchPending(ctx); !errors.Is(err, broken) {
			t.Fatalf("second pass = %v", err)
		}
		if got := a.got(); !slices.Equal(got, append(aggs(1, 3), "agg-3")) {
			t.Fatalf("a saw %v", got)
		}
		if got := c.got(); !slices.Equal(got, aggs(1, 5)) {
			t.Fatalf("c saw %v", got)
		}

		failing.Lock()
		failOn3 = false
		failing.Unlock()
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		if got := a.got(); !slices.Equal(got, append(aggs(1, 3), "agg-3", "agg-3", "agg-4", "agg-5")) {
			t.Fatalf("a saw %v", got)
		}
		if got := b.got(); !slices.Equal(got, aggs(1, 5)) {
			t.Fatalf("b saw %v", got)
		}
	})
}

func TestPositionsPersistAcrossDispatchers(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		appendN(t, d, 1, 3)
		var first recorder
		disp := event.NewDispatcher(d, nil)
		disp.Subscribe("mailer", first.handle)
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}

		appendN(t, d, 4, 2)
		var again, fresh recorder
		disp = event.NewDispatcher(d, nil)
		disp.Subscribe("mailer", again.handle)
		disp.Subscribe("newcomer", fresh.handle)
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		if got := again.got(); !slices.Equal(got, aggs(4, 5)) {
			t.Fatalf("restarted subscriber saw %v", got)
		}
		// A new subscriber starts from the beginning.
		if got := fresh.got(); !slices.Equal(got, aggs(1, 5)) {
			t.Fatalf("new subscriber saw %v", got)
		}
	})
}

func TestRunReactsToNotifyAndStops(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		delivered := make(chan string, 10)
		disp := event.NewDispatcher(d, nil, event.WithPollInterval(time.Hour))
		disp.Subscribe("s", func(_ context.Context, e event.Event) error {
			delivered <- e.AggregateID
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			disp.Run(ctx)
			close(stopped)
		}()

		for i := 1; i <= 2; i++ {
			time.Sleep(20 * time.Millisecond) // let Run settle into waiting, so only Notify can wake it
			appendN(t, d, i, 1)
			disp.Notify()
			select {
			case got := <-delivered:
				if want := fmt.Sprintf("agg-%d", i); got != want {
					t.Fatalf("delivered %s, want %s", got, want)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Notify did not wake Run")
			}
		}

		cancel()
		select {
		case <-stopped:
		case <-time.After(3 * time.Second):
			t.Fatal("Run did not stop")
		}
		disp.Notify() // must not block with nobody listening
		disp.Notify()
	})
}

// On PostgreSQL a later sequence number can commit before an earlier one.
func TestPostgresWaitsForOlderTransactions(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite commits sequence numbers in order")
		}
		ctx := context.Background()
		var r recorder
		disp := event.NewDispatcher(d, nil)
		disp.Subscribe("s", r.handle)

		appended, release := make(chan struct{}), make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		var (
			wg      sync.WaitGroup
			slowErr error
		)
		// Dropping the test schema would wait for the open transaction.
		t.Cleanup(func() { releaseOnce(); wg.Wait() })
		wg.Go(func() {
			slowErr = d.Tx(ctx, func(tx *db.Tx) error {
				if _, err := event.Append(ctx, tx, uuid.Nil, "s", "slow", "t", nil); err != nil {
					return err
				}
				close(appended)
				<-release
				return nil
			})
		})
		<-appended
		err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := event.Append(ctx, tx, uuid.Nil, "s", "fast", "t", nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r.got(); len(got) != 0 {
			t.Fatalf("delivered %v while an older transaction was open", got)
		}
		releaseOnce()
		wg.Wait()
		if slowErr != nil {
			t.Fatal(slowErr)
		}
		settle(t, d)
		if err := disp.DispatchPending(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r.got(); !slices.Equal(got, []string{"slow", "fast"}) {
			t.Fatalf("delivered %v", got)
		}
	})
}

// olderDrawsLaterSequence appends event "older" in a transaction that got
// its id first and event "younger" in one that started after it, so that the
// older draws the later sequence number and commits first. whileYoungerRuns
// is called once the older one committed and the younger one is still open,
// afterYoungerCommits once it committed too.
func olderDrawsLaterSequence(t *testing.T, d *db.DB, org uuid.UUID, whileYoungerRuns, afterYoungerCommits func()) {
	t.Helper()
	ctx := context.Background()
	older, younger := make(chan struct{}), make(chan struct{})
	appendOlder, release := make(chan struct{}), make(chan struct{})
	releaseOnce := sync.OnceFunc(func() { close(release) })
	olderDone := make(chan error, 1)
	var (
		wg         sync.WaitGroup
		youngerErr error
	)
	// Dropping the test schema would wait for the open transaction.
	t.Cleanup(func() { releaseOnce(); wg.Wait() })
	wg.Go(func() {
		olderDone <- d.Tx(ctx, func(tx *db.Tx) error {
			// Any write gives this transaction its id now.
			if _, err := tx.ExecContext(ctx, `INSERT INTO event_subscriptions (name, last_seq) VALUES ('older', 0)`); err != nil {
				return err
			}
			close(older)
			<-appendOlder
			_, err := event.Append(ctx, tx, org, "s", "older", "thing.updated", nil)
			return err
		})
	})
	<-older
	wg.Go(func() {
		youngerErr = d.Tx(ctx, func(tx *db.Tx) error {
			if _, err := event.Append(ctx, tx, org, "s", "younger", "thing.updated", nil); err != nil {
				return err
			}
			close(younger)
			<-release
			return nil
		})
	})
	<-younger
	close(appendOlder)
	if err := <-olderDone; err != nil {
		t.Fatal(err)
	}
	// Only the younger transaction may hold "older" back, not another
	// test's that began before it committed.
	settle(t, d, "older")
	whileYoungerRuns()
	releaseOnce()
	wg.Wait()
	if youngerErr != nil {
		t.Fatal(youngerErr)
	}
	afterYoungerCommits()
}

// The dispatcher delivers the older transaction's event first and the
// younger one's after, never skipping it.
func TestDispatcherLosesNoEventWhenAnOlderTransactionDrawsALaterSequenceNumber(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite commits sequence numbers in order")
		}
		ctx := context.Background()
		var r recorder
		disp := event.NewDispatcher(d, nil)
		disp.Subscribe("s", r.handle)
		if err := disp.DispatchPending(ctx); err != nil { // creates the position
			t.Fatal(err)
		}
		dispatch := func(want ...string) {
			t.Helper()
			if err := disp.DispatchPending(ctx); err != nil {
				t.Fatal(err)
			}
			if got := r.got(); !slices.Equal(got, want) {
				t.Fatalf("delivered %v, want %v", got, want)
			}
		}
		olderDrawsLaterSequence(t, d, uuid.Nil,
			func() { dispatch("older") },
			func() { settle(t, d); dispatch("older", "younger") })
	})
}

// Events held back by an unrelated transaction get no Notify when it ends;
// Run must look again soon rather than wait for its poll interval.
func TestRunRetriesSoonWhenEventsAreHeldBack(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite commits sequence numbers in order")
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		delivered := make(chan string, 10)
		disp := event.NewDispatcher(d, nil, event.WithPollInterval(time.Hour))
		disp.Subscribe("s", func(_ context.Context, e event.Event) error {
			delivered <- e.AggregateID
			return nil
		})

		began, release := make(chan struct{}), make(chan struct{})
		releaseOnce := sync.OnceFunc(func() { close(release) })
		var wg sync.WaitGroup
		t.Cleanup(func() { releaseOnce(); wg.Wait() })
		wg.Go(func() {
			_ = d.Tx(ctx, func(tx *db.Tx) error {
				// Any write gives the transaction an id that holds back the snapshot xmin.
				if _, err := tx.ExecContext(ctx, `INSERT INTO event_subscriptions (name, last_seq) VALUES ('unrelated', 0)`); err != nil {
					t.Error(err)
				}
				close(began)
				<-release
				return errors.New("rollback")
			})
		})
		<-began

		go disp.Run(ctx)
		err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := event.Append(ctx, tx, uuid.Nil, "s", "held", "t", nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		disp.Notify()
		select {
		case got := <-delivered:
			t.Fatalf("delivered %s while an older transaction was open", got)
		case <-time.After(100 * time.Millisecond):
		}
		releaseOnce() // ends without any Notify
		select {
		case got := <-delivered:
			if got != "held" {
				t.Fatalf("delivered %s", got)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("held-back event not delivered after the older transaction ended")
		}
	})
}

// Two dispatchers (as on two server instances) never both deliver an event.
func TestConcurrentDispatchersDeliverOnce(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		appendN(t, d, 1, 30)
		var mu sync.Mutex
		count := map[string]int{}
		h := func(_ context.Context, e event.Event) error {
			mu.Lock()
			count[e.AggregateID]++
			mu.Unlock()
			time.Sleep(time.Millisecond)
			return nil
		}
		var wg sync.WaitGroup
		for range 3 {
			disp := event.NewDispatcher(d, nil, event.WithBatchSize(5))
			disp.Subscribe("shared", h)
			wg.Go(func() {
				for range 10 {
					if err := disp.DispatchPending(ctx); err != nil {
						t.Error(err)
					}
				}
			})
		}
		wg.Wait()
		for _, a := range aggs(1, 30) {
			if count[a] != 1 {
				t.Fatalf("%s delivered %d times (all: %v)", a, count[a], count)
			}
		}
	})
}
