package paymentrequest_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

func fields(err error) []string {
	e, ok := apierr.As(err)
	if !ok {
		return nil
	}
	var out []string
	for _, d := range e.Details.([]apierr.FieldError) {
		out = append(out, d.Field)
	}
	slices.Sort(out)
	return out
}

func TestCreateRequestValidation(t *testing.T) {
	s := func(v string) *string { return &v }
	ok := paymentrequest.CreateRequest{ContactID: "0190f5cb-1a2b-7c3d-8e4f-5a6b7c8d9e01", Amount: "1250.00", Currency: "EUR",
		Reference: s("PO 2026-0417"), Reason: s("PYR001")}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a valid request: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(r *paymentrequest.CreateRequest)
		want []string
	}{
		{"no contact", func(r *paymentrequest.CreateRequest) { r.ContactID = "" }, []string{"payment_contact_id"}},
		{"no amount", func(r *paymentrequest.CreateRequest) { r.Amount = "" }, []string{"amount"}},
		{"zero", func(r *paymentrequest.CreateRequest) { r.Amount = "0.00" }, []string{"amount"}},
		{"negative", func(r *paymentrequest.CreateRequest) { r.Amount = "-1.00" }, []string{"amount"}},
		{"too precise", func(r *paymentrequest.CreateRequest) { r.Amount = "1.001" }, []string{"amount"}},
		{"JPY decimals", func(r *paymentrequest.CreateRequest) { r.Amount, r.Currency = "10.5", "JPY" }, []string{"amount"}},
		{"16 digits", func(r *paymentrequest.CreateRequest) { r.Amount = "1234567890123456.00" }, []string{"amount"}},
		{"lower-case currency", func(r *paymentrequest.CreateRequest) { r.Currency = "eur" }, []string{"currency"}},
		{"long reference", func(r *paymentrequest.CreateRequest) { r.Reference = s(strings.Repeat("x", 36)) }, []string{"reference"}},
		{"blank reference", func(r *paymentrequest.CreateRequest) { r.Reference = s("  ") }, []string{"reference"}},
		{"not a reason code", func(r *paymentrequest.CreateRequest) { r.Reason = s("because") }, []string{"reason"}},
		{"long external id", func(r *paymentrequest.CreateRequest) { r.ExternalID = s(strings.Repeat("e", 256)) }, []string{"external_id"}},
		{"long note", func(r *paymentrequest.CreateRequest) { r.Note = s(strings.Repeat("n", 1001)) }, []string{"note"}},
	} {
		r := ok
		tc.edit(&r)
		if got := fields(r.Validate()); !slices.Equal(got, tc.want) {
			t.Errorf("%s: invalid fields %v, want %v", tc.name, got, tc.want)
		}
	}
	// 35 characters of any script fit the statement.
	r := ok
	r.Reference = s(strings.Repeat("ü", 35))
	if err := r.Validate(); err != nil {
		t.Errorf("35 characters: %v", err)
	}
}

func TestDeclineNeedsAReason(t *testing.T) {
	for reason, valid := range map[string]bool{"": false, "   ": false, "Paid by card.": true, strings.Repeat("r", 500): true, strings.Repeat("r", 501): false} {
		if err := (paymentrequest.DeclineRequest{Reason: reason}).Validate(); (err == nil) != valid {
			t.Errorf("reason of %d characters: %v", len(reason), err)
		}
	}
}
