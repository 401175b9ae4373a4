package event_test

import (
	"context"
	"errors"
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

// settle waits until a tail can see every committed event, or only
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
			// pg_current_xact_id gives this transaction its id now.
			if _, err := tx.ExecContext(ctx, `SELECT pg_current_xact_id()`); err != nil {
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
