package expense_test

import (
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

func TestMoves(t *testing.T) {
	for _, tc := range []struct {
		move, from, to string // to "" : a conflict
	}{
		{"submit", expense.Draft, expense.Submitted},
		{"submit", expense.Pending, expense.Submitted},
		{"submit", expense.Working, expense.Submitted},
		{"submit", expense.Rejected, expense.Submitted},
		{"submit", expense.Submitted, ""},
		{"submit", expense.Approved, ""},
		{"submit", expense.Paid, ""},
		{"approve", expense.Submitted, expense.Approved},
		{"approve", expense.Draft, ""},
		{"approve", expense.Rejected, ""},
		{"approve", expense.Approved, ""},
		{"reject", expense.Submitted, expense.Rejected},
		{"reject", expense.Working, ""},
		{"reject", expense.Approved, ""},
		{"mark-paid", expense.Approved, expense.Paid},
		{"mark-paid", expense.Submitted, ""},
		{"mark-paid", expense.Paid, ""},
		{"unknown", expense.Draft, ""},
	} {
		to, err := expense.Next(tc.move, tc.from)
		if tc.to == "" {
			if !apierr.Is(err, apierr.Conflict) {
				t.Errorf("%s from %s: %q, %v; want a conflict", tc.move, tc.from, to, err)
			}
			continue
		}
		if err != nil || to != tc.to {
			t.Errorf("%s from %s: %q, %v; want %s", tc.move, tc.from, to, err, tc.to)
		}
	}
	for _, s := range expense.Statuses {
		want := s == expense.Draft || s == expense.Pending || s == expense.Working || s == expense.Rejected
		if expense.Editable(s) != want {
			t.Errorf("editable(%s) = %v", s, !want)
		}
	}
}

func TestMissingForSubmission(t *testing.T) {
	cat, date := "meals", "2026-01-01"
	bound := []expense.Binding{{}}
	for _, tc := range []struct {
		name     string
		e        expense.Expense
		receipts int
		want     []string
	}{
		{"empty", expense.Expense{}, 0, []string{"a category", "a transaction date", "a bound transaction or a receipt"}},
		{"no category", expense.Expense{TransactionDate: &date, Bindings: bound}, 0, []string{"a category"}},
		{"no date", expense.Expense{Category: &cat}, 1, []string{"a transaction date"}},
		{"nothing backing it", expense.Expense{Category: &cat, TransactionDate: &date}, 0, []string{"a bound transaction or a receipt"}},
		{"a binding", expense.Expense{Category: &cat, TransactionDate: &date, Bindings: bound}, 0, nil},
		{"a receipt", expense.Expense{Category: &cat, TransactionDate: &date}, 1, nil},
	} {
		if got := expense.Missing(tc.e, tc.receipts); !slices.Equal(got, tc.want) {
			t.Errorf("%s: missing %v, want %v", tc.name, got, tc.want)
		}
	}
	err := expense.ErrIncomplete([]string{"a category"})
	if !apierr.Is(err, apierr.ExpenseIncomplete) || !strings.Contains(err.Error(), "a category") {
		t.Errorf("errIncomplete: %v", err)
	}
}

func amt(minor int64, currency string) money.Amount {
	return money.Amount{Minor: minor, Currency: currency}
}

func bindings(totals ...money.Amount) []expense.Binding {
	out := make([]expense.Binding, len(totals))
	for i, a := range totals {
		out[i] = expense.Binding{ID: uuid.New(), Total: a}
	}
	return out
}

func TestTotals(t *testing.T) {
	bill, local := amt(9900, "GBP"), amt(500, "JPY")
	for _, tc := range []struct {
		name        string
		bound       []expense.Binding
		bill, local *money.Amount
		wantBill    []money.Amount
		wantLocal   []money.Amount
	}{
		{"nothing", nil, nil, nil, []money.Amount{}, []money.Amount{}},
		{"bill amount when nothing is bound", nil, &bill, &local, []money.Amount{bill}, []money.Amount{local}},
		{"bindings replace the bill amount", bindings(amt(1025, "USD"), amt(475, "USD")), &bill, nil,
			[]money.Amount{amt(1500, "USD")}, []money.Amount{}},
		{"per currency, sorted", bindings(amt(1, "USD"), amt(2, "EUR"), amt(3, "USD"), amt(4, "CHF")), nil, nil,
			[]money.Amount{amt(4, "CHF"), amt(2, "EUR"), amt(4, "USD")}, []money.Amount{}},
		{"a refund counts negative", bindings(amt(1000, "USD"), amt(-300, "USD")), nil, nil, []money.Amount{amt(700, "USD")}, []money.Amount{}},
		{"near the edge, exact", bindings(amt(math.MaxInt64-1, "EUR"), amt(1, "EUR")), nil, nil,
			[]money.Amount{amt(math.MaxInt64, "EUR")}, []money.Amount{}},
	} {
		b, l, err := expense.Totals(tc.bound, tc.bill, tc.local)
		if err != nil || !slices.Equal(b, tc.wantBill) || !slices.Equal(l, tc.wantLocal) {
			t.Errorf("%s: %v %v %v; want %v %v", tc.name, b, l, err, tc.wantBill, tc.wantLocal)
		}
	}
	for _, bound := range [][]expense.Binding{
		bindings(amt(math.MaxInt64, "EUR"), amt(1, "EUR")),
		bindings(amt(math.MaxInt64/2+1, "EUR"), amt(math.MaxInt64/2+1, "EUR")),
		bindings(amt(-math.MaxInt64, "EUR"), amt(-1, "EUR")),
	} {
		if _, _, err := expense.Totals(bound, nil, nil); !errors.Is(err, money.ErrOverflow) {
			t.Errorf("%v: %v, want an overflow", bound, err)
		}
	}
}

// decodeFields decodes body as the handlers do: unknown fields refused.
func decodeFields(t *testing.T, body string) (expense.Fields, error) {
	t.Helper()
	var f expense.Fields
	dec := json.NewDecoder(strings.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, err
	}
	return f, f.Validate()
}

func TestFieldsTellAbsentFromNull(t *testing.T) {
	f, err := decodeFields(t, `{"description": null, "category": "meals"}`)
	if err != nil || !f.Description.Set || f.Description.Value != nil || !f.Category.Set || *f.Category.Value != "meals" ||
		f.BusinessName.Set || f.Empty() {
		t.Fatalf("%+v, %v", f, err)
	}
	if f, _ := decodeFields(t, `{}`); !f.Empty() {
		t.Fatal("{} is not empty")
	}
	_, err = decodeFields(t, `{"category": 7}`)
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Field != "category" {
		t.Fatalf("a number for a string: %v", err)
	}

	e := expense.Expense{Description: new(string), BusinessName: new(string)}
	f, _ = decodeFields(t, `{"description": null, "bill_amount": "12.5", "bill_currency": "EUR", "transaction_date": "2026-02-28"}`)
	f.Apply(&e)
	if e.Description != nil || e.BusinessName == nil || *e.Bill != amt(1250, "EUR") || *e.TransactionDate != "2026-02-28" {
		t.Fatalf("applied: %+v", e)
	}
	f, _ = decodeFields(t, `{"bill_amount": null, "bill_currency": null}`)
	f.Apply(&e)
	if e.Bill != nil {
		t.Fatalf("cleared bill: %+v", e.Bill)
	}
}

func TestFieldsValidate(t *testing.T) {
	for _, tc := range []struct {
		body  string
		field string // "" : valid
	}{
		{`{}`, ""},
		{`{"category": "utilities", "transaction_date": "2024-02-29", "bill_amount": "1000", "bill_currency": "JPY"}`, ""},
		{`{"local_amount": "0.001", "local_currency": "KWD"}`, ""},
		{`{"description": "two\nlines\tand a tab"}`, ""},
		{`{"bill_amount": null, "bill_currency": null}`, ""},
		{`{"category": "travel"}`, "category"},
		{`{"transaction_date": "2023-02-29"}`, "transaction_date"},
		{`{"transaction_date": "2026-1-5"}`, "transaction_date"},
		{`{"bill_amount": "1.00"}`, "bill_currency"},
		{`{"bill_currency": "EUR"}`, "bill_amount"},
		{`{"local_amount": "1.00"}`, "local_currency"},
		{`{"bill_amount": "1.00", "bill_currency": null}`, "bill_amount"},
		{`{"bill_amount": "1.005", "bill_currency": "EUR"}`, "bill_amount"},
		{`{"bill_amount": "0", "bill_currency": "EUR"}`, "bill_amount"},
		{`{"bill_amount": "-5", "bill_currency": "EUR"}`, "bill_amount"},
		{`{"bill_amount": "1e3", "bill_currency": "EUR"}`, "bill_amount"},
		{`{"bill_amount": "1000000000000000", "bill_currency": "EUR"}`, "bill_amount"},
		{`{"bill_amount": "1", "bill_currency": "ABC"}`, "bill_currency"},
		{`{"business_name": ""}`, "business_name"},
		{`{"business_name": "trailing "}`, "business_name"},
		{`{"business_name": "tab\tinside"}`, "business_name"},
		{`{"receipt_number": "` + strings.Repeat("9", expense.MaxReceiptNumber+1) + `"}`, "receipt_number"},
		{`{"business_tax_id": "` + strings.Repeat("9", expense.MaxBusinessTaxID+1) + `"}`, "business_tax_id"},
		{`{"description": "` + strings.Repeat("é", expense.MaxDescription+1) + `"}`, "description"},
		{`{"description": "bell\u0007"}`, "description"},
	} {
		_, err := decodeFields(t, tc.body)
		if tc.field == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.body, err)
			}
			continue
		}
		e, ok := apierr.As(err)
		if !ok || e.Type != apierr.InvalidRequest {
			t.Errorf("%s: %v, want invalid_request", tc.body, err)
			continue
		}
		if fields := e.Details.([]apierr.FieldError); fields[0].Field != tc.field {
			t.Errorf("%s: fields %v, want %s", tc.body, fields, tc.field)
		}
	}
}

func TestSearch(t *testing.T) {
	name, desc, receipt := "Café SACHER", "Room\nservice", "R_100%"
	if got := expense.SearchText(expense.Expense{BusinessName: &name, Description: &desc, ReceiptNumber: &receipt}); got != "café sacher\x1froom\nservice\x1fr_100%" {
		t.Errorf("searchText %q", got)
	}
	if got := expense.SearchText(expense.Expense{ReceiptNumber: &receipt}); got != "r_100%" {
		t.Errorf("searchText of one field %q", got)
	}
	for in, want := range map[string]string{
		"Sacher": "%sacher%",
		"100%":   `%100\%%`,
		"R_1":    `%r\_1%`,
		`a\b`:    `%a\\b%`,
		`\%_`:    `%\\\%\_%`,
	} {
		if got := expense.LikePattern(in); got != want {
			t.Errorf("likePattern(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRejectAndBindRequests(t *testing.T) {
	long := strings.Repeat("r", expense.MaxReason+1)
	for _, tc := range []struct {
		v     interface{ Validate() error }
		field string
	}{
		{expense.RejectRequest{}, ""},
		{expense.RejectRequest{Reason: new(string)}, ""},
		{expense.RejectRequest{Reason: &long}, "reason"},
		{expense.BindRequest{TargetID: ptr(uuid.NewString()), TargetType: ptr(expense.CardTransaction)}, ""},
		{expense.BindRequest{TargetType: ptr(expense.CardTransaction)}, "target_id"},
		{expense.BindRequest{TargetID: ptr("12"), TargetType: ptr(expense.CardTransaction)}, "target_id"},
		{expense.BindRequest{TargetID: ptr(uuid.NewString())}, "target_type"},
		{expense.BindRequest{TargetID: ptr(uuid.NewString()), TargetType: ptr("deposit")}, "target_type"},
		{expense.ReceiptRequest{FileID: ptr(uuid.NewString())}, ""},
		{expense.ReceiptRequest{}, "file_id"},
		{expense.ReceiptRequest{FileID: ptr("file")}, "file_id"},
	} {
		err := tc.v.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.v, err)
			}
			continue
		}
		e, ok := apierr.As(err)
		if !ok || e.Details.([]apierr.FieldError)[0].Field != tc.field {
			t.Errorf("%+v: %v, want %s refused", tc.v, err, tc.field)
		}
	}
}

func ptr[T any](v T) *T { return &v }
