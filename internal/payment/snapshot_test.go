package payment_test

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/idempotency"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// storedSnapshot is an execute call's idempotency snapshot as the code
// before the explicit json tags wrote it (keys are Go field names).
const storedSnapshot = `{"ID":"01936f0e-0000-7000-8000-000000000001","OrganizationID":"01936f0e-0000-7000-8000-000000000002","Rail":"fiat","Status":"awaiting_approval","Tag":"rent","QuoteID":"01936f0e-0000-7000-8000-000000000003","BillID":null,"PaymentContactID":"01936f0e-0000-7000-8000-000000000004","PaymentBatchID":null,"ApprovalRequestID":"01936f0e-0000-7000-8000-000000000005","TransactionID":null,"Cancellable":true,"Debited":{"amount":"123.45","currency":"EUR"},"Delivered":{"amount":"100.00","currency":"GBP"},"Fee":{"amount":"0.50","currency":"EUR"},"DomainEvent":{"event_id":"01936f0e-0000-7000-8000-000000000006","stream":"payment-01936f0e-0000-7000-8000-000000000001","aggregate_id":"01936f0e-0000-7000-8000-000000000001","type":"payment.created"},"RailState":null,"PayoutReason":"invoice","StatementDescription":"Rent November","InternalNotes":null,"CreatedByID":"01936f0e-0000-7000-8000-000000000007","InsertedAt":"2026-11-22T09:30:00.123456Z","UpdatedAt":"2026-11-22T09:30:00.123456Z"}`

// A payment snapshot stored by earlier code replays to the same payment,
// and a payment is stored in the same form: a retry of an execute call
// sent before an upgrade gets the payment the first call made.
func TestStoredPaymentSnapshotReplaysUnchanged(t *testing.T) {
	s := func(v string) *string { return &v }
	id := func(v string) uuid.UUID { return uuid.MustParse(v) }
	ptr := func(v string) *uuid.UUID { x := id(v); return &x }
	at := time.Date(2026, 11, 22, 9, 30, 0, 123456000, time.UTC)
	want := payment.Record{ID: id("01936f0e-0000-7000-8000-000000000001"), OrganizationID: id("01936f0e-0000-7000-8000-000000000002"),
		Rail: "fiat", Status: "awaiting_approval", Tag: s("rent"), QuoteID: ptr("01936f0e-0000-7000-8000-000000000003"),
		PaymentContactID: id("01936f0e-0000-7000-8000-000000000004"), ApprovalRequestID: ptr("01936f0e-0000-7000-8000-000000000005"),
		Cancellable: true, Debited: money.Amount{Minor: 12345, Currency: "EUR"}, Delivered: money.Amount{Minor: 10000, Currency: "GBP"},
		Fee: money.Amount{Minor: 50, Currency: "EUR"},
		DomainEvent: event.Ref{EventID: id("01936f0e-0000-7000-8000-000000000006"), Stream: "payment-01936f0e-0000-7000-8000-000000000001",
			AggregateID: "01936f0e-0000-7000-8000-000000000001", Type: "payment.created"},
		PayoutReason: s("invoice"), StatementDescription: s("Rent November"), CreatedByID: id("01936f0e-0000-7000-8000-000000000007"),
		InsertedAt: at, UpdatedAt: at}

	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		k := idempotency.Key{Scope: "organization:01936f0e-0000-7000-8000-000000000002", Key: "retry-1", InputHash: "h"}
		got, err := db.InTx(ctx, d, func(tx *db.Tx) (payment.Record, error) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, input_hash, result, expires_at, inserted_at)
				VALUES ($1, $2, $3, $4, $5, $6)`, k.Scope, k.Key, k.InputHash, storedSnapshot, tx.Now().Add(time.Hour), tx.Now()); err != nil {
				return payment.Record{}, err
			}
			r, ok, err := idempotency.Replay[payment.Record](ctx, tx, k)
			if !ok && err == nil {
				t.Error("the stored snapshot was not replayed")
			}
			return r, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("replayed %+v\nwant     %+v", got, want)
		}
	})
	b, err := json.Marshal(want)
	if err != nil || string(b) != storedSnapshot {
		t.Fatalf("a payment is stored as\n%s (%v)\nwant the stored form\n%s", b, err, storedSnapshot)
	}
}
