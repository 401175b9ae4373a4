package extract

import (
	"slices"
	"strings"
	"testing"
)

func TestReconcileAgainstPage(t *testing.T) {
	xml := Fields{
		InvoiceNumber: "RE-2020/508", IssueDate: Date{2020, 11, 21}, DueDate: Date{2020, 12, 12},
		Currency: "EUR", AmountDue: "571.04", IBAN: "DE88200800000970375700", BIC: "COBADEFFXXX",
		SupplierName: "Bei Spiel GmbH", RemittanceReference: "RE-2020/508",
	}
	for _, tc := range []struct {
		name      string
		page      Fields
		conflicts []string
		want      func(*Fields) // the XML's fields as they must come out
	}{
		{
			name: "the page agrees, written otherwise",
			page: Fields{InvoiceNumber: "re–2020 / 508", IssueDate: Date{2020, 11, 21}, AmountDue: "571.040",
				Currency: "EUR", IBAN: "de88 2008 0000 0970 3757 00", SupplierName: "BEI SPIEL GMBH & Co"},
			want: func(*Fields) {},
		},
		{
			name: "the page shows nothing the rules are sure of",
			page: Fields{},
			want: func(*Fields) {},
		},
		{
			name:      "another amount",
			page:      Fields{AmountDue: "406.82", InvoiceNumber: "RE-2020/508"},
			conflicts: []string{"amount_due"},
			want:      func(f *Fields) { f.AmountDue = "" },
		},
		{
			name:      "another invoice: number, dates and the reference that repeats the number",
			page:      Fields{InvoiceNumber: "RE-2019/507", IssueDate: Date{2019, 6, 10}, DueDate: Date{2019, 7, 1}},
			conflicts: []string{"due_date", "invoice_number", "issue_date", "remittance_reference"},
			want: func(f *Fields) {
				f.InvoiceNumber, f.IssueDate, f.DueDate, f.RemittanceReference = "", Date{}, Date{}, ""
			},
		},
		{
			name:      "a due date before the issue date the page shows",
			page:      Fields{IssueDate: Date{2020, 12, 13}},
			conflicts: []string{"due_date", "issue_date"},
			want:      func(f *Fields) { f.IssueDate, f.DueDate = Date{}, Date{} },
		},
		{
			name:      "another account and its bank",
			page:      Fields{IBAN: "GB82WEST12345698765432", BIC: "NWBKGB2L", Currency: "GBP"},
			conflicts: []string{"bic", "currency", "iban"},
			want:      func(f *Fields) { f.IBAN, f.BIC, f.Currency = "", "", "" },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Result{Format: FormatFacturX, Fields: xml}
			complete(&r, tc.page, reconcile(&r, tc.page))
			finish(&r)
			want := xml
			tc.want(&want)
			if r.Fields != want {
				t.Errorf("fields\n got %+v\nwant %+v", r.Fields, want)
			}
			if !slices.Equal(r.Conflicts, tc.conflicts) {
				t.Errorf("conflicts %v, want %v", r.Conflicts, tc.conflicts)
			}
			for _, c := range tc.conflicts {
				if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "the page shows") }) {
					t.Errorf("%s: no warning giving both values: %q", c, r.Warnings)
				}
			}
			// A field left empty for its conflict is not completed from
			// the page either.
			if len(r.FromText) != 0 {
				t.Errorf("from_text %v, want none", r.FromText)
			}
		})
	}
}
