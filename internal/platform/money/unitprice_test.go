package money_test

import (
	"errors"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/money"
)

func TestParseUnitPrice(t *testing.T) {
	for _, tc := range []struct {
		in, currency string
		want         money.UnitPrice
		str          string
	}{
		{"0.0125", "USD", money.UnitPrice{Minor: 1, Fraction: 2500}, "0.0125"},
		{"0.125", "USD", money.UnitPrice{Minor: 12, Fraction: 5000}, "0.125"},
		{"0.000001", "USD", money.UnitPrice{Minor: 0, Fraction: 1}, "0.000001"},
		{"12.5", "EUR", money.UnitPrice{Minor: 1250}, "12.50"},
		{"12.500000", "EUR", money.UnitPrice{Minor: 1250}, "12.50"},
		{"1000", "JPY", money.UnitPrice{Minor: 1000}, "1000"},
		{"0.5", "JPY", money.UnitPrice{Minor: 0, Fraction: 5000}, "0.5"},
		{"1.2345", "JPY", money.UnitPrice{Minor: 1, Fraction: 2345}, "1.2345"},
		{"0.0001234", "KWD", money.UnitPrice{Minor: 0, Fraction: 1234}, "0.0001234"},
		{"999999999999999.999999", "USD", money.UnitPrice{Minor: 99999999999999999, Fraction: 9999}, "999999999999999.999999"},
	} {
		got, err := money.ParseUnitPrice(tc.in, tc.currency)
		tc.want.Currency = tc.currency
		if err != nil || got != tc.want || got.String() != tc.str {
			t.Errorf("ParseUnitPrice(%q, %s) = %+v (%q), %v; want %+v (%q)", tc.in, tc.currency, got, got.String(), err, tc.want, tc.str)
		}
	}
	for _, tc := range []struct{ in, currency, reason string }{
		{"0.0000001", "USD", "has more decimal places than a unit price in USD allows (6)"},
		{"0.00001", "JPY", "has more decimal places than a unit price in JPY allows (4)"},
		{"-0.0125", "USD", "must not be negative"},
		{"1e-3", "USD", "must not use exponent notation"},
		{".5", "USD", "must have a digit before the decimal point"},
		{"", "USD", "is empty"},
	} {
		_, err := money.ParseUnitPrice(tc.in, tc.currency)
		var pe *money.ParseError
		if !errors.As(err, &pe) || pe.Reason != tc.reason || pe.Input != tc.in {
			t.Errorf("ParseUnitPrice(%q, %s): %v, want %q", tc.in, tc.currency, err, tc.reason)
		}
	}
	if _, err := money.ParseUnitPrice("1000000000000000.0125", "USD"); !errors.Is(err, money.ErrOverflow) {
		t.Errorf("16 integer digits: %v, want ErrOverflow", err)
	}
	if _, err := money.ParseUnitPrice("1", "XYZ"); !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("unknown currency: %v", err)
	}
	// Parse keeps the currency's precision.
	if _, err := money.Parse("0.0125", "USD"); err == nil {
		t.Error("Parse accepted a unit price's decimals")
	}
	if r := (money.UnitPrice{Minor: 1, Fraction: 2500, Currency: "USD"}).Rat(); r.RatString() != "5/4" {
		t.Errorf("Rat = %s, want 5/4 minor units", r.RatString())
	}
}
