package requesting_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/flow/requesting"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var testDay = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// office is an organization with an owner, a member, a program's API key
// (payment_requests:read and :write) and a supplier to pay in EUR, with
// the services behind the flow.
type office struct {
	d        *db.DB
	clk      *clock.Manual
	flow     *requesting.Service
	payments *payment.Service
	jobs     *job.Runner
	org      organization.Organization
	owner    actor.Actor
	member   actor.Actor
	program  actor.Actor
	contact  payment.Contact
}

func newOffice(t *testing.T, d *db.DB, clk *clock.Manual, name string) office {
	t.Helper()
	ctx := context.Background()
	payments := &payment.Service{DB: d, Rates: sandbox.Rates{}}
	requests := &paymentrequest.Service{DB: d}
	jobs := job.NewRunner(d, clk, slog.New(slog.NewTextHandler(io.Discard, nil)))
	requests.Register(jobs)
	payments.Register(jobs)
	org := fixture.Organization(t, d, name)
	o := office{d: d, clk: clk, flow: &requesting.Service{DB: d, Requests: requests, Payments: payments}, payments: payments, jobs: jobs, org: org,
		owner:  fixture.Join(t, d, org.ID, "owner@"+name+".test", organization.Owner),
		member: fixture.Join(t, d, org.ID, "member@"+name+".test", organization.Member)}
	o.program = o.key(t, "ERP", paymentrequest.ScopeRead, paymentrequest.ScopeWrite)
	iban, bic := "DE89 3704 0044 0532 0130 00", "COBADEFFXXX"
	c, err := payments.CreateContact(ctx, o.owner, org.ID, payment.ContactRequest{Name: "Müller Maschinenbau GmbH", Currency: "EUR",
		Rail: payment.RailFiat, Account: bankdetails.Account{IBAN: &iban, SwiftCode: &bic}})
	if err != nil {
		t.Fatal(err)
	}
	o.contact = c
	return o
}

// key is an API key of the organization named name with scopes, as the
// program holding it acts.
func (o office) key(t *testing.T, name string, scopes ...string) actor.Actor {
	t.Helper()
	ctx := context.Background()
	keys := &apikey.Service{DB: o.d, Clock: o.clk, Keys: fixture.Keys(t), Env: "test"}
	role := organization.Member
	c, err := keys.CheckCreate(ctx, o.owner, o.org.ID, apikey.CreateRequest{Request: apikey.Request{Name: &name, Role: &role, Scopes: &scopes}})
	if err != nil {
		t.Fatal(err)
	}
	_, secret, err := keys.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	a, err := keys.Authenticate(ctx, secret)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// body asks for amount EUR to the office's supplier.
func (o office) body(amount string) paymentrequest.CreateRequest {
	ref, reason := "PO 2026-0417", "PYR001"
	return paymentrequest.CreateRequest{ContactID: o.contact.ID.String(), Amount: amount, Currency: "EUR", Reference: &ref, Reason: &reason}
}

// create makes a request of amount EUR as a.
func (o office) create(t *testing.T, a actor.Actor, amount string) requesting.View {
	t.Helper()
	out, err := o.flow.Create(context.Background(), a, o.org.ID, o.body(amount), "")
	if err != nil {
		t.Fatal(err)
	}
	return out.View
}

func (o office) get(t *testing.T, id uuid.UUID) requesting.View {
	t.Helper()
	v, err := o.flow.Get(context.Background(), o.owner, o.org.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// updates is how many payment_request.updated events request id has.
func (o office) updates(t *testing.T, id uuid.UUID) int {
	t.Helper()
	var n int
	if err := o.d.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM domain_events WHERE type = $1 AND aggregate_id = $2`,
		paymentrequest.Updated, id.String()).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func expect(t *testing.T, what string, err error, typ apierr.Type) {
	t.Helper()
	if !apierr.Is(err, typ) {
		t.Fatalf("%s: %v, want %s", what, err, typ)
	}
}

func TestCreatingARequest(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		v := o.create(t, o.program, "1250.00")
		r := v.Request
		if r.Status != paymentrequest.Pending || r.Amount.String() != "1250.00" || r.Amount.Currency != "EUR" || v.Contact.ID != o.contact.ID ||
			r.RequestedBy.Kind != paymentrequest.ByAPIKey || *r.RequestedBy.ID != o.program.Key.ID || r.RequestedBy.Name != "ERP" ||
			!r.ExpiresAt.Equal(testDay.Add(30*24*time.Hour)) || r.PaymentID != nil || r.PaymentStatus != nil {
			t.Fatalf("created %+v", r)
		}
		if n := o.updates(t, r.ID); n != 1 {
			t.Fatalf("%d payment_request.updated events after create, want 1", n)
		}
		// A person is named by their email when they have no name.
		if by := o.create(t, o.member, "1.00").RequestedBy; by.Kind != paymentrequest.ByUser || *by.ID != o.member.UserID || by.Name != "member@acme.test" {
			t.Fatalf("requested_by %+v", by)
		}

		// Another organization's contact is not found, and nothing is made.
		other := newOffice(t, d, clk, "globex")
		body := o.body("5.00")
		body.ContactID = other.contact.ID.String()
		_, err := o.flow.Create(ctx, o.program, o.org.ID, body, "")
		expect(t, "another organization's contact", err, apierr.NotFound)
		// A bank transfer needs its reason and reference.
		body = o.body("5.00")
		body.Reason, body.Reference = nil, nil
		_, err = o.flow.Create(ctx, o.member, o.org.ID, body, "")
		if e, ok := apierr.As(err); !ok || e.Type != apierr.InvalidRequest || len(e.Details.([]apierr.FieldError)) != 2 {
			t.Fatalf("without reason and reference: %v", err)
		}
		// A key without the scope, and a stranger.
		reader := o.key(t, "Reader", paymentrequest.ScopeRead)
		_, err = o.flow.Create(ctx, reader, o.org.ID, o.body("5.00"), "")
		expect(t, "a key without payment_requests:write", err, apierr.APIScopeMissing)
		_, err = o.flow.Create(ctx, other.owner, o.org.ID, o.body("5.00"), "")
		expect(t, "a stranger", err, apierr.NotFound)
		_, err = o.flow.Get(ctx, other.owner, o.org.ID, r.ID)
		expect(t, "a stranger reads", err, apierr.NotFound)
		_, err = o.flow.Get(ctx, other.owner, other.org.ID, r.ID)
		expect(t, "read through another organization", err, apierr.NotFound)
		if _, err := o.flow.Get(ctx, reader, o.org.ID, r.ID); err != nil {
			t.Fatalf("a key with payment_requests:read reads: %v", err)
		}

		rs, err := o.flow.List(ctx, o.owner, o.org.ID, paymentrequest.Filter{Status: paymentrequest.Pending}, page.Request{Limit: 10})
		if err != nil || len(rs) != 2 || rs[0].ID.String() < rs[1].ID.String() {
			t.Fatalf("list: %d requests, %v (newest first)", len(rs), err)
		}
	})
}

func TestCreatingWithAnIdempotencyKeyReplays(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		first, err := o.flow.Create(ctx, o.program, o.org.ID, o.body("10.00"), "po-17")
		if err != nil || first.Replayed {
			t.Fatalf("first: %+v, %v", first.Replayed, err)
		}
		clk.Advance(time.Hour)
		again, err := o.flow.Create(ctx, o.program, o.org.ID, o.body("10.00"), "po-17")
		if err != nil || !again.Replayed || again.ID != first.ID || !again.CreatedAt.Equal(first.CreatedAt) {
			t.Fatalf("repeat: %+v, %v; want the first request replayed", again, err)
		}
		_, err = o.flow.Create(ctx, o.program, o.org.ID, o.body("11.00"), "po-17")
		expect(t, "the key with another body", err, apierr.IdempotencyKeyReused)
		// The key is the requester's own: a person using the same one makes their own request.
		mine, err := o.flow.Create(ctx, o.member, o.org.ID, o.body("10.00"), "po-17")
		if err != nil || mine.Replayed || mine.ID == first.ID {
			t.Fatalf("another requester's key: %+v, %v", mine, err)
		}
		// After 24 hours the key is forgotten.
		clk.Advance(24 * time.Hour)
		later, err := o.flow.Create(ctx, o.program, o.org.ID, o.body("10.00"), "po-17")
		if err != nil || later.Replayed || later.ID == first.ID {
			t.Fatalf("after 24 hours: %+v, %v", later, err)
		}
		rs, err := o.flow.List(ctx, o.program, o.org.ID, paymentrequest.Filter{}, page.Request{Limit: 10})
		if err != nil || len(rs) != 3 {
			t.Fatalf("%d requests (%v), want 3", len(rs), err)
		}
	})
}

func TestCancellingIsTheRequesters(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		byKey := o.create(t, o.program, "10.00")
		byMember := o.create(t, o.member, "20.00")

		_, err := o.flow.Cancel(ctx, o.owner, o.org.ID, byKey.ID)
		expect(t, "the owner cancels the program's request", err, apierr.Forbidden)
		_, err = o.flow.Cancel(ctx, o.key(t, "Other", paymentrequest.ScopeWrite), o.org.ID, byKey.ID)
		expect(t, "another key cancels it", err, apierr.Forbidden)
		_, err = o.flow.Cancel(ctx, o.key(t, "Reader", paymentrequest.ScopeRead), o.org.ID, byKey.ID)
		expect(t, "a key without payment_requests:write", err, apierr.APIScopeMissing)
		_, err = o.flow.Cancel(ctx, o.program, o.org.ID, byMember.ID)
		expect(t, "the program cancels a person's request", err, apierr.Forbidden)

		v, err := o.flow.Cancel(ctx, o.program, o.org.ID, byKey.ID)
		if err != nil || v.Status != paymentrequest.Cancelled {
			t.Fatalf("the program cancels its own: %+v, %v", v.Request, err)
		}
		if v, err = o.flow.Cancel(ctx, o.member, o.org.ID, byMember.ID); err != nil || v.Status != paymentrequest.Cancelled {
			t.Fatalf("the member cancels their own: %+v, %v", v.Request, err)
		}
		// A final state changes no more.
		_, err = o.flow.Cancel(ctx, o.program, o.org.ID, byKey.ID)
		expect(t, "cancel again", err, apierr.Conflict)
		_, err = o.flow.Accept(ctx, o.owner, o.org.ID, byKey.ID)
		expect(t, "accept a cancelled request", err, apierr.Conflict)
		_, err = o.flow.Decline(ctx, o.owner, o.org.ID, byKey.ID, paymentrequest.DeclineRequest{Reason: "no"})
		expect(t, "decline a cancelled request", err, apierr.Conflict)
		if n := o.updates(t, byKey.ID); n != 2 {
			t.Fatalf("%d events, want 2 (created, cancelled)", n)
		}
	})
}

func TestDecliningIsForPeopleWhoMayPay(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		r := o.create(t, o.program, "10.00")
		_, err := o.flow.Decline(ctx, o.program, o.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "no"})
		expect(t, "a key declines", err, apierr.APIKeyNotPermitted)
		_, err = o.flow.Accept(ctx, o.program, o.org.ID, r.ID)
		expect(t, "a key accepts", err, apierr.APIKeyNotPermitted)
		stranger := newOffice(t, d, clk, "globex")
		_, err = o.flow.Decline(ctx, stranger.owner, o.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "no"})
		expect(t, "a stranger declines", err, apierr.NotFound)
		_, err = o.flow.Decline(ctx, stranger.owner, stranger.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "no"})
		expect(t, "declined through another organization", err, apierr.NotFound)

		v, err := o.flow.Decline(ctx, o.member, o.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "  Paid by card already. "})
		if err != nil || v.Status != paymentrequest.Declined || *v.DeclineReason != "Paid by card already." || *v.DecidedByID != o.member.UserID {
			t.Fatalf("declined: %+v, %v", v.Request, err)
		}
		_, err = o.flow.Decline(ctx, o.owner, o.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "again"})
		expect(t, "decline again", err, apierr.Conflict)
		_, err = o.flow.Cancel(ctx, o.program, o.org.ID, r.ID)
		expect(t, "cancel a declined request", err, apierr.Conflict)
	})
}

func TestARequestExpiresAfterThirtyDays(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		r := o.create(t, o.program, "10.00")
		answered := o.create(t, o.program, "20.00")
		if _, err := o.flow.Decline(ctx, o.owner, o.org.ID, answered.ID, paymentrequest.DeclineRequest{Reason: "no"}); err != nil {
			t.Fatal(err)
		}
		clk.Advance(30*24*time.Hour - time.Second)
		if _, err := o.jobs.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if got := o.get(t, r.ID).Status; got != paymentrequest.Pending {
			t.Fatalf("a second before 30 days: %s", got)
		}
		clk.Advance(time.Second)
		// Due, but the job has not run yet: nobody can answer it any more.
		_, err := o.flow.Accept(ctx, o.owner, o.org.ID, r.ID)
		expect(t, "accept at expiry", err, apierr.Conflict)
		if n, err := o.jobs.RunDue(ctx); err != nil || n != 2 {
			t.Fatalf("ran %d jobs (%v), want the two expiries", n, err)
		}
		if got := o.get(t, r.ID).Status; got != paymentrequest.Expired {
			t.Fatalf("after 30 days: %s, want expired", got)
		}
		if got := o.get(t, answered.ID).Status; got != paymentrequest.Declined {
			t.Fatalf("an answered request after 30 days: %s, want declined still", got)
		}
		if n := o.updates(t, r.ID); n != 2 {
			t.Fatalf("%d events, want 2 (created, expired)", n)
		}
		if n := o.updates(t, answered.ID); n != 2 {
			t.Fatalf("%d events of the declined one, want 2 (created, declined)", n)
		}
		_, err = o.flow.Cancel(ctx, o.program, o.org.ID, r.ID)
		expect(t, "cancel an expired request", err, apierr.Conflict)
	})
}

// fund gives the office's EUR balance amount minor units.
func (o office) fund(t *testing.T, minor int64) {
	t.Helper()
	ctx := context.Background()
	org := o.org.ID
	_, err := db.InTx(ctx, o.d, func(tx *db.Tx) (uuid.UUID, error) {
		return ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org, Kind: "deposit", Description: "test", Postings: []ledger.Posting{
			{Account: ledger.PlatformAccount(org, "EUR", ledger.World), Amount: -minor},
			{Account: ledger.OrgAccount(org, "EUR", ledger.Available), Amount: minor},
		}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// follow runs the payment-request consumer (its first pass starts it at
// the end of the events) until done holds (on PostgreSQL, events of other
// transactions still running may be held back a while).
func (o office) follow(t *testing.T, done func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := event.Consume(context.Background(), o.d, requesting.ConsumerName, 100, o.flow.Follow); err != nil {
			t.Fatal(err)
		}
		if done() {
			return
		}
	}
	t.Fatal("the consumer did not catch up")
}

func TestAcceptingMakesThePaymentAndFollowsIt(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		o.fund(t, 1_000_000)
		note := "March parts"
		body := o.body("1250.00")
		body.Note = &note
		made, err := o.flow.Create(ctx, o.program, o.org.ID, body, "")
		if err != nil {
			t.Fatal(err)
		}
		o.follow(t, func() bool { return true }) // the consumer starts at the end

		v, err := o.flow.Accept(ctx, o.member, o.org.ID, made.ID)
		if err != nil {
			t.Fatal(err)
		}
		if v.Status != paymentrequest.Accepted || v.PaymentID == nil || *v.PaymentStatus != payment.AwaitingApproval || *v.DecidedByID != o.member.UserID {
			t.Fatalf("accepted: %+v", v.Request)
		}
		p, err := o.payments.GetPayment(ctx, o.member, *v.PaymentID)
		if err != nil {
			t.Fatal(err)
		}
		// The contact receives the amount in its own currency; the member made the payment.
		if p.Delivered.String() != "1250.00" || p.Delivered.Currency != "EUR" || p.CreatedByID != o.member.UserID || p.Status != payment.AwaitingApproval ||
			*p.PayoutReason != "PYR001" || *p.StatementDescription != "PO 2026-0417" || *p.InternalNotes != "March parts" || p.PaymentContactID != o.contact.ID {
			t.Fatalf("payment %+v", p)
		}
		_, err = o.flow.Accept(ctx, o.owner, o.org.ID, made.ID)
		expect(t, "accept twice", err, apierr.Conflict)
		_, err = o.flow.Cancel(ctx, o.program, o.org.ID, made.ID)
		expect(t, "cancel an accepted request", err, apierr.Conflict)

		// Approved (the app's signature), handed to the rail, settled.
		if _, err := db.InTx(ctx, d, func(tx *db.Tx) (struct{}, error) {
			return struct{}{}, o.payments.RecordApproval(ctx, tx, *p.ApprovalRequestID, o.owner.UserID)
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := o.jobs.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := db.InTx(ctx, d, func(tx *db.Tx) (payment.Record, error) { return o.payments.Settle(ctx, tx, p.ID, payment.Completed) }); err != nil {
			t.Fatal(err)
		}
		o.follow(t, func() bool { return o.updates(t, made.ID) == 5 })
		if got := o.get(t, made.ID); got.Status != paymentrequest.Accepted || *got.PaymentStatus != payment.Completed {
			t.Fatalf("after settlement: %s / %s, want accepted / completed", got.Status, *got.PaymentStatus)
		}
		// created, accepted, approved, processing, completed; following again changes nothing.
		if n := o.updates(t, made.ID); n != 5 {
			t.Fatalf("%d events, want 5", n)
		}
		if _, err := event.Consume(ctx, d, requesting.ConsumerName, 100, o.flow.Follow); err != nil {
			t.Fatal(err)
		}
		if n := o.updates(t, made.ID); n != 5 {
			t.Fatalf("%d events after following again, want 5", n)
		}
	})
}

// TestAcceptAndCancelAtOnce: of an accept and a cancel of one request at
// the same moment exactly one takes effect, and the other is a conflict.
func TestAcceptAndCancelAtOnce(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d, clk, "acme")
		for round := range 5 {
			r := o.create(t, o.program, "3.00")
			var wg sync.WaitGroup
			var acceptErr, cancelErr, declineErr error
			wg.Add(3)
			go func() { defer wg.Done(); _, acceptErr = o.flow.Accept(ctx, o.owner, o.org.ID, r.ID) }()
			go func() { defer wg.Done(); _, cancelErr = o.flow.Cancel(ctx, o.program, o.org.ID, r.ID) }()
			go func() {
				defer wg.Done()
				_, declineErr = o.flow.Decline(ctx, o.member, o.org.ID, r.ID, paymentrequest.DeclineRequest{Reason: "no"})
			}()
			wg.Wait()
			won := 0
			for _, err := range []error{acceptErr, cancelErr, declineErr} {
				switch {
				case err == nil:
					won++
				case !apierr.Is(err, apierr.Conflict):
					t.Fatalf("round %d: %v, want success or conflict", round, err)
				}
			}
			got := o.get(t, r.ID)
			if won != 1 || (acceptErr == nil) != (got.Status == paymentrequest.Accepted) || (acceptErr == nil) != (got.PaymentID != nil) {
				t.Fatalf("round %d: %d answers took effect (accept %v, cancel %v, decline %v); the request is %s", round, won, acceptErr, cancelErr, declineErr, got.Status)
			}
			if n := o.updates(t, r.ID); n != 2 {
				t.Fatalf("round %d: %d events, want 2", round, n)
			}
		}
	})
}
