package payment_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/sandbox"
)

// payer is a payments service over d with an organization and one of its
// members, who pays.
type payer struct {
	svc    *payment.Service
	org    organization.Organization
	member actor.Actor
}

func newPayer(t *testing.T, d *db.DB) payer {
	org, member := fixture.Member(t, d, organization.Member)
	return payer{svc: &payment.Service{DB: d, Rates: sandbox.Rates{}}, org: org, member: member}
}

// westminster is a valid fiat contact in GBP, as a client would send it.
func westminster(t *testing.T) payment.ContactRequest {
	iban := "GB82 WEST 1234 5698 7654 32"
	req := payment.ContactRequest{Name: "Westminster Supplies", Currency: "GBP", Rail: payment.RailFiat}
	req.IBAN = &iban
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestCreatingAContactAppendsItsEvent(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		p := newPayer(t, d)
		svc, org, member, req := p.svc, p.org, p.member, westminster(t)
		c, err := svc.CreateContact(ctx, member, org.ID, req)
		if err != nil {
			t.Fatal(err)
		}
		if *c.Bank.IBAN != "GB82WEST12345698765432" || *c.Bank.AccountHolderName != "Westminster Supplies" {
			t.Fatalf("contact = %+v", c.Bank)
		}
		seen, err := organizationEvents(ctx, d, org.ID)
		if err != nil || len(seen) != 1 {
			t.Fatalf("read %d events (%v), want the contact's one", len(seen), err)
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

// TestExecuteReplaysThePaymentAsCreated: a repeat under the same
// Idempotency-Key returns the payment as the first call created it (a
// snapshot, not the payment as it is now), creates nothing, and the key
// with another request is idempotency_key_reused.
func TestExecuteReplaysThePaymentAsCreated(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		p := newPayer(t, d)
		svc, member := p.svc, p.member
		c, err := svc.CreateContact(ctx, member, p.org.ID, westminster(t))
		if err != nil {
			t.Fatal(err)
		}
		quote, err := svc.Preflight(ctx, member, payment.PreflightRequest{OrganizationID: p.org.ID.String(), Rail: payment.RailFiat,
			ContactID: c.ID.String(), SourceCurrency: "GBP", Amount: "50.00", AmountSide: "send"})
		if err != nil {
			t.Fatal(err)
		}
		reason, text := "PYR001", "Invoice 118"
		req := payment.ExecuteRequest{QuoteID: quote.ID.String(), PayoutReason: &reason, StatementDescription: &text}

		first, err := svc.Execute(ctx, member, req, "inv-118")
		if err != nil || first.Replayed {
			t.Fatalf("first execute: %+v, %v", first, err)
		}
		if _, err := db.InTx(ctx, d, func(tx *db.Tx) (payment.Record, error) { return svc.Cancel(ctx, tx, member, first.Payment.ID) }); err != nil {
			t.Fatal(err)
		}
		again, err := svc.Execute(ctx, member, req, "inv-118")
		if err != nil || !again.Replayed {
			t.Fatalf("replay: %+v, %v", again, err)
		}
		if !reflect.DeepEqual(again.Payment, first.Payment) {
			t.Fatalf("replayed %+v\nwant the payment as created %+v", again.Payment, first.Payment)
		}
		other := req
		other.Tag = new(string)
		*other.Tag = "another"
		if _, err := svc.Execute(ctx, member, other, "inv-118"); !apierr.Is(err, apierr.IdempotencyKeyReused) {
			t.Fatalf("another request under the key: %v, want idempotency_key_reused", err)
		}
		// Without the key the quote, now used, decides.
		if _, err := svc.Execute(ctx, member, req, ""); !apierr.Is(err, apierr.QuoteAlreadyUsed) {
			t.Fatalf("without the key: %v, want quote_already_used", err)
		}
		if now, err := svc.GetPayment(ctx, member, first.Payment.ID); err != nil || now.Status != payment.Cancelled {
			t.Fatalf("the payment is %+v, %v; want it cancelled", now, err)
		}
		if _, err := svc.GetPayment(ctx, member, uuid.Must(uuid.NewV7())); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("an unknown payment: %v, want not_found", err)
		}
	})
}

// organizationEvents reads orgID's committed events as a reconnecting
// realtime client's replay does, until there is at least one; on PostgreSQL
// an event is read only once every older transaction has ended.
func organizationEvents(ctx context.Context, d *db.DB, orgID uuid.UUID) ([]event.Event, error) {
	tail := event.NewTail(d, nil, 0, 0)
	defer tail.Close()
	var seen []event.Event
	for deadline := time.Now().Add(30 * time.Second); len(seen) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		sub, err := tail.Subscribe(ctx, orgID, uuid.Nil)
		if err != nil {
			return nil, err
		}
		err = sub.Replay(ctx, time.Time{}, func(e event.Event) error {
			seen = append(seen, e)
			return nil
		})
		sub.Close()
		if err != nil {
			return nil, err
		}
	}
	return seen, nil
}
