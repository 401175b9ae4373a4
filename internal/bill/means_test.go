package bill_test

import (
	"os"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// TestABillSaysHowItIsPaidAndHowItWasRead: extraction stores the payment
// means, the format and the fields text rules filled; a direct-debit
// invoice gets no payee account (the one it carries is the buyer's), a
// ZUGFeRD 1.0 credit correction is a credit note, and a person's edit
// takes a field out of from_text.
func TestABillSaysHowItIsPaidAndHowItWasRead(t *testing.T) {
	t.Parallel()
	fixture.Each(t, day, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := newTray(t, d, clk)
		debit, _ := invoice(t, "zugferd1-de-lastschrift")
		ubl, _ := invoice(t, "ubl-de-lastschrift")
		note, _ := invoice(t, "zugferd1-de-gutschrift")
		page, err := os.ReadFile("extract/testdata/text-de-rechnung.pdf")
		if err != nil {
			t.Fatal(err)
		}
		bDebit := r.upload(t, "lastschrift.xml", "application/xml", debit)
		bUBL := r.upload(t, "telekom.xml", "application/xml", ubl)
		bNote := r.upload(t, "gutschrift.xml", "application/xml", note)
		bPage := r.upload(t, "rechnung.pdf", "application/pdf", page)
		if bDebit.Extraction.Format != nil || bDebit.PaymentMeans != nil || len(bDebit.Extraction.FromText) != 0 {
			t.Errorf("before reading: %+v %v", bDebit.Extraction, bDebit.PaymentMeans)
		}
		clk.Advance(time.Minute)
		r.extract(t)

		for _, id := range []struct {
			b      bill.Bill
			format string
		}{{bDebit, "zugferd1"}, {bUBL, "ubl"}} {
			got := r.get(t, id.b.ID)
			if text(got.Extraction.Format) != id.format || got.PaymentMeans == nil || *got.PaymentMeans != bill.DirectDebit ||
				len(got.Extraction.FromText) != 0 || got.DocumentType != bill.Invoice {
				t.Errorf("direct debit read as %s %v %q %s", text(got.Extraction.Format), got.PaymentMeans, got.Extraction.FromText, got.DocumentType)
			}
			k := got.Bank
			if k.IBAN != nil || k.SwiftCode != nil || k.AccountNumber != nil || k.AccountHolderName != nil {
				t.Errorf("direct debit %s took the buyer's account as the payee's: %+v", id.format, k)
			}
			if got.Amount == nil || got.BillNumber == nil {
				t.Errorf("direct debit %s: amount %v number %v", id.format, got.Amount, got.BillNumber)
			}
		}

		got := r.get(t, bNote.ID)
		if got.DocumentType != bill.CreditNote || got.Amount == nil || got.Amount.Minor != 879 || text(got.SupplierName) != "Holzbau Krämer GmbH" ||
			got.PaymentMeans == nil || *got.PaymentMeans != bill.CreditTransfer || text(got.Extraction.Format) != "zugferd1" {
			t.Errorf("ZUGFeRD 1.0 correction read as %s %v %q %v %s", got.DocumentType, got.Amount, text(got.SupplierName), got.PaymentMeans, text(got.Extraction.Format))
		}

		got = r.get(t, bPage.ID)
		if text(got.Extraction.Format) != "pdf_text" || len(got.Extraction.FromText) == 0 {
			t.Fatalf("text PDF read as %s, from_text %q", text(got.Extraction.Format), got.Extraction.FromText)
		}
		for _, name := range got.Extraction.FromText {
			if !slices.Contains([]string{"bill_number", "issue_date", "due_date", "currency", "amount", "supplier_name", "supplier_tax_id",
				"payment_reference", "iban", "swift_code", "account_number", "sort_code", "aba_code", "account_holder_name",
				"payment_means", "document_type"}, name) {
				t.Errorf("from_text names %q, not a bill field", name)
			}
		}
		if !slices.Contains(got.Extraction.FromText, "supplier_name") || got.SupplierName == nil {
			t.Fatalf("text PDF: supplier %v not in from_text %q", got.SupplierName, got.Extraction.FromText)
		}
		if _, err := r.patch(got.ID, `{"supplier_name": "Checked GmbH"}`); err != nil {
			t.Fatal(err)
		}
		after := r.get(t, got.ID)
		if slices.Contains(after.Extraction.FromText, "supplier_name") || len(after.Extraction.FromText) != len(got.Extraction.FromText)-1 {
			t.Errorf("after the person's edit from_text is %q (was %q)", after.Extraction.FromText, got.Extraction.FromText)
		}
	})
}
