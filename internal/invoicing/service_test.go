package invoicing_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var day = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// books is an organization that invoices: its owner, an admin and a
// member, one billing contact, and another organization with an owner.
type books struct {
	svc                  *invoicing.Service
	org                  organization.Organization
	owner, admin, member actor.Actor
	contact              invoicing.Contact
	other                organization.Organization
	outsider             actor.Actor
}

func newBooks(t *testing.T, d *db.DB) books {
	t.Helper()
	b := books{svc: &invoicing.Service{DB: d}}
	b.org = fixture.Organization(t, d, "Acme")
	b.owner = fixture.Join(t, d, b.org.ID, "olu@acme.test", organization.Owner)
	b.admin = fixture.Join(t, d, b.org.ID, "ade@acme.test", organization.Admin)
	b.member = fixture.Join(t, d, b.org.ID, "ada@acme.test", organization.Member)
	b.other = fixture.Organization(t, d, "Globex")
	b.outsider = fixture.Join(t, d, b.other.ID, "hank@globex.test", organization.Owner)
	b.contact = b.newContact(t, b.member, b.org.ID, "Northwind Traders")
	return b
}

func (b books) newContact(t *testing.T, a actor.Actor, orgID uuid.UUID, name string) invoicing.Contact {
	t.Helper()
	r := invoicing.ContactRequest{CompanyName: name, Emails: []string{"billing@northwind.test"}}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := b.svc.CreateContact(context.Background(), a, orgID, r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// request is an invoice to contact in currency with the given lines (price,
// quantity, tax percentage), issued on the test's day and due in 30 days.
func request(contact uuid.UUID, currency string, lines ...[3]string) invoicing.InvoiceRequest {
	r := invoicing.InvoiceRequest{BillingContactID: contact.String(), Currency: currency, IssueDate: "2026-11-23", DueDate: "2026-12-23",
		LineItems: []invoicing.LineItemRequest{}}
	for i, l := range lines {
		r.LineItems = append(r.LineItems, invoicing.LineItemRequest{Description: "Line " + string(rune('A'+i)), Price: l[0], Quantity: l[1], TaxPercentage: l[2]})
	}
	return r
}

// create validates r, as the handler does, and creates the invoice.
func (b books) create(t *testing.T, a actor.Actor, r invoicing.InvoiceRequest) invoicing.Invoice {
	t.Helper()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	inv, err := b.svc.Create(context.Background(), a, b.org.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

// sent is an invoice of amount USD, sent by the owner.
func (b books) sent(t *testing.T, price string) invoicing.Invoice {
	t.Helper()
	inv := b.create(t, b.member, request(b.contact.ID, "USD", [3]string{price, "1", "0"}))
	inv, err := b.svc.Send(context.Background(), b.owner, b.org.ID, inv.ID)
	if err != nil {
		t.Fatal(err)
	}
	return inv
}

func (b books) deposit(t *testing.T, coin, amount string) invoicing.CryptoIncoming {
	t.Helper()
	r := invoicing.DepositRequest{Coin: coin, Amount: amount}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	dep, err := b.svc.Deposit(context.Background(), b.org.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	return dep
}

func (b books) unallocated(t *testing.T, id uuid.UUID) int64 {
	t.Helper()
	ds, err := b.svc.ListDeposits(context.Background(), b.owner, b.org.ID, page.Request{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.ID == id {
			return d.Unallocated
		}
	}
	t.Fatalf("deposit %s is not listed", id)
	return 0
}

// fieldsOf is the fields an invalid_request names, sorted; nil for no error.
func fieldsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	e, ok := apierr.As(err)
	if !ok || e.Type != apierr.InvalidRequest {
		t.Fatalf("%v; want invalid_request", err)
	}
	var out []string
	for _, d := range e.Details.([]apierr.FieldError) {
		out = append(out, d.Field)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func ptr[T any](v T) *T { return &v }

// TestInvoiceRequestsAreCheckedFieldByField: every malformed field of an
// invoice is named, and only those.
func TestInvoiceRequestsAreCheckedFieldByField(t *testing.T) {
	contact := uuid.Must(uuid.NewV7())
	valid := func() invoicing.InvoiceRequest { return request(contact, "USD", [3]string{"10.00", "2", "19"}) }
	for _, c := range []struct {
		name   string
		change func(r *invoicing.InvoiceRequest)
		bad    []string
	}{
		{"valid", func(*invoicing.InvoiceRequest) {}, nil},
		{"no contact", func(r *invoicing.InvoiceRequest) { r.BillingContactID = "" }, []string{"billing_contact_id"}},
		{"a currency in lower case", func(r *invoicing.InvoiceRequest) { r.Currency = "usd" }, []string{"currency"}},
		{"due before issued", func(r *invoicing.InvoiceRequest) { r.DueDate = "2026-11-22" }, []string{"due_date"}},
		{"due the day it is issued", func(r *invoicing.InvoiceRequest) { r.DueDate = r.IssueDate }, nil},
		{"an impossible date", func(r *invoicing.InvoiceRequest) { r.IssueDate = "2026-02-29" }, []string{"issue_date"}},
		{"no lines", func(r *invoicing.InvoiceRequest) { r.LineItems = []invoicing.LineItemRequest{} }, []string{"line_items"}},
		{"lines left out", func(r *invoicing.InvoiceRequest) { r.LineItems = nil }, []string{"line_items"}},
		{"too many lines", func(r *invoicing.InvoiceRequest) {
			r.LineItems = slices.Repeat(r.LineItems, invoicing.MaxLineItems+1)
		}, []string{"line_items"}},
		{"a zero quantity", func(r *invoicing.InvoiceRequest) { r.LineItems[0].Quantity = "0.000" }, []string{"line_items[0].quantity"}},
		{"a negative quantity", func(r *invoicing.InvoiceRequest) { r.LineItems[0].Quantity = "-1" }, []string{"line_items[0].quantity"}},
		{"tax above 100%", func(r *invoicing.InvoiceRequest) { r.LineItems[0].TaxPercentage = "100.0001" }, []string{"line_items[0].tax_percentage"}},
		{"tax of exactly 100%", func(r *invoicing.InvoiceRequest) { r.LineItems[0].TaxPercentage = "100.00" }, nil},
		{"a price finer than allowed", func(r *invoicing.InvoiceRequest) { r.LineItems[0].Price = "0.0000001" }, []string{"line_items[0].price"}},
		{"a comment with a trailing space", func(r *invoicing.InvoiceRequest) { r.Comments = ptr("Thanks ") }, []string{"comments"}},
		{"several at once", func(r *invoicing.InvoiceRequest) { r.Currency, r.DueDate = "EURO", "soon" }, []string{"currency", "due_date"}},
	} {
		r := valid()
		c.change(&r)
		if got := fieldsOf(t, r.Validate()); !slices.Equal(got, c.bad) {
			t.Errorf("%s: invalid fields %v, want %v", c.name, got, c.bad)
		}
	}
	for _, c := range []struct {
		r   invoicing.ContactRequest
		bad []string
	}{
		{invoicing.ContactRequest{CompanyName: "Northwind", Emails: []string{"a@northwind.test"}}, nil},
		{invoicing.ContactRequest{}, []string{"company_name"}},
		{invoicing.ContactRequest{CompanyName: "Northwind", Emails: []string{"Ann <a@northwind.test>"}}, []string{"emails[0]"}},
		{invoicing.ContactRequest{CompanyName: "Northwind", Emails: []string{"a@localhost"}}, []string{"emails[0]"}},
		{invoicing.ContactRequest{CompanyName: "Northwind", Emails: slices.Repeat([]string{"a@n.test"}, invoicing.MaxEmails+1)}, []string{"emails"}},
		{invoicing.ContactRequest{CompanyName: "North\twind", TaxID: ptr("")}, []string{"company_name", "tax_id"}},
	} {
		if got := fieldsOf(t, c.r.Validate()); !slices.Equal(got, c.bad) {
			t.Errorf("%+v: invalid fields %v, want %v", c.r, got, c.bad)
		}
	}
}

// TestAnInvoiceIsDueExactlyItsLines: the amount due is the sum of the
// lines, each priced, taxed and rounded once, half up, in the currency's
// minor units; a total beyond the currency's largest amount is refused and
// nothing is made.
func TestAnInvoiceIsDueExactlyItsLines(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		for _, c := range []struct {
			currency string
			lines    [][3]string
			due      int64
			totals   []int64
		}{
			// 2 × 10.00 + 19% = 23.80; 1000 × 0.0125 = 12.50 (never 1000 × 0.01); 3 × 0.333 + 7.5% = 1.073925 → 1.07.
			{"USD", [][3]string{{"10.00", "2", "19"}, {"0.0125", "1000", "0"}, {"0.333", "3", "7.5"}}, 2380 + 1250 + 107, []int64{2380, 1250, 107}},
			{"JPY", [][3]string{{"105", "1", "10"}}, 116, []int64{116}},    // 115.5 → 116
			{"KWD", [][3]string{{"1.005", "3", "0"}}, 3015, []int64{3015}}, // three decimals
		} {
			inv := b.create(t, b.member, request(b.contact.ID, c.currency, c.lines...))
			var totals []int64
			for _, it := range inv.LineItems {
				totals = append(totals, it.Total)
			}
			if inv.DueAmount != c.due || !slices.Equal(totals, c.totals) || inv.State != invoicing.Draft || inv.Currency != c.currency {
				t.Errorf("%s %v: due %d, lines %v, %s; want %d, %v at draft", c.currency, c.lines, inv.DueAmount, totals, inv.State, c.due, c.totals)
			}
			if inv.CreatedBy == nil || inv.CreatedBy.ID != b.member.UserID {
				t.Errorf("created by %+v; want the member", inv.CreatedBy)
			}
		}
		// 999,999,999 × 999,999,999.00 USD is beyond the largest amount.
		r := request(b.contact.ID, "USD", [3]string{"999999999.00", "999999999", "0"})
		if err := r.Validate(); err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.Create(ctx, b.member, b.org.ID, r); !slices.Equal(fieldsOf(t, err), []string{"line_items[0]"}) {
			t.Errorf("a line beyond the largest amount: %v", err)
		}
		// Two lines each within the limit whose sum is not.
		r = request(b.contact.ID, "USD", [3]string{"999999999.00", "600000", "0"}, [3]string{"999999999.00", "600000", "0"})
		if _, err := b.svc.Create(ctx, b.member, b.org.ID, r); !slices.Equal(fieldsOf(t, err), []string{"line_items"}) {
			t.Errorf("lines summing beyond the largest amount: %v", err)
		}
		if list, err := b.svc.List(ctx, b.owner, b.org.ID, invoicing.InvoiceFilter{}, page.Request{Limit: 10}); err != nil || len(list) != 3 {
			t.Errorf("after the refusals the list holds %d invoices, %v; want the 3 made", len(list), err)
		}
	})
}

// TestInvoiceMovesFollowTheirStatesAndRoles: each move goes from one state
// to one other, any other state is conflict; a member drafts, edits and
// submits, only owners and admins approve, return, send and finalize; a
// draft alone can be edited.
func TestInvoiceMovesFollowTheirStatesAndRoles(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		inv := b.create(t, b.member, request(b.contact.ID, "EUR", [3]string{"100.00", "1", "0"}))
		id, state := inv.ID, inv.State
		for _, m := range []struct {
			name  string
			move  func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (invoicing.Invoice, error)
			by    actor.Actor
			state string // "": refused
			want  apierr.Type
		}{
			{"approve a draft", b.svc.Approve, b.owner, "", apierr.Conflict},
			{"finalize a draft", b.svc.Finalize, b.owner, "", apierr.Conflict},
			{"send a draft as a member", b.svc.Send, b.member, "", apierr.Forbidden},
			{"submit", b.svc.Submit, b.member, invoicing.AwaitingApproval, ""},
			{"submit again", b.svc.Submit, b.member, "", apierr.Conflict},
			{"approve as a member", b.svc.Approve, b.member, "", apierr.Forbidden},
			{"return", b.svc.Return, b.admin, invoicing.Draft, ""},
			{"submit once more", b.svc.Submit, b.member, invoicing.AwaitingApproval, ""},
			{"approve", b.svc.Approve, b.admin, invoicing.Sent, ""},
			{"return a sent invoice", b.svc.Return, b.owner, "", apierr.Conflict},
			{"deallocate an unpaid invoice", b.svc.Deallocate, b.owner, "", apierr.Conflict},
			{"finalize as a member", b.svc.Finalize, b.member, "", apierr.Forbidden},
			{"finalize", b.svc.Finalize, b.owner, invoicing.Finalized, ""},
			{"send a finalized invoice", b.svc.Send, b.owner, "", apierr.Conflict},
		} {
			clk.Advance(time.Minute)
			got, err := m.move(ctx, m.by, b.org.ID, id)
			if m.state == "" {
				if !apierr.Is(err, m.want) {
					t.Fatalf("%s: %v; want %s", m.name, err, m.want)
				}
				if now, _ := b.svc.Get(ctx, b.owner, b.org.ID, id); now.State != state {
					t.Fatalf("%s moved the invoice to %s", m.name, now.State)
				}
				continue
			}
			if err != nil || got.State != m.state {
				t.Fatalf("%s: %+v, %v; want %s", m.name, got.State, err, m.state)
			}
			state = got.State
			if !slices.Equal(got.NextValidStates, invoicing.NextValidStates(m.state)) {
				t.Errorf("%s: next valid states %v", m.name, got.NextValidStates)
			}
			switch m.state {
			case invoicing.AwaitingApproval:
				if got.ApprovalRequestID == nil || got.ApprovalRequester == nil || got.ApprovalRequester.ID != b.member.UserID {
					t.Errorf("%s: approval request %v by %+v; want one by the member", m.name, got.ApprovalRequestID, got.ApprovalRequester)
				}
			case invoicing.Draft:
				if got.ApprovalRequestID != nil || got.ApprovalRequester != nil {
					t.Errorf("%s: the answered request stayed: %v", m.name, got.ApprovalRequestID)
				}
				// A returned draft can be edited again.
				if _, err := b.svc.Update(ctx, b.member, b.org.ID, id, invoicing.InvoicePatch{DueDate: ptr("2026-12-31")}); err != nil {
					t.Errorf("editing the returned draft: %v", err)
				}
			case invoicing.Finalized:
				if got.CompletedAt == nil || !got.CompletedAt.Equal(clk.Now()) {
					t.Errorf("%s: completed at %v; want %v", m.name, got.CompletedAt, clk.Now())
				}
				if _, err := b.svc.Update(ctx, b.owner, b.org.ID, id, invoicing.InvoicePatch{DueDate: ptr("2027-01-31")}); !apierr.Is(err, apierr.Conflict) {
					t.Errorf("editing a finalized invoice: %v; want conflict", err)
				}
			}
		}
	})
}

// TestEditingADraftPricesItAgain: changing lines or currency computes the
// totals again, fields left out keep their values, null clears an optional
// text, and a mix that is invalid together is refused whole.
func TestEditingADraftPricesItAgain(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		r := request(b.contact.ID, "USD", [3]string{"10.00", "3", "0"})
		r.Comments = ptr("Net 30")
		inv := b.create(t, b.member, r)
		lines := []invoicing.LineItemRequest{{Description: "Consulting", Price: "1000", Quantity: "1.5", TaxPercentage: "8"}}
		got, err := b.svc.Update(ctx, b.member, b.org.ID, inv.ID, invoicing.InvoicePatch{Currency: ptr("JPY"), LineItems: &lines,
			Comments: field.Optional[string]{Set: true}})
		if err != nil || got.Currency != "JPY" || got.DueAmount != 1620 || got.Comments != nil || got.DueDate != "2026-12-23" {
			t.Fatalf("edited: %s %d comments %v due %s, %v; want JPY 1620, no comments, the due date kept", got.Currency, got.DueAmount, got.Comments, got.DueDate, err)
		}
		// A unit price finer than the yen is kept; the line's total is rounded once, half up.
		half, err := b.svc.Update(ctx, b.member, b.org.ID, inv.ID, invoicing.InvoicePatch{LineItems: &[]invoicing.LineItemRequest{
			{Description: "Half", Price: "0.5", Quantity: "1", TaxPercentage: "0"}, {Description: "Third", Price: "0.3333", Quantity: "3", TaxPercentage: "0"}}})
		if err != nil || half.DueAmount != 1+1 || half.LineItems[0].Price.String() != "0.5" {
			t.Errorf("half a yen and three thirds: due %d, price %s, %v; want 2 (1 and 0.9999 rounded)", half.DueAmount, half.LineItems[0].Price, err)
		}
		if _, err := b.svc.Update(ctx, b.member, b.org.ID, inv.ID, invoicing.InvoicePatch{DueDate: ptr("2026-11-01")}); !slices.Equal(fieldsOf(t, err), []string{"due_date"}) {
			t.Errorf("a due date before the issue date it is kept with: %v", err)
		}
		deleted := b.newContact(t, b.member, b.org.ID, "Gone Ltd")
		if _, err := b.svc.DeleteContact(ctx, b.admin, b.org.ID, deleted.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.Update(ctx, b.member, b.org.ID, inv.ID, invoicing.InvoicePatch{BillingContactID: ptr(deleted.ID.String())}); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("moving the invoice to a deleted contact: %v; want conflict", err)
		}
		if _, err := b.svc.Create(ctx, b.member, b.org.ID, request(deleted.ID, "USD", [3]string{"1.00", "1", "0"})); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("invoicing a deleted contact: %v; want conflict", err)
		}
	})
}

// TestBillingContactsAreSoftDeletedByManagers: a member adds and edits
// contacts, only owners and admins delete them; deleting twice keeps the
// first deletion; a deleted contact leaves the list, stays readable and can
// no longer change.
func TestBillingContactsAreSoftDeletedByManagers(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		c := b.contact
		got, err := b.svc.UpdateContact(ctx, b.member, b.org.ID, c.ID, invoicing.ContactPatch{TaxID: field.Optional[string]{Set: true, Value: ptr("GB123")},
			Emails: field.Optional[[]string]{Set: true}})
		if err != nil || got.TaxID == nil || *got.TaxID != "GB123" || got.Emails != nil || got.CompanyName != "Northwind Traders" {
			t.Fatalf("updated %+v, %v", got, err)
		}
		if _, err := b.svc.DeleteContact(ctx, b.member, b.org.ID, c.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("a member deleting: %v; want forbidden", err)
		}
		clk.Advance(time.Hour)
		first, err := b.svc.DeleteContact(ctx, b.admin, b.org.ID, c.ID)
		if err != nil || first.DeletedAt == nil || !first.DeletedAt.Equal(clk.Now()) {
			t.Fatalf("deleted %+v, %v", first.DeletedAt, err)
		}
		clk.Advance(time.Hour)
		again, err := b.svc.DeleteContact(ctx, b.owner, b.org.ID, c.ID)
		if err != nil || again.DeletedAt == nil || !again.DeletedAt.Equal(*first.DeletedAt) {
			t.Errorf("deleting again: %v, %v; want the first deletion's time %v", again.DeletedAt, err, first.DeletedAt)
		}
		if list, err := b.svc.ListContacts(ctx, b.member, b.org.ID, page.Request{Limit: 10}); err != nil || len(list) != 0 {
			t.Errorf("list %+v, %v; want the deleted contact gone", list, err)
		}
		if read, err := b.svc.GetContact(ctx, b.member, b.org.ID, c.ID); err != nil || read.DeletedAt == nil {
			t.Errorf("reading the deleted contact: %+v, %v", read, err)
		}
		if _, err := b.svc.UpdateContact(ctx, b.member, b.org.ID, c.ID, invoicing.ContactPatch{TaxID: field.Optional[string]{Set: true}}); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("changing a deleted contact: %v; want conflict", err)
		}
	})
}

// TestAllocationsPayAnInvoiceExactly: credit from a coin deposit is
// assigned to a sent invoice in the invoice's minor units, taken from the
// deposit in the coin's millionths, never beyond what remains due or what
// is left of the deposit, only from a coin of the invoice's currency;
// covering the amount due pays the invoice, and deallocating gives every
// credit back.
func TestAllocationsPayAnInvoiceExactly(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		usdc := b.deposit(t, "USDC", "100.000001")
		eurc := b.deposit(t, "EURC", "500")
		if usdc.Amount != 100000001 || usdc.Unallocated != usdc.Amount {
			t.Fatalf("deposit %+v; want 100.000001 USDC wholly unallocated", usdc)
		}
		if bal, err := ledger.AvailableBalance(ctx, d.Reader(), b.org.ID, "USDC"); err != nil || bal != 100000001 {
			t.Fatalf("USDC balance %d, %v; want the deposit credited", bal, err)
		}
		inv := b.sent(t, "30.00")
		allocate := func(a actor.Actor, dep uuid.UUID, credit string) (invoicing.Allocation, error) {
			r := invoicing.AllocateRequest{CryptoIncomingID: dep.String(), Credit: credit}
			if err := r.Validate(); err != nil {
				return invoicing.Allocation{}, err
			}
			return b.svc.Allocate(ctx, a, b.org.ID, inv.ID, r)
		}
		for _, c := range []struct {
			name, credit string
			by           actor.Actor
			dep          uuid.UUID
			want         apierr.Type
		}{
			{"as a member", "10.00", b.member, usdc.ID, apierr.Forbidden},
			{"from a euro coin", "10.00", b.owner, eurc.ID, apierr.CurrencyMismatch},
			{"finer than cents", "10.001", b.owner, usdc.ID, apierr.InvalidRequest},
			{"nothing", "0", b.owner, usdc.ID, apierr.InvalidRequest},
			{"more than is due", "30.01", b.owner, usdc.ID, apierr.AllocationExceeds},
			{"from an unknown deposit", "1.00", b.owner, uuid.Must(uuid.NewV7()), apierr.NotFound},
		} {
			if _, err := allocate(c.by, c.dep, c.credit); !apierr.Is(err, c.want) {
				t.Errorf("allocating %s %s: %v; want %s", c.credit, c.name, err, c.want)
			}
		}
		clk.Advance(time.Minute)
		first, err := allocate(b.admin, usdc.ID, "10.00")
		if err != nil || first.Credit != 1000 || first.Currency != "USD" || first.Reverses != nil {
			t.Fatalf("first allocation %+v, %v", first, err)
		}
		if got := b.unallocated(t, usdc.ID); got != 90000001 {
			t.Errorf("left of the deposit: %d; want 90.000001 USDC", got)
		}
		if now, _ := b.svc.Get(ctx, b.member, b.org.ID, inv.ID); now.State != invoicing.Sent || now.Allocated != 1000 || now.AcceptedAmount != nil {
			t.Errorf("partly allocated: %s, allocated %d, accepted %v; want still sent", now.State, now.Allocated, now.AcceptedAmount)
		}
		if _, err := allocate(b.owner, usdc.ID, "20.01"); !apierr.Is(err, apierr.AllocationExceeds) {
			t.Errorf("more than remains due: %v; want allocation_exceeds", err)
		}
		if _, err := allocate(b.owner, usdc.ID, "20.00"); err != nil {
			t.Fatal(err)
		}
		paid, _ := b.svc.Get(ctx, b.member, b.org.ID, inv.ID)
		if paid.State != invoicing.Paid || paid.AcceptedAmount == nil || *paid.AcceptedAmount != 3000 || paid.CompletedAt == nil {
			t.Fatalf("covered: %s accepted %v completed %v; want paid 30.00", paid.State, paid.AcceptedAmount, paid.CompletedAt)
		}
		if _, err := allocate(b.owner, usdc.ID, "0.01"); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("allocating to a paid invoice: %v; want conflict", err)
		}
		if got := b.unallocated(t, usdc.ID); got != 70000001 {
			t.Errorf("left of the deposit: %d; want 70.000001 USDC", got)
		}

		if _, err := b.svc.Deallocate(ctx, b.member, b.org.ID, inv.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("a member deallocating: %v; want forbidden", err)
		}
		back, err := b.svc.Deallocate(ctx, b.owner, b.org.ID, inv.ID)
		if err != nil || back.State != invoicing.Sent || back.Allocated != 0 || back.AcceptedAmount != nil || back.CompletedAt != nil {
			t.Fatalf("deallocated: %+v, %v; want sent with nothing allocated", back, err)
		}
		if got := b.unallocated(t, usdc.ID); got != usdc.Amount {
			t.Errorf("left of the deposit after deallocating: %d; want all of %d", got, usdc.Amount)
		}
		entries, err := b.svc.ListAllocations(ctx, b.member, b.org.ID, b.contact.ID, page.Request{Limit: 10})
		if err != nil || len(entries) != 4 {
			t.Fatalf("allocation ledger %+v, %v; want two allocations and their reversals", entries, err)
		}
		var sum int64
		reversed := map[uuid.UUID]bool{}
		for _, e := range entries {
			sum += e.Credit
			if e.Reverses != nil {
				reversed[*e.Reverses] = true
			}
		}
		if sum != 0 || !reversed[first.ID] || len(reversed) != 2 {
			t.Errorf("allocation ledger sums to %d, reverses %v; want 0 with both allocations reversed", sum, reversed)
		}
		// The deposit's coins never left the balance: allocating only names what they paid.
		if bal, _ := ledger.AvailableBalance(ctx, d.Reader(), b.org.ID, "USDC"); bal != 100000001 {
			t.Errorf("USDC balance %d after allocations", bal)
		}
	})
}

// TestAnAllocationNeverTakesMoreThanTheDepositHolds: what is left of a
// deposit bounds every allocation from it, across invoices.
func TestAnAllocationNeverTakesMoreThanTheDepositHolds(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		dep := b.deposit(t, "USDT", "25")
		one, two := b.sent(t, "20.00"), b.sent(t, "20.00")
		r := invoicing.AllocateRequest{CryptoIncomingID: dep.ID.String(), Credit: "20.00"}
		if _, err := b.svc.Allocate(ctx, b.owner, b.org.ID, one.ID, r); err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.Allocate(ctx, b.owner, b.org.ID, two.ID, r); !apierr.Is(err, apierr.AllocationExceeds) {
			t.Fatalf("20.00 from the 5.00 left: %v; want allocation_exceeds", err)
		}
		r.Credit = "5.00"
		if _, err := b.svc.Allocate(ctx, b.owner, b.org.ID, two.ID, r); err != nil {
			t.Fatalf("the 5.00 left: %v", err)
		}
		if got := b.unallocated(t, dep.ID); got != 0 {
			t.Errorf("left of the deposit: %d; want none", got)
		}
		if now, _ := b.svc.Get(ctx, b.owner, b.org.ID, two.ID); now.State != invoicing.Sent || now.Allocated != 500 {
			t.Errorf("second invoice %s with %d allocated; want sent with 5.00", now.State, now.Allocated)
		}
	})
}

// TestAnotherOrganizationsInvoicesAreNotFound: nothing of one organization
// is reached through another, neither by naming it under the other's id nor
// by a person who is not a member.
func TestAnotherOrganizationsInvoicesAreNotFound(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		inv := b.sent(t, "10.00")
		dep := b.deposit(t, "USDC", "10")
		// Globex's own invoice, contact and deposit, for naming under Acme.
		theirs := b.newContact(t, b.outsider, b.other.ID, "Globex Customer")
		theirDep, err := b.svc.Deposit(ctx, b.other.ID, invoicing.DepositRequest{Coin: "USDC", Amount: "10"})
		if err != nil {
			t.Fatal(err)
		}
		// The outsider under Acme's id, and Acme's ids under Globex's.
		checks := map[string]error{}
		_, checks["get as an outsider"] = b.svc.Get(ctx, b.outsider, b.org.ID, inv.ID)
		_, checks["get under another organization"] = b.svc.Get(ctx, b.outsider, b.other.ID, inv.ID)
		_, checks["get by id as an outsider"] = b.svc.GetByID(ctx, b.outsider, inv.ID)
		_, checks["finalize under another organization"] = b.svc.Finalize(ctx, b.outsider, b.other.ID, inv.ID)
		_, checks["update under another organization"] = b.svc.Update(ctx, b.outsider, b.other.ID, inv.ID, invoicing.InvoicePatch{DueDate: ptr("2027-01-01")})
		_, checks["list as an outsider"] = b.svc.List(ctx, b.outsider, b.org.ID, invoicing.InvoiceFilter{}, page.Request{Limit: 10})
		_, checks["another's contact"] = b.svc.GetContact(ctx, b.owner, b.org.ID, theirs.ID)
		_, checks["delete another's contact"] = b.svc.DeleteContact(ctx, b.owner, b.org.ID, theirs.ID)
		_, checks["invoice another's contact"] = b.svc.Create(ctx, b.owner, b.org.ID, request(theirs.ID, "USD", [3]string{"1.00", "1", "0"}))
		_, checks["another's allocation ledger"] = b.svc.ListAllocations(ctx, b.owner, b.org.ID, theirs.ID, page.Request{Limit: 10})
		_, checks["allocate another's deposit"] = b.svc.Allocate(ctx, b.owner, b.org.ID, inv.ID,
			invoicing.AllocateRequest{CryptoIncomingID: theirDep.ID.String(), Credit: "1.00"})
		_, checks["allocate to another's invoice"] = b.svc.Allocate(ctx, b.outsider, b.other.ID, inv.ID,
			invoicing.AllocateRequest{CryptoIncomingID: theirDep.ID.String(), Credit: "1.00"})
		_, checks["list deposits as an outsider"] = b.svc.ListDeposits(ctx, b.outsider, b.org.ID, page.Request{Limit: 10})
		for name, err := range checks {
			if !apierr.Is(err, apierr.NotFound) {
				t.Errorf("%s: %v; want not_found", name, err)
			}
		}
		if got := b.unallocated(t, dep.ID); got != dep.Amount {
			t.Errorf("Acme's deposit changed: %d left", got)
		}
		if now, _ := b.svc.Get(ctx, b.owner, b.org.ID, inv.ID); now.State != invoicing.Sent || now.Allocated != 0 || now.DueDate != "2026-12-23" {
			t.Errorf("Acme's invoice changed: %+v", now)
		}
	})
}

// TestInvoiceListFilters: by state, by contact and by overdue, which turns
// true the day after the due date by the service's clock.
func TestInvoiceListFilters(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		b := newBooks(t, d)
		draft := b.create(t, b.member, request(b.contact.ID, "USD", [3]string{"1.00", "1", "0"}))
		sent := b.sent(t, "2.00")
		second := b.newContact(t, b.member, b.org.ID, "Contoso")
		theirs := b.create(t, b.member, request(second.ID, "USD", [3]string{"3.00", "1", "0"}))
		ids := func(f invoicing.InvoiceFilter) []uuid.UUID {
			t.Helper()
			list, err := b.svc.List(ctx, b.member, b.org.ID, f, page.Request{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var out []uuid.UUID
			for _, inv := range list {
				out = append(out, inv.ID)
			}
			slices.SortFunc(out, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			return out
		}
		sorted := func(xs ...uuid.UUID) []uuid.UUID {
			slices.SortFunc(xs, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
			return xs
		}
		yes, no := true, false
		for _, c := range []struct {
			name string
			f    invoicing.InvoiceFilter
			want []uuid.UUID
		}{
			{"all", invoicing.InvoiceFilter{}, sorted(draft.ID, sent.ID, theirs.ID)},
			{"drafts", invoicing.InvoiceFilter{States: []string{invoicing.Draft}}, sorted(draft.ID, theirs.ID)},
			{"sent or paid", invoicing.InvoiceFilter{States: []string{invoicing.Sent, invoicing.Paid}}, sorted(sent.ID)},
			{"one contact's", invoicing.InvoiceFilter{ContactID: &second.ID}, sorted(theirs.ID)},
			{"overdue on the due date", invoicing.InvoiceFilter{Overdue: &yes}, nil},
		} {
			if c.name == "overdue on the due date" {
				clk.Advance(time.Date(2026, 12, 23, 23, 59, 59, 0, time.UTC).Sub(clk.Now()))
			}
			if got := ids(c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v; want %v", c.name, got, c.want)
			}
		}
		clk.Advance(time.Second)
		if got := ids(invoicing.InvoiceFilter{Overdue: &yes}); !slices.Equal(got, sorted(sent.ID)) {
			t.Errorf("overdue the day after: %v; want the sent invoice", got)
		}
		if got := ids(invoicing.InvoiceFilter{Overdue: &no}); !slices.Equal(got, sorted(draft.ID, theirs.ID)) {
			t.Errorf("not overdue the day after: %v; want the drafts", got)
		}
		if got, _ := b.svc.Get(ctx, b.member, b.org.ID, sent.ID); !got.IsOverdue {
			t.Errorf("the sent invoice read the day after its due date is not overdue")
		}
	})
}
