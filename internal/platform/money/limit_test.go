package money_test

import (
	"errors"
	"math"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/money"
)

func TestMax(t *testing.T) {
	for _, tc := range []struct {
		cur, want string
		minor     int64
	}{
		{"EUR", "999999999999999.99", 99999999999999999},
		{"JPY", "999999999999999", 999999999999999},
		{"KWD", "999999999999999.999", 999999999999999999},
	} {
		m, ok := money.Max(tc.cur)
		if !ok || m.Minor != tc.minor || m.String() != tc.want || m.Currency != tc.cur {
			t.Errorf("Max(%s) = %+v (%s), %v; want %s", tc.cur, m, m, ok, tc.want)
		}
		if !m.WithinLimit() || !m.Neg().WithinLimit() {
			t.Errorf("Max(%s) is not within the limit", tc.cur)
		}
		over := money.Amount{Minor: m.Minor + 1, Currency: tc.cur}
		if over.WithinLimit() || over.Neg().WithinLimit() {
			t.Errorf("%s %s is within the limit", over, tc.cur)
		}
		if _, err := money.Parse(over.String(), tc.cur); !errors.Is(err, money.ErrOverflow) {
			t.Errorf("Parse(%s %s): %v; want ErrOverflow", over, tc.cur, err)
		}
	}
	if _, ok := money.Max("XAU"); ok {
		t.Error("Max(XAU) ok")
	}
	if (money.Amount{Minor: 1, Currency: "ABC"}).WithinLimit() {
		t.Error("an amount in an unknown currency is within the limit")
	}
}

// TestLimitKeepsSumsInRange is the arithmetic behind the 15-digit rule: in
// every supported currency the largest amount is below 10^18 minor units,
// so nine of them (or an amount, its fee and a balance) still add up in int64.
func TestLimitKeepsSumsInRange(t *testing.T) {
	for _, cur := range []string{"EUR", "JPY", "KWD", "BHD", "USD", "CHF"} {
		m, _ := money.Max(cur)
		if m.Minor >= 1e18 {
			t.Errorf("Max(%s) = %d minor units, not below 10^18", cur, m.Minor)
		}
		sum := m
		for i := 1; i < 9; i++ {
			var err error
			if sum, err = sum.Add(m); err != nil {
				t.Fatalf("%d × Max(%s): %v", i+1, cur, err)
			}
		}
	}
}

// FuzzStringRoundTrip: every amount within the limit formats to a string
// that parses back to it (ParseSigned, and Parse when not negative); every
// amount beyond it is refused with ErrOverflow, never misread.
func FuzzStringRoundTrip(f *testing.F) {
	codes := []string{"EUR", "JPY", "KWD", "USD", "BHD", "XOF", "CHF"}
	for _, minor := range []int64{0, 1, -1, 5, 1250, -1250, 99999999999999999, 100000000000000000, 999999999999999,
		1000000000000000, 999999999999999999, 1000000000000000000, math.MaxInt64, -math.MaxInt64, math.MinInt64} {
		for i := range codes {
			f.Add(minor, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, minor int64, idx uint8) {
		a := money.Amount{Minor: minor, Currency: codes[int(idx)%len(codes)]}
		str := a.String()
		got, err := money.ParseSigned(str, a.Currency)
		if !a.WithinLimit() {
			if !errors.Is(err, money.ErrOverflow) {
				t.Fatalf("ParseSigned(%q, %s) beyond the limit = %+v, %v; want ErrOverflow", str, a.Currency, got, err)
			}
			return
		}
		if err != nil || got != a {
			t.Fatalf("ParseSigned(%q, %s) = %+v, %v; want %+v", str, a.Currency, got, err, a)
		}
		if minor >= 0 {
			if got, err := money.Parse(str, a.Currency); err != nil || got != a {
				t.Fatalf("Parse(%q, %s) = %+v, %v; want %+v", str, a.Currency, got, err, a)
			}
		}
		if got.String() != str {
			t.Fatalf("String is not stable: %q then %q", str, got.String())
		}
	})
}
