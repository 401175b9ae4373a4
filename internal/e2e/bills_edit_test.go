package e2e_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// expectInvalidFields fails unless r is 400 invalid_request whose details
// name exactly fields (in any order).
func expectInvalidFields(t *testing.T, r *apitest.Response, fields ...string) {
	t.Helper()
	e := r.ExpectError(t, 400, "invalid_request")
	var got []string
	for _, d := range e.Error.Details {
		got = append(got, d.Field)
	}
	slices.Sort(got)
	want := slices.Clone(fields)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("details name %v, want %v; body %s", got, want, r.Body)
	}
}

// TestUpdateBillFields sets each kind of field, clears fields with null,
// and checks the rules: the amount needs a currency and is read at its
// precision, bank fields are checked as for payment contacts, unknown
// fields are refused.
func TestUpdateBillFields(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	b := blankBill(t, s, p.web, p.org)
	all := map[string]any{
		"amount": "1578", "currency": "GBP", "bill_number": "HLP-10231", "issue_date": "2026-01-14", "due_date": "2026-02-13",
		"supplier_name": "Harbour Lane Print Ltd", "supplier_tax_id": "GB123456782", "payment_reference": "HLP-10231",
		"payment_contact_id": p.contact, "account_holder_name": "Harbour Lane Print Ltd", "account_number": "55779911",
		"iban": "gb29 nwbk 6016 1331 9268 19", "swift_code": "NWBKGB2L", "aba_code": "021000021", "bank_code": "NWBK",
		"bank_name": "NatWest", "bank_country_alpha2": "GB", "branch_code": "Docklands", "bsb_code": "062000",
		"cnaps": "102100099996", "ifsc_code": "HDFC0001234", "sort_code": "601613",
	}
	got := patchBillOK(t, s, p.web, b.Id.String(), all)
	want := map[string]string{}
	for k, v := range all {
		want[k] = v.(string)
	}
	want["amount"] = "1578.00"              // read at GBP's precision
	want["iban"] = "GB29NWBK60161331926819" // printed form normalized
	if f := billFields(t, got); !mapsEqual(f, want) {
		t.Fatalf("after setting every field:\n got %v\nwant %v", f, want)
	}
	if !mapsEqual(billFields(t, getBill(t, s, p.web, b.Id.String())), want) || got.Status != "extracted" || !got.UpdatedAt.After(b.UpdatedAt) && !got.UpdatedAt.Equal(b.UpdatedAt) {
		t.Fatalf("stored bill = %+v", got)
	}
	// A field left out keeps its value; null clears; {} changes nothing.
	got = patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"bill_number": nil, "iban": nil, "payment_contact_id": nil, "due_date": nil, "supplier_name": "Harbour Lane"})
	delete(want, "bill_number")
	delete(want, "iban")
	delete(want, "payment_contact_id")
	delete(want, "due_date")
	want["supplier_name"] = "Harbour Lane"
	if f := billFields(t, got); !mapsEqual(f, want) {
		t.Fatalf("after clearing:\n got %v\nwant %v", f, want)
	}
	if f := billFields(t, patchBillOK(t, s, p.web, b.Id.String(), map[string]any{})); !mapsEqual(f, want) {
		t.Fatalf("after an empty PATCH: %v", f)
	}

	// The amount is read at the currency's precision, JPY without decimals.
	for _, tc := range []struct {
		body   map[string]any
		amount string
	}{
		{map[string]any{"amount": "12.5", "currency": "EUR"}, "12.50"},
		{map[string]any{"amount": "0"}, "0.00"},
		{map[string]any{"amount": "125000", "currency": "JPY"}, "125000"},
		{map[string]any{"amount": "980"}, "980"},
		{map[string]any{"currency": "USD"}, "980.00"}, // the kept amount read in the new currency
		{map[string]any{"amount": "999999999999999.99"}, "999999999999999.99"},
	} {
		if got := patchBillOK(t, s, p.web, b.Id.String(), tc.body); str(got.Amount) != tc.amount {
			t.Fatalf("%v: amount %s, want %s", tc.body, str(got.Amount), tc.amount)
		}
	}
	patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"amount": "980", "currency": "JPY"})
	for _, body := range []map[string]any{
		{"amount": "1250.5"},                     // JPY has no decimals
		{"amount": "12.345", "currency": "EUR"},  // EUR has two
		{"amount": "-5"},                         // at least zero
		{"amount": "1,000"},                      // a decimal string
		{"amount": "1000000000000000"},           // 16 integer digits
		{"currency": nil},                        // the amount kept needs a currency
		{"currency": "EUR", "amount": "980.123"}, // read at the new currency's precision
	} {
		expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), body), "amount")
	}
	if got := getBill(t, s, p.web, b.Id.String()); str(got.Amount) != "980" || str(got.Currency) != "JPY" {
		t.Fatalf("refused PATCHes changed the amount: %s %s", str(got.Amount), str(got.Currency))
	}
	// Without a currency there is no amount.
	blank := blankBill(t, s, p.web, p.org)
	expectInvalidFields(t, patchBill(t, s, p.web, blank.Id.String(), map[string]any{"amount": "10.00"}), "amount")
	if got := patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"amount": nil, "currency": nil}); got.Amount != nil || got.Currency != nil {
		t.Fatalf("cleared amount and currency = %s %s", str(got.Amount), str(got.Currency))
	}

	// Check digits and forms of bank fields, as for payment contacts.
	expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"iban": "DE89370400440532013001"}), "iban")
	expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"swift_code": "COBA1EFF"}), "swift_code")
	expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"aba_code": "021000022"}), "aba_code")
	expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"iban": "GB29NWBK60161331926818", "swift_code": "NWBKXX2L",
		"sort_code": "12-34-56", "bsb_code": "06200", "ifsc_code": "HDFC1001234", "cnaps": "1021", "account_number": "55-77", "bank_country_alpha2": "QQ"}),
		"iban", "swift_code", "sort_code", "bsb_code", "ifsc_code", "cnaps", "account_number", "bank_country_alpha2")
	// Text, dates, currency and the contact id.
	expectInvalidFields(t, patchBill(t, s, p.web, b.Id.String(), map[string]any{"due_date": "2026-02-30", "issue_date": "14.01.2026",
		"supplier_name": " Harbour", "bill_number": "", "payment_reference": strings.Repeat("x", 141), "supplier_tax_id": "GB\n1",
		"currency": "EURO", "payment_contact_id": "nope"}),
		"due_date", "issue_date", "supplier_name", "bill_number", "payment_reference", "supplier_tax_id", "currency", "payment_contact_id")
	if got := patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"payment_reference": strings.Repeat("é", 140)}); len([]rune(str(got.PaymentReference))) != 140 {
		t.Fatalf("140 characters refused: %+v", got)
	}
	// Unknown and read-only fields, wrong types.
	for _, body := range []map[string]any{{"status": "cancelled"}, {"fiat_outgoing_id": nil}, {"extraction_failed_at": nil}, {"notes": "x"}, {"amount": 12.5}} {
		patchBill(t, s, p.web, b.Id.String(), body).ExpectError(t, 400, "invalid_request")
	}
	patchBill(t, s, p.web, b.Id.String(), "[]").ExpectError(t, 400, "invalid_request")
	// A payment contact of another organization is not found.
	eve := newPayer(t, s, "eve@evil.test", "")
	patchBill(t, s, p.web, b.Id.String(), map[string]any{"payment_contact_id": eve.contact}).ExpectError(t, 404, "not_found")
	if got := getBill(t, s, p.web, b.Id.String()); got.PaymentContactId != nil {
		t.Fatalf("payment_contact_id = %s after a refused PATCH", got.PaymentContactId.String())
	}
}

// TestCancelBill: extracted → cancelled, then every change is a conflict;
// a bill whose payment is requested cannot be cancelled. (Cancelling from
// extracting: TestBillExtractionKeepsWhatPeopleSet.)
func TestCancelBill(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	b := payableBill(t, s, p, "50.00")
	var c api.Bill
	s.Post(t, billPath(b.Id.String(), "cancel"), p.web, nil).ExpectStatus(t, 200).Decode(t, &c)
	if c.Status != "cancelled" || !mapsEqual(billFields(t, c), billFields(t, b)) {
		t.Fatalf("cancelled bill = %+v", c)
	}
	s.Post(t, billPath(b.Id.String(), "cancel"), p.web, nil).ExpectError(t, 409, "conflict")
	patchBill(t, s, p.web, b.Id.String(), map[string]any{"bill_number": "X-1"}).ExpectError(t, 409, "conflict")
	s.Post(t, billPath(b.Id.String(), "payment-contact"), p.web, nil).ExpectError(t, 409, "conflict")
	q := billQuote(t, s, p, b.PaymentContactId.String(), "50.00")
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())).ExpectError(t, 422, "bill_mismatch")
	if got := getBill(t, s, p.web, b.Id.String()); got.Status != "cancelled" {
		t.Fatalf("bill = %+v", got)
	}

	requested := payableBill(t, s, p, "20.00")
	pay := payBill(t, s, p, requested)
	s.Post(t, billPath(requested.Id.String(), "cancel"), p.web, nil).ExpectError(t, 409, "conflict")
	patchBill(t, s, p.web, requested.Id.String(), map[string]any{"amount": "21.00"}).ExpectError(t, 409, "conflict")
	patchBill(t, s, p.web, requested.Id.String(), map[string]any{}).ExpectError(t, 409, "conflict")
	s.Post(t, billPath(requested.Id.String(), "payment-contact"), p.web, nil).ExpectError(t, 409, "conflict")
	expectRequested(t, s, p.web, requested.Id.String(), pay)
	// Unknown bills.
	s.Post(t, billPath("0190f5d0-0000-7000-8000-000000000000", "cancel"), p.web, nil).ExpectError(t, 404, "not_found")
	s.Post(t, billPath("not-a-uuid", "cancel"), p.web, nil).ExpectError(t, 404, "not_found")
}

// TestBillPaymentContact makes payment contacts from bills: the contact has
// the bill's supplier name, currency and bank fields; what a contact needs
// and the bill lacks is 400 naming the bill's fields.
func TestBillPaymentContact(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	contactOf := func(b api.Bill) api.PaymentContact {
		t.Helper()
		var c api.PaymentContact
		s.Get(t, "/api/v1/payment-contacts/"+str(b.PaymentContactId), p.web).ExpectStatus(t, 200).Decode(t, &c)
		return c
	}
	// From an extracted e-invoice (EUR, IBAN and BIC).
	eu := extracted(t, s, p.web, uploadCorpus(t, s, p.web, p.org, "cii-de-xrechnung.xml").Id.String())
	var withContact api.Bill
	s.Post(t, billPath(eu.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &withContact)
	c := contactOf(withContact)
	if withContact.PaymentContactId == nil || c.Name != "Müller Maschinenbau GmbH" || c.Currency != "EUR" || c.Rail != "fiat" ||
		str(c.Iban) != "DE89370400440532013000" || str(c.SwiftCode) != "COBADEFFXXX" || str(c.AccountHolderName) != "Müller Maschinenbau GmbH" ||
		c.AccountNumber != nil || c.SortCode != nil {
		t.Fatalf("contact from the e-invoice = %+v", c)
	}
	withContact.PaymentContactId, withContact.UpdatedAt = nil, eu.UpdatedAt
	if !mapsEqual(billFields(t, withContact), billFields(t, eu)) {
		t.Fatal("making the contact changed the bill's fields")
	}
	// From a UK bill: account number and sort code, holder and bank name as set on the bill.
	uk := blankBill(t, s, p.web, p.org)
	patchBillOK(t, s, p.web, uk.Id.String(), map[string]any{"supplier_name": "Brightside Design Studio", "currency": "GBP", "account_number": "73815590",
		"sort_code": "090128", "account_holder_name": "Brightside Design Ltd", "bank_name": "Santander UK"})
	var ukBill api.Bill
	s.Post(t, billPath(uk.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &ukBill)
	if c := contactOf(ukBill); c.Name != "Brightside Design Studio" || c.Currency != "GBP" || str(c.AccountNumber) != "73815590" ||
		str(c.SortCode) != "090128" || str(c.AccountHolderName) != "Brightside Design Ltd" || str(c.BankName) != "Santander UK" || c.Iban != nil {
		t.Fatalf("contact from the UK bill = %+v", c)
	}
	// Calling again makes a new contact and points the bill at it.
	var again api.Bill
	s.Post(t, billPath(uk.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &again)
	if str(again.PaymentContactId) == str(ukBill.PaymentContactId) {
		t.Fatal("a second call kept the first contact")
	}

	// What is missing is named after the bill's fields.
	blank := blankBill(t, s, p.web, p.org)
	expectInvalidFields(t, s.Post(t, billPath(blank.Id.String(), "payment-contact"), p.web, nil), "supplier_name", "currency", "iban")
	patchBillOK(t, s, p.web, blank.Id.String(), map[string]any{"currency": "USD"})
	expectInvalidFields(t, s.Post(t, billPath(blank.Id.String(), "payment-contact"), p.web, nil), "supplier_name", "iban")
	patchBillOK(t, s, p.web, blank.Id.String(), map[string]any{"supplier_name": "Cascade Cloud Services, Inc.", "account_number": "483920175"})
	expectInvalidFields(t, s.Post(t, billPath(blank.Id.String(), "payment-contact"), p.web, nil), "account_number")
	var us api.Bill
	patchBillOK(t, s, p.web, blank.Id.String(), map[string]any{"aba_code": "021000021"})
	s.Post(t, billPath(blank.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &us)
	if c := contactOf(us); c.Name != "Cascade Cloud Services, Inc." || c.Currency != "USD" || str(c.AbaCode) != "021000021" {
		t.Fatalf("contact from the US bill = %+v", c)
	}
	if got := getBill(t, s, p.web, blank.Id.String()); str(got.PaymentContactId) != str(us.PaymentContactId) {
		t.Fatalf("bill's payment_contact_id = %s", str(got.PaymentContactId))
	}
}
