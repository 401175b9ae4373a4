package e2e_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// payer is an owner with a funded balance and a supplier to pay.
type payer struct {
	*person
	org, contact string
}

func newPayer(t *testing.T, s *apitest.Server, email, deposit string) *payer {
	t.Helper()
	p := &payer{person: newPerson(t, s, email)}
	p.org = orgOf(t, s, p.person)
	if deposit != "" {
		ok[*api.SandboxDepositResponse](t, 201)(sandboxClient(t, s).API().SandboxDepositWithResponse(t.Context(), uuidOf(t, p.org), nil,
			api.SandboxDeposit{Currency: "EUR", Amount: deposit}))
	}
	c := ok[*api.CreatePaymentContactResponse](t, 201)(p.client(t, s).API().CreatePaymentContactWithResponse(t.Context(), uuidOf(t, p.org), nil,
		api.PaymentContactCreation{Name: "Müller Maschinenbau GmbH", Currency: "EUR", Rail: api.RailFiat,
			Iban: ptr("DE89 3704 0044 0532 0130 00"), SwiftCode: ptr("COBADEFFXXX")}))
	p.contact = c.JSON201.Id.String()
	return p
}

// client is p's web session as a client (its step-ups fail with the challenge).
func (p *person) client(t *testing.T, s *apitest.Server) *client.Client { return s.Client(t, p.web) }

// quote asks for a quote of amt EUR sent to p's supplier.
func (p *payer) quote(t *testing.T, s *apitest.Server, amt string) api.Quote {
	t.Helper()
	r := ok[*api.CreatePaymentQuoteResponse](t, 201)(p.client(t, s).API().CreatePaymentQuoteWithResponse(t.Context(), nil, api.PaymentQuoteRequest{
		OrganizationId: uuidOf(t, p.org), Rail: api.RailFiat, PaymentContactId: uuidOf(t, p.contact),
		SourceCurrency: "EUR", Amount: amt, AmountSide: api.PaymentQuoteRequestAmountSideSend}))
	return *r.JSON201
}

func executeBody(quoteID string) map[string]any {
	return map[string]any{"quote_id": quoteID, "payout_reason": "PYR002", "statement_description": "Invoice 2026-118"}
}

// pay executes a payment of amt EUR to p's supplier; it awaits approval.
func (p *payer) pay(t *testing.T, s *apitest.Server, amt string) api.Payment {
	t.Helper()
	pay, err := p.client(t, s).ExecutePayment(t.Context(), api.PaymentExecution{QuoteId: p.quote(t, s, amt).Id,
		PayoutReason: ptr("PYR002"), StatementDescription: ptr("Invoice 2026-118")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return *pay
}

// approveInApp asks to approve and answers the bound challenge in the app;
// it returns the challenge the app satisfied.
func (p *payer) approveInApp(t *testing.T, s *apitest.Server, approvalID string) api.Challenge {
	t.Helper()
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+approvalID+"/approve", p.web, nil))
	for _, c := range inbox(t, s, p.app) {
		if c.ApprovalId != nil && c.ApprovalId.String() == approvalID && c.Status == "pending" {
			approve(t, s, p.person, c, *up.MatchCode).ExpectStatus(t, 200)
			return c
		}
	}
	t.Fatal("no payment-approval challenge in the app inbox")
	return api.Challenge{}
}

// balance is the available and pending balance of org in currency.
func balance(t *testing.T, s *apitest.Server, token, org, currency string) (string, string) {
	t.Helper()
	r := ok[*api.GetBalancesResponse](t, 200)(s.Client(t, token).API().GetBalancesWithResponse(t.Context(), uuidOf(t, org), nil))
	for _, x := range r.JSON200.Data {
		if x.Currency == currency {
			return x.Available, x.Pending
		}
	}
	return "", ""
}

func getPayment(t *testing.T, s *apitest.Server, token, id string) api.Payment {
	t.Helper()
	return *ok[*api.GetPaymentResponse](t, 200)(s.Client(t, token).API().GetPaymentWithResponse(t.Context(), uuidOf(t, id), nil)).JSON200
}

func TestPaymentMovesFundsOnlyWhenAPersonApproves(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	q := p.quote(t, s, "100.00")
	if q.Source != moneyOf("100.00", "EUR") || q.Destination != moneyOf("100.00", "EUR") || q.Fee != moneyOf("1.00", "EUR") || q.Rate != "1" {
		t.Fatalf("quote = %+v", q)
	}
	if !q.ExpiresAt.Equal(now(t, s).Add(15 * time.Minute)) {
		t.Fatalf("quote expires at %v", q.ExpiresAt)
	}
	var pay api.Payment
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(q.Id.String())).ExpectStatus(t, 201).Decode(t, &pay)
	if pay.Status != "awaiting_approval" || pay.Debited != moneyOf("101.00", "EUR") || pay.Delivered != moneyOf("100.00", "EUR") ||
		pay.ApprovalRequestId == nil || pay.TransactionId != nil || pay.DomainEvent.Type != "payment.created" ||
		pay.DomainEvent.Stream != "payment-"+pay.Id.String() || pay.DomainEvent.AggregateId != pay.Id.String() || pay.DomainEvent.EventId == uuid.Nil {
		t.Fatalf("payment = %+v", pay)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "1000.00" || pe != "0.00" {
		t.Fatalf("before approval: available %s pending %s; nothing should move", av, pe)
	}
	// Approving asks for a signed approval in the app, naming the payment.
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
	if len(up.Methods) != 1 || up.Methods[0] != "app" {
		t.Fatalf("methods = %v, want app only", up.Methods)
	}
	var c api.Challenge
	for _, x := range inbox(t, s, p.app) {
		if x.ApprovalId != nil && *x.ApprovalId == *pay.ApprovalRequestId {
			c = x
		}
	}
	if c.Binding != "tx_signed" || c.Kind != "payment_approval" || c.StepUpAuthenticationId != nil || c.ActionSummary == nil ||
		!strings.Contains(*c.ActionSummary, "100.00 EUR") || !strings.Contains(*c.ActionSummary, "Müller Maschinenbau GmbH") {
		t.Fatalf("challenge = %+v", c)
	}
	// The authenticator code cannot stand in for the app.
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "totp", "code": code(t, s, p.secret)}).
		ExpectError(t, 400, "invalid_request")
	approve(t, s, p.person, c, *up.MatchCode).ExpectStatus(t, 200)

	after := getPayment(t, s, p.web, pay.Id.String())
	if after.Status != "approved" && after.Status != "processing" || after.TransactionId == nil {
		t.Fatalf("after approval = %+v", after)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "899.00" || pe != "100.00" {
		t.Fatalf("after approval: available %s pending %s, want 899.00 and 100.00", av, pe)
	}
	var x api.Approval
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectStatus(t, 200).Decode(t, &x)
	if x.Status != "approved" || x.DecidedById == nil || x.DecidedById.String() != p.userID {
		t.Fatalf("retry of approve = %+v", x)
	}
	var settled api.Payment
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200).Decode(t, &settled)
	if settled.Status != "completed" {
		t.Fatalf("settled = %+v", settled)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "899.00" || pe != "0.00" {
		t.Fatalf("after settlement: available %s pending %s", av, pe)
	}
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectError(t, 409, "conflict")
}

func TestFailedPaymentIsReversed(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "500.00")
	pay := p.pay(t, s, "200.00")
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	eventually(t, "the rail takes the payment", func() bool { return getPayment(t, s, p.web, pay.Id.String()).Status == "processing" })
	var failed api.Payment
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectStatus(t, 200).Decode(t, &failed)
	if failed.Status != "failed" || failed.RailState == nil || *failed.RailState != "returned" {
		t.Fatalf("failed = %+v", failed)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "500.00" || pe != "0.00" {
		t.Fatalf("after the failure: available %s pending %s, want everything back", av, pe)
	}
	var feed api.TransactionPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions", p.web).ExpectStatus(t, 200).Decode(t, &feed)
	var types []string
	for _, x := range feed.Data {
		types = append(types, string(x.Type)+":"+string(x.Effect.Direction)+":"+x.Effect.Total)
	}
	if strings.Join(types, ",") != "reversal:in:201.00,fee:out:1.00,fiat_outgoing:out:200.00,deposit:in:500.00" &&
		strings.Join(types, ",") != "reversal:in:201.00,fiat_outgoing:out:200.00,fee:out:1.00,deposit:in:500.00" {
		t.Fatalf("feed = %v", types)
	}
}

func TestExecuteRules(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	q := p.quote(t, s, "10.00")
	exec := func(body map[string]any) *apitest.Response { return s.Post(t, "/api/v1/payments/execute", p.web, body) }
	e := exec(map[string]any{"quote_id": q.Id.String()}).ExpectError(t, 400, "invalid_request")
	if len(e.Error.Details) != 2 {
		t.Fatalf("details = %+v, want payout_reason and statement_description", e.Error.Details)
	}
	exec(map[string]any{"quote_id": q.Id.String(), "payout_reason": "PYR999", "statement_description": "x"}).ExpectError(t, 400, "invalid_request")
	exec(map[string]any{"quote_id": q.Id.String(), "payout_reason": "PYR001", "statement_description": strings.Repeat("x", 36)}).ExpectError(t, 400, "invalid_request")
	exec(map[string]any{"quote_id": q.Id.String(), "payout_reason": "PYR001", "statement_description": strings.Repeat("x", 35)}).ExpectStatus(t, 201)
	exec(executeBody(q.Id.String())).ExpectError(t, 422, "quote_already_used")
	late := p.quote(t, s, "10.00")
	advance(t, s, 15*time.Minute)
	p.signInAgain(t, s)
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(late.Id.String())).ExpectError(t, 422, "quote_expired")
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody("5f0c0a4e-0000-4000-8000-000000000000")).ExpectError(t, 404, "not_found")
	// Another organization's quote is not found.
	other := newPayer(t, s, "eve@evil.test", "")
	s.Post(t, "/api/v1/payments/execute", other.web, executeBody(p.quote(t, s, "5.00").Id.String())).ExpectError(t, 404, "not_found")
}

func TestIdempotencyKeyReplaysForADay(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	q := p.quote(t, s, "50.00")
	send := func(body map[string]any, key string) *apitest.Response {
		return s.Do(t, apitest.Request{Method: "POST", Path: "/api/v1/payments/execute", Bearer: p.web, Body: body, Header: map[string]string{"Idempotency-Key": key}})
	}
	first := send(executeBody(q.Id.String()), "inv-118").ExpectStatus(t, 201)
	again := send(executeBody(q.Id.String()), "inv-118").ExpectStatus(t, 201)
	if string(first.Body) != string(again.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("replay differs:\n%s\n%s", first.Body, again.Body)
	}
	other := executeBody(q.Id.String())
	other["statement_description"] = "Another text"
	send(other, "inv-118").ExpectError(t, 422, "idempotency_key_reused")
	var list api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("%d payments, want one", len(list.Data))
	}
	// After 24 hours the key is forgotten: the quote, now used, decides.
	advance(t, s, 24*time.Hour)
	p.signInAgain(t, s)
	send(executeBody(q.Id.String()), "inv-118").ExpectError(t, 422, "quote_already_used")
}

func TestConcurrentReplaysCreateOnePayment(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	q := p.quote(t, s, "50.00")
	var wg sync.WaitGroup
	bodies := make([]string, 16)
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Do(t, apitest.Request{Method: "POST", Path: "/api/v1/payments/execute", Bearer: p.web, Body: executeBody(q.Id.String()),
				Header: map[string]string{"Idempotency-Key": "same-key"}})
			if r.Status != 201 {
				t.Errorf("replay %d: %d %s", i, r.Status, r.Body)
			}
			bodies[i] = string(r.Body)
		}()
	}
	wg.Wait()
	for _, b := range bodies[1:] {
		if b != bodies[0] {
			t.Fatalf("replays disagree:\n%s\n%s", bodies[0], b)
		}
	}
	var list api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 1 || list.PendingCount != 1 {
		t.Fatalf("%d approvals (%d pending), want exactly one", len(list.Data), list.PendingCount)
	}
}

func TestInsufficientFunds(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "100.00")
	big := p.pay(t, s, "100.00") // 101.00 with the fee
	s.Post(t, "/api/v1/approvals/"+big.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "insufficient_funds")
	if len(inbox(t, s, p.app)) != 0 {
		t.Fatal("a challenge was minted though funds fall short")
	}
	// Funds checked again when the app approves: they fell short in between.
	a := p.pay(t, s, "60.00")
	b := p.pay(t, s, "30.00")
	upA := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+a.ApprovalRequestId.String()+"/approve", p.web, nil))
	upB := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+b.ApprovalRequestId.String()+"/approve", p.web, nil))
	s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": "0.01"}).ExpectStatus(t, 201)
	byApproval := map[string]api.Challenge{}
	for _, c := range inbox(t, s, p.app) {
		byApproval[c.ApprovalId.String()] = c
	}
	// b (31.00) first leaves 69.01: enough for a (61.00).
	approve(t, s, p.person, byApproval[b.ApprovalRequestId.String()], *upB.MatchCode).ExpectStatus(t, 200)
	// Spend more so a no longer fits, then approve a in the app.
	c := p.pay(t, s, "40.00")
	p.approveInApp(t, s, c.ApprovalRequestId.String())
	approve(t, s, p.person, byApproval[a.ApprovalRequestId.String()], *upA.MatchCode).ExpectError(t, 422, "insufficient_funds")
	if st := getPayment(t, s, p.web, a.Id.String()).Status; st != "awaiting_approval" {
		t.Fatalf("payment a is %s; the approval should not be recorded", st)
	}
	if st := pollStepUp(t, s, p.web, upA.Id.String()); st.Status != "declined" {
		t.Fatalf("step-up of the refused approval is %+v, want declined", st)
	}
	s.Post(t, "/api/v1/approvals/"+a.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "insufficient_funds")
}

func TestRejectAndCancel(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	rejected := p.pay(t, s, "10.00")
	var x api.Approval
	s.Post(t, "/api/v1/approvals/"+rejected.ApprovalRequestId.String()+"/reject", p.web, map[string]any{"reason": "Wrong supplier"}).ExpectStatus(t, 200).Decode(t, &x)
	if x.Status != "rejected" || getPayment(t, s, p.web, rejected.Id.String()).Status != "rejected" {
		t.Fatalf("rejection = %+v", x)
	}
	s.Post(t, "/api/v1/approvals/"+rejected.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 409, "conflict")

	// Only the initiator cancels, and only while it awaits approval.
	_, adminSecret := addUser(t, s, p.org, "admin@acme.test", "admin", true)
	admin := signInFully(t, s, "admin@acme.test", adminSecret)
	cancelled := p.pay(t, s, "10.00")
	s.Post(t, "/api/v1/payments/"+cancelled.Id.String()+"/cancel", admin, nil).ExpectError(t, 403, "forbidden")
	var c api.Payment
	s.Post(t, "/api/v1/payments/"+cancelled.Id.String()+"/cancel", p.web, nil).ExpectStatus(t, 200).Decode(t, &c)
	if c.Status != "cancelled" {
		t.Fatalf("cancel = %+v", c)
	}
	s.Post(t, "/api/v1/payments/"+cancelled.Id.String()+"/cancel", p.web, nil).ExpectError(t, 409, "conflict")
	s.Post(t, "/api/v1/approvals/"+cancelled.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 409, "conflict")

	// Members initiate but do not approve.
	addUser(t, s, p.org, "member@acme.test", "member", false)
	member := *signIn(t, s, map[string]any{"email": "member@acme.test", "password": password}).Token
	var mine api.Payment
	s.Post(t, "/api/v1/payments/execute", member, executeBody(p.quote(t, s, "5.00").Id.String())).ExpectStatus(t, 201).Decode(t, &mine)
	s.Post(t, "/api/v1/approvals/"+mine.ApprovalRequestId.String()+"/approve", member, nil).ExpectError(t, 403, "forbidden")
	eve := newPayer(t, s, "eve@evil.test", "")
	s.Post(t, "/api/v1/approvals/"+mine.ApprovalRequestId.String()+"/approve", eve.web, nil).ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/payments/"+mine.Id.String(), eve.web).ExpectError(t, 404, "not_found")
	// The initiator may approve their own payment.
	p.approveInApp(t, s, mine.ApprovalRequestId.String())
}

func TestApprovalListAndPendingCount(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	a, b, c := p.pay(t, s, "1.00"), p.pay(t, s, "2.00"), p.pay(t, s, "3.00")
	p.approveInApp(t, s, a.ApprovalRequestId.String())
	s.Post(t, "/api/v1/approvals/"+b.ApprovalRequestId.String()+"/reject", p.web, map[string]any{}).ExpectStatus(t, 200)
	for status, want := range map[string]string{"pending": c.ApprovalRequestId.String(), "approved": a.ApprovalRequestId.String(), "rejected": b.ApprovalRequestId.String()} {
		var l api.ApprovalPage
		s.Get(t, "/api/v1/organizations/"+p.org+"/approvals?status="+status, p.web).ExpectStatus(t, 200).Decode(t, &l)
		if len(l.Data) != 1 || l.Data[0].Id.String() != want || l.PendingCount != 1 || l.Data[0].Kind != "payment" {
			t.Fatalf("%s: %+v", status, l)
		}
	}
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals?status=maybe", p.web).ExpectError(t, 400, "invalid_request")
}

func TestBatchIsApprovedOnce(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	q1, q2 := p.quote(t, s, "100.00"), p.quote(t, s, "200.00")
	var batch api.PaymentBatch
	s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": p.org, "payments": []any{executeBody(q1.Id.String()), executeBody(q2.Id.String())}}).
		ExpectStatus(t, 201).Decode(t, &batch)
	if len(batch.Payments) != 2 || batch.ApprovalRequestId == nil || batch.Status != "pending" {
		t.Fatalf("batch = %+v", batch)
	}
	for _, pay := range batch.Payments {
		if pay.ApprovalRequestId != nil || pay.PaymentBatchId == nil || pay.PaymentBatchId.String() != batch.Id.String() {
			t.Fatalf("batch row = %+v; rows have no approval of their own", pay)
		}
	}
	s.Post(t, "/api/v1/payments/"+batch.Payments[0].Id.String()+"/cancel", p.web, nil).ExpectError(t, 409, "conflict")
	c := p.approveInApp(t, s, batch.ApprovalRequestId.String())
	if c.ActionSummary == nil || !strings.Contains(*c.ActionSummary, "Batch of 2 payments (302.00 EUR debited)") {
		t.Fatalf("batch summary = %v", c.ActionSummary)
	}
	s.Get(t, "/api/v1/payment-batches/"+batch.Id.String(), p.web).ExpectStatus(t, 200).Decode(t, &batch)
	if batch.Status != "approved" {
		t.Fatalf("batch after approval = %+v", batch)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "698.00" || pe != "300.00" {
		t.Fatalf("after the batch: available %s pending %s", av, pe)
	}
	// A batch with one bad row is refused as a whole.
	used := map[string]any{"organization_id": p.org, "payments": []any{executeBody(p.quote(t, s, "1.00").Id.String()), executeBody(q1.Id.String())}}
	s.Post(t, "/api/v1/payment-batches", p.web, used).ExpectError(t, 422, "quote_already_used")
	var approvals api.ApprovalPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/approvals", p.web).ExpectStatus(t, 200).Decode(t, &approvals)
	if approvals.PendingCount != 0 {
		t.Fatal("the refused batch left an approval behind")
	}
}

func TestConcurrentApprovalsNeverOverdraw(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	type pending struct {
		pay api.Payment
		up  api.StepUpChallenge
	}
	var ps []pending
	for range 10 {
		pay := p.pay(t, s, "199.00") // 200.00 each with the fee: five fit
		up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
		ps = append(ps, pending{pay, up})
	}
	byApproval := map[string]api.Challenge{}
	for _, c := range inbox(t, s, p.app) {
		byApproval[c.ApprovalId.String()] = c
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for _, x := range ps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := approve(t, s, p.person, byApproval[x.pay.ApprovalRequestId.String()], *x.up.MatchCode)
			key := ""
			if r.Status == 200 {
				var c api.Challenge
				r.Decode(t, &c)
				key = string(c.Status)
			} else {
				var e apitest.ErrorBody
				r.Decode(t, &e)
				key = e.Error.Type
			}
			mu.Lock()
			answers[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	approved := 0
	for _, x := range ps {
		if st := getPayment(t, s, p.web, x.pay.Id.String()).Status; st != "awaiting_approval" {
			approved++
		}
	}
	av, pe := balance(t, s, p.web, p.org, "EUR")
	if approved != 5 || av != "0.00" || pe != "995.00" {
		t.Fatalf("%d approved, available %s, pending %s; want 5, 0.00, 995.00", approved, av, pe)
	}
	if answers["consumed"] != 5 || answers["insufficient_funds"] != 5 {
		t.Fatalf("answers = %v, want 5 consumed and 5 insufficient_funds", answers)
	}
}

func TestPaymentContactsCheckBankDetails(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	path := "/api/v1/organizations/" + p.org + "/payment-contacts"
	bad := []map[string]any{
		{"name": "X", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013001"},
		{"name": "X", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000", "swift_code": "COBA1EFF"},
		{"name": "X", "currency": "USD", "rail": "fiat", "account_number": "123456789", "aba_code": "021000022"},
		{"name": "X", "currency": "USD", "rail": "fiat", "account_number": "123456789"},
		{"name": "X", "currency": "USD", "rail": "crypto", "network": "ethereum", "crypto_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD"},
		{"name": "X", "currency": "USD", "rail": "crypto", "network": "dogecoin", "crypto_address": "D7Y55"},
		{"name": "X", "currency": "EURO", "rail": "fiat", "iban": "DE89370400440532013000"},
	}
	for _, body := range bad {
		s.Post(t, path, p.web, body).ExpectError(t, 400, "invalid_request")
	}
	s.Post(t, path, p.web, map[string]any{"name": "Acme Inc", "currency": "USD", "rail": "fiat", "account_number": "123456789", "aba_code": "021000021"}).ExpectStatus(t, 201)
	var crypto api.PaymentContact
	s.Post(t, path, p.web, map[string]any{"name": "Vendor DAO", "currency": "USD", "rail": "crypto", "network": "ethereum",
		"crypto_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}).ExpectStatus(t, 201).Decode(t, &crypto)
	if crypto.CryptoAddress == nil || crypto.Iban != nil {
		t.Fatalf("crypto contact = %+v", crypto)
	}
	var list api.PaymentContactPage
	s.Get(t, path+"?limit=2", p.web).ExpectStatus(t, 200).Decode(t, &list)
	s.Get(t, "/api/v1/payment-contacts/"+crypto.Id.String(), p.web).ExpectStatus(t, 200)
	eve := newPayer(t, s, "eve@evil.test", "")
	s.Get(t, "/api/v1/payment-contacts/"+crypto.Id.String(), eve.web).ExpectError(t, 404, "not_found")
	// Crypto payments feed as crypto_outgoing.
	s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": "USD", "amount": "500.00"}).ExpectStatus(t, 201)
	var q api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "crypto", "payment_contact_id": crypto.Id.String(),
		"source_currency": "USD", "amount": "100.00", "amount_side": "receive"}).ExpectStatus(t, 201).Decode(t, &q)
	if q.Fee != moneyOf("1.00", "USD") || q.Destination != moneyOf("100.00", "USD") {
		t.Fatalf("crypto quote = %+v", q)
	}
	var pay api.Payment
	s.Post(t, "/api/v1/payments/execute", p.web, map[string]any{"quote_id": q.Id.String()}).ExpectStatus(t, 201).Decode(t, &pay)
	if pay.Rail != "crypto" {
		t.Fatalf("payment = %+v", pay)
	}
}

func TestQuotesConvertCurrencies(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	var c api.PaymentContact
	s.Post(t, "/api/v1/organizations/"+p.org+"/payment-contacts", p.web, map[string]any{"name": "Tokyo KK", "currency": "JPY", "rail": "fiat",
		"account_number": "1234567", "swift_code": "MHCBJPJT"}).ExpectStatus(t, 201).Decode(t, &c)
	var q api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": c.Id.String(),
		"source_currency": "EUR", "amount": "100.00", "amount_side": "send"}).ExpectStatus(t, 201).Decode(t, &q)
	if q.Destination.Currency != "JPY" || strings.Contains(q.Destination.Amount, ".") || q.Source != moneyOf("100.00", "EUR") {
		t.Fatalf("quote = %+v", q)
	}
	var r api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": c.Id.String(),
		"source_currency": "EUR", "amount": "10000", "amount_side": "receive"}).ExpectStatus(t, 201).Decode(t, &r)
	if r.Destination != moneyOf("10000", "JPY") || r.Source.Currency != "EUR" {
		t.Fatalf("receive quote = %+v", r)
	}
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": c.Id.String(),
		"source_currency": "EUR", "amount": "100.5", "amount_side": "receive"}).ExpectError(t, 400, "invalid_request")
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "crypto", "payment_contact_id": c.Id.String(),
		"source_currency": "EUR", "amount": "100", "amount_side": "send"}).ExpectError(t, 400, "invalid_request")
}

// TestTransactionFeedPagination walks the feed page by page (docs/api.md, Pagination).
func TestTransactionFeedPagination(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	deposit := func(amt string) {
		s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": amt}).ExpectStatus(t, 201)
	}
	for i := 1; i <= 5; i++ {
		deposit(fmt.Sprintf("%d.00", i))
	}
	advance(t, s, 24*time.Hour)
	p.signInAgain(t, s)
	for i := 6; i <= 7; i++ {
		deposit(fmt.Sprintf("%d.00", i))
	}
	day1 := now(t, s).Add(-24 * time.Hour).Format(time.DateOnly)

	walk := func(query string) []string {
		var totals []string
		path := "/api/v1/organizations/" + p.org + "/transactions?" + query
		for pages := 0; ; pages++ {
			var f api.TransactionPage
			s.Get(t, path, p.web).ExpectStatus(t, 200).Decode(t, &f)
			for _, x := range f.Data {
				totals = append(totals, x.Effect.Total)
			}
			if !f.HasMore {
				if f.NextCursor != nil {
					t.Fatal("last page carries a next_cursor")
				}
				return totals
			}
			if pages > 10 || len(f.Data) == 0 {
				t.Fatal("the walk does not end")
			}
			path = "/api/v1/organizations/" + p.org + "/transactions?" + query + "&cursor=" + url.QueryEscape(*f.NextCursor)
		}
	}
	if got := strings.Join(walk("limit=2"), " "); got != "7.00 6.00 5.00 4.00 3.00 2.00 1.00" {
		t.Fatalf("whole feed newest first = %s", got)
	}
	if got := strings.Join(walk("limit=2&date_start="+day1+"&date_end="+day1), " "); got != "5.00 4.00 3.00 2.00 1.00" {
		t.Fatalf("first day only = %s", got)
	}
	if got := strings.Join(walk("limit=3&type=deposit&date_start="+now(t, s).Format(time.DateOnly)), " "); got != "7.00 6.00" {
		t.Fatalf("second day = %s", got)
	}
	// A cursor is bound to its filters.
	var f api.TransactionPage
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions?limit=2&date_end="+day1, p.web).ExpectStatus(t, 200).Decode(t, &f)
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions?limit=2&cursor="+url.QueryEscape(*f.NextCursor), p.web).ExpectError(t, 400, "invalid_cursor")
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions?date_start=yesterday", p.web).ExpectError(t, 400, "invalid_request")
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions?type=gift", p.web).ExpectError(t, 400, "invalid_request")
	// One transaction, and never another organization's.
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions/"+f.Data[0].Id.String(), p.web).ExpectStatus(t, 200)
	eve := newPayer(t, s, "eve@evil.test", "")
	s.Get(t, "/api/v1/organizations/"+eve.org+"/transactions/"+f.Data[0].Id.String(), eve.web).ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/organizations/"+p.org+"/transactions", eve.web).ExpectError(t, 404, "not_found")
}

// moneyOf is an amount in a currency, as the API writes it.
func moneyOf(amount, currency string) api.Money {
	return api.Money{Amount: amount, Currency: currency}
}
