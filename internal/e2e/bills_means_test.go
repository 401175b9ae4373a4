package e2e_test

import (
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// TestUploadedCreditNotesAndDirectDebitsAreNeverPaidBlindly: a UBL
// CreditNote and a ZUGFeRD 1.0 correction with a negative total become
// credit notes with positive amounts that paying refuses with
// bill_not_payable; a direct-debit invoice says so and carries no payee
// account, though the buyer's IBAN is in its XML; each bill says how it
// was read.
func TestUploadedCreditNotesAndDirectDebitsAreNeverPaidBlindly(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "10000.00")

	for _, c := range []struct {
		file, amount, currency, format string
	}{
		{"ubl-se-creditnote.xml", "4950.00", "SEK", "ubl"},
		{"zugferd1-de-gutschrift.xml", "8.79", "EUR", "zugferd1"},
	} {
		note := extracted(t, s, p.web, uploadCorpus(t, s, p.web, p.org, c.file).Id.String())
		if note.DocumentType != api.BillDocumentTypeCreditNote || str(note.Amount) != c.amount || str(note.Currency) != c.currency ||
			note.Extraction.Format == nil || string(*note.Extraction.Format) != c.format || len(note.Extraction.FromText) != 0 {
			t.Fatalf("%s read as %s %s %s, extraction %+v", c.file, note.DocumentType, str(note.Amount), str(note.Currency), note.Extraction)
		}
		if c.currency != "EUR" {
			continue // the payer's account pays in EUR
		}
		var withContact api.Bill
		s.Post(t, billPath(note.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &withContact)
		q := billQuote(t, s, p, withContact.PaymentContactId.String(), c.amount)
		s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), note.Id.String())).ExpectError(t, 422, "bill_not_payable")
		if after := getBill(t, s, p.web, note.Id.String()); after.Status != "extracted" || after.ApprovalRequestId != nil {
			t.Fatalf("%s after the refused payment: %+v", c.file, after)
		}
	}

	for _, c := range []struct{ file, format string }{{"ubl-de-lastschrift.xml", "ubl"}, {"zugferd1-de-lastschrift.xml", "zugferd1"}} {
		b := extracted(t, s, p.web, uploadCorpus(t, s, p.web, p.org, c.file).Id.String())
		if b.DocumentType != api.BillDocumentTypeInvoice || b.PaymentMeans == nil || *b.PaymentMeans != api.BillPaymentMeansDirectDebit ||
			b.Extraction.Format == nil || string(*b.Extraction.Format) != c.format {
			t.Fatalf("%s read as %s, means %v, extraction %+v", c.file, b.DocumentType, b.PaymentMeans, b.Extraction)
		}
		if b.Iban != nil || b.SwiftCode != nil || b.AccountNumber != nil || b.AccountHolderName != nil {
			t.Errorf("%s: the buyer's account was taken as the payee's: iban %s bic %s account %s holder %s",
				c.file, str(b.Iban), str(b.SwiftCode), str(b.AccountNumber), str(b.AccountHolderName))
		}
		if str(b.Amount) == "" || str(b.BillNumber) == "" || str(b.SupplierName) == "" {
			t.Errorf("%s: amount %q number %q supplier %q", c.file, str(b.Amount), str(b.BillNumber), str(b.SupplierName))
		}
	}
}
