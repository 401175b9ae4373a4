package payment_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var approvalDay = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// desk is an organization that pays: its owner, an admin and a member (who
// makes the payments), a GBP contact, and another organization with an
// owner of its own.
type desk struct {
	d                    *db.DB
	svc                  *payment.Service
	org                  organization.Organization
	owner, admin, member actor.Actor
	contact              payment.Contact
	other                organization.Organization
	outsider             actor.Actor
}

// reject rejects approval id as a in a transaction of its own (releasing
// a bill is the bill-payment flow's; these payments pay none).
func (k desk) reject(a actor.Actor, id uuid.UUID, r payment.RejectRequest) (payment.Approval, error) {
	ctx := context.Background()
	return db.InTxRetry(ctx, k.d, func(tx *db.Tx) (payment.Approval, error) {
		x, _, err := k.svc.Reject(ctx, tx, a, id, r)
		return x, err
	})
}

// cancel cancels payment id as a in a transaction of its own.
func (k desk) cancel(a actor.Actor, id uuid.UUID) (payment.Record, error) {
	ctx := context.Background()
	return db.InTxRetry(ctx, k.d, func(tx *db.Tx) (payment.Record, error) { return k.svc.Cancel(ctx, tx, a, id) })
}

func newDesk(t *testing.T, d *db.DB) desk {
	t.Helper()
	ctx := context.Background()
	k := desk{d: d, svc: &payment.Service{DB: d, Rates: sandbox.Rates{}}}
	k.org = fixture.Organization(t, d, "Acme")
	k.owner = fixture.Join(t, d, k.org.ID, "olu@acme.test", organization.Owner)
	k.admin = fixture.Join(t, d, k.org.ID, "ade@acme.test", organization.Admin)
	k.member = fixture.Join(t, d, k.org.ID, "ada@acme.test", organization.Member)
	k.other = fixture.Organization(t, d, "Globex")
	k.outsider = fixture.Join(t, d, k.other.ID, "hank@globex.test", organization.Owner)
	var err error
	if k.contact, err = k.svc.CreateContact(ctx, k.member, k.org.ID, westminster(t)); err != nil {
		t.Fatal(err)
	}
	return k
}

// fund deposits minor units of cur into the organization's available balance.
func (k desk) fund(t *testing.T, cur string, minor int64) {
	t.Helper()
	ctx := context.Background()
	id := k.org.ID
	if _, err := db.InTx(ctx, k.d, func(tx *db.Tx) (uuid.UUID, error) {
		return ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &id, Kind: "deposit", Description: "test", Postings: []ledger.Posting{
			{Account: ledger.PlatformAccount(id, cur, ledger.World), Amount: -minor},
			{Account: ledger.OrgAccount(id, cur, ledger.Available), Amount: minor},
		}})
	}); err != nil {
		t.Fatal(err)
	}
}

// execute is the member's fiat request for a quote of amount GBP sent.
func (k desk) execute(t *testing.T, amount string) payment.ExecuteRequest {
	t.Helper()
	quote, err := k.svc.Preflight(context.Background(), k.member, payment.PreflightRequest{OrganizationID: k.org.ID.String(),
		Rail: payment.RailFiat, ContactID: k.contact.ID.String(), SourceCurrency: "GBP", Amount: amount, AmountSide: "send"})
	if err != nil {
		t.Fatal(err)
	}
	reason, text := "PYR001", "Invoice 118"
	return payment.ExecuteRequest{QuoteID: quote.ID.String(), PayoutReason: &reason, StatementDescription: &text}
}

// pay is a payment the member made of amount GBP, awaiting approval.
func (k desk) pay(t *testing.T, amount string) payment.Record {
	t.Helper()
	out, err := k.svc.Execute(context.Background(), k.member, k.execute(t, amount), "")
	if err != nil {
		t.Fatal(err)
	}
	if out.Payment.Status != payment.AwaitingApproval || out.Payment.ApprovalRequestID == nil {
		t.Fatalf("new payment %+v, want it awaiting its approval", out.Payment)
	}
	return out.Payment
}

// record records approval id by approver in a transaction of its own, as
// the approving app's answer does.
func (k desk) record(id uuid.UUID, approver actor.Actor) error {
	return k.d.Tx(context.Background(), func(tx *db.Tx) error { return k.svc.RecordApproval(context.Background(), tx, id, approver.UserID) })
}

func (k desk) balance(t *testing.T, cur string) ledger.Balance {
	t.Helper()
	bs, err := ledger.Balances(context.Background(), k.d.Reader(), k.org.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Currency == cur {
			return b
		}
	}
	return ledger.Balance{Currency: cur}
}

// state is what a payment's approval decided, as people read it.
func (k desk) state(t *testing.T, p payment.Record) (paymentStatus, approvalStatus string) {
	t.Helper()
	ctx := context.Background()
	got, err := k.svc.GetPayment(ctx, k.member, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	x, err := k.svc.GetApproval(ctx, k.member, *got.ApprovalRequestID)
	if err != nil {
		t.Fatal(err)
	}
	return got.Status, x.Status
}

// TestRecordingAnApprovalMovesTheFundsOnce: the approval moves exactly what
// the quote said (the amount sent to pending, the fee to the platform),
// approves the payment with its row in the feed, names who approved and
// when; recording it again (a second challenge answered) moves nothing more.
func TestRecordingAnApprovalMovesTheFundsOnce(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		k := newDesk(t, d)
		k.fund(t, "GBP", 150000)
		p := k.pay(t, "1000.00")
		// 0.25% of 1,000.00 is 2.50, above the 1.00 minimum.
		if p.Debited.Minor != 100250 || p.Fee.Minor != 250 || p.Delivered.Minor != 100000 || p.TransactionID != nil {
			t.Fatalf("payment %+v; want 1,002.50 debited with a 2.50 fee and no feed row yet", p)
		}
		if b := k.balance(t, "GBP"); b.Available != 150000 || b.Pending != 0 {
			t.Fatalf("before the approval: %+v; want nothing moved", b)
		}
		clk.Advance(time.Minute)
		if err := k.record(*p.ApprovalRequestID, k.admin); err != nil {
			t.Fatal(err)
		}
		want := ledger.Balance{Currency: "GBP", Available: 150000 - 100250, Pending: 100000}
		if b := k.balance(t, "GBP"); b != want {
			t.Fatalf("after the approval: %+v; want %+v", b, want)
		}
		got, err := k.svc.GetPayment(ctx, k.member, p.ID)
		if err != nil || got.Status != payment.Approved || got.TransactionID == nil {
			t.Fatalf("payment %+v, %v; want approved with its feed row", got, err)
		}
		row, err := ledger.Get(ctx, d.Reader(), k.org.ID, *got.TransactionID)
		if err != nil || row.Type != "fiat_outgoing" || row.Amount != 100000 || row.Direction != "out" || row.Description != "Payment to Westminster Supplies" {
			t.Fatalf("feed row %+v, %v", row, err)
		}
		x, err := k.svc.GetApproval(ctx, k.owner, *p.ApprovalRequestID)
		if err != nil || x.Status != payment.ApprovalApproved || x.DecidedByID == nil || *x.DecidedByID != k.admin.UserID ||
			x.DecidedAt == nil || !x.DecidedAt.Equal(approvalDay.Add(time.Minute)) {
			t.Fatalf("approval %+v, %v; want approved by the admin a minute later", x, err)
		}

		if err := k.record(*p.ApprovalRequestID, k.owner); err != nil {
			t.Fatalf("recording it again: %v", err)
		}
		if b := k.balance(t, "GBP"); b != want {
			t.Fatalf("after recording twice: %+v; want %+v", b, want)
		}
		if again, _ := k.svc.GetApproval(ctx, k.owner, x.ID); *again.DecidedByID != k.admin.UserID {
			t.Fatalf("the second answer took the decision: %+v", again)
		}
		if err := ledger.CheckInvariants(ctx, d.Reader()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestAnApprovalTheFundsNoLongerCoverRecordsNothing: when the balance falls
// short of the amount and the fee, the answer is insufficient_funds, the
// payment keeps waiting and no money moves; the caller's transaction goes
// on (the app declines the challenge in it), and once funded the same
// approval goes through. Down to exactly zero is enough.
func TestAnApprovalTheFundsNoLongerCoverRecordsNothing(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		k := newDesk(t, d)
		k.fund(t, "GBP", 100249) // one penny short of 1,000.00 and its 2.50 fee
		p := k.pay(t, "1000.00")
		var refused error
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			refused = k.svc.RecordApproval(ctx, tx, *p.ApprovalRequestID, k.owner.UserID)
			// The caller's own write after the refusal is kept.
			id := k.org.ID
			_, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &id, Kind: "deposit", Description: "top-up", Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(id, "GBP", ledger.World), Amount: -1},
				{Account: ledger.OrgAccount(id, "GBP", ledger.Available), Amount: 1},
			}})
			return err
		}); err != nil {
			t.Fatalf("the caller's transaction failed: %v", err)
		}
		if !errors.Is(refused, ledger.ErrInsufficientFunds) {
			t.Fatalf("recording with a penny short: %v; want insufficient funds", refused)
		}
		if ps, xs := k.state(t, p); ps != payment.AwaitingApproval || xs != payment.ApprovalPending {
			t.Fatalf("after the refusal: payment %s, approval %s; want both still waiting", ps, xs)
		}
		if b := k.balance(t, "GBP"); b.Available != 100250 || b.Pending != 0 {
			t.Fatalf("balance %+v; want the deposits alone", b)
		}
		if err := k.record(*p.ApprovalRequestID, k.owner); err != nil {
			t.Fatalf("recording with exactly enough: %v", err)
		}
		if b := k.balance(t, "GBP"); b.Available != 0 || b.Pending != 100000 {
			t.Fatalf("balance %+v; want 0 available and 1,000.00 pending", b)
		}
	})
}

// TestOnlyOwnersAndAdminsApprovePayments: recording an approval takes an
// owner or admin of the payment's organization; a member, or an owner of
// another organization, is refused with forbidden and nothing moves.
func TestOnlyOwnersAndAdminsApprovePayments(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		k := newDesk(t, d)
		k.fund(t, "GBP", 1000000)
		for _, c := range []struct {
			name     string
			approver actor.Actor
			ok       bool
		}{
			{"a member", k.member, false},
			{"another organization's owner", k.outsider, false},
			{"a user of no organization", actor.Actor{UserID: uuid.Must(uuid.NewV7())}, false},
			{"an admin", k.admin, true},
			{"the owner", k.owner, true},
		} {
			before := k.balance(t, "GBP")
			p := k.pay(t, "10.00")
			err := k.record(*p.ApprovalRequestID, c.approver)
			ps, xs := k.state(t, p)
			if c.ok {
				if err != nil || ps != payment.Approved || xs != payment.ApprovalApproved {
					t.Errorf("%s: %v, payment %s, approval %s; want approved", c.name, err, ps, xs)
				}
				continue
			}
			if !apierr.Is(err, apierr.Forbidden) {
				t.Errorf("%s: %v; want forbidden", c.name, err)
			}
			if ps != payment.AwaitingApproval || xs != payment.ApprovalPending || k.balance(t, "GBP") != before {
				t.Errorf("%s: payment %s, approval %s, balance %+v (was %+v); want nothing changed", c.name, ps, xs, k.balance(t, "GBP"), before)
			}
		}
	})
}

// TestAPausedOrganizationMovesNoMoney: while the organization is paused an
// approval answered in the app is organization_unavailable and nothing is
// recorded; once active again it goes through.
func TestAPausedOrganizationMovesNoMoney(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		k := newDesk(t, d)
		k.fund(t, "GBP", 5000)
		p := k.pay(t, "10.00")
		setStatus := func(s organization.Status) {
			t.Helper()
			if err := d.Tx(ctx, func(tx *db.Tx) error {
				_, err := organization.SetStatus(ctx, tx, k.org.ID, s)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		setStatus(organization.Paused)
		if err := k.record(*p.ApprovalRequestID, k.owner); !apierr.Is(err, apierr.OrganizationUnavailable) {
			t.Fatalf("while paused: %v; want organization_unavailable", err)
		}
		if b := k.balance(t, "GBP"); b.Available != 5000 {
			t.Fatalf("while paused the balance became %+v", b)
		}
		setStatus(organization.Active)
		if err := k.record(*p.ApprovalRequestID, k.owner); err != nil {
			t.Fatalf("once active: %v", err)
		}
		if ps, _ := k.state(t, p); ps != payment.Approved {
			t.Fatalf("payment %s; want approved", ps)
		}
	})
}

// TestRejectedOrCancelledPaymentsAreNeverApproved: rejecting refuses the
// payment for good (an owner or admin only, once); the initiator alone may
// cancel a payment awaiting approval; an approval answered in the app
// after either is a conflict and moves nothing.
func TestRejectedOrCancelledPaymentsAreNeverApproved(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		k := newDesk(t, d)
		k.fund(t, "GBP", 1000000)

		rejected := k.pay(t, "20.00")
		x := *rejected.ApprovalRequestID
		reason := "Not our supplier"
		if _, err := k.reject(k.member, x, payment.RejectRequest{Reason: &reason}); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("a member rejecting: %v; want forbidden", err)
		}
		if _, err := k.reject(k.outsider, x, payment.RejectRequest{}); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization rejecting: %v; want not_found", err)
		}
		got, err := k.reject(k.admin, x, payment.RejectRequest{Reason: &reason})
		if err != nil || got.Status != payment.ApprovalRejected || *got.DecidedByID != k.admin.UserID {
			t.Fatalf("rejecting: %+v, %v", got, err)
		}
		if ps, _ := k.state(t, rejected); ps != payment.Rejected {
			t.Errorf("rejected approval's payment is %s", ps)
		}
		if _, err := k.reject(k.owner, x, payment.RejectRequest{}); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("rejecting twice: %v; want conflict", err)
		}
		if err := k.record(x, k.owner); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("approving a rejected payment: %v; want conflict", err)
		}

		cancelled := k.pay(t, "30.00")
		if _, err := k.cancel(k.owner, cancelled.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("the owner cancelling the member's payment: %v; want forbidden", err)
		}
		if _, err := k.cancel(k.outsider, cancelled.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization cancelling: %v; want not_found", err)
		}
		if p, err := k.cancel(k.member, cancelled.ID); err != nil || p.Status != payment.Cancelled {
			t.Fatalf("the initiator cancelling: %+v, %v", p, err)
		}
		if _, xs := k.state(t, cancelled); xs != payment.ApprovalCancelled {
			t.Errorf("the cancelled payment's approval is %s", xs)
		}
		if err := k.record(*cancelled.ApprovalRequestID, k.owner); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("approving a cancelled payment: %v; want conflict", err)
		}
		if b := k.balance(t, "GBP"); b.Available != 1000000 || b.Pending != 0 {
			t.Errorf("balance %+v; want nothing moved", b)
		}

		approved := k.pay(t, "40.00")
		if err := k.record(*approved.ApprovalRequestID, k.owner); err != nil {
			t.Fatal(err)
		}
		if _, err := k.cancel(k.member, approved.ID); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("cancelling an approved fiat payment: %v; want conflict", err)
		}
		if _, err := k.reject(k.owner, *approved.ApprovalRequestID, payment.RejectRequest{}); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("rejecting an approved payment: %v; want conflict", err)
		}
	})
}

// TestABatchIsApprovedWhole: a batch's payments share one approval; funds
// must cover all of them together (else none moves), the approval moves
// them all at once, and rejecting it rejects every one. A payment of a
// batch cannot be cancelled alone, and another organization sees no batch.
func TestABatchIsApprovedWhole(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		k := newDesk(t, d)
		batch := func() payment.Batch {
			t.Helper()
			b, err := k.svc.CreateBatch(ctx, k.member, payment.BatchRequest{OrganizationID: k.org.ID.String(),
				Payments: []payment.ExecuteRequest{k.execute(t, "100.00"), k.execute(t, "200.00"), k.execute(t, "300.00")}})
			if err != nil {
				t.Fatal(err)
			}
			if len(b.Payments) != 3 || b.ApprovalRequestID == nil || b.Status != payment.ApprovalPending {
				t.Fatalf("batch %+v", b)
			}
			for _, p := range b.Payments {
				if p.ApprovalRequestID != nil || p.PaymentBatchID == nil || *p.PaymentBatchID != b.ID {
					t.Fatalf("a batch payment %+v has an approval of its own", p)
				}
			}
			return b
		}
		// 100, 200 and 300 GBP, each with the 1.00 minimum fee: 603.00 in all.
		k.fund(t, "GBP", 60299)
		b := batch()
		if _, err := k.cancel(k.member, b.Payments[0].ID); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("cancelling one payment of a batch: %v; want conflict", err)
		}
		if err := k.record(*b.ApprovalRequestID, k.owner); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("a batch a penny short: %v; want insufficient funds", err)
		}
		if got, _ := k.svc.GetBatch(ctx, k.member, b.ID); got.Status != payment.ApprovalPending || got.Payments[0].Status != payment.AwaitingApproval {
			t.Fatalf("after the refusal: %+v; want nothing approved", got)
		}
		k.fund(t, "GBP", 1)
		if err := k.record(*b.ApprovalRequestID, k.owner); err != nil {
			t.Fatal(err)
		}
		got, err := k.svc.GetBatch(ctx, k.member, b.ID)
		if err != nil || got.Status != payment.ApprovalApproved {
			t.Fatalf("batch %+v, %v; want approved", got, err)
		}
		for _, p := range got.Payments {
			if p.Status != payment.Approved || p.TransactionID == nil {
				t.Errorf("payment %+v; want approved with its feed row", p)
			}
		}
		if bal := k.balance(t, "GBP"); bal.Available != 0 || bal.Pending != 60000 {
			t.Errorf("balance %+v; want 0 available, 600.00 pending", bal)
		}

		rejected := batch()
		if _, err := k.reject(k.admin, *rejected.ApprovalRequestID, payment.RejectRequest{}); err != nil {
			t.Fatal(err)
		}
		got, _ = k.svc.GetBatch(ctx, k.member, rejected.ID)
		for _, p := range got.Payments {
			if p.Status != payment.Rejected {
				t.Errorf("payment %+v of a rejected batch; want rejected", p)
			}
		}
		if got.Status != payment.ApprovalRejected {
			t.Errorf("rejected batch is %s", got.Status)
		}
		if _, err := k.svc.GetBatch(ctx, k.outsider, b.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization reading the batch: %v; want not_found", err)
		}
	})
}

// TestApprovalsAreTheOrganizationsOwn: the list counts what waits and
// filters by status; another organization finds neither an approval nor a
// payment.
func TestApprovalsAreTheOrganizationsOwn(t *testing.T) {
	t.Parallel()
	fixture.Each(t, approvalDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		k := newDesk(t, d)
		k.fund(t, "GBP", 1000000)
		first, second, third := k.pay(t, "1.00"), k.pay(t, "2.00"), k.pay(t, "3.00")
		if err := k.record(*first.ApprovalRequestID, k.owner); err != nil {
			t.Fatal(err)
		}
		if _, err := k.cancel(k.member, second.ID); err != nil {
			t.Fatal(err)
		}
		pendingOnly, waiting, err := k.svc.ListApprovals(ctx, k.member, k.org.ID, payment.ApprovalPending, page.Request{Limit: 10})
		if err != nil || waiting != 1 || len(pendingOnly) != 1 || pendingOnly[0].ID != *third.ApprovalRequestID {
			t.Fatalf("pending approvals %+v (%d waiting), %v; want the third payment's alone", pendingOnly, waiting, err)
		}
		all, _, err := k.svc.ListApprovals(ctx, k.member, k.org.ID, "", page.Request{Limit: 10})
		if err != nil || len(all) != 3 || all[0].ID != *third.ApprovalRequestID {
			t.Fatalf("all approvals %+v, %v; want three, newest first", all, err)
		}
		if _, _, err := k.svc.ListApprovals(ctx, k.outsider, k.org.ID, "", page.Request{Limit: 10}); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization listing: %v; want not_found", err)
		}
		if _, err := k.svc.GetApproval(ctx, k.outsider, *third.ApprovalRequestID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization reading an approval: %v; want not_found", err)
		}
		if _, err := k.svc.GetPayment(ctx, k.outsider, third.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization reading a payment: %v; want not_found", err)
		}
	})
}
