package e2e_test

import (
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Expense bindings (docs/api.md, Expenses): which transactions can be
// bound, that a transaction belongs to at most one expense even when two
// binds race, what totals add up to, and the expense every approved card
// purchase files for its cardholder.

func TestCardPurchaseFilesAPendingExpenseForTheCardholder(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "1000.00")
	c := cardFor(t, s, o.id, o.alice.id, 1000)

	row := expectApproved(t, authorize(t, s, c.Id.String(), "20.00", "EUR", "online", "purchase"), "out", "21.67")
	today := now(t, s).UTC().Format("2006-01-02")
	filed := listExpenses(t, s, o.alice.token, o.id, "").Data
	if len(filed) != 1 {
		t.Fatalf("%d expenses after a purchase, want 1", len(filed))
	}
	e := filed[0]
	if e.Status != "pending" || e.CreatedBy.Id.String() != o.alice.id || deref(e.BusinessName) != merchant || deref(e.TransactionDate) != today ||
		deref(e.BillAmount) != "20.00" || deref(e.BillCurrency) != "EUR" || e.Category != nil {
		t.Fatalf("filed expense: %+v", e)
	}
	if len(e.Bindings) != 1 || e.Bindings[0].TargetType != "card_transaction" || e.Bindings[0].TargetId != row.Id ||
		deref(e.Bindings[0].TransactionId) != row.Id.String() {
		t.Fatalf("filed expense's binding: %+v", e.Bindings)
	}
	// Bound: totals.bill is the transaction's, in USD, not the bill's.
	if len(e.Totals.Bill) != 1 || e.Totals.Bill[0] != moneyOf("21.67", "USD") {
		t.Fatalf("totals: %+v", e.Totals)
	}
	// The feed row the binding names is the purchase.
	var tx api.Transaction
	s.Get(t, "/api/v1/organizations/"+o.id+"/transactions/"+row.Id.String(), o.alice.token).ExpectStatus(t, 200).Decode(t, &tx)
	if tx.Type != "card_transaction" {
		t.Fatalf("bound row: %+v", tx)
	}
	// Its transaction is taken: binding it elsewhere is a conflict.
	other := completeDraft(t, s, o.alice.token, o.id)
	bind(t, s, o.alice.token, other.Id.String(), row.Id.String(), "card_transaction").ExpectError(t, 409, "conflict")

	// The first edit makes it working; it can then be submitted.
	if got := expectExpenseStatus(t, patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"category": "meals"}), "working"); deref(got.Category) != "meals" {
		t.Fatalf("edited: %+v", got)
	}
	expectExpenseStatus(t, moveExpense(t, s, o.alice.token, e.Id.String(), "submit"), "submitted")

	// A pending expense can be submitted as filed once complete, and an
	// edit by an owner makes it working too.
	purchase(t, s, c.Id.String(), "5.00")
	p := listExpenses(t, s, o.owner.token, o.id, "status=pending").Data
	if len(p) != 1 {
		t.Fatalf("%d pending, want 1", len(p))
	}
	moveExpense(t, s, o.alice.token, p[0].Id.String(), "submit").ExpectError(t, 422, "expense_incomplete")
	expectExpenseStatus(t, patchExpense(t, s, o.owner.token, p[0].Id.String(), map[string]any{"category": "office"}), "working")

	// Refunds, declines and organization cards file nothing.
	before := len(listExpenses(t, s, o.owner.token, o.id, "").Data)
	authorize(t, s, c.Id.String(), "5.00", "USD", "online", "refund")
	expectDecline(t, purchase(t, s, c.Id.String(), "5000.00"), "limit_exceeded")
	orgCard := issueCard(t, s, o.id, map[string]any{"monthly_limit": 100})
	purchase(t, s, orgCard.Id.String(), "1.00")
	if after := len(listExpenses(t, s, o.owner.token, o.id, "").Data); after != before {
		t.Fatalf("%d expenses, want still %d", after, before)
	}
	// Bob sees none of Alice's.
	if n := len(listExpenses(t, s, o.bob.token, o.id, "").Data); n != 0 {
		t.Fatalf("bob sees %d expenses", n)
	}
}

func TestExpenseBindingTargetsAndTotals(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	other := newCardOwner(t, s, "globex.test")
	deposit(t, s, other.id, "USD", "100.00")
	tok := p.web
	e := createExpense(t, s, tok, p.org, map[string]any{"bill_amount": "99.00", "bill_currency": "GBP", "local_amount": "5", "local_currency": "EUR"})

	// Card transactions of the organization, by their feed row.
	deposit(t, s, p.org, "USD", "1000.00")
	a := bindable(t, s, p.org, "10.25")
	b := bindable(t, s, p.org, "4.75")
	var got api.Expense
	bind(t, s, tok, e.Id.String(), a, "card_transaction").ExpectStatus(t, 200).Decode(t, &got)
	if got.Status != "draft" || len(got.Bindings) != 1 || got.Totals.Bill[0] != moneyOf("10.25", "USD") || len(got.Totals.Bill) != 1 ||
		got.Totals.Local[0] != moneyOf("5.00", "EUR") {
		t.Fatalf("one binding: %+v", got)
	}
	bind(t, s, tok, e.Id.String(), b, "card_transaction").ExpectStatus(t, 200).Decode(t, &got)
	if len(got.Bindings) != 2 || got.Totals.Bill[0] != moneyOf("15.00", "USD") {
		t.Fatalf("two bindings: %+v", got)
	}

	// A card refund counts negative (a refund needs the month's purchases behind it).
	c := issueCard(t, s, p.org, map[string]any{"monthly_limit": 1000})
	expectApproved(t, purchase(t, s, c.Id.String(), "3.00"), "out", "3.00")
	refund := expectApproved(t, authorize(t, s, c.Id.String(), "3.00", "USD", "online", "refund"), "in", "3.00")
	bind(t, s, tok, e.Id.String(), refund.Id.String(), "card_transaction").ExpectStatus(t, 200).Decode(t, &got)
	if got.Totals.Bill[0] != moneyOf("12.00", "USD") {
		t.Fatalf("with a refund: %+v", got.Totals)
	}

	// A payment, by its id or its feed row's; its sent amount counts, in its currency.
	pay := p.pay(t, s, "100.00")
	bind(t, s, tok, e.Id.String(), pay.Id.String(), "fiat_outgoing").ExpectStatus(t, 200).Decode(t, &got)
	if len(got.Bindings) != 4 || got.Bindings[3].TargetId != pay.Id || got.Bindings[3].TransactionId != nil {
		t.Fatalf("payment awaiting approval: %+v", got.Bindings)
	}
	if len(got.Totals.Bill) != 2 || got.Totals.Bill[0] != moneyOf("100.00", "EUR") || got.Totals.Bill[1] != moneyOf("12.00", "USD") {
		t.Fatalf("totals sorted by currency: %+v", got.Totals.Bill)
	}
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	approved := getPayment(t, s, tok, pay.Id.String())
	got = getExpense(t, s, tok, e.Id.String())
	if approved.TransactionId == nil || deref(got.Bindings[3].TransactionId) != approved.TransactionId.String() {
		t.Fatalf("approved payment's feed row %v, binding %+v", approved.TransactionId, got.Bindings[3])
	}
	bind(t, s, tok, e.Id.String(), approved.TransactionId.String(), "fiat_outgoing").ExpectError(t, 409, "conflict") // the same payment
	pay2 := p.pay(t, s, "1.00")
	p.approveInApp(t, s, pay2.ApprovalRequestId.String())
	row2 := getPayment(t, s, tok, pay2.Id.String()).TransactionId.String()
	bind(t, s, tok, e.Id.String(), row2, "fiat_outgoing").ExpectStatus(t, 200).Decode(t, &got)
	if got.Bindings[4].TargetId != pay2.Id || deref(got.Bindings[4].TransactionId) != row2 || got.Totals.Bill[0] != moneyOf("101.00", "EUR") {
		t.Fatalf("bound by feed row: %+v totals %+v", got.Bindings[4], got.Totals)
	}
	bind(t, s, tok, e.Id.String(), pay2.Id.String(), "fiat_outgoing").ExpectError(t, 409, "conflict")

	// Not found: another type, another organization's, unknown ids, feed
	// rows of other kinds, and every internal transfer (none exist yet).
	foreignRow := bindable(t, s, other.id, "1.00")
	pay3 := p.pay(t, s, "2.00")
	for _, tc := range []struct{ id, kind string }{
		{pay3.Id.String(), "card_transaction"},
		{pay3.Id.String(), "crypto_outgoing"},
		{bindable(t, s, p.org, "1.00"), "fiat_outgoing"},
		{foreignRow, "card_transaction"},
		{uuid.NewString(), "card_transaction"},
		{uuid.NewString(), "fiat_outgoing"},
		{uuid.NewString(), "internal_transfer"},
		{a, "internal_transfer"},
		{newestFeedRow(t, s, tok, p.org, "deposit"), "card_transaction"},
		{newestFeedRow(t, s, tok, p.org, "fee"), "fiat_outgoing"},
	} {
		bind(t, s, tok, e.Id.String(), tc.id, tc.kind).ExpectError(t, 404, "not_found")
	}
	bind(t, s, other.owner.token, e.Id.String(), foreignRow, "card_transaction").ExpectError(t, 404, "not_found")

	// Bad bodies.
	for _, bad := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"target_type": "card_transaction"}, "target_id"},
		{map[string]any{"target_id": "nope", "target_type": "card_transaction"}, "target_id"},
		{map[string]any{"target_id": a}, "target_type"},
		{map[string]any{"target_id": a, "target_type": "deposit"}, "target_type"},
		{map[string]any{"target_id": a, "target_type": "card_transaction", "amount": "1"}, "amount"},
	} {
		expectInvalidField(t, s.Post(t, expensePath(e.Id.String(), "bindings"), tok, bad.body), bad.field)
	}

	// Unbinding frees the transaction and the totals follow; nothing bound
	// leaves the bill amount.
	bindingA := got.Bindings[0].Id.String()
	var after api.Expense
	s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e.Id.String(), "bindings/"+bindingA), Bearer: tok}).ExpectStatus(t, 200).Decode(t, &after)
	if len(after.Bindings) != 4 || after.Totals.Bill[1] != moneyOf("1.75", "USD") {
		t.Fatalf("after unbinding: %+v", after.Totals)
	}
	s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e.Id.String(), "bindings/"+bindingA), Bearer: tok}).ExpectError(t, 404, "not_found")
	e2 := createExpense(t, s, tok, p.org, nil)
	bind(t, s, tok, e2.Id.String(), a, "card_transaction").ExpectStatus(t, 200)
	s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e2.Id.String(), "bindings/"+after.Bindings[0].Id.String()), Bearer: tok}).ExpectError(t, 404, "not_found")
	left := after.Bindings
	after = api.Expense{}
	for _, bd := range left {
		s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e.Id.String(), "bindings/"+bd.Id.String()), Bearer: tok}).ExpectStatus(t, 200).Decode(t, &after)
	}
	if len(after.Bindings) != 0 || len(after.Totals.Bill) != 1 || after.Totals.Bill[0] != moneyOf("99.00", "GBP") {
		t.Fatalf("nothing bound: %+v", after)
	}
}

// newestFeedRow is the id of the newest feed row of org of kind.
func newestFeedRow(t *testing.T, s *apitest.Server, token, org, kind string) string {
	t.Helper()
	var page api.TransactionPage
	s.Get(t, "/api/v1/organizations/"+org+"/transactions?type="+kind, token).ExpectStatus(t, 200).Decode(t, &page)
	if len(page.Data) == 0 {
		t.Fatalf("no %s row in the feed", kind)
	}
	return page.Data[0].Id.String()
}

// TestConcurrentBindsOfOneTransaction: ten expenses bind one transaction at
// once; exactly one wins, the others are conflicts.
func TestConcurrentBindsOfOneTransaction(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	target := bindable(t, s, o.id, "9.99")
	const n = 10
	ids := make([]string, n)
	for i := range ids {
		ids[i] = createExpense(t, s, o.owner.token, o.id, nil).Id.String()
	}
	got := answersAtOnce(t, s, n, func(i int) apitest.Request {
		return apitest.Request{Method: "POST", Path: expensePath(ids[i], "bindings"), Bearer: o.owner.token,
			Body: map[string]any{"target_id": target, "target_type": "card_transaction"}}
	}, byStatus)
	if got["200"] != 1 || got["409"] != n-1 {
		t.Fatalf("answers %v, want one 200 and %d 409", got, n-1)
	}
	bound := 0
	for _, id := range ids {
		bound += len(getExpense(t, s, o.owner.token, id).Bindings)
	}
	if bound != 1 {
		t.Fatalf("%d bindings of one transaction", bound)
	}
}

// TestConcurrentMovesOfOneExpense: submits, approvals and rejections of one
// expense at once: exactly one of each kind succeeds.
func TestConcurrentMovesOfOneExpense(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	e := completeDraft(t, s, o.alice.token, o.id)
	bind(t, s, o.alice.token, e.Id.String(), bindable(t, s, o.id, "1.00"), "card_transaction").ExpectStatus(t, 200)
	race := func(token string, actions ...string) map[string]int {
		return answersAtOnce(t, s, len(actions), func(i int) apitest.Request {
			var body any
			if actions[i] == "reject" {
				body = map[string]any{}
			}
			return apitest.Request{Method: "POST", Path: expensePath(e.Id.String(), actions[i]), Bearer: token, Body: body}
		}, func(i int, r *apitest.Response) string { return fmt.Sprintf("%s %d", actions[i], r.Status) })
	}
	if got := race(o.alice.token, "submit", "submit", "submit", "submit"); got["submit 200"] != 1 || got["submit 409"] != 3 {
		t.Fatalf("submits: %v", got)
	}
	got := race(o.owner.token, "approve", "approve", "reject", "reject")
	if got["approve 200"]+got["reject 200"] != 1 || got["approve 409"]+got["reject 409"] != 3 {
		t.Fatalf("decisions: %v", got)
	}
}

// TestExpenseTotalsNeverOverflow: payments of 900000000000000.00 EUR
// bound to one expense: the sum of 103 of them is beyond what int64 minor
// units hold, so that binding is refused with nothing stored, and the
// totals shown are the exact sum of the others.
func TestExpenseTotalsNeverOverflow(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	e := createExpense(t, s, p.web, p.org, nil)
	const big = "900000000000000.00"
	for i := 1; ; i++ {
		r := bind(t, s, p.web, e.Id.String(), p.pay(t, s, big).Id.String(), "fiat_outgoing")
		if i < 103 {
			r.ExpectStatus(t, 200)
			continue
		}
		r.ExpectError(t, 422, "unprocessable_entity")
		break
	}
	got := getExpense(t, s, p.web, e.Id.String())
	if len(got.Bindings) != 102 || len(got.Totals.Bill) != 1 || got.Totals.Bill[0] != moneyOf("91800000000000000.00", "EUR") {
		t.Fatalf("%d bindings, totals %+v", len(got.Bindings), got.Totals.Bill)
	}
}

// TestExpenseBindsCryptoPayments: a payment on the crypto rail binds as
// crypto_outgoing (never as fiat_outgoing), counting the amount sent.
func TestExpenseBindsCryptoPayments(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	var contact api.PaymentContact
	s.Post(t, "/api/v1/organizations/"+p.org+"/payment-contacts", p.web, map[string]any{"name": "Vendor DAO", "currency": "USD",
		"rail": "crypto", "network": "ethereum", "crypto_address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"}).ExpectStatus(t, 201).Decode(t, &contact)
	var q api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "crypto", "payment_contact_id": contact.Id.String(),
		"source_currency": "USD", "amount": "100.00", "amount_side": "receive"}).ExpectStatus(t, 201).Decode(t, &q)
	var pay api.Payment
	s.Post(t, "/api/v1/payments/execute", p.web, map[string]any{"quote_id": q.Id.String()}).ExpectStatus(t, 201).Decode(t, &pay)

	e := createExpense(t, s, p.web, p.org, nil)
	bind(t, s, p.web, e.Id.String(), pay.Id.String(), "fiat_outgoing").ExpectError(t, 404, "not_found")
	var got api.Expense
	bind(t, s, p.web, e.Id.String(), pay.Id.String(), "crypto_outgoing").ExpectStatus(t, 200).Decode(t, &got)
	if len(got.Bindings) != 1 || got.Bindings[0].TargetType != "crypto_outgoing" || got.Bindings[0].TransactionId != nil ||
		len(got.Totals.Bill) != 1 || got.Totals.Bill[0] != moneyOf("100.00", "USD") {
		t.Fatalf("crypto binding: %+v", got)
	}
}
