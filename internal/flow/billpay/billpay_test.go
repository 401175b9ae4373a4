package billpay_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/flow/billpay"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var testDay = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// invoice is a UBL invoice of Harbour Lane Print Ltd for 960.00 GBP, paid
// to account 55779911 at sort code 200000: extraction reads every field a
// payment contact needs from it.
func invoice(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "bill", "extract", "testdata", "ubl-gb-sortcode.xml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// office is an organization whose admin pays its bills through the flow,
// with the services behind it.
type office struct {
	d        *db.DB
	flow     *billpay.Service
	payments *payment.Service
	bills    *bill.Service
	jobs     *job.Runner
	org      organization.Organization
	admin    actor.Actor
}

func newOffice(t *testing.T, d *db.DB, clk clock.Clock, name string) office {
	t.Helper()
	bills := &bill.Service{DB: d, Files: fixture.Files(t, d)}
	payments := &payment.Service{DB: d, Rates: sandbox.Rates{}}
	jobs := job.NewRunner(d, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
	bills.Register(jobs)
	org := fixture.Organization(t, d, name)
	admin := fixture.Join(t, d, org.ID, "admin@"+name+".test", organization.Admin)
	return office{d: d, flow: &billpay.Service{DB: d, Payments: payments, Bills: bills}, payments: payments, bills: bills, jobs: jobs,
		org: org, admin: admin}
}

// payableBill uploads the invoice, lets extraction read it, and makes the
// bill's payment contact from it: an extracted bill of 960.00 GBP with a
// contact, ready to pay.
func (o office) payableBill(t *testing.T) bill.Bill {
	t.Helper()
	ctx := context.Background()
	b, err := o.bills.Upload(ctx, o.admin, o.org.ID, "HLP-10240.xml", "application/xml", bytes.NewReader(invoice(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.jobs.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if b = o.bill(t, b.ID); b.Status != bill.Extracted || b.Amount == nil || b.Amount.String() != "960.00" {
		t.Fatalf("after extraction the bill is %s for %v, want extracted for 960.00", b.Status, b.Amount)
	}
	b, err = o.flow.CreateContact(ctx, o.admin, b.ID)
	if err != nil || b.PaymentContactID == nil {
		t.Fatalf("payment contact from the bill: %+v, %v", b.PaymentContactID, err)
	}
	return b
}

func (o office) bill(t *testing.T, id uuid.UUID) bill.Bill {
	t.Helper()
	b, err := o.bills.Get(context.Background(), o.admin, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// request is the body of a payment to contactID delivering amount GBP that
// names bill billID, from a new quote.
func (o office) request(t *testing.T, contactID, billID uuid.UUID, amount string) payment.ExecuteRequest {
	t.Helper()
	q, err := o.payments.Preflight(context.Background(), o.admin, payment.PreflightRequest{OrganizationID: o.org.ID.String(),
		Rail: payment.RailFiat, ContactID: contactID.String(), SourceCurrency: "GBP", Amount: amount, AmountSide: "receive"})
	if err != nil {
		t.Fatal(err)
	}
	reason, text, bid := "PYR002", "HLP-10240", billID.String()
	return payment.ExecuteRequest{QuoteID: q.ID.String(), PayoutReason: &reason, StatementDescription: &text, BillID: &bid}
}

// pay executes request(contactID, billID, amount) under Idempotency-Key
// key ("" for none).
func (o office) pay(t *testing.T, contactID, billID uuid.UUID, amount, key string) (payment.Executed, error) {
	t.Helper()
	return o.flow.Execute(context.Background(), o.admin, o.request(t, contactID, billID, amount), key)
}

// pending is how many approvals of the organization are pending: one per
// payment made and not yet decided.
func (o office) pending(t *testing.T) int {
	t.Helper()
	_, n, err := o.payments.ListApprovals(context.Background(), o.admin, o.org.ID, "", page.Request{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// approve records the approval of payment p as the app would once the
// admin signs it, after funding the organization's GBP balance.
func (o office) approve(t *testing.T, p payment.Record) {
	t.Helper()
	ctx := context.Background()
	org := o.org.ID
	_, err := db.InTx(ctx, o.d, func(tx *db.Tx) (uuid.UUID, error) {
		return ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org, Kind: "deposit", Description: "test", Postings: []ledger.Posting{
			{Account: ledger.PlatformAccount(org, "GBP", ledger.World), Amount: -1_000_000},
			{Account: ledger.OrgAccount(org, "GBP", ledger.Available), Amount: 1_000_000},
		}})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.d.Tx(ctx, func(tx *db.Tx) error {
		return o.payments.RecordApproval(ctx, tx, *p.ApprovalRequestID, o.admin.UserID)
	}); err != nil {
		t.Fatal(err)
	}
}

// wantRequested fails unless bill id waits for payment p.
func (o office) wantRequested(t *testing.T, id uuid.UUID, p payment.Record) {
	t.Helper()
	b := o.bill(t, id)
	if b.Status != bill.PaymentRequested || b.FiatOutgoingID == nil || *b.FiatOutgoingID != p.ID ||
		b.ApprovalRequestID == nil || *b.ApprovalRequestID != *p.ApprovalRequestID {
		t.Fatalf("bill is %s for payment %v (approval %v), want payment_requested for %s (approval %s)",
			b.Status, b.FiatOutgoingID, b.ApprovalRequestID, p.ID, *p.ApprovalRequestID)
	}
}

// wantExtracted fails unless bill id is extracted and waits for no payment.
func (o office) wantExtracted(t *testing.T, id uuid.UUID) {
	t.Helper()
	if b := o.bill(t, id); b.Status != bill.Extracted || b.FiatOutgoingID != nil || b.ApprovalRequestID != nil {
		t.Fatalf("bill is %s for payment %v (approval %v), want extracted for none", b.Status, b.FiatOutgoingID, b.ApprovalRequestID)
	}
}

// TestPayingABillRequestsIt: a payment that pays a bill exactly moves the
// bill to payment_requested, naming the payment and its approval; a replay
// under the same Idempotency-Key returns that payment and requests nothing
// again, and a second payment of the bill is refused.
func TestPayingABillRequestsIt(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		o := newOffice(t, d, clk, "acme")
		b := o.payableBill(t)
		req := o.request(t, *b.PaymentContactID, b.ID, "960.00")
		first, err := o.flow.Execute(context.Background(), o.admin, req, "HLP-10240")
		if err != nil || first.Replayed {
			t.Fatalf("paying the bill: %+v, %v", first, err)
		}
		if p := first.Payment; p.BillID == nil || *p.BillID != b.ID || p.Status != payment.AwaitingApproval {
			t.Fatalf("payment = %+v, want one awaiting approval for bill %s", p, b.ID)
		}
		o.wantRequested(t, b.ID, first.Payment)

		again, err := o.flow.Execute(context.Background(), o.admin, req, "HLP-10240")
		if err != nil || !again.Replayed || again.Payment.ID != first.Payment.ID {
			t.Fatalf("replay: %+v, %v; want payment %s replayed", again.Payment, err, first.Payment.ID)
		}
		o.wantRequested(t, b.ID, first.Payment)

		if _, err := o.pay(t, *b.PaymentContactID, b.ID, "960.00", ""); !apierr.Is(err, apierr.BillMismatch) {
			t.Fatalf("a second payment of the bill: %v, want bill_mismatch", err)
		}
		if n := o.pending(t); n != 1 {
			t.Fatalf("%d approvals pending, want the first payment's only", n)
		}
	})
}

// TestAMismatchIsRefusedAndChangesNothing: a payment that does not pay the
// bill exactly (another amount, another contact) is bill_mismatch, and
// neither the payment, nor its approval, nor its use of the quote, nor the
// Idempotency-Key is kept: the bill stays extracted.
func TestAMismatchIsRefusedAndChangesNothing(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		b := o.payableBill(t)
		if _, err := o.pay(t, *b.PaymentContactID, b.ID, "950.00", "short"); !apierr.Is(err, apierr.BillMismatch) {
			t.Fatalf("paying 950.00 of 960.00: %v, want bill_mismatch", err)
		}
		iban := "GB82 WEST 1234 5698 7654 32"
		other := payment.ContactRequest{Name: "Westminster Supplies", Currency: "GBP", Rail: payment.RailFiat}
		other.IBAN = &iban
		if err := other.Validate(); err != nil {
			t.Fatal(err)
		}
		c, err := o.payments.CreateContact(ctx, o.admin, o.org.ID, other)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.pay(t, c.ID, b.ID, "960.00", ""); !apierr.Is(err, apierr.BillMismatch) {
			t.Fatalf("paying another contact: %v, want bill_mismatch", err)
		}
		o.wantExtracted(t, b.ID)
		if n := o.pending(t); n != 0 {
			t.Fatalf("%d approvals pending after refused payments, want none", n)
		}
		// The key the refused call named is free: a payment that pays the
		// bill exactly under it is made now, not a replay.
		out, err := o.pay(t, *b.PaymentContactID, b.ID, "960.00", "short")
		if err != nil || out.Replayed {
			t.Fatalf("paying the bill under the refused call's key: %+v, %v", out, err)
		}
		o.wantRequested(t, b.ID, out.Payment)
	})
}

// TestAnEndedPaymentReleasesItsBill: a payment of a bill that is rejected,
// cancelled or fails on the rail returns the bill to extracted, in the
// transaction that ends it, so it can be paid again; a payment completed
// keeps it.
func TestAnEndedPaymentReleasesItsBill(t *testing.T) {
	ends := []struct {
		name     string
		end      func(t *testing.T, o office, p payment.Record) (payment.Record, error)
		status   string
		releases bool
	}{
		{"rejected", func(t *testing.T, o office, p payment.Record) (payment.Record, error) {
			reason := "Not this month."
			if _, err := o.flow.Reject(context.Background(), o.admin, *p.ApprovalRequestID, payment.RejectRequest{Reason: &reason}); err != nil {
				return payment.Record{}, err
			}
			return o.payments.GetPayment(context.Background(), o.admin, p.ID)
		}, payment.Rejected, true},
		{"cancelled", func(t *testing.T, o office, p payment.Record) (payment.Record, error) {
			return o.flow.Cancel(context.Background(), o.admin, p.ID)
		}, payment.Cancelled, true},
		{"failed", func(t *testing.T, o office, p payment.Record) (payment.Record, error) {
			o.approve(t, p)
			return o.flow.Settle(context.Background(), p.ID, payment.Failed)
		}, payment.Failed, true},
		{"completed", func(t *testing.T, o office, p payment.Record) (payment.Record, error) {
			o.approve(t, p)
			return o.flow.Settle(context.Background(), p.ID, payment.Completed)
		}, payment.Completed, false},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
				o := newOffice(t, d, clk, "acme")
				b := o.payableBill(t)
				out, err := o.pay(t, *b.PaymentContactID, b.ID, "960.00", "")
				if err != nil {
					t.Fatal(err)
				}
				p, err := end.end(t, o, out.Payment)
				if err != nil || p.Status != end.status {
					t.Fatalf("payment is %s (%v), want %s", p.Status, err, end.status)
				}
				if !end.releases {
					o.wantRequested(t, b.ID, out.Payment)
					return
				}
				o.wantExtracted(t, b.ID)
				again, err := o.pay(t, *b.PaymentContactID, b.ID, "960.00", "")
				if err != nil {
					t.Fatalf("paying the released bill again: %v", err)
				}
				o.wantRequested(t, b.ID, again.Payment)
			})
		})
	}
}

// TestAnotherOrganizationsBillIsNotFound: a payment naming another
// organization's bill is not_found and nothing is made; a bill cannot be
// given another organization's payment contact (not_found, the bill
// unchanged).
func TestAnotherOrganizationsBillIsNotFound(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		theirs := newOffice(t, d, clk, "globex")
		b := theirs.payableBill(t)

		iban := "GB82 WEST 1234 5698 7654 32"
		r := payment.ContactRequest{Name: "Westminster Supplies", Currency: "GBP", Rail: payment.RailFiat}
		r.IBAN = &iban
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		c, err := o.payments.CreateContact(ctx, o.admin, o.org.ID, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.pay(t, c.ID, b.ID, "960.00", ""); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("paying another organization's bill: %v, want not_found", err)
		}
		if n := o.pending(t); n != 0 {
			t.Fatalf("%d approvals pending, want none", n)
		}
		theirs.wantExtracted(t, b.ID)

		// Their bill cannot take our contact.
		id := c.ID.String()
		_, err = theirs.flow.UpdateBill(ctx, theirs.admin, b.ID, bill.PatchRequest{PaymentContactID: field.Optional[string]{Set: true, Value: &id}})
		if !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("setting another organization's contact: %v, want not_found", err)
		}
		if got := theirs.bill(t, b.ID); got.PaymentContactID == nil || *got.PaymentContactID != *b.PaymentContactID {
			t.Fatalf("the bill's contact is %v, want %s unchanged", got.PaymentContactID, *b.PaymentContactID)
		}
		// Nor can we change or pay through their bill.
		if _, err := o.flow.CreateContact(ctx, o.admin, b.ID); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("a contact from another organization's bill: %v, want not_found", err)
		}
	})
}
