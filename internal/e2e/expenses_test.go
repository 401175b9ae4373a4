package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Expenses (docs/api.md, Expenses): the editable fields, the moves
// between statuses and who may make them, what members and owners see, and
// how organization status bounds all of it.

func expensesPath(org string) string { return "/api/v1/organizations/" + org + "/expenses" }

func expensePath(id, action string) string {
	if action == "" {
		return "/api/v1/expenses/" + id
	}
	return "/api/v1/expenses/" + id + "/" + action
}

// createExpense files a draft through the API and decodes it.
func createExpense(t *testing.T, s *apitest.Server, token, org string, body map[string]any) api.Expense {
	t.Helper()
	var e api.Expense
	s.Post(t, expensesPath(org), token, body).ExpectStatus(t, http.StatusCreated).Decode(t, &e)
	return e
}

func getExpense(t *testing.T, s *apitest.Server, token, id string) api.Expense {
	t.Helper()
	var e api.Expense
	s.Get(t, expensePath(id, ""), token).ExpectStatus(t, 200).Decode(t, &e)
	return e
}

func patchExpense(t *testing.T, s *apitest.Server, token, id string, body any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "PATCH", Path: expensePath(id, ""), Bearer: token, Body: body})
}

func deleteExpense(t *testing.T, s *apitest.Server, token, id string) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(id, ""), Bearer: token})
}

// moveExpense posts a move (submit, approve, reject, mark-paid).
func moveExpense(t *testing.T, s *apitest.Server, token, id, action string) *apitest.Response {
	t.Helper()
	var body any
	if action == "reject" {
		body = map[string]any{}
	}
	return s.Post(t, expensePath(id, action), token, body)
}

// expectStatus decodes an expense answered 200 and checks its status.
func expectExpenseStatus(t *testing.T, r *apitest.Response, status string) api.Expense {
	t.Helper()
	var e api.Expense
	r.ExpectStatus(t, 200).Decode(t, &e)
	if string(e.Status) != status {
		t.Fatalf("status %s, want %s", e.Status, status)
	}
	return e
}

// completeDraft is a draft with everything submit needs but a binding or
// receipt; bind one to submit it.
func completeDraft(t *testing.T, s *apitest.Server, token, org string) api.Expense {
	t.Helper()
	return createExpense(t, s, token, org, map[string]any{"category": "meals", "transaction_date": "2026-01-15",
		"bill_amount": "12.50", "bill_currency": "EUR", "business_name": "Blue Bottle Coffee"})
}

// bindable is a fresh card transaction of org, not bound to any expense:
// a purchase on an organization card (which files no expense).
func bindable(t *testing.T, s *apitest.Server, org, amt string) string {
	t.Helper()
	c := issueCard(t, s, org, map[string]any{"monthly_limit": 1000000, "card_holder_name": "Acme Operations"})
	return expectApproved(t, purchase(t, s, c.Id.String(), amt), "out", amt).Id.String()
}

func bind(t *testing.T, s *apitest.Server, token, expenseID, targetID, targetType string) *apitest.Response {
	t.Helper()
	return s.Post(t, expensePath(expenseID, "bindings"), token, map[string]any{"target_id": targetID, "target_type": targetType})
}

func TestExpenseFieldsAreCreatedReadAndChanged(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")

	// An empty body (or none) files an empty draft of the caller.
	empty := createExpense(t, s, o.alice.token, o.id, map[string]any{})
	if empty.Status != "draft" || empty.OrganizationId.String() != o.id || empty.CreatedBy.Id.String() != o.alice.id ||
		deref(empty.CreatedBy.FirstName) != "Alice" || deref(empty.CreatedBy.LastName) != "Liddell" ||
		empty.Category != nil || empty.BillAmount != nil || empty.TransactionDate != nil || len(empty.Bindings) != 0 ||
		len(empty.Receipts) != 0 || len(empty.Totals.Bill) != 0 || len(empty.Totals.Local) != 0 {
		t.Fatalf("empty draft: %+v", empty)
	}
	var none api.Expense
	s.Do(t, apitest.Request{Method: "POST", Path: expensesPath(o.id), Bearer: o.bob.token}).ExpectStatus(t, 201).Decode(t, &none)
	if none.CreatedBy.Id.String() != o.bob.id || none.CreatedBy.FirstName != nil {
		t.Fatalf("bodiless draft: %+v", none.CreatedBy)
	}

	full := createExpense(t, s, o.alice.token, o.id, map[string]any{"category": "accommodation", "description": "Two nights\nin Vienna",
		"bill_amount": "250.5", "bill_currency": "EUR", "local_amount": "30000", "local_currency": "JPY",
		"business_name": "Hotel Sacher", "business_tax_id": "ATU12345678", "receipt_number": "R-2026-0042", "transaction_date": "2026-01-31"})
	if deref(full.Category) != "accommodation" || deref(full.Description) != "Two nights\nin Vienna" || deref(full.BillAmount) != "250.50" ||
		deref(full.BillCurrency) != "EUR" || deref(full.LocalAmount) != "30000" || deref(full.LocalCurrency) != "JPY" ||
		deref(full.BusinessName) != "Hotel Sacher" || deref(full.BusinessTaxId) != "ATU12345678" ||
		deref(full.ReceiptNumber) != "R-2026-0042" || deref(full.TransactionDate) != "2026-01-31" {
		t.Fatalf("full draft: %+v", full)
	}
	// Nothing bound: totals.bill is the bill amount; totals.local the local one.
	if len(full.Totals.Bill) != 1 || full.Totals.Bill[0] != moneyOf("250.50", "EUR") ||
		len(full.Totals.Local) != 1 || full.Totals.Local[0] != moneyOf("30000", "JPY") {
		t.Fatalf("totals: %+v", full.Totals)
	}
	if got := getExpense(t, s, o.alice.token, full.Id.String()); got.Id != full.Id || deref(got.BusinessName) != "Hotel Sacher" {
		t.Fatalf("read back: %+v", got)
	}

	// A change keeps what it leaves out and clears what it sends null.
	var changed api.Expense
	patchExpense(t, s, o.alice.token, full.Id.String(), map[string]any{"category": "travel_is_not_one"}).ExpectError(t, 400, "invalid_request")
	patchExpense(t, s, o.alice.token, full.Id.String(), map[string]any{"category": "transport", "description": nil,
		"local_amount": nil, "local_currency": nil}).ExpectStatus(t, 200).Decode(t, &changed)
	if deref(changed.Category) != "transport" || changed.Description != nil || changed.LocalAmount != nil || changed.LocalCurrency != nil ||
		deref(changed.BusinessName) != "Hotel Sacher" || changed.Status != "draft" || len(changed.Totals.Local) != 0 {
		t.Fatalf("changed: %+v", changed)
	}
	// The owner and an admin may change a member's expense too.
	patchExpense(t, s, o.admin.token, full.Id.String(), map[string]any{"receipt_number": "R-1"}).ExpectStatus(t, 200)
	patchExpense(t, s, o.owner.token, full.Id.String(), map[string]any{"bill_amount": "1", "bill_currency": "JPY"}).ExpectStatus(t, 200).Decode(t, &changed)
	if deref(changed.BillAmount) != "1" || deref(changed.ReceiptNumber) != "R-1" || changed.Totals.Bill[0] != moneyOf("1", "JPY") {
		t.Fatalf("changed by managers: %+v", changed)
	}

	// Bad fields are refused, naming the field; nothing changes.
	long := strings.Repeat("x", 201)
	for _, bad := range []struct {
		name  string
		body  any
		field string
	}{
		{"unknown category", map[string]any{"category": "travel"}, "category"},
		{"category as a number", map[string]any{"category": 3}, "category"},
		{"amount without currency", map[string]any{"bill_amount": "10.00"}, "bill_currency"},
		{"currency without amount", map[string]any{"local_currency": "EUR"}, "local_amount"},
		{"amount null, currency set", map[string]any{"bill_amount": nil, "bill_currency": "EUR"}, "bill_amount"},
		{"too many decimals", map[string]any{"bill_amount": "10.001", "bill_currency": "EUR"}, "bill_amount"},
		{"decimals for JPY", map[string]any{"bill_amount": "10.5", "bill_currency": "JPY"}, "bill_amount"},
		{"negative amount", map[string]any{"bill_amount": "-1.00", "bill_currency": "EUR"}, "bill_amount"},
		{"zero amount", map[string]any{"local_amount": "0", "local_currency": "EUR"}, "local_amount"},
		{"16 integer digits", map[string]any{"bill_amount": "1234567890123456", "bill_currency": "EUR"}, "bill_amount"},
		{"amount as a number", map[string]any{"bill_amount": 10, "bill_currency": "EUR"}, "bill_amount"},
		{"unknown currency", map[string]any{"bill_amount": "10", "bill_currency": "XXX"}, "bill_currency"},
		{"lowercase currency", map[string]any{"bill_amount": "10", "bill_currency": "eur"}, "bill_currency"},
		{"bad date", map[string]any{"transaction_date": "2026-02-30"}, "transaction_date"},
		{"date with time", map[string]any{"transaction_date": "2026-01-31T10:00:00Z"}, "transaction_date"},
		{"long business name", map[string]any{"business_name": long}, "business_name"},
		{"empty business name", map[string]any{"business_name": ""}, "business_name"},
		{"padded receipt number", map[string]any{"receipt_number": " R-1"}, "receipt_number"},
		{"long tax id", map[string]any{"business_tax_id": strings.Repeat("1", 51)}, "business_tax_id"},
		{"long description", map[string]any{"description": strings.Repeat("d", 1001)}, "description"},
		{"control character", map[string]any{"business_name": "Acme\x1fCorp"}, "business_name"},
		{"unknown field", map[string]any{"status": "approved"}, "status"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			expectInvalidField(t, patchExpense(t, s, o.alice.token, full.Id.String(), bad.body), bad.field)
			expectInvalidField(t, s.Post(t, expensesPath(o.id), o.alice.token, bad.body), bad.field)
		})
	}
	patchExpense(t, s, o.alice.token, full.Id.String(), map[string]any{}).ExpectError(t, 400, "invalid_request")
	if got := getExpense(t, s, o.alice.token, full.Id.String()); deref(got.Category) != "transport" || deref(got.BillAmount) != "1" {
		t.Fatalf("refused changes changed the expense: %+v", got)
	}
}

func TestExpenseMovesAndWhoMayMakeThem(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "1000.00")

	// Submitting needs a category, a date and a binding or receipt.
	e := createExpense(t, s, o.alice.token, o.id, map[string]any{})
	incomplete := moveExpense(t, s, o.alice.token, e.Id.String(), "submit").ExpectError(t, 422, "expense_incomplete")
	for _, want := range []string{"category", "transaction date", "bound transaction or a receipt"} {
		if !strings.Contains(incomplete.Error.Message, want) {
			t.Errorf("incomplete message %q does not name %q", incomplete.Error.Message, want)
		}
	}
	patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"category": "meals", "transaction_date": "2026-01-15"}).ExpectStatus(t, 200)
	if m := moveExpense(t, s, o.alice.token, e.Id.String(), "submit").ExpectError(t, 422, "expense_incomplete").Error.Message; strings.Contains(m, "category") {
		t.Errorf("message %q names the category, which is set", m)
	}
	bind(t, s, o.alice.token, e.Id.String(), bindable(t, s, o.id, "12.00"), "card_transaction").ExpectStatus(t, 200)

	// Only the creator submits; members do not see another's expense.
	moveExpense(t, s, o.owner.token, e.Id.String(), "submit").ExpectError(t, 403, "forbidden")
	moveExpense(t, s, o.bob.token, e.Id.String(), "submit").ExpectError(t, 404, "not_found")
	expectExpenseStatus(t, moveExpense(t, s, o.alice.token, e.Id.String(), "submit"), "submitted")

	// A submitted expense no longer changes, and moves only forward.
	patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"description": "late"}).ExpectError(t, 409, "conflict")
	patchExpense(t, s, o.owner.token, e.Id.String(), map[string]any{"description": "late"}).ExpectError(t, 409, "conflict")
	bind(t, s, o.alice.token, e.Id.String(), bindable(t, s, o.id, "1.00"), "card_transaction").ExpectError(t, 409, "conflict")
	moveExpense(t, s, o.alice.token, e.Id.String(), "submit").ExpectError(t, 409, "conflict")
	moveExpense(t, s, o.owner.token, e.Id.String(), "mark-paid").ExpectError(t, 409, "conflict")
	deleteExpense(t, s, o.alice.token, e.Id.String()).ExpectError(t, 409, "conflict")

	// Owners and admins decide; members may not, not even on their own.
	moveExpense(t, s, o.alice.token, e.Id.String(), "approve").ExpectError(t, 403, "forbidden")
	moveExpense(t, s, o.alice.token, e.Id.String(), "reject").ExpectError(t, 403, "forbidden")
	moveExpense(t, s, o.bob.token, e.Id.String(), "approve").ExpectError(t, 404, "not_found")
	var rejected api.Expense
	s.Post(t, expensePath(e.Id.String(), "reject"), o.admin.token, map[string]any{"reason": "Which client was this for?"}).
		ExpectStatus(t, 200).Decode(t, &rejected)
	if rejected.Status != "rejected" || deref(rejected.RejectionReason) != "Which client was this for?" {
		t.Fatalf("rejected: %+v", rejected)
	}
	moveExpense(t, s, o.owner.token, e.Id.String(), "approve").ExpectError(t, 409, "conflict")
	expectInvalidField(t, s.Post(t, expensePath(e.Id.String(), "reject"), o.owner.token, map[string]any{"reason": strings.Repeat("r", 501)}), "reason")
	expectInvalidField(t, s.Post(t, expensePath(e.Id.String(), "reject"), o.owner.token, map[string]any{"why": "x"}), "why")

	// A rejected expense is changed and submitted again; the reason goes.
	patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"description": "Lunch with Globex"}).ExpectStatus(t, 200)
	if again := expectExpenseStatus(t, moveExpense(t, s, o.alice.token, e.Id.String(), "submit"), "submitted"); again.RejectionReason != nil {
		t.Fatalf("resubmitted keeps the reason: %+v", again)
	}
	expectExpenseStatus(t, moveExpense(t, s, o.owner.token, e.Id.String(), "approve"), "approved")
	moveExpense(t, s, o.owner.token, e.Id.String(), "approve").ExpectError(t, 409, "conflict")
	moveExpense(t, s, o.owner.token, e.Id.String(), "reject").ExpectError(t, 409, "conflict")
	moveExpense(t, s, o.alice.token, e.Id.String(), "mark-paid").ExpectError(t, 403, "forbidden")
	expectExpenseStatus(t, moveExpense(t, s, o.admin.token, e.Id.String(), "mark-paid"), "paid")
	for _, action := range []string{"submit", "approve", "reject", "mark-paid"} {
		who := o.owner.token
		if action == "submit" {
			who = o.alice.token
		}
		moveExpense(t, s, who, e.Id.String(), action).ExpectError(t, 409, "conflict")
	}
	patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"description": "x"}).ExpectError(t, 409, "conflict")

	// An owner may submit and approve their own expense.
	own := completeDraft(t, s, o.owner.token, o.id)
	bind(t, s, o.owner.token, own.Id.String(), bindable(t, s, o.id, "3.00"), "card_transaction").ExpectStatus(t, 200)
	expectExpenseStatus(t, moveExpense(t, s, o.owner.token, own.Id.String(), "submit"), "submitted")
	expectExpenseStatus(t, moveExpense(t, s, o.owner.token, own.Id.String(), "approve"), "approved")

	// Moves take no body.
	s.Post(t, expensePath(own.Id.String(), "mark-paid"), o.owner.token, map[string]any{"when": "now"}).ExpectError(t, 400, "invalid_request")
}

func TestDeletingADraftExpense(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	d := completeDraft(t, s, o.alice.token, o.id)
	target := bindable(t, s, o.id, "5.00")
	bind(t, s, o.alice.token, d.Id.String(), target, "card_transaction").ExpectStatus(t, 200)

	deleteExpense(t, s, o.bob.token, d.Id.String()).ExpectError(t, 404, "not_found")
	var gone api.Expense
	deleteExpense(t, s, o.alice.token, d.Id.String()).ExpectStatus(t, 200).Decode(t, &gone)
	if gone.Id != d.Id || gone.Status != "draft" || len(gone.Bindings) != 1 {
		t.Fatalf("deleted expense as it was: %+v", gone)
	}
	s.Get(t, expensePath(d.Id.String(), ""), o.alice.token).ExpectError(t, 404, "not_found")
	s.Get(t, expensePath(d.Id.String(), ""), o.owner.token).ExpectError(t, 404, "not_found")
	deleteExpense(t, s, o.alice.token, d.Id.String()).ExpectError(t, 404, "not_found")
	if p := listExpenses(t, s, o.owner.token, o.id, ""); len(p.Data) != 0 {
		t.Fatalf("a deleted draft is listed: %+v", p.Data)
	}
	// Its binding went with it: the transaction can be bound again.
	other := completeDraft(t, s, o.bob.token, o.id)
	bind(t, s, o.bob.token, other.Id.String(), target, "card_transaction").ExpectStatus(t, 200)

	// An owner may delete a member's draft; not a filed card expense that is pending.
	d2 := createExpense(t, s, o.bob.token, o.id, nil)
	deleteExpense(t, s, o.owner.token, d2.Id.String()).ExpectStatus(t, 200)
	c := cardFor(t, s, o.id, o.alice.id, 1000)
	purchase(t, s, c.Id.String(), "4.00")
	pending := listExpenses(t, s, o.alice.token, o.id, "status=pending").Data
	if len(pending) != 1 {
		t.Fatalf("%d pending expenses, want the card purchase's", len(pending))
	}
	deleteExpense(t, s, o.alice.token, pending[0].Id.String()).ExpectError(t, 409, "conflict")
}

func TestExpenseVisibilityAcrossMembersAndOrganizations(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	other := newCardOrg(t, s, "globex.test")
	alices := completeDraft(t, s, o.alice.token, o.id)
	bobs := completeDraft(t, s, o.bob.token, o.id)
	foreign := completeDraft(t, s, other.alice.token, other.id)

	// A member sees and changes only their own; owners and admins all.
	getExpense(t, s, o.alice.token, alices.Id.String())
	getExpense(t, s, o.owner.token, bobs.Id.String())
	getExpense(t, s, o.admin.token, alices.Id.String())
	for _, r := range []*apitest.Response{
		s.Get(t, expensePath(bobs.Id.String(), ""), o.alice.token),
		patchExpense(t, s, o.alice.token, bobs.Id.String(), map[string]any{"description": "mine now"}),
		bind(t, s, o.alice.token, bobs.Id.String(), uuid.NewString(), "card_transaction"),
		deleteExpense(t, s, o.alice.token, bobs.Id.String()),
		moveExpense(t, s, o.alice.token, bobs.Id.String(), "submit"),
	} {
		r.ExpectError(t, 404, "not_found")
	}
	expectIDs(t, "alice lists", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "").Data), alices.Id.String())
	expectIDs(t, "alice asks for bob's", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "creator_id="+o.bob.id).Data))
	expectIDs(t, "owner lists", expenseIDs(listExpenses(t, s, o.owner.token, o.id, "").Data), bobs.Id.String(), alices.Id.String())
	expectIDs(t, "owner asks for bob's", expenseIDs(listExpenses(t, s, o.owner.token, o.id, "creator_id="+o.bob.id).Data), bobs.Id.String())

	// Another organization's expenses are not found, whoever asks.
	for _, tok := range []string{o.owner.token, o.alice.token} {
		for _, r := range []*apitest.Response{
			s.Get(t, expensePath(foreign.Id.String(), ""), tok),
			patchExpense(t, s, tok, foreign.Id.String(), map[string]any{"description": "x"}),
			deleteExpense(t, s, tok, foreign.Id.String()),
			moveExpense(t, s, tok, foreign.Id.String(), "approve"),
			s.Get(t, expensesPath(other.id), tok),
			s.Post(t, expensesPath(other.id), tok, map[string]any{}),
		} {
			r.ExpectError(t, 404, "not_found")
		}
	}
	s.Get(t, expensePath(uuid.NewString(), ""), o.owner.token).ExpectError(t, 404, "not_found")
	s.Get(t, expensePath("not-a-uuid", ""), o.owner.token).ExpectError(t, 404, "not_found")
	s.Get(t, expensesPath(o.id), "").ExpectError(t, 401, "not_authenticated")
}

func TestExpensesUnderOrganizationStatus(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	e := completeDraft(t, s, o.alice.token, o.id)
	setStatus := func(status string) {
		s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/status", sbx, map[string]any{"status": status}).ExpectStatus(t, 200)
	}

	// Paused: reads work, every change is refused.
	setStatus("paused")
	getExpense(t, s, o.alice.token, e.Id.String())
	listExpenses(t, s, o.owner.token, o.id, "")
	for _, r := range []*apitest.Response{
		s.Post(t, expensesPath(o.id), o.alice.token, map[string]any{}),
		patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"description": "x"}),
		moveExpense(t, s, o.alice.token, e.Id.String(), "submit"),
		deleteExpense(t, s, o.alice.token, e.Id.String()),
		bind(t, s, o.alice.token, e.Id.String(), uuid.NewString(), "card_transaction"),
		moveExpense(t, s, o.owner.token, e.Id.String(), "approve"),
	} {
		r.ExpectError(t, 403, "organization_unavailable")
	}

	// Banned: reads are refused too.
	setStatus("banned")
	s.Get(t, expensePath(e.Id.String(), ""), o.alice.token).ExpectError(t, 403, "organization_unavailable")
	s.Get(t, expensesPath(o.id), o.owner.token).ExpectError(t, 403, "organization_unavailable")

	setStatus("active")
	patchExpense(t, s, o.alice.token, e.Id.String(), map[string]any{"description": "back"}).ExpectStatus(t, 200)
}
