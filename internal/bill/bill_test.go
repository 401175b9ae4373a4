package bill_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/bill/extract"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/field"
)

// invalidFields validates the PATCH body raw and returns the fields its
// invalid_request names, sorted (nil when it is valid).
func invalidFields(t *testing.T, raw string) ([]string, bill.PatchRequest) {
	t.Helper()
	var r bill.PatchRequest
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	err := r.Validate()
	if err == nil {
		return nil, r
	}
	e, ok := apierr.As(err)
	if !ok || e.Type != apierr.InvalidRequest {
		t.Fatalf("%s: error %v, want invalid_request", raw, err)
	}
	details, _ := e.Details.([]apierr.FieldError)
	var fields []string
	for _, d := range details {
		if d.Message == "" {
			t.Errorf("%s: detail for %s has no message", raw, d.Field)
		}
		fields = append(fields, d.Field)
	}
	slices.Sort(fields)
	return fields, r
}

func TestPatchRequestValidate(t *testing.T) {
	long := strings.Repeat("x", 141)
	cases := []struct {
		name string
		body string
		bad  []string // fields named, sorted; nil when valid
	}{
		{"empty", `{}`, nil},
		{"every field null", `{"amount":null,"currency":null,"bill_number":null,"issue_date":null,"due_date":null,"supplier_name":null,
			"supplier_tax_id":null,"payment_reference":null,"payment_contact_id":null,"account_holder_name":null,"account_number":null,
			"iban":null,"swift_code":null,"aba_code":null,"bank_code":null,"bank_name":null,"bank_country_alpha2":null,"branch_code":null,
			"bsb_code":null,"cnaps":null,"ifsc_code":null,"sort_code":null}`, nil},
		{"every field valid", `{"amount":"1578.00","currency":"GBP","bill_number":"HLP-10231","issue_date":"2026-01-14","due_date":"2026-02-13",
			"supplier_name":"Harbour Lane Print Ltd","supplier_tax_id":"GB123456782","payment_reference":"HLP-10231",
			"payment_contact_id":"0190f5cb-1a2b-7c3d-8e4f-5a6b7c8d9e01","account_holder_name":"Harbour Lane Print Ltd","account_number":"55779911",
			"iban":"GB29NWBK60161331926819","swift_code":"NWBKGB2L","aba_code":"021000021","bank_code":"NWBK","bank_name":"NatWest",
			"bank_country_alpha2":"GB","branch_code":"Docklands","bsb_code":"062000","cnaps":"102100099996","ifsc_code":"HDFC0001234","sort_code":"601613"}`, nil},
		// The amount is checked against the currency when applied, not here.
		{"amount not checked here", `{"amount":"not money"}`, nil},
		{"currency lower case", `{"currency":"eur"}`, []string{"currency"}},
		{"currency unknown", `{"currency":"EURO"}`, []string{"currency"}},
		{"text empty", `{"bill_number":""}`, []string{"bill_number"}},
		{"text leading space", `{"supplier_name":" Acme"}`, []string{"supplier_name"}},
		{"text trailing space", `{"supplier_tax_id":"DE1 "}`, []string{"supplier_tax_id"}},
		{"text control character", `{"payment_reference":"RE\t1"}`, []string{"payment_reference"}},
		{"text 141 characters", `{"bill_number":"` + long + `"}`, []string{"bill_number"}},
		{"text 140 characters", `{"bill_number":"` + strings.Repeat("ü", 140) + `"}`, nil},
		{"date impossible", `{"due_date":"2026-02-30"}`, []string{"due_date"}},
		{"date with time", `{"issue_date":"2026-02-01T00:00:00Z"}`, []string{"issue_date"}},
		{"date leap day", `{"issue_date":"2028-02-29"}`, nil},
		{"contact id not a uuid", `{"payment_contact_id":"contact-1"}`, []string{"payment_contact_id"}},
		{"iban check digits", `{"iban":"DE89370400440532013001"}`, []string{"iban"}},
		{"iban printed form", `{"iban":"de89 3704 0044 0532 0130 00"}`, nil},
		{"bic country", `{"swift_code":"COBAXXFF"}`, []string{"swift_code"}},
		{"bic length", `{"swift_code":"COBADEFFX"}`, []string{"swift_code"}},
		{"aba checksum", `{"aba_code":"021000022"}`, []string{"aba_code"}},
		{"sort code form", `{"sort_code":"60-16-13"}`, []string{"sort_code"}},
		{"bsb form", `{"bsb_code":"06200"}`, []string{"bsb_code"}},
		{"ifsc form", `{"ifsc_code":"HDFC1001234"}`, []string{"ifsc_code"}},
		{"cnaps form", `{"cnaps":"10210009999"}`, []string{"cnaps"}},
		{"account number form", `{"account_number":"5577-9911"}`, []string{"account_number"}},
		{"bank country", `{"bank_country_alpha2":"gb"}`, []string{"bank_country_alpha2"}},
		{"bank name blank", `{"bank_name":"  "}`, []string{"bank_name"}},
		{"several at once", `{"currency":"X","due_date":"soon","iban":"GB00","supplier_name":""}`,
			[]string{"currency", "due_date", "iban", "supplier_name"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := invalidFields(t, tc.body)
			if !slices.Equal(got, tc.bad) {
				t.Fatalf("invalid fields %v, want %v", got, tc.bad)
			}
		})
	}
}

// TestPatchRequestNullAndAbsent: a field sent as null is set (to clear it),
// a field left out is not, and a valid IBAN is normalized.
func TestPatchRequestNullAndAbsent(t *testing.T) {
	_, r := invalidFields(t, `{"bill_number":null,"iban":"gb29 nwbk 6016 1331 9268 19"}`)
	if !r.BillNumber.Set || r.BillNumber.Value != nil {
		t.Fatalf("bill_number null = %+v, want set to nil", r.BillNumber)
	}
	if r.DueDate.Set || r.Amount.Set {
		t.Fatal("fields left out are marked set")
	}
	if !r.IBAN.Set || r.IBAN.Value == nil || *r.IBAN.Value != "GB29NWBK60161331926819" {
		t.Fatalf("iban = %+v, want normalized", r.IBAN)
	}
	var wrong bill.PatchRequest
	if err := json.Unmarshal([]byte(`{"amount":12.5}`), &wrong); err == nil {
		t.Fatal("a number for amount was accepted")
	}
}

func TestIsDate(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-02-14":           true,
		"2028-02-29":           true,
		"1900-01-01":           true,
		"2199-12-31":           true,
		"2026-02-29":           false, // not a leap year
		"2026-02-30":           false,
		"2026-13-01":           false,
		"2026-00-10":           false,
		"2026-1-5":             false,
		"26-01-05":             false,
		"2026/01/05":           false,
		"14.02.2026":           false,
		"1899-12-31":           false,
		"2200-01-01":           false,
		"2026-02-14T00:00:00Z": false,
		" 2026-02-14":          false,
		"":                     false,
	} {
		if got := field.IsDate(s); got != want {
			t.Errorf("IsDate(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestCreditNotesAreNeverBillsOfTheOppositeSign(t *testing.T) {
	for _, tc := range []struct {
		fields   extract.Fields
		wantType bill.DocumentType
		wantDue  string
	}{
		{extract.Fields{AmountDue: "100.00"}, bill.Invoice, "100.00"},
		{extract.Fields{AmountDue: "610.00", CreditNote: true}, bill.CreditNote, "610.00"},
		{extract.Fields{AmountDue: "-42.50"}, bill.CreditNote, "42.50"},
		{extract.Fields{AmountDue: "-42.50", CreditNote: true}, bill.CreditNote, "42.50"},
		{extract.Fields{CreditNote: true}, bill.CreditNote, ""},
		{extract.Fields{}, bill.Invoice, ""},
	} {
		typ, due := bill.DocumentOf(tc.fields)
		if typ != tc.wantType || due != tc.wantDue {
			t.Errorf("%+v: %s %q, want %s %q", tc.fields, typ, due, tc.wantType, tc.wantDue)
		}
	}
}
