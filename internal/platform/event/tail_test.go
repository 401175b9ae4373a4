package event_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
)

// appendFor appends one event of org (aggregate agg) occurring at when, in its own transaction.
func appendFor(t *testing.T, d *db.DB, org uuid.UUID, agg string, when time.Time) event.Ref {
	t.Helper()
	at.set(when)
	ref, err := db.InTx(context.Background(), d, func(tx *db.Tx) (event.Ref, error) {
		return event.Append(context.Background(), tx, org, "s", agg, "thing.updated", map[string]string{"id": agg})
	})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

// runTail starts a tail over d that stops when t ends.
func runTail(t *testing.T, d *db.DB, poll time.Duration, buffer int) *event.Tail {
	t.Helper()
	tail := event.NewTail(d, nil, poll, buffer)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { tail.Run(ctx) })
	t.Cleanup(func() { cancel(); wg.Wait() })
	return tail
}

func subscribe(t *testing.T, tail *event.Tail, org uuid.UUID) *event.Subscription {
	t.Helper()
	s, err := tail.Subscribe(context.Background(), org, uuid.Nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// next waits for the subscription's next event and returns its aggregate.
func next(t *testing.T, s *event.Subscription) string {
	t.Helper()
	select {
	case e := <-s.Events():
		return e.AggregateID
	case <-s.Done():
		t.Fatalf("subscription ended: %v", s.Err())
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10 s")
	}
	return ""
}

func expectNext(t *testing.T, s *event.Subscription, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := next(t, s); got != w {
			t.Fatalf("got event %s, want %s", got, w)
		}
	}
}

// replayed tells whether Replay from the start hands out the event of aggregate agg.
func replayed(t *testing.T, s *event.Subscription, agg string) bool {
	t.Helper()
	found := false
	err := s.Replay(context.Background(), time.Time{}, func(e event.Event) error {
		found = found || e.AggregateID == agg
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func TestTailHandsEachOrganizationItsOwnEventsInOrder(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		a, b := uuid.New(), uuid.New()
		appendFor(t, d, a, "before", t0) // committed before anyone listened: not live
		tail := runTail(t, d, 0, 0)
		subA, subA2, subB := subscribe(t, tail, a), subscribe(t, tail, a), subscribe(t, tail, b)
		appendFor(t, d, b, "b1", t0)
		appendFor(t, d, uuid.Nil, "nobody", t0)
		appendFor(t, d, a, "a1", t0)
		appendFor(t, d, a, "a2", t0)
		appendFor(t, d, b, "b2", t0)
		// Each sees its organization's events, in order; had an event of
		// another organization (or of none) arrived, it would come first.
		// "before" is behind the subscriptions' start, so Replay hands it
		// out, unless (PostgreSQL) a transaction older than its own was still
		// running in the cluster when the tail started: then it is after,
		// and comes live. Never both, never neither.
		for _, sub := range []*event.Subscription{subA, subA2} {
			if replayed(t, sub, "before") {
				expectNext(t, sub, "a1", "a2")
			} else {
				expectNext(t, sub, "before", "a1", "a2")
			}
		}
		expectNext(t, subB, "b1", "b2")
		subA2.Close()
		subA2.Close() // twice is fine
		appendFor(t, d, a, "a3", t0)
		expectNext(t, subA, "a3")
	})
}

// A transaction that took its id first can draw the later sequence number:
// reading past that number would lose the other transaction's event for
// good. The tail follows (transaction id, seq) below the oldest running
// transaction instead.
func TestTailLosesNoEventWhenAnOlderTransactionDrawsALaterSequenceNumber(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite commits sequence numbers in order")
		}
		org := uuid.New()
		tail := runTail(t, d, 20*time.Millisecond, 0)
		sub := subscribe(t, tail, org)

		// The older transaction's event is delivered while the younger one
		// runs; the younger one's, with the lower number, once it commits.
		olderDrawsLaterSequence(t, d, org,
			func() { expectNext(t, sub, "older") },
			func() { expectNext(t, sub, "younger") })
	})
}

func TestTailReplaysWhatASubscriberMissed(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, other := uuid.New(), uuid.New()
		tail := runTail(t, d, 0, 0)
		first := subscribe(t, tail, org)
		e1 := appendFor(t, d, org, "e1", t0)
		expectNext(t, first, "e1")
		first.Close()
		appendFor(t, d, org, "old", t0.Add(-25*time.Hour)) // occurred long ago
		appendFor(t, d, org, "e2", t0)
		appendFor(t, d, other, "theirs", t0)
		appendFor(t, d, org, "e3", t0.Add(time.Minute))

		sub, err := tail.Subscribe(ctx, org, e1.EventID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		appendFor(t, d, org, "live", t0.Add(2*time.Minute))
		var replayed []string
		err = sub.Replay(ctx, t0.Add(-24*time.Hour), func(e event.Event) error {
			replayed = append(replayed, e.AggregateID)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// The organization's events after e1 split at the subscription's
		// start: those before it are replayed (except "old", older than
		// since; never another organization's), those after come live
		// (since does not apply to them), each once. The start is after e3
		// unless (PostgreSQL) the tail had not read past some of them yet,
		// a transaction older than theirs still running in the cluster.
		all := []string{"old", "e2", "e3", "live"}
		firstLive := next(t, sub)
		k := slices.Index(all, firstLive)
		if k < 0 {
			t.Fatalf("first live event %s, want one of %v", firstLive, all)
		}
		wantReplayed := slices.DeleteFunc(slices.Clone(all[:k]), func(a string) bool { return a == "old" })
		if !equal(replayed, wantReplayed) {
			t.Fatalf("replayed %v with %s first live, want %v", replayed, firstLive, wantReplayed)
		}
		expectNext(t, sub, all[k+1:]...)

		theirs := appendFor(t, d, other, "theirs-2", t0)
		for _, id := range []uuid.UUID{theirs.EventID, uuid.New()} {
			if _, err := tail.Subscribe(ctx, org, id); !errors.Is(err, event.ErrUnknownEvent) {
				t.Fatalf("Subscribe after %s = %v, want ErrUnknownEvent", id, err)
			}
		}
		stop := errors.New("stop")
		// From the beginning: e1 is before the start whatever else is.
		if err := subscribe(t, tail, org).Replay(ctx, t0.Add(-24*time.Hour), func(event.Event) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("Replay returned %v, want fn's error", err)
		}
	})
}

// A client that reconnects names the last event it received; the tail it
// reaches (another instance's, or one held back by an older transaction)
// may not have read that far yet. What it then reads up to that event
// the client has had: it is not sent again.
func TestTailDoesNotRepeatWhatTheClientNamedAsReceived(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		if d.Dialect() != db.Postgres {
			t.Skip("SQLite's tail starts after every committed event")
		}
		ctx := context.Background()
		org := uuid.New()
		tail := runTail(t, d, 20*time.Millisecond, 0)
		// An older transaction holds the tail's start below what follows.
		hold, release := make(chan struct{}), make(chan struct{})
		var wg sync.WaitGroup
		t.Cleanup(func() { close(release); wg.Wait() })
		wg.Go(func() {
			_ = d.Tx(ctx, func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `SELECT pg_current_xact_id()`); err != nil {
					return err
				}
				close(hold)
				<-release
				return nil
			})
		})
		<-hold
		appendFor(t, d, org, "had-1", t0)
		had := appendFor(t, d, org, "had-2", t0)
		sub, err := tail.Subscribe(ctx, org, had.EventID)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sub.Close)
		var replayed []string
		if err := sub.Replay(ctx, time.Time{}, func(e event.Event) error {
			replayed = append(replayed, e.AggregateID)
			return nil
		}); err != nil || len(replayed) > 0 {
			t.Fatalf("replayed %v (%v), want nothing after the last event received", replayed, err)
		}
		appendFor(t, d, org, "new", t0)
		release <- struct{}{} // the older transaction ends; the tail reads on
		expectNext(t, sub, "new")
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTailDropsASubscriberThatFallsBehind(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		org := uuid.New()
		tail := runTail(t, d, 0, 2)
		slow, fast := subscribe(t, tail, org), subscribe(t, tail, org)
		for _, agg := range []string{"1", "2", "3", "4"} {
			appendFor(t, d, org, agg, t0)
			expectNext(t, fast, agg) // the fast one keeps up, whatever the slow one does
		}
		select {
		case <-slow.Done():
			if !errors.Is(slow.Err(), event.ErrTooSlow) {
				t.Fatalf("slow subscriber ended with %v, want ErrTooSlow", slow.Err())
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a subscriber that read nothing was not dropped")
		}
		if fast.Err() != nil {
			t.Fatalf("fast subscriber ended: %v", fast.Err())
		}
	})
}

func TestTailCloseEndsEverySubscription(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		tail := runTail(t, d, 0, 0)
		a, b := subscribe(t, tail, uuid.New()), subscribe(t, tail, uuid.New())
		tail.Close()
		for _, s := range []*event.Subscription{a, b} {
			select {
			case <-s.Done():
				if !errors.Is(s.Err(), event.ErrClosed) {
					t.Fatalf("ended with %v, want ErrClosed", s.Err())
				}
			default:
				t.Fatal("a subscription outlived Close")
			}
		}
		if _, err := tail.Subscribe(ctx, uuid.New(), uuid.Nil); !errors.Is(err, event.ErrClosed) {
			t.Fatalf("Subscribe after Close: %v, want ErrClosed", err)
		}
		// Wait waits for the owners.
		short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
		defer cancel()
		if err := tail.Wait(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Wait with open subscriptions: %v", err)
		}
		a.Close()
		b.Close()
		if err := tail.Wait(ctx); err != nil {
			t.Fatalf("Wait after the owners closed: %v", err)
		}
	})
}
