package invoicing_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/platform/money"
)

func TestLineTotalRoundsHalfUpExactly(t *testing.T) {
	for _, tc := range []struct {
		price         int64 // minor units
		fraction      int64 // ten-thousandths of a minor unit beyond price
		quantity, tax string
		currency      string
		want          int64
	}{
		{5, 0, "1", "10", "USD", 6},           // 0.055 → 0.06
		{5, 0, "1", "0", "USD", 5},            // exact
		{1, 0, "0.5", "0", "USD", 1},          // 0.005 → 0.01
		{1, 0, "0.4999", "0", "USD", 0},       // just below half
		{1000, 0, "3", "19", "USD", 3570},     // 35.70
		{333, 0, "0.333333", "0", "EUR", 111}, // 110.999889 → 111
		{105, 0, "1", "10", "JPY", 116},       // 115.5 → 116
		{100, 0, "1.5", "8", "JPY", 162},      // exact
		{1, 0, "0.5", "0", "JPY", 1},          // 0.5 → 1
		{3, 0, "1", "16.6666", "JPY", 3},      // 3.499998 → 3
		{1, 0, "0.1", "0", "KWD", 0},          // 0.1 fils → 0
		{0, 0, "999999999", "100", "USD", 0},  // free
		{1, 0, "1", "100", "USD", 2},          // 100% tax doubles
		{10, 0, "0.000001", "0", "USD", 0},    // tiny
		{999999999, 0, "999999999", "0", "USD", 999999998000000001},
		// Unit prices finer than the currency: only the line's total is rounded, once.
		{1, 2500, "1000", "0", "USD", 1250}, // 1000 × 0.0125 = 12.50 (not 1000 × 0.01)
		{12, 5000, "1", "0", "USD", 13},     // 0.125 → 0.13
		{12, 5000, "3", "0", "USD", 38},     // 0.375 → 0.38
		{1, 2500, "4", "20", "USD", 6},      // 0.0125 × 4 × 1.2 = 0.06 exactly
		{0, 5000, "3", "0", "JPY", 2},       // 1.5 → 2
		{0, 1, "1", "0", "USD", 0},          // 0.000001 → 0.00
		{0, 5000, "1", "0", "USD", 1},       // 0.005 → 0.01
		{0, 4999, "1", "0", "USD", 0},       // 0.004999 → 0.00
	} {
		price := money.UnitPrice{Minor: tc.price, Fraction: tc.fraction, Currency: tc.currency}
		got, err := invoicing.LineTotal(price, tc.quantity, tc.tax, tc.currency)
		if tc.want > 99999999999999999 {
			if !errors.Is(err, invoicing.ErrTotalTooLarge) {
				t.Errorf("%s × %s × %s%%: got %d, %v; want ErrTotalTooLarge", price, tc.quantity, tc.tax, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s × %s × (1 + %s%%) in %s = %d, %v; want %d", price, tc.quantity, tc.tax, tc.currency, got, err, tc.want)
		}
	}
}

func TestSumRefusesOverflow(t *testing.T) {
	max := invoicing.LineItem{Total: 99999999999999999}
	if _, err := invoicing.Sum([]invoicing.LineItem{max, {Total: 1}}, "USD"); !errors.Is(err, invoicing.ErrTotalTooLarge) {
		t.Fatalf("sum beyond the largest USD amount: %v", err)
	}
	if got, err := invoicing.Sum([]invoicing.LineItem{{Total: 6}, {Total: 3570}}, "USD"); err != nil || got != 3576 {
		t.Fatalf("sum = %d, %v", got, err)
	}
}

func TestStateRules(t *testing.T) {
	for state, want := range map[string][]string{
		invoicing.Draft:            {invoicing.AwaitingApproval, invoicing.Sent},
		invoicing.AwaitingApproval: {invoicing.Draft, invoicing.Sent},
		invoicing.Sent:             {invoicing.Finalized},
		invoicing.Finalized:        {},
		invoicing.Paid:             {invoicing.Sent},
	} {
		if got := invoicing.NextValidStates(state); !slices.Equal(got, want) {
			t.Errorf("NextValidStates(%s) = %v, want %v", state, got, want)
		}
	}
	late := time.Date(2025, 3, 1, 23, 59, 59, 0, time.UTC)
	for _, tc := range []struct {
		state, due string
		at         time.Time
		want       bool
	}{
		{invoicing.Sent, "2025-03-01", late, false},
		{invoicing.Sent, "2025-03-01", late.Add(time.Second), true},
		{invoicing.Sent, "2025-02-28", late, true},
		{invoicing.Draft, "2025-01-01", late, false},
		{invoicing.Paid, "2025-01-01", late, false},
		{invoicing.Finalized, "2025-01-01", late, false},
		// UTC decides, not the zone the time is given in.
		{invoicing.Sent, "2025-03-01", time.Date(2025, 3, 1, 20, 0, 0, 0, time.FixedZone("UTC-5", -5*3600)), true},
	} {
		if got := invoicing.Overdue(tc.state, tc.due, tc.at); got != tc.want {
			t.Errorf("Overdue(%s, %s, %s) = %v", tc.state, tc.due, tc.at, got)
		}
	}
	for _, pair := range [][2]string{{"USDC", "USD"}, {"USDT", "USD"}, {"EURC", "EUR"}} {
		if !invoicing.CoinPays(pair[0], pair[1]) {
			t.Errorf("%s should pay %s", pair[0], pair[1])
		}
	}
	if invoicing.CoinPays("EURC", "USD") || invoicing.CoinPays("USDC", "EUR") || invoicing.CoinPays("USDC", "GBP") {
		t.Error("a coin pays another currency")
	}
}
