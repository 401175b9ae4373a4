package event_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
)

// appendTyped appends an event of type typ for org at when.
func appendTyped(t *testing.T, d *db.DB, org uuid.UUID, agg, typ string, when time.Time) event.Ref {
	t.Helper()
	at.set(when)
	ref, err := db.InTx(context.Background(), d, func(tx *db.Tx) (event.Ref, error) {
		return event.Append(context.Background(), tx, org, "s", agg, typ, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ref
}

func aggregates(events []event.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.AggregateID)
	}
	return out
}

func TestListFiltersAndPagesNewestFirst(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, other := uuid.New(), uuid.New()
		appendTyped(t, d, org, "old", "payment.updated", t0.Add(-31*24*time.Hour))
		appendTyped(t, d, org, "p1", "payment.updated", t0)
		appendTyped(t, d, org, "r1", "payment_request.updated", t0.Add(time.Minute))
		// "_" is no wildcard: payment_request.* does not match this one.
		appendTyped(t, d, org, "x1", "paymentXrequest.updated", t0.Add(2*time.Minute))
		appendTyped(t, d, org, "c1", "card.updated", t0.Add(2*time.Minute))
		appendTyped(t, d, other, "theirs", "payment.updated", t0)
		since := t0.Add(-30 * 24 * time.Hour)
		list := func(f event.Filter, after *event.ListKey, limit int) []string {
			t.Helper()
			f.Since = since
			events, err := event.List(ctx, d.Reader(), org, f, after, limit)
			if err != nil {
				t.Fatal(err)
			}
			return aggregates(events)
		}
		all := list(event.Filter{}, nil, 10)
		if !slices.Equal(all[:2], []string{"c1", "x1"}) && !slices.Equal(all[:2], []string{"x1", "c1"}) || !slices.Equal(all[2:], []string{"r1", "p1"}) {
			t.Fatalf("all: %v", all)
		}
		if got := list(event.Filter{Prefixes: []string{"payment_request."}}, nil, 10); !slices.Equal(got, []string{"r1"}) {
			t.Fatalf("payment_request.*: %v", got)
		}
		if got := list(event.Filter{Types: []string{"card.updated"}, Prefixes: []string{"payment."}}, nil, 10); !slices.Equal(got, []string{"c1", "p1"}) {
			t.Fatalf("card.updated or payment.*: %v", got)
		}
		from, to := t0.Add(time.Minute), t0.Add(2*time.Minute)
		if got := list(event.Filter{From: &from, To: &to}, nil, 10); !slices.Equal(got, []string{"r1"}) {
			t.Fatalf("[%v, %v): %v", from, to, got)
		}
		// Pages of one follow each other without repeats or gaps.
		var walked []string
		var after *event.ListKey
		for {
			events, err := event.List(ctx, d.Reader(), org, event.Filter{Since: since}, after, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(events) == 0 {
				break
			}
			walked = append(walked, events[0].AggregateID)
			k := event.KeyOf(events[0])
			after = &k
		}
		if !slices.Equal(walked, all) {
			t.Fatalf("walked %v, listed %v", walked, all)
		}
	})
}

func TestGetKeepsToTheOrganizationAndTheWindow(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org := uuid.New()
		recent := appendTyped(t, d, org, "recent", "payment.updated", t0)
		old := appendTyped(t, d, org, "old", "payment.updated", t0.Add(-31*24*time.Hour))
		since := t0.Add(-30 * 24 * time.Hour)
		if e, err := event.Get(ctx, d.Reader(), org, recent.EventID, since); err != nil || e.AggregateID != "recent" {
			t.Fatalf("Get = %+v, %v", e, err)
		}
		if _, err := event.Get(ctx, d.Reader(), org, old.EventID, since); !errors.Is(err, event.ErrNotFound) {
			t.Fatalf("an event older than the window: %v", err)
		}
		if _, err := event.Get(ctx, d.Reader(), uuid.New(), recent.EventID, since); !errors.Is(err, event.ErrNotFound) {
			t.Fatalf("another organization's event: %v", err)
		}
	})
}
