package bill_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/file/filetest"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var day = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// tray is an organization receiving bills, with a member who uploads
// them, another organization with an owner, and the worker that reads the
// bills' files.
type tray struct {
	svc      *bill.Service
	files    *file.Service
	jobs     *job.Runner
	org      organization.Organization
	member   actor.Actor
	other    organization.Organization
	outsider actor.Actor
}

func newTray(t *testing.T, d *db.DB, clk clock.Clock) tray {
	t.Helper()
	files := fixture.Files(t, d)
	r := tray{svc: &bill.Service{DB: d, Files: files}, files: files, jobs: job.NewRunner(d, clk, nil)}
	r.svc.Register(r.jobs)
	r.org, r.member = fixture.Member(t, d, organization.Member)
	r.other = fixture.Organization(t, d, "Globex")
	r.outsider = fixture.Join(t, d, r.other.ID, "hank@globex.test", organization.Owner)
	return r
}

// invoice is a test invoice of the extract package and the fields it holds.
func invoice(t *testing.T, name string) ([]byte, map[string]any) {
	t.Helper()
	data, err := os.ReadFile("extract/testdata/" + name + ".xml")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("extract/testdata/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var want struct{ Fields map[string]any }
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	return data, want.Fields
}

func (r tray) upload(t *testing.T, name, declared string, data []byte) bill.Bill {
	t.Helper()
	b, err := r.svc.Upload(context.Background(), r.member, r.org.ID, name, declared, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// extract runs the due jobs until none is left: the reading of every bill
// still extracting (an organization's bills are read one at a time).
func (r tray) extract(t *testing.T) {
	t.Helper()
	for range 10 {
		n, err := r.jobs.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("jobs are still due after 10 rounds")
}

func (r tray) get(t *testing.T, id uuid.UUID) bill.Bill {
	t.Helper()
	b, err := r.svc.Get(context.Background(), r.member, id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// patch decodes body as the handler does, checks it and applies it to bill id.
func (r tray) patch(id uuid.UUID, body string) (bill.Bill, error) {
	var p bill.PatchRequest
	if err := json.Unmarshal([]byte(body), &p); err != nil {
		return bill.Bill{}, err
	}
	if err := p.Validate(); err != nil {
		return bill.Bill{}, err
	}
	return r.update(r.member, id, p)
}

// update applies p to bill id as a, in a transaction of its own (a
// payment contact p sets is the bill-payment flow's to check).
func (r tray) update(a actor.Actor, id uuid.UUID, p bill.PatchRequest) (bill.Bill, error) {
	ctx := context.Background()
	return db.InTx(ctx, r.svc.DB, func(tx *db.Tx) (bill.Bill, error) { return r.svc.Update(ctx, tx, a, id, p) })
}

func text(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

// TestAnUploadedInvoiceIsReadIntoItsBill: an uploaded e-invoice opens a
// bill at extracting on its file; reading it fills every field the file
// holds and the person has not set meanwhile (their edit wins), with the
// amount in the currency's minor units, and the bill becomes extracted.
func TestAnUploadedInvoiceIsReadIntoItsBill(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := newTray(t, d, clk)
		data, want := invoice(t, "cii-de-xrechnung")
		b := r.upload(t, "rechnung.xml", "text/xml", data)
		if b.Status != bill.Extracting || b.FileID == nil || b.CreatedByID != r.member.UserID || b.Amount != nil {
			t.Fatalf("uploaded %+v; want extracting on its file, nothing read yet", b)
		}
		f, err := r.files.Get(context.Background(), r.member, *b.FileID)
		if err != nil || f.File.MimeType != file.XML || f.File.Size != int64(len(data)) || f.Download == nil {
			t.Fatalf("the bill's file %+v, %v; want the stored XML", f.File, err)
		}
		if _, err := r.patch(b.ID, `{"supplier_name": "Müller GmbH"}`); err != nil {
			t.Fatalf("editing while extracting: %v", err)
		}
		r.extract(t)
		got := r.get(t, b.ID)
		if got.Status != bill.Extracted || got.ExtractionFailedAt != nil || got.DocumentType != bill.Invoice {
			t.Fatalf("read: %s, failed at %v, %s; want an extracted invoice", got.Status, got.ExtractionFailedAt, got.DocumentType)
		}
		for name, c := range map[string][2]string{
			"bill_number":         {text(got.BillNumber), want["invoice_number"].(string)},
			"issue_date":          {text(got.IssueDate), want["issue_date"].(string)},
			"due_date":            {text(got.DueDate), want["due_date"].(string)},
			"currency":            {text(got.Currency), "EUR"},
			"supplier_name":       {text(got.SupplierName), "Müller GmbH"},
			"supplier_tax_id":     {text(got.SupplierTaxID), want["supplier_tax_id"].(string)},
			"payment_reference":   {text(got.PaymentReference), want["remittance_reference"].(string)},
			"iban":                {text(got.Bank.IBAN), want["iban"].(string)},
			"swift_code":          {text(got.Bank.SwiftCode), want["bic"].(string)},
			"account_holder_name": {text(got.Bank.AccountHolderName), want["account_holder_name"].(string)},
		} {
			if c[0] != c[1] {
				t.Errorf("%s = %q, want %q", name, c[0], c[1])
			}
		}
		if got.Amount == nil || *got.Amount != (money.Amount{Minor: 595000, Currency: "EUR"}) {
			t.Errorf("amount %v; want 5950.00 EUR", got.Amount)
		}
		// Reading again finds nothing to do.
		r.extract(t)
		if again := r.get(t, b.ID); !again.UpdatedAt.Equal(got.UpdatedAt) {
			t.Errorf("the bill changed after it was read: %+v", again)
		}
	})
}

// TestACreditNoteIsNeverABillToPay: a credit note is read as one, with its
// amount positive; a file nothing can be read from leaves an extracted
// bill with its extraction marked failed and no field filled.
func TestACreditNoteIsNeverABillToPay(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := newTray(t, d, clk)
		data, _ := invoice(t, "cii-it-creditnote")
		note := r.upload(t, "nota.xml", "application/xml", data)
		photo := r.upload(t, "photo.png", "image/png", filetest.PNG(8, 8, 8, filetest.RGB))
		clk.Advance(time.Minute)
		r.extract(t)
		got := r.get(t, note.ID)
		if got.Status != bill.Extracted || got.DocumentType != bill.CreditNote || got.Amount == nil || got.Amount.Minor != 61000 {
			t.Errorf("credit note read as %s %s %v; want an extracted credit note of 610.00", got.Status, got.DocumentType, got.Amount)
		}
		got = r.get(t, photo.ID)
		if got.Status != bill.Extracted || got.ExtractionFailedAt == nil || !got.ExtractionFailedAt.Equal(clk.Now()) ||
			got.Amount != nil || got.SupplierName != nil || got.Currency != nil {
			t.Errorf("a photo read as %+v; want extracted, failed now, nothing filled", got)
		}
	})
}

// TestABillOpensOnAStoredFileOfItsOrganization: a bill is opened on an
// uploaded file of the organization only; a refused upload leaves no bill.
func TestABillOpensOnAStoredFileOfItsOrganization(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		r := newTray(t, d, clk)
		data, _ := invoice(t, "cii-de-xrechnung")
		stored := fixture.StoredFile(t, r.files, r.member, r.org.ID, "rechnung.xml", file.XML, data)
		pending, _ := fixture.PendingFile(t, r.files, r.member, r.org.ID, "later.xml", file.XML, 100)
		theirs := fixture.StoredFile(t, r.files, r.outsider, r.other.ID, "theirs.xml", file.XML, data)
		create := func(a actor.Actor, orgID, fileID uuid.UUID) (bill.Bill, error) {
			req := bill.CreateRequest{FileID: fileID.String()}
			if err := req.Validate(); err != nil {
				t.Fatal(err)
			}
			return r.svc.Create(ctx, a, orgID, req)
		}
		for _, c := range []struct {
			name string
			err  error
			want apierr.Type
		}{
			{"a file not uploaded yet", second(create(r.member, r.org.ID, pending.ID)), apierr.FileNotStored},
			{"another organization's file", second(create(r.member, r.org.ID, theirs.ID)), apierr.NotFound},
			{"an unknown file", second(create(r.member, r.org.ID, uuid.Must(uuid.NewV7()))), apierr.NotFound},
			{"an outsider", second(create(r.outsider, r.org.ID, stored.ID)), apierr.NotFound},
			{"not an invoice", second(r.svc.Upload(ctx, r.member, r.org.ID, "notes.txt", "text/plain", bytes.NewReader([]byte("just some notes")))),
				apierr.FileTypeMismatch},
			{"a PDF declared as an image", second(r.svc.Upload(ctx, r.member, r.org.ID, "scan.png", "image/png", bytes.NewReader([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")))),
				apierr.FileTypeMismatch},
			{"an upload by an outsider", second(r.svc.Upload(ctx, r.outsider, r.org.ID, "rechnung.xml", "application/xml", bytes.NewReader(data))),
				apierr.NotFound},
		} {
			if !apierr.Is(c.err, c.want) {
				t.Errorf("%s: %v; want %s", c.name, c.err, c.want)
			}
		}
		if list, err := r.svc.List(ctx, r.member, r.org.ID, bill.ListFilter{}, page.Request{Limit: 10}); err != nil || len(list) != 0 {
			t.Fatalf("after the refusals: %d bills, %v; want none", len(list), err)
		}
		b, err := create(r.member, r.org.ID, stored.ID)
		if err != nil || b.Status != bill.Extracting || *b.FileID != stored.ID {
			t.Fatalf("a bill on a stored file: %+v, %v", b, err)
		}
	})
}

func second[T any](_ T, err error) error { return err }

// TestEditingABill: the amount is read at the precision of the bill's
// currency, which it cannot be without; null clears a field, a field left
// out stays; a cancelled bill can no longer change, and reading its file
// afterwards fills nothing.
func TestEditingABill(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		r := newTray(t, d, clk)
		b := r.upload(t, "photo.png", "image/png", filetest.PNG(8, 8, 8, filetest.RGB))
		r.extract(t)
		invalid := func(body, field string) {
			t.Helper()
			_, err := r.patch(b.ID, body)
			e, ok := apierr.As(err)
			if !ok || e.Type != apierr.InvalidRequest || e.Details.([]apierr.FieldError)[0].Field != field {
				t.Errorf("%s: %v; want %s invalid", body, err, field)
			}
		}
		invalid(`{"amount": "12.50"}`, "amount")
		invalid(`{"amount": "12.50", "currency": "JPY"}`, "amount")
		invalid(`{"amount": "-1.00", "currency": "EUR"}`, "amount")
		got, err := r.patch(b.ID, `{"amount": "1578.00", "currency": "GBP", "bill_number": "HLP-10231", "due_date": "2026-12-13"}`)
		if err != nil || *got.Amount != (money.Amount{Minor: 157800, Currency: "GBP"}) || *got.BillNumber != "HLP-10231" {
			t.Fatalf("patched %+v, %v", got, err)
		}
		// The amount kept is read again in a new currency: 1578.00 has no place in yen.
		invalid(`{"currency": "JPY"}`, "amount")
		if got, err = r.patch(b.ID, `{"currency": "KWD"}`); err != nil || *got.Amount != (money.Amount{Minor: 1578000, Currency: "KWD"}) {
			t.Fatalf("in dinars: %v, %v; want 1578.000 KWD", got.Amount, err)
		}
		if got, err = r.patch(b.ID, `{"bill_number": null}`); err != nil || got.BillNumber != nil || got.DueDate == nil || got.Amount == nil {
			t.Fatalf("cleared the number: %+v, %v; want the other fields kept", got, err)
		}
		if r.get(t, b.ID).BillNumber != nil {
			t.Fatal("the cleared number was not saved")
		}

		late := r.upload(t, "late.xml", "application/xml", func() []byte { x, _ := invoice(t, "cii-de-xrechnung"); return x }())
		if got, err := r.svc.Cancel(ctx, r.member, late.ID); err != nil || got.Status != bill.Cancelled {
			t.Fatalf("cancelling while extracting: %+v, %v", got.Status, err)
		}
		r.extract(t)
		if got := r.get(t, late.ID); got.Status != bill.Cancelled || got.Amount != nil || got.SupplierName != nil {
			t.Errorf("cancelled before it was read: %+v; want cancelled with nothing filled", got)
		}
		if _, err := r.svc.Cancel(ctx, r.member, late.ID); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("cancelling twice: %v; want conflict", err)
		}
		if _, err := r.patch(late.ID, `{"bill_number": "X-1"}`); !apierr.Is(err, apierr.Conflict) {
			t.Errorf("editing a cancelled bill: %v; want conflict", err)
		}
		if got, err := r.svc.Cancel(ctx, r.member, b.ID); err != nil || got.Status != bill.Cancelled {
			t.Errorf("cancelling an extracted bill: %+v, %v", got.Status, err)
		}
	})
}

// TestAnotherOrganizationsBillsAreNotFound: an outsider neither reads,
// lists, edits nor cancels a bill, and the bill is unchanged.
func TestAnotherOrganizationsBillsAreNotFound(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		r := newTray(t, d, clk)
		b := r.upload(t, "photo.png", "image/png", filetest.PNG(8, 8, 8, filetest.RGB))
		number := "X-1"
		for name, err := range map[string]error{
			"get":    second(r.svc.Get(ctx, r.outsider, b.ID)),
			"list":   second(r.svc.List(ctx, r.outsider, r.org.ID, bill.ListFilter{}, page.Request{Limit: 10})),
			"update": second(r.update(r.outsider, b.ID, bill.PatchRequest{BillNumber: optional(&number)})),
			"cancel": second(r.svc.Cancel(ctx, r.outsider, b.ID)),
		} {
			if !apierr.Is(err, apierr.NotFound) {
				t.Errorf("an outsider's %s: %v; want not_found", name, err)
			}
		}
		if got := r.get(t, b.ID); got.Status != bill.Extracting || got.BillNumber != nil {
			t.Errorf("the bill changed: %+v", got)
		}
		if list, err := r.svc.List(ctx, r.outsider, r.other.ID, bill.ListFilter{}, page.Request{Limit: 10}); err != nil || len(list) != 0 {
			t.Errorf("the outsider's own list: %d bills, %v; want none", len(list), err)
		}
	})
}

// TestBillListFilters: by status, by due date (both ends included) and by
// text in the supplier name or bill number, in any letter case.
func TestBillListFilters(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		r := newTray(t, d, clk)
		data, _ := invoice(t, "cii-de-xrechnung") // Müller Maschinenbau, RE-2026-0117, due 2026-02-14
		muller := r.upload(t, "rechnung.xml", "application/xml", data)
		r.extract(t)
		photo := r.upload(t, "photo.png", "image/png", filetest.PNG(8, 8, 8, filetest.RGB))
		if _, err := r.patch(photo.ID, `{"supplier_name": "Harbour Lane Print", "due_date": "2026-03-01"}`); err != nil {
			t.Fatal(err)
		}
		extracting := bill.Extracting
		for _, c := range []struct {
			name string
			f    bill.ListFilter
			want []uuid.UUID
		}{
			{"all", bill.ListFilter{}, []uuid.UUID{photo.ID, muller.ID}},
			{"extracting", bill.ListFilter{Status: &extracting}, []uuid.UUID{photo.ID}},
			{"a supplier in capitals", bill.ListFilter{Search: ptr("MÜLLER")}, []uuid.UUID{muller.ID}},
			{"a bill number", bill.ListFilter{Search: ptr("re-2026")}, []uuid.UUID{muller.ID}},
			{"a percent sign", bill.ListFilter{Search: ptr("%")}, nil},
			{"due from", bill.ListFilter{DueDateFrom: ptr("2026-02-15")}, []uuid.UUID{photo.ID}},
			{"due up to", bill.ListFilter{DueDateTo: ptr("2026-02-14")}, []uuid.UUID{muller.ID}},
		} {
			list, err := r.svc.List(ctx, r.member, r.org.ID, c.f, page.Request{Limit: 10})
			var got []uuid.UUID
			for _, b := range list {
				got = append(got, b.ID)
			}
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
			}
		}
	})
}

func ptr[T any](v T) *T { return &v }

func optional(v *string) field.Optional[string] { return field.Optional[string]{Set: true, Value: v} }
