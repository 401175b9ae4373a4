package payment_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/event"
)

func TestCreatingAContactAppendsItsEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		clk := clock.NewManual(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC))
		org, member := fixture.Member(t, d, clk.Now(), organization.Member)
		svc := &payment.Service{DB: d, Clock: clk, Rates: payment.SandboxRates{}}
		iban := "GB82 WEST 1234 5698 7654 32"
		req := payment.ContactRequest{Name: "Westminster Supplies", Currency: "GBP", Rail: payment.RailFiat}
		req.IBAN = &iban
		if err := req.Validate(); err != nil {
			t.Fatal(err)
		}
		c, err := svc.CreateContact(ctx, member, org.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		if *c.Bank.IBAN != "GB82WEST12345698765432" || *c.Bank.AccountHolderName != "Westminster Supplies" {
			t.Fatalf("contact = %+v", c.Bank)
		}
		var seen []event.Event
		dispatcher := event.NewDispatcher(d, slog.New(slog.NewTextHandler(io.Discard, nil)))
		dispatcher.Subscribe("test", func(_ context.Context, e event.Event) error {
			seen = append(seen, e)
			return nil
		})
		if err := waitDispatch(ctx, dispatcher, &seen); err != nil || len(seen) != 1 {
			t.Fatalf("dispatched %d events (%v), want the contact's one", len(seen), err)
		}
		e := seen[0]
		var data map[string]any
		_ = json.Unmarshal(e.Data, &data)
		if e.Type != "payment_contact.created" || e.Stream != "payment_contact-"+c.ID.String() || e.AggregateID != c.ID.String() || data["name"] != "Westminster Supplies" {
			t.Fatalf("event = %+v %v", e, data)
		}
		// Another organization cannot add contacts to this one.
		outsider := actor.Actor{UserID: org.ID}
		if _, err := svc.CreateContact(ctx, outsider, org.ID, req); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("outsider: %v, want not_found", err)
		}
	})
}

// waitDispatch dispatches until the subscriber has seen an event; on
// PostgreSQL an event is read only once older transactions have ended.
func waitDispatch(ctx context.Context, d *event.Dispatcher, seen *[]event.Event) error {
	for deadline := time.Now().Add(30 * time.Second); len(*seen) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err := d.DispatchPending(ctx); err != nil {
			return err
		}
	}
	return nil
}
