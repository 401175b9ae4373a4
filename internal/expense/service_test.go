package expense_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/file/filetest"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var day = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// office is an organization with expenses: its owner, two members (Ada
// files the expenses), and another organization with an owner.
type office struct {
	d               *db.DB
	svc             *expense.Service
	files           *file.Service
	org             organization.Organization
	owner, ada, bob actor.Actor
	other           organization.Organization
	outsider        actor.Actor
}

func newOffice(t *testing.T, d *db.DB) office {
	t.Helper()
	files := fixture.Files(t, d)
	o := office{d: d, svc: &expense.Service{DB: d, Files: files}, files: files}
	o.org = fixture.Organization(t, d, "Acme")
	o.owner = fixture.Join(t, d, o.org.ID, "olu@acme.test", organization.Owner)
	o.ada = fixture.Join(t, d, o.org.ID, "ada@acme.test", organization.Member)
	o.bob = fixture.Join(t, d, o.org.ID, "bob@acme.test", organization.Member)
	o.other = fixture.Organization(t, d, "Globex")
	o.outsider = fixture.Join(t, d, o.other.ID, "hank@globex.test", organization.Owner)
	return o
}

// fields decodes body as the handlers do and checks it.
func fields(t *testing.T, body string) expense.Fields {
	t.Helper()
	f, err := decodeFields(t, body)
	if err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return f
}

// create files an expense of the organization by a with the fields of body.
func (o office) create(t *testing.T, a actor.Actor, body string) expense.Expense {
	t.Helper()
	e, err := o.svc.Create(context.Background(), a, o.org.ID, fields(t, body))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// receiptFile is a stored PNG of orgID uploaded by a.
func (o office) receiptFile(t *testing.T, a actor.Actor, orgID uuid.UUID) file.File {
	t.Helper()
	return fixture.StoredFile(t, o.files, a, orgID, "receipt.png", file.PNG, filetest.PNG(4, 4, 8, filetest.RGB))
}

// feedRow records a row of orgID's transactions feed of type typ.
func (o office) feedRow(t *testing.T, orgID uuid.UUID, typ, direction string, minor int64, currency string) uuid.UUID {
	t.Helper()
	ctx := context.Background()
	row, err := db.InTx(ctx, o.d, func(tx *db.Tx) (ledger.Transaction, error) {
		return ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: orgID, Type: typ, Direction: direction, Amount: minor,
			Currency: currency, Description: "Café Sacher"})
	})
	if err != nil {
		t.Fatal(err)
	}
	return row.ID
}

// bindTo binds as internal/flow/binding does for the kinds expense finds
// itself (card transactions, internal transfers): the expense opened for
// the edit, the target found, the binding added, in one transaction.
func (o office) bindTo(ctx context.Context, a actor.Actor, id uuid.UUID, r expense.BindRequest) (expense.Expense, error) {
	return db.InTx(ctx, o.d, func(tx *db.Tx) (expense.Expense, error) {
		ed, err := o.svc.OpenEdit(ctx, tx, a, id)
		if err != nil {
			return expense.Expense{}, err
		}
		b, err := expense.Target(ctx, tx, ed, *r.TargetType, uuid.MustParse(*r.TargetID))
		if err != nil {
			return expense.Expense{}, err
		}
		return o.svc.AddBinding(ctx, tx, ed, b)
	})
}

func bind(target uuid.UUID, typ string) expense.BindRequest {
	id := target.String()
	return expense.BindRequest{TargetID: &id, TargetType: &typ}
}

func receiptOf(f file.File) expense.ReceiptRequest {
	id := f.ID.String()
	return expense.ReceiptRequest{FileID: &id}
}

// TestAMembersExpensesAreTheirsAndTheManagers: a member sees and changes
// only the expenses they filed, owners and admins see all of them, and
// nobody outside the organization finds any.
func TestAMembersExpensesAreTheirsAndTheManagers(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		mine := o.create(t, o.ada, `{"business_name": "Café Sacher", "category": "meals"}`)
		if mine.Status != expense.Draft || mine.CreatedBy.ID != o.ada.UserID || *mine.BusinessName != "Café Sacher" {
			t.Fatalf("created %+v", mine)
		}
		for _, c := range []struct {
			name string
			who  actor.Actor
			sees bool
		}{{"the creator", o.ada, true}, {"the owner", o.owner, true}, {"another member", o.bob, false}, {"an outsider", o.outsider, false}} {
			_, err := o.svc.Get(ctx, c.who, mine.ID)
			if c.sees != (err == nil) || (!c.sees && !apierr.Is(err, apierr.NotFound)) {
				t.Errorf("%s reading: %v; want seen %v, else not_found", c.name, err, c.sees)
			}
			_, err = o.svc.Update(ctx, c.who, mine.ID, fields(t, `{"description": "Lunch"}`))
			if c.sees != (err == nil) || (!c.sees && !apierr.Is(err, apierr.NotFound)) {
				t.Errorf("%s editing: %v; want allowed %v, else not_found", c.name, err, c.sees)
			}
			_, err = o.svc.Delete(ctx, c.who, uuid.Must(uuid.NewV7()))
			if !apierr.Is(err, apierr.NotFound) {
				t.Errorf("%s deleting an unknown expense: %v", c.name, err)
			}
		}
		bobs := o.create(t, o.bob, `{}`)
		list := func(a actor.Actor, f expense.ListFilter) []uuid.UUID {
			t.Helper()
			es, err := o.svc.List(ctx, a, o.org.ID, f, page.Request{Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			var ids []uuid.UUID
			for _, e := range es {
				ids = append(ids, e.ID)
			}
			return ids
		}
		if got := list(o.ada, expense.ListFilter{}); !slices.Equal(got, []uuid.UUID{mine.ID}) {
			t.Errorf("Ada's list %v; want her expense alone", got)
		}
		if got := list(o.ada, expense.ListFilter{CreatorID: &o.bob.UserID}); len(got) != 0 {
			t.Errorf("Ada asking for Bob's: %v; want none", got)
		}
		if got := list(o.owner, expense.ListFilter{}); !slices.Equal(got, []uuid.UUID{bobs.ID, mine.ID}) {
			t.Errorf("the owner's list %v; want both, newest first", got)
		}
		if got := list(o.owner, expense.ListFilter{CreatorID: &o.ada.UserID}); !slices.Equal(got, []uuid.UUID{mine.ID}) {
			t.Errorf("the owner asking for Ada's: %v", got)
		}
		if _, err := o.svc.List(ctx, o.outsider, o.org.ID, expense.ListFilter{}, page.Request{Limit: 10}); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("an outsider listing: %v; want not_found", err)
		}
		if _, err := o.svc.Create(ctx, o.outsider, o.org.ID, fields(t, `{}`)); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("an outsider filing: %v; want not_found", err)
		}
	})
}

// TestSubmittingNeedsWhatBacksTheExpense: the creator alone submits, and
// only an expense with a category, a transaction date and a receipt or a
// bound transaction; then owners and admins decide. A rejected expense
// carries the reason, is the creator's to edit and submit again; an
// approved one is closed to edits and marked paid once.
func TestSubmittingNeedsWhatBacksTheExpense(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		e := o.create(t, o.ada, `{"category": "meals"}`)
		_, err := o.svc.Submit(ctx, o.ada, e.ID)
		if ae, ok := apierr.As(err); !ok || ae.Type != apierr.ExpenseIncomplete ||
			!strings.Contains(ae.Message, "a transaction date") || !strings.Contains(ae.Message, "a bound transaction or a receipt") ||
			strings.Contains(ae.Message, "a category") {
			t.Fatalf("submitting without date or receipt: %v; want expense_incomplete naming both", err)
		}
		if _, err := o.svc.Update(ctx, o.ada, e.ID, fields(t, `{"transaction_date": "2026-11-20"}`)); err != nil {
			t.Fatal(err)
		}
		if _, err := o.svc.Submit(ctx, o.ada, e.ID); !apierr.Is(err, apierr.ExpenseIncomplete) {
			t.Fatalf("submitting without a receipt: %v; want expense_incomplete", err)
		}
		if _, err := o.svc.AddReceipt(ctx, o.ada, e.ID, receiptOf(o.receiptFile(t, o.ada, o.org.ID))); err != nil {
			t.Fatal(err)
		}
		if _, err := o.svc.Submit(ctx, o.owner, e.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("the owner submitting Ada's expense: %v; want forbidden", err)
		}
		if _, err := o.svc.Approve(ctx, o.owner, e.ID); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("approving a draft: %v; want conflict", err)
		}
		if got, err := o.svc.Submit(ctx, o.ada, e.ID); err != nil || got.Status != expense.Submitted {
			t.Fatalf("submitting: %+v, %v", got.Status, err)
		}
		if _, err := o.svc.Update(ctx, o.ada, e.ID, fields(t, `{"description": "late"}`)); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("editing a submitted expense: %v; want conflict", err)
		}
		if _, err := o.svc.Approve(ctx, o.ada, e.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("the creator approving: %v; want forbidden", err)
		}
		reason := "Receipt unreadable"
		got, err := o.svc.Reject(ctx, o.owner, e.ID, expense.RejectRequest{Reason: &reason})
		if err != nil || got.Status != expense.Rejected || got.RejectionReason == nil || *got.RejectionReason != reason {
			t.Fatalf("rejecting: %+v, %v", got, err)
		}
		if _, err := o.svc.Update(ctx, o.ada, e.ID, fields(t, `{"description": "Team lunch"}`)); err != nil {
			t.Errorf("editing a rejected expense: %v", err)
		}
		if _, err := o.svc.Submit(ctx, o.ada, e.ID); err != nil {
			t.Fatalf("submitting again: %v", err)
		}
		if got, err := o.svc.Approve(ctx, o.owner, e.ID); err != nil || got.Status != expense.Approved {
			t.Fatalf("approving: %+v, %v", got.Status, err)
		}
		for name, err := range map[string]error{
			"edit":             second(o.svc.Update(ctx, o.ada, e.ID, fields(t, `{"description": "after"}`))),
			"reject":           second(o.svc.Reject(ctx, o.owner, e.ID, expense.RejectRequest{})),
			"delete":           second(o.svc.Delete(ctx, o.ada, e.ID)),
			"unbind a receipt": second(o.svc.RemoveReceipt(ctx, o.ada, e.ID, got.Receipts[0].ID)),
		} {
			if !apierr.Is(err, apierr.Conflict) {
				t.Errorf("%s an approved expense: %v; want conflict", name, err)
			}
		}
		if _, err := o.svc.MarkPaid(ctx, o.ada, e.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("the creator marking it paid: %v; want forbidden", err)
		}
		if got, err := o.svc.MarkPaid(ctx, o.owner, e.ID); err != nil || got.Status != expense.Paid {
			t.Fatalf("marking paid: %+v, %v", got.Status, err)
		}
		if _, err := o.svc.MarkPaid(ctx, o.owner, e.ID); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("marking paid twice: %v; want conflict", err)
		}
		// A draft alone is deleted, and is gone.
		draft := o.create(t, o.ada, `{}`)
		if _, err := o.svc.Delete(ctx, o.ada, draft.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := o.svc.Get(ctx, o.ada, draft.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("a deleted expense: %v; want not_found", err)
		}
	})
}

func second[T any](_ T, err error) error { return err }

// TestAReceiptIsAStoredFileOfTheOrganizationOnce: a receipt must be a
// stored file of the expense's organization and the receipt of no other
// expense; removing it leaves the file, which may then back another.
func TestAReceiptIsAStoredFileOfTheOrganizationOnce(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		e := o.create(t, o.ada, `{}`)
		other := o.create(t, o.ada, `{}`)
		pending, _ := fixture.PendingFile(t, o.files, o.ada, o.org.ID, "later.png", file.PNG, 100)
		if _, err := o.svc.AddReceipt(ctx, o.ada, e.ID, receiptOf(pending)); !apierr.Is(err, apierr.FileNotStored) {
			t.Errorf("a file not uploaded yet: %v; want file_not_stored", err)
		}
		theirs := o.receiptFile(t, o.outsider, o.other.ID)
		if _, err := o.svc.AddReceipt(ctx, o.ada, e.ID, receiptOf(theirs)); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("another organization's file: %v; want not_found", err)
		}
		f := o.receiptFile(t, o.ada, o.org.ID)
		got, err := o.svc.AddReceipt(ctx, o.ada, e.ID, receiptOf(f))
		if err != nil || len(got.Receipts) != 1 || got.Receipts[0].FileID != f.ID || got.Receipts[0].MimeType != file.PNG ||
			!strings.HasPrefix(got.Receipts[0].URL, "/api/v1/files/"+f.ID.String()+"/content?") {
			t.Fatalf("with a receipt: %+v, %v", got.Receipts, err)
		}
		if _, err := o.svc.AddReceipt(ctx, o.ada, other.ID, receiptOf(f)); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("the same file on another expense: %v; want conflict", err)
		}
		if _, err := o.svc.AddReceipt(ctx, o.ada, e.ID, receiptOf(f)); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("the same file twice: %v; want conflict", err)
		}
		if _, err := o.svc.RemoveReceipt(ctx, o.ada, e.ID, uuid.Must(uuid.NewV7())); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("removing an unknown receipt: %v; want not_found", err)
		}
		if _, err := o.svc.RemoveReceipt(ctx, o.ada, other.ID, got.Receipts[0].ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("removing a receipt through another expense: %v; want not_found", err)
		}
		if got, err := o.svc.RemoveReceipt(ctx, o.ada, e.ID, got.Receipts[0].ID); err != nil || len(got.Receipts) != 0 {
			t.Fatalf("removed: %+v, %v", got.Receipts, err)
		}
		if _, err := o.files.Get(ctx, o.ada, f.ID); err != nil {
			t.Errorf("the file after its receipt was removed: %v", err)
		}
		if _, err := o.svc.AddReceipt(ctx, o.ada, other.ID, receiptOf(f)); err != nil {
			t.Errorf("the freed file on another expense: %v", err)
		}
	})
}

// TestBoundTransactionsMakeTheTotals: a card transaction of the
// organization, bound to one expense at most, counts for its total (a
// refund negative) in place of the amount typed; another organization's
// row, a row of another type, or an internal transfer is not found.
func TestBoundTransactionsMakeTheTotals(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		e := o.create(t, o.ada, `{"bill_amount": "99.99", "bill_currency": "EUR"}`)
		if !slices.Equal(e.TotalsBill, []money.Amount{{Minor: 9999, Currency: "EUR"}}) {
			t.Fatalf("totals %v; want the bill amount typed", e.TotalsBill)
		}
		purchase := o.feedRow(t, o.org.ID, expense.CardTransaction, "out", 1200, "EUR")
		refund := o.feedRow(t, o.org.ID, expense.CardTransaction, "in", 250, "EUR")
		dollars := o.feedRow(t, o.org.ID, expense.CardTransaction, "out", 1, "USD")
		fee := o.feedRow(t, o.org.ID, "fee", "out", 100, "EUR")
		theirs := o.feedRow(t, o.other.ID, expense.CardTransaction, "out", 500, "EUR")
		for _, c := range []struct {
			name   string
			target uuid.UUID
			typ    string
		}{
			{"another organization's purchase", theirs, expense.CardTransaction},
			{"a fee row as a card transaction", fee, expense.CardTransaction},
			{"an internal transfer", purchase, expense.InternalTransfer},
			{"an unknown row", uuid.Must(uuid.NewV7()), expense.CardTransaction},
		} {
			if _, err := o.bindTo(ctx, o.ada, e.ID, bind(c.target, c.typ)); !apierr.Is(err, apierr.NotFound) {
				t.Errorf("binding %s: %v; want not_found", c.name, err)
			}
		}
		var got expense.Expense
		var err error
		for _, row := range []uuid.UUID{purchase, refund, dollars} {
			if got, err = o.bindTo(ctx, o.ada, e.ID, bind(row, expense.CardTransaction)); err != nil {
				t.Fatal(err)
			}
		}
		want := []money.Amount{{Minor: 950, Currency: "EUR"}, {Minor: 1, Currency: "USD"}}
		if !slices.Equal(got.TotalsBill, want) || len(got.Bindings) != 3 || got.Bindings[0].TransactionID == nil || *got.Bindings[0].TransactionID != purchase {
			t.Fatalf("bound: totals %v, bindings %+v; want %v", got.TotalsBill, got.Bindings, want)
		}
		other := o.create(t, o.ada, `{}`)
		if _, err := o.bindTo(ctx, o.ada, other.ID, bind(purchase, expense.CardTransaction)); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("a row bound to another expense: %v; want conflict", err)
		}
		if _, err := o.svc.Unbind(ctx, o.ada, other.ID, got.Bindings[0].ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("unbinding through another expense: %v; want not_found", err)
		}
		for _, b := range got.Bindings {
			if got, err = o.svc.Unbind(ctx, o.ada, e.ID, b.ID); err != nil {
				t.Fatal(err)
			}
		}
		if !slices.Equal(got.TotalsBill, []money.Amount{{Minor: 9999, Currency: "EUR"}}) {
			t.Errorf("unbound: totals %v; want the bill amount again", got.TotalsBill)
		}
		if _, err := o.bindTo(ctx, o.ada, other.ID, bind(purchase, expense.CardTransaction)); err != nil {
			t.Errorf("the freed row on another expense: %v", err)
		}
	})
}

// TestExpenseListFilters: by status, by text in the business name,
// description or receipt number (any letter case, wildcards taken
// literally), and by transaction date, both ends included.
func TestExpenseListFilters(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		sacher := o.create(t, o.ada, `{"business_name": "Café Sacher", "transaction_date": "2026-11-01"}`)
		percent := o.create(t, o.ada, `{"receipt_number": "R_100%", "transaction_date": "2026-11-15"}`)
		plain := o.create(t, o.ada, `{"description": "R1000 taxi", "transaction_date": "2026-11-30", "category": "transport"}`)
		if _, err := o.svc.AddReceipt(ctx, o.ada, plain.ID, receiptOf(o.receiptFile(t, o.ada, o.org.ID))); err != nil {
			t.Fatal(err)
		}
		if _, err := o.svc.Submit(ctx, o.ada, plain.ID); err != nil {
			t.Fatal(err)
		}
		s := func(v string) *string { return &v }
		for _, c := range []struct {
			name string
			f    expense.ListFilter
			want []uuid.UUID
		}{
			{"drafts", expense.ListFilter{Statuses: []string{expense.Draft}}, []uuid.UUID{percent.ID, sacher.ID}},
			{"submitted or approved", expense.ListFilter{Statuses: []string{expense.Submitted, expense.Approved}}, []uuid.UUID{plain.ID}},
			{"a name in capitals", expense.ListFilter{Search: s("SACHER")}, []uuid.UUID{sacher.ID}},
			{"a percent sign taken literally", expense.ListFilter{Search: s("100%")}, []uuid.UUID{percent.ID}},
			{"an underscore taken literally", expense.ListFilter{Search: s("r_1")}, []uuid.UUID{percent.ID}},
			{"from a date on", expense.ListFilter{From: s("2026-11-15")}, []uuid.UUID{plain.ID, percent.ID}},
			{"up to a date", expense.ListFilter{To: s("2026-11-15")}, []uuid.UUID{percent.ID, sacher.ID}},
			{"one day", expense.ListFilter{From: s("2026-11-15"), To: s("2026-11-15")}, []uuid.UUID{percent.ID}},
		} {
			es, err := o.svc.List(ctx, o.owner, o.org.ID, c.f, page.Request{Limit: 10})
			var got []uuid.UUID
			for _, e := range es {
				got = append(got, e.ID)
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
			}
		}
	})
}

// TestACardPurchaseIsWorkedOnOnceEdited: an expense filed from a card
// purchase waits as pending, bound to the purchase; its first edit makes it
// working, and it can be submitted as it is.
func TestACardPurchaseIsWorkedOnOnceEdited(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		o := newOffice(t, d)
		row := o.feedRow(t, o.org.ID, expense.CardTransaction, "out", 4200, "EUR")
		bill := money.Amount{Minor: 4200, Currency: "EUR"}
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			return o.svc.FileCardPurchase(ctx, tx, o.org.ID, o.ada.UserID, row, bill, bill, "Café Sacher")
		}); err != nil {
			t.Fatal(err)
		}
		es, err := o.svc.List(ctx, o.ada, o.org.ID, expense.ListFilter{}, page.Request{Limit: 10})
		if err != nil || len(es) != 1 {
			t.Fatalf("Ada's expenses %+v, %v; want the purchase's", es, err)
		}
		e := es[0]
		if e.Status != expense.Pending || len(e.Bindings) != 1 || e.Bindings[0].TargetID != row || *e.TransactionDate != "2026-11-23" {
			t.Fatalf("filed %+v; want pending, bound to the purchase, dated the day of it", e)
		}
		got, err := o.svc.Update(ctx, o.ada, e.ID, fields(t, `{"category": "meals"}`))
		if err != nil || got.Status != expense.Working {
			t.Fatalf("after the first edit: %s, %v; want working", got.Status, err)
		}
		if got, err := o.svc.Submit(ctx, o.ada, e.ID); err != nil || got.Status != expense.Submitted {
			t.Fatalf("submitting: %s, %v", got.Status, err)
		}
	})
}
