package e2e_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func TestInvoicingContacts(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "contacts.test")
	other := newCardOwner(t, s, "elsewhere.test")

	e := s.Post(t, orgPath(o.id, "/billing-contacts"), o.alice.token, map[string]any{"company_name": "Initech", "emails": []string{"ok@initech.example", "not-an-address"}}).
		ExpectError(t, http.StatusBadRequest, "invalid_request")
	if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "emails[1]" {
		t.Fatalf("details = %+v, want emails[1]", e.Error.Details)
	}
	s.Post(t, orgPath(o.id, "/billing-contacts"), o.alice.token, map[string]any{"emails": []string{}}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, orgPath(o.id, "/billing-contacts"), o.alice.token, map[string]any{"company_name": "X", "vat": "1"}).ExpectError(t, http.StatusBadRequest, "invalid_request")

	kept := createBillingContact(t, s, o.alice.token, o.id, "Initech")
	gone := createBillingContact(t, s, o.alice.token, o.id, "Globex")
	inv := simpleInvoice(t, s, o.alice.token, o.id, gone.Id.String(), "USD", "10.00", "2025-01-10")

	var patched api.BillingContact
	s.Do(t, apitest.Request{Method: "PATCH", Path: orgPath(o.id, "/billing-contacts/"+kept.Id.String()), Bearer: o.bob.token,
		Body: map[string]any{"emails": nil}}).ExpectStatus(t, 200).Decode(t, &patched)
	if patched.Emails != nil || patched.CompanyName != "Initech" {
		t.Fatalf("patched contact: %+v", patched)
	}

	del := func(token string) *apitest.Response {
		return s.Do(t, apitest.Request{Method: "DELETE", Path: orgPath(o.id, "/billing-contacts/"+gone.Id.String()), Bearer: token})
	}
	del(o.bob.token).ExpectError(t, http.StatusForbidden, "forbidden")
	var deleted api.BillingContact
	del(o.admin.token).ExpectStatus(t, 200).Decode(t, &deleted)
	if deleted.DeletedAt == nil {
		t.Fatal("deleted contact has no deleted_at")
	}
	var list api.BillingContactPage
	s.Get(t, orgPath(o.id, "/billing-contacts"), o.bob.token).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].Id != kept.Id {
		t.Fatalf("list after delete: %+v", list.Data)
	}
	var got api.BillingContact
	s.Get(t, orgPath(o.id, "/billing-contacts/"+gone.Id.String()), o.bob.token).ExpectStatus(t, 200).Decode(t, &got)
	if got.DeletedAt == nil {
		t.Fatal("GET of a deleted contact lost deleted_at")
	}
	if emb := getInvoice(t, s, o.bob.token, o.id, inv.Id.String()).BillingContact; emb.Id != gone.Id || emb.DeletedAt == nil {
		t.Fatalf("invoice embeds %+v, want the deleted contact", emb)
	}
	s.Post(t, orgPath(o.id, "/invoices"), o.alice.token, invoiceBody(gone.Id.String(), "USD", "2025-01-10", "2025-01-10", line("A", "1.00", "1", "0"))).
		ExpectError(t, http.StatusConflict, "conflict")
	s.Do(t, apitest.Request{Method: "PATCH", Path: orgPath(o.id, "/billing-contacts/"+gone.Id.String()), Bearer: o.bob.token,
		Body: map[string]any{"company_name": "Again"}}).ExpectError(t, http.StatusConflict, "conflict")

	// Another organization sees none of it, under either path.
	s.Get(t, orgPath(other.id, "/billing-contacts/"+kept.Id.String()), other.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, orgPath(o.id, "/billing-contacts/"+kept.Id.String()), other.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, orgPath(other.id, "/invoices"), other.owner.token, invoiceBody(kept.Id.String(), "USD", "2025-01-10", "2025-01-10", line("A", "1.00", "1", "0"))).
		ExpectError(t, http.StatusNotFound, "not_found")
}

func TestInvoiceLineTotalsRoundHalfUp(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "totals.test")
	c := createBillingContact(t, s, o.owner.token, o.id, "Initech")

	usd := createInvoice(t, s, o.owner.token, o.id, invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31",
		line("Half a cent of tax", "0.05", "1", "10"),  // 0.055 → 0.06
		line("Three at 19%", "10.00", "3", "19"),       // 35.70
		line("Half a cent", "0.01", "0.5", "0"),        // 0.005 → 0.01
		line("Just below half", "0.01", "0.4999", "0"), // 0.004999 → 0.00
	))
	wantTotals := []string{"0.06", "35.70", "0.01", "0.00"}
	for i, it := range usd.LineItems {
		if it.Total != wantTotals[i] {
			t.Errorf("USD line %d total %s, want %s", i, it.Total, wantTotals[i])
		}
	}
	if usd.DueAmount != "35.77" || usd.State != "draft" || usd.Currency != "USD" || usd.AcceptedAmount != nil {
		t.Errorf("USD invoice: due %s state %s currency %s", usd.DueAmount, usd.State, usd.Currency)
	}
	if !slices.Equal(states(usd), []string{"awaiting_approval", "sent"}) {
		t.Errorf("draft next_valid_states %v", usd.NextValidStates)
	}

	jpy := createInvoice(t, s, o.owner.token, o.id, invoiceBody(c.Id.String(), "JPY", "2025-03-01", "2025-03-31",
		line("Tax to a half yen", "105", "1", "10"),  // 115.5 → 116
		line("One and a half", "100", "1.5", "8"),    // 162
		line("Half a yen", "1", "0.5", "0"),          // 0.5 → 1
		line("Fraction of tax", "3", "1", "16.6666"), // 3.499998 → 3
	))
	wantJPY := []string{"116", "162", "1", "3"}
	for i, it := range jpy.LineItems {
		if it.Total != wantJPY[i] {
			t.Errorf("JPY line %d total %s, want %s", i, it.Total, wantJPY[i])
		}
	}
	if jpy.DueAmount != "282" || jpy.LineItems[0].Price != "105" {
		t.Errorf("JPY due_amount %s, want 282", jpy.DueAmount)
	}

	bad := func(body map[string]any, field string) {
		t.Helper()
		e := s.Post(t, orgPath(o.id, "/invoices"), o.owner.token, body).ExpectError(t, http.StatusBadRequest, "invalid_request")
		if !slices.ContainsFunc(e.Error.Details, func(d struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		}) bool {
			return d.Field == field
		}) {
			t.Errorf("details %+v do not name %s", e.Error.Details, field)
		}
	}
	// A unit price carries at most 4 decimal places more than its currency.
	bad(invoiceBody(c.Id.String(), "JPY", "2025-03-01", "2025-03-31", line("A", "10.12345", "1", "0")), "line_items[0].price")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "0.0000001", "1", "0")), "line_items[0].price")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "-0.0125", "1", "0")), "line_items[0].price")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "1.00", "0", "0")), "line_items[0].quantity")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "1.00", "1", "100.5")), "line_items[0].tax_percentage")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-02", "2025-03-01", line("A", "1.00", "1", "0")), "due_date")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31"), "line_items")
	// Beyond the largest USD amount: refused, never wrapped around.
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "999999999999999.99", "999999999", "100")), "line_items[0]")
	bad(invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31", line("A", "999999999999999.99", "1", "0"), line("B", "0.01", "1", "0")), "line_items")
}

// TestInvoiceUnitPricesFinerThanTheCurrency: a unit price may carry up to 4
// decimal places more than the currency; it is kept as sent and only each
// line's total is rounded, once.
func TestInvoiceUnitPricesFinerThanTheCurrency(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "unitprice.test")
	c := createBillingContact(t, s, o.owner.token, o.id, "Initech")

	usd := createInvoice(t, s, o.owner.token, o.id, invoiceBody(c.Id.String(), "USD", "2025-03-01", "2025-03-31",
		line("Per message", "0.0125", "1000", "0"),   // 12.50, not 1000 × 0.01
		line("An eighth", "0.125", "3", "0"),         // 0.375 → 0.38
		line("Finest", "0.000001", "1", "0"),         // 0.00
		line("With tax", "0.0125", "4", "20"),        // 0.06
		line("Trailing zeros", "2.500000", "1", "0"), // 2.50
	))
	wantPrices := []string{"0.0125", "0.125", "0.000001", "0.0125", "2.50"}
	wantTotals := []string{"12.50", "0.38", "0.00", "0.06", "2.50"}
	check := func(inv api.BillingInvoice) {
		t.Helper()
		for i, it := range inv.LineItems {
			if it.Price != wantPrices[i] || it.Total != wantTotals[i] {
				t.Errorf("line %d: price %s total %s, want %s and %s", i, it.Price, it.Total, wantPrices[i], wantTotals[i])
			}
		}
		if inv.DueAmount != "15.44" {
			t.Errorf("due_amount %s, want 15.44 (the sum of the rounded line totals)", inv.DueAmount)
		}
	}
	check(usd)
	check(getInvoice(t, s, o.owner.token, o.id, usd.Id.String()))
	// Editing another field keeps the prices as they were, unrounded.
	var edited api.BillingInvoice
	s.Do(t, apitest.Request{Method: http.MethodPatch, Path: orgPath(o.id, "/invoices/"+usd.Id.String()), Bearer: o.owner.token,
		Body: map[string]any{"comments": "Thanks"}}).ExpectStatus(t, 200).Decode(t, &edited)
	check(edited)

	jpy := createInvoice(t, s, o.owner.token, o.id, invoiceBody(c.Id.String(), "JPY", "2025-03-01", "2025-03-31",
		line("Half a yen each", "0.5", "3", "0"), // 1.5 → 2
	))
	if jpy.LineItems[0].Price != "0.5" || jpy.LineItems[0].Total != "2" || jpy.DueAmount != "2" {
		t.Errorf("JPY line %+v, due %s", jpy.LineItems[0], jpy.DueAmount)
	}
}

func TestInvoiceMovesAndRoles(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "moves.test")
	c := createBillingContact(t, s, o.alice.token, o.id, "Initech")
	inv := simpleInvoice(t, s, o.alice.token, o.id, c.Id.String(), "EUR", "100.00", "2025-05-01")
	if inv.CreatedById == nil || inv.CreatedById.String() != o.alice.id || inv.CreatedBy == nil || deref(inv.CreatedBy.FirstName) != "Alice" {
		t.Fatalf("created_by: %+v %+v", inv.CreatedById, inv.CreatedBy)
	}

	// A member may edit and submit a draft; not send it.
	var edited api.BillingInvoice
	s.Do(t, apitest.Request{Method: "PATCH", Path: orgPath(o.id, "/invoices/"+inv.Id.String()), Bearer: o.bob.token,
		Body: map[string]any{"line_items": []any{line("More work", "50.00", "3", "20")}, "comments": "Thanks"}}).ExpectStatus(t, 200).Decode(t, &edited)
	if edited.DueAmount != "180.00" {
		t.Fatalf("edited due_amount %s, want 180.00", edited.DueAmount)
	}
	invoiceMove(t, s, o.bob.token, o.id, inv.Id.String(), "send").ExpectError(t, http.StatusForbidden, "forbidden")
	invoiceMove(t, s, o.owner.token, o.id, inv.Id.String(), "approve").ExpectError(t, http.StatusConflict, "conflict")
	sub := movedInvoice(t, s, o.alice.token, o.id, inv.Id.String(), "submit", "awaiting_approval")
	if sub.ApprovalRequestId == nil || sub.ApprovalRequester == nil || sub.ApprovalRequester.Id.String() != o.alice.id {
		t.Fatalf("submitted without approval request: %+v", sub)
	}
	if !slices.Equal(states(sub), []string{"draft", "sent"}) {
		t.Errorf("awaiting_approval next_valid_states %v", sub.NextValidStates)
	}
	invoiceMove(t, s, o.alice.token, o.id, inv.Id.String(), "approve").ExpectError(t, http.StatusForbidden, "forbidden")
	invoiceMove(t, s, o.alice.token, o.id, inv.Id.String(), "return").ExpectError(t, http.StatusForbidden, "forbidden")
	invoiceMove(t, s, o.alice.token, o.id, inv.Id.String(), "submit").ExpectError(t, http.StatusConflict, "conflict")
	s.Do(t, apitest.Request{Method: "PATCH", Path: orgPath(o.id, "/invoices/"+inv.Id.String()), Bearer: o.owner.token,
		Body: map[string]any{"comments": nil}}).ExpectError(t, http.StatusConflict, "conflict")
	ret := movedInvoice(t, s, o.admin.token, o.id, inv.Id.String(), "return", "draft")
	if ret.ApprovalRequestId != nil || ret.ApprovalRequester != nil {
		t.Errorf("returned invoice keeps its approval request: %+v", ret)
	}
	movedInvoice(t, s, o.bob.token, o.id, inv.Id.String(), "submit", "awaiting_approval")
	sent := movedInvoice(t, s, o.owner.token, o.id, inv.Id.String(), "approve", "sent")
	if !slices.Equal(states(sent), []string{"finalized"}) || sent.CompletedAt != nil {
		t.Errorf("sent: next_valid_states %v completed_at %v", sent.NextValidStates, sent.CompletedAt)
	}
	for _, m := range []string{"submit", "approve", "return", "send", "deallocate"} {
		invoiceMove(t, s, o.owner.token, o.id, inv.Id.String(), m).ExpectError(t, http.StatusConflict, "conflict")
	}
	invoiceMove(t, s, o.bob.token, o.id, inv.Id.String(), "finalize").ExpectError(t, http.StatusForbidden, "forbidden")
	fin := movedInvoice(t, s, o.admin.token, o.id, inv.Id.String(), "finalize", "finalized")
	if fin.CompletedAt == nil || len(fin.NextValidStates) != 0 {
		t.Errorf("finalized: completed_at %v next %v", fin.CompletedAt, fin.NextValidStates)
	}
	invoiceMove(t, s, o.admin.token, o.id, inv.Id.String(), "finalize").ExpectError(t, http.StatusConflict, "conflict")

	// Straight to sent; a body on a move is refused.
	other := simpleInvoice(t, s, o.bob.token, o.id, c.Id.String(), "EUR", "1.00", "2025-05-02")
	s.Post(t, orgPath(o.id, "/invoices/"+other.Id.String()+"/send"), o.owner.token, map[string]any{"now": true}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	movedInvoice(t, s, o.owner.token, o.id, other.Id.String(), "send", "sent")

	// A paused organization reads but does not change; another organization sees nothing.
	draft := simpleInvoice(t, s, o.bob.token, o.id, c.Id.String(), "EUR", "1.00", "2025-05-03")
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/status", sbx, map[string]any{"status": "paused"}).ExpectStatus(t, 200)
	invoiceMove(t, s, o.owner.token, o.id, draft.Id.String(), "send").ExpectError(t, http.StatusForbidden, "organization_unavailable")
	getInvoice(t, s, o.bob.token, o.id, draft.Id.String())
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/status", sbx, map[string]any{"status": "active"}).ExpectStatus(t, 200)
	stranger := newCardOwner(t, s, "stranger.test")
	s.Get(t, orgPath(stranger.id, "/invoices/"+draft.Id.String()), stranger.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	invoiceMove(t, s, stranger.owner.token, stranger.id, draft.Id.String(), "send").ExpectError(t, http.StatusNotFound, "not_found")
	invoiceMove(t, s, stranger.owner.token, o.id, draft.Id.String(), "send").ExpectError(t, http.StatusNotFound, "not_found")
}

func TestInvoiceOverdueFlipsAtUTCMidnight(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "overdue.test")
	c := createBillingContact(t, s, o.owner.token, o.id, "Initech")
	at := now(t, s).UTC()
	if next := at.Truncate(24 * time.Hour).Add(24 * time.Hour); next.Sub(at) < 10*time.Minute {
		advance(t, s, next.Sub(at)+time.Minute) // keep clear of midnight while setting up
		o.owner.signInAgain(t, s)
		at = now(t, s).UTC()
	}
	today := at.Format(time.DateOnly)
	due := simpleInvoice(t, s, o.owner.token, o.id, c.Id.String(), "USD", "5.00", today)
	movedInvoice(t, s, o.owner.token, o.id, due.Id.String(), "send", "sent")
	draft := simpleInvoice(t, s, o.owner.token, o.id, c.Id.String(), "USD", "5.00", today)

	overdueIDs := func() []string {
		var p api.BillingInvoicePage
		s.Get(t, orgPath(o.id, "/invoices?overdue=true"), o.owner.token).ExpectStatus(t, 200).Decode(t, &p)
		var ids []string
		for _, inv := range p.Data {
			ids = append(ids, inv.Id.String())
		}
		return ids
	}
	if getInvoice(t, s, o.owner.token, o.id, due.Id.String()).IsOverdue || len(overdueIDs()) != 0 {
		t.Fatal("an invoice due today is overdue")
	}
	midnight := at.Truncate(24 * time.Hour).Add(24 * time.Hour)
	advance(t, s, midnight.Sub(at)-2*time.Minute)
	o.owner.signInAgain(t, s) // the session would idle out; signing in moves the clock 30 s
	at = now(t, s).UTC()
	advance(t, s, midnight.Sub(at)-time.Second)
	if getInvoice(t, s, o.owner.token, o.id, due.Id.String()).IsOverdue {
		t.Fatal("overdue a second before UTC midnight")
	}
	advance(t, s, time.Second)
	if !getInvoice(t, s, o.owner.token, o.id, due.Id.String()).IsOverdue {
		t.Fatal("not overdue at UTC midnight")
	}
	if getInvoice(t, s, o.owner.token, o.id, draft.Id.String()).IsOverdue {
		t.Fatal("a draft is overdue")
	}
	expectIDs(t, "overdue=true", overdueIDs(), due.Id.String())
	var notOverdue api.BillingInvoicePage
	s.Get(t, orgPath(o.id, "/invoices?overdue=false"), o.owner.token).ExpectStatus(t, 200).Decode(t, &notOverdue)
	if len(notOverdue.Data) != 1 || notOverdue.Data[0].Id != draft.Id {
		t.Fatalf("overdue=false: %+v", notOverdue.Data)
	}
}

func TestInvoiceListFiltersAndPagination(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "list.test")
	c1 := createBillingContact(t, s, o.owner.token, o.id, "Initech")
	c2 := createBillingContact(t, s, o.owner.token, o.id, "Globex")
	a := simpleInvoice(t, s, o.owner.token, o.id, c1.Id.String(), "USD", "1.00", "2025-02-01")
	b := simpleInvoice(t, s, o.owner.token, o.id, c2.Id.String(), "USD", "1.00", "2025-03-01")
	cc := simpleInvoice(t, s, o.owner.token, o.id, c1.Id.String(), "USD", "1.00", "2025-03-01")
	d := simpleInvoice(t, s, o.owner.token, o.id, c2.Id.String(), "USD", "1.00", "2025-01-15")
	e := simpleInvoice(t, s, o.owner.token, o.id, c1.Id.String(), "USD", "1.00", "2025-04-01")
	movedInvoice(t, s, o.owner.token, o.id, b.Id.String(), "send", "sent")
	movedInvoice(t, s, o.owner.token, o.id, d.Id.String(), "submit", "awaiting_approval")

	walk := func(query string) []string {
		t.Helper()
		var ids []string
		q := query
		for i := 0; i < 10; i++ {
			var p api.BillingInvoicePage
			s.Get(t, orgPath(o.id, "/invoices?limit=2&"+q), o.owner.token).ExpectStatus(t, 200).Decode(t, &p)
			for _, inv := range p.Data {
				ids = append(ids, inv.Id.String())
			}
			if !p.HasMore {
				return ids
			}
			q = query + "&cursor=" + url.QueryEscape(*p.NextCursor)
		}
		t.Fatal("too many pages")
		return nil
	}
	// Newest issue date first; the same date by newest id.
	expectIDs(t, "all", walk(""), e.Id.String(), cc.Id.String(), b.Id.String(), a.Id.String(), d.Id.String())
	expectIDs(t, "draft and sent", walk("state=draft&state=sent"), e.Id.String(), cc.Id.String(), b.Id.String(), a.Id.String())
	expectIDs(t, "awaiting", walk("state=awaiting_approval"), d.Id.String())
	expectIDs(t, "contact 2", walk("billing_contact_id="+c2.Id.String()), b.Id.String(), d.Id.String())
	expectIDs(t, "contact 1 drafts", walk("billing_contact_id="+c1.Id.String()+"&state=draft"), e.Id.String(), cc.Id.String(), a.Id.String())

	var p api.BillingInvoicePage
	s.Get(t, orgPath(o.id, "/invoices?limit=1&state=draft"), o.owner.token).ExpectStatus(t, 200).Decode(t, &p)
	s.Get(t, orgPath(o.id, "/invoices?limit=1&state=sent&cursor="+url.QueryEscape(*p.NextCursor)), o.owner.token).ExpectError(t, http.StatusBadRequest, "invalid_cursor")
	s.Get(t, orgPath(o.id, "/invoices?state=paid&state=open"), o.owner.token).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Get(t, orgPath(o.id, "/invoices?overdue=yes"), o.owner.token).ExpectError(t, http.StatusBadRequest, "invalid_request")
}
