package money_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/money"
)

func TestDigits(t *testing.T) {
	for _, tc := range []struct {
		code   string
		digits int
		ok     bool
	}{
		{"EUR", 2, true},
		{"USD", 2, true},
		{"GBP", 2, true},
		{"CHF", 2, true},
		{"JPY", 0, true},
		{"KRW", 0, true},
		{"KWD", 3, true},
		{"BHD", 3, true},
		{"JOD", 3, true},
		{"TND", 3, true},
		{"XAF", 0, true},
		{"XOF", 0, true},
		{"XPF", 0, true},
		{"XCD", 2, true},
		// Non-currency ISO 4217 codes.
		{"XAU", 0, false},
		{"XAG", 0, false},
		{"XPT", 0, false},
		{"XPD", 0, false},
		{"XDR", 0, false},
		{"XBA", 0, false},
		{"XSU", 0, false},
		{"XUA", 0, false},
		{"XTS", 0, false},
		{"XXX", 0, false},
		// Fund codes and historical currencies.
		{"CLF", 0, false},
		{"USN", 0, false},
		{"DEM", 0, false},
		{"FRF", 0, false},
		// Not codes, or not written as the API writes them.
		{"", 0, false},
		{"ABC", 0, false},
		{"eur", 0, false},
		{"Eur", 0, false},
		{"EU", 0, false},
		{"EURO", 0, false},
		{"EUR ", 0, false},
		{"€", 0, false},
	} {
		digits, ok := money.Digits(tc.code)
		if digits != tc.digits || ok != tc.ok {
			t.Errorf("Digits(%q) = %d, %v; want %d, %v", tc.code, digits, ok, tc.digits, tc.ok)
		}
		if got := money.IsCurrency(tc.code); got != tc.ok {
			t.Errorf("IsCurrency(%q) = %v; want %v", tc.code, got, tc.ok)
		}
	}
}

func TestDefaultDeploymentCurrencies(t *testing.T) {
	// The default STRONGROOM_CURRENCIES (README, Configuration).
	for _, code := range strings.Split("AUD,CAD,CHF,EUR,GBP,HKD,JPY,MXN,SGD,USD", ",") {
		if !money.IsCurrency(code) {
			t.Errorf("IsCurrency(%q) = false", code)
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in, cur string
		minor   int64
	}{
		{"12.5", "EUR", 1250},
		{"12.50", "EUR", 1250},
		{"1000", "EUR", 100000},
		{"0.01", "EUR", 1},
		{"0", "EUR", 0},
		{"0.0", "EUR", 0},
		{"0.00", "EUR", 0},
		{"007.50", "EUR", 750},
		{"1000", "JPY", 1000},
		{"0", "JPY", 0},
		{"1.5", "KWD", 1500},
		{"1.000", "KWD", 1000},
		{"0.001", "BHD", 1},
		{"12.345", "BHD", 12345},
		{"999999999999999.99", "EUR", 99999999999999999},
		{"999999999999999", "JPY", 999999999999999},
		{"999999999999999.999", "KWD", 999999999999999999},
		{"0000999999999999999.99", "EUR", 99999999999999999}, // leading zeros do not count
	} {
		a, err := money.Parse(tc.in, tc.cur)
		if err != nil {
			t.Errorf("Parse(%q, %s): %v", tc.in, tc.cur, err)
			continue
		}
		if want := (money.Amount{Minor: tc.minor, Currency: tc.cur}); a != want {
			t.Errorf("Parse(%q, %s) = %+v; want %+v", tc.in, tc.cur, a, want)
		}
		s, err := money.ParseSigned(tc.in, tc.cur)
		if err != nil || s != a {
			t.Errorf("ParseSigned(%q, %s) = %+v, %v; want %+v", tc.in, tc.cur, s, err, a)
		}
	}
}

func TestParseSigned(t *testing.T) {
	for _, tc := range []struct {
		in, cur string
		minor   int64
	}{
		{"-0.05", "EUR", -5},
		{"-12.5", "EUR", -1250},
		{"-0", "EUR", 0},
		{"-1000", "JPY", -1000},
		{"-0.001", "KWD", -1},
		{"-999999999999999.99", "EUR", -99999999999999999},
	} {
		a, err := money.ParseSigned(tc.in, tc.cur)
		if err != nil {
			t.Errorf("ParseSigned(%q, %s): %v", tc.in, tc.cur, err)
			continue
		}
		if want := (money.Amount{Minor: tc.minor, Currency: tc.cur}); a != want {
			t.Errorf("ParseSigned(%q, %s) = %+v; want %+v", tc.in, tc.cur, a, want)
		}
	}
}

func TestParseRefusals(t *testing.T) {
	for _, tc := range []struct {
		in, cur string
		signed  bool   // ParseSigned instead of Parse
		reason  string // substring of the ParseError's Reason
	}{
		{"", "EUR", false, "is empty"},
		{"", "EUR", true, "is empty"},
		{"-", "EUR", true, "has no digits"},
		{"+5", "EUR", false, "plus sign"},
		{"+5", "EUR", true, "plus sign"},
		{"-5", "EUR", false, "must not be negative"},
		{"-0", "EUR", false, "must not be negative"},
		{"--5", "EUR", true, "must be a decimal number"},
		{"-+5", "EUR", true, "must be a decimal number"},
		{"5-", "EUR", false, "must be a decimal number"},
		{"5-", "EUR", true, "must be a decimal number"},
		{"1e3", "EUR", false, "exponent"},
		{"1E3", "EUR", false, "exponent"},
		{"1.5e-2", "EUR", true, "exponent"},
		{" 5", "EUR", false, "spaces"},
		{"5 ", "EUR", false, "spaces"},
		{"1 000", "EUR", false, "spaces"},
		{"1\t0", "EUR", false, "spaces"},
		{"1\u00a0000", "EUR", false, "spaces"},
		{"1\u202f000", "EUR", false, "spaces"},
		{"- 5", "EUR", true, "spaces"},
		{"1,000", "EUR", false, "thousands separators"},
		{"1,000.00", "EUR", false, "thousands separators"},
		{"12,50", "EUR", false, "thousands separators"},
		{"1_000", "EUR", false, "thousands separators"},
		{"1'000", "EUR", false, "thousands separators"},
		{"1.000.000", "EUR", false, "more than one decimal point"},
		{".5", "EUR", false, "digit before the decimal point"},
		{"-.5", "EUR", true, "digit before the decimal point"},
		{".", "EUR", false, "digit before the decimal point"},
		{"5.", "EUR", false, "digit after the decimal point"},
		{"-5.", "EUR", true, "digit after the decimal point"},
		{"12.345", "EUR", false, "has more decimal places than EUR allows (2)"},
		{"12.500", "EUR", false, "has more decimal places than EUR allows (2)"},
		{"-0.001", "EUR", true, "has more decimal places than EUR allows (2)"},
		{"10.5", "JPY", false, "has more decimal places than JPY allows (0)"},
		{"10.0", "JPY", false, "has more decimal places than JPY allows (0)"},
		{"1.0000", "KWD", false, "has more decimal places than KWD allows (3)"},
		{"0.0001", "BHD", false, "has more decimal places than BHD allows (3)"},
		{"1000000000000000", "EUR", false, "has more than 15 digits before the decimal point (the largest EUR amount is 999999999999999.99)"},
		{"1000000000000000.00", "EUR", true, "more than 15 digits before the decimal point"},
		{"-1000000000000000", "EUR", true, "more than 15 digits before the decimal point"},
		{"1000000000000000", "JPY", false, "(the largest JPY amount is 999999999999999)"},
		{"1000000000000000.000", "KWD", false, "(the largest KWD amount is 999999999999999.999)"},
		{"92233720368547758.07", "EUR", false, "more than 15 digits"},
		{"92233720368547758.08", "EUR", false, "more than 15 digits"},
		{"-92233720368547758.08", "EUR", true, "more than 15 digits"},
		{"9223372036854775807", "JPY", false, "more than 15 digits"},
		{"9223372036854775808", "JPY", false, "more than 15 digits"},
		{"99999999999999999999999999", "EUR", false, "more than 15 digits"},
		{"9223372036854775.808", "KWD", false, "more than 15 digits"},
		{"12.50", "ABC", false, "unsupported currency"},
		{"12.50", "eur", false, "unsupported currency"},
		{"12.50", "", false, "unsupported currency"},
		{"12.50", "XAU", false, "unsupported currency"},
		{"12.50", "XTS", true, "unsupported currency"},
		{"0x10", "EUR", false, "must be a decimal number"},
		{"12.5€", "EUR", false, "must be a decimal number"},
		{"١٢", "EUR", false, "must be a decimal number"}, // Arabic-Indic digits
		{"NaN", "EUR", false, "must be a decimal number"},
		{"Inf", "EUR", false, "must be a decimal number"},
		{"\xff", "EUR", false, "must be a decimal number"},
	} {
		parse := money.Parse
		name := "Parse"
		if tc.signed {
			parse, name = money.ParseSigned, "ParseSigned"
		}
		a, err := parse(tc.in, tc.cur)
		var pe *money.ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s(%q, %q) = %+v, %v; want a *ParseError", name, tc.in, tc.cur, a, err)
			continue
		}
		if pe.Input != tc.in || !strings.Contains(pe.Reason, tc.reason) {
			t.Errorf("%s(%q, %q): ParseError{%q, %q}; want input %q and a reason containing %q",
				name, tc.in, tc.cur, pe.Input, pe.Reason, tc.in, tc.reason)
		}
		if a != (money.Amount{}) {
			t.Errorf("%s(%q, %q) returned %+v with its error", name, tc.in, tc.cur, a)
		}
	}
}

func TestParseErrorIs(t *testing.T) {
	_, err := money.Parse("1", "ABC")
	if !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("unknown currency: %v is not ErrUnknownCurrency", err)
	}
	_, err = money.Parse("92233720368547758.08", "EUR")
	if !errors.Is(err, money.ErrOverflow) {
		t.Errorf("too large: %v is not ErrOverflow", err)
	}
	_, err = money.Parse("12.345", "EUR")
	if errors.Is(err, money.ErrOverflow) || errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("too precise: %v matches a sentinel", err)
	}
	if got, want := err.Error(), `money: "12.345" has more decimal places than EUR allows (2)`; got != want {
		t.Errorf("Error() = %q; want %q", got, want)
	}
}

func TestString(t *testing.T) {
	for _, tc := range []struct {
		a    money.Amount
		want string
	}{
		{money.Amount{Minor: 1250, Currency: "EUR"}, "12.50"},
		{money.Amount{Minor: 1, Currency: "EUR"}, "0.01"},
		{money.Amount{Minor: 0, Currency: "EUR"}, "0.00"},
		{money.Amount{Minor: -5, Currency: "EUR"}, "-0.05"},
		{money.Amount{Minor: -100, Currency: "EUR"}, "-1.00"},
		{money.Amount{Minor: 100000, Currency: "EUR"}, "1000.00"},
		{money.Amount{Minor: 1000, Currency: "JPY"}, "1000"},
		{money.Amount{Minor: 0, Currency: "JPY"}, "0"},
		{money.Amount{Minor: -7, Currency: "JPY"}, "-7"},
		{money.Amount{Minor: 1000, Currency: "KWD"}, "1.000"},
		{money.Amount{Minor: 1, Currency: "BHD"}, "0.001"},
		{money.Amount{Minor: -12345, Currency: "BHD"}, "-12.345"},
		{money.Amount{Minor: math.MaxInt64, Currency: "EUR"}, "92233720368547758.07"},
		{money.Amount{Minor: -math.MaxInt64, Currency: "EUR"}, "-92233720368547758.07"},
		{money.Amount{Minor: math.MinInt64, Currency: "EUR"}, "-92233720368547758.08"},
		{money.Amount{Minor: 1250, Currency: "ABC"}, "1250"},
		{money.Amount{}, "0"},
	} {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("%+v.String() = %q; want %q", tc.a, got, tc.want)
		}
	}
}

func TestStringRoundTrip(t *testing.T) {
	minors := []int64{0, 1, 5, 9, 10, 99, 100, 101, 1250, 999999, 1000000}
	for _, cur := range []string{"EUR", "JPY", "KWD", "BHD", "USD", "XOF"} {
		max, _ := money.Max(cur)
		for _, m := range append(minors, max.Minor-1, max.Minor) {
			for _, minor := range []int64{m, -m} {
				a := money.Amount{Minor: minor, Currency: cur}
				b, err := money.ParseSigned(a.String(), cur)
				if err != nil || b != a {
					t.Errorf("ParseSigned(%q, %s) = %+v, %v; want %+v", a.String(), cur, b, err, a)
				}
				if minor >= 0 {
					if c, err := money.Parse(a.String(), cur); err != nil || c != a {
						t.Errorf("Parse(%q, %s) = %+v, %v; want %+v", a.String(), cur, c, err, a)
					}
				}
			}
		}
	}
}

func eur(minor int64) money.Amount { return money.Amount{Minor: minor, Currency: "EUR"} }

func TestAddSub(t *testing.T) {
	for _, tc := range []struct {
		a, b     int64
		sum, dif int64
		sumErr   bool
		difErr   bool
	}{
		{a: 1250, b: 5, sum: 1255, dif: 1245},
		{a: 5, b: 1250, sum: 1255, dif: -1245},
		{a: -5, b: -7, sum: -12, dif: 2},
		{a: 0, b: 0, sum: 0, dif: 0},
		{a: math.MaxInt64, b: 0, sum: math.MaxInt64, dif: math.MaxInt64},
		{a: math.MaxInt64, b: 1, sumErr: true, dif: math.MaxInt64 - 1},
		{a: math.MaxInt64, b: math.MaxInt64, sumErr: true, dif: 0},
		{a: math.MaxInt64, b: -1, sum: math.MaxInt64 - 1, difErr: true},
		{a: -math.MaxInt64, b: -1, sumErr: true, dif: -math.MaxInt64 + 1},
		{a: -math.MaxInt64, b: 1, sum: -math.MaxInt64 + 1, difErr: true},
		{a: -math.MaxInt64, b: -math.MaxInt64, sumErr: true, dif: 0},
		{a: -math.MaxInt64, b: math.MaxInt64, sum: 0, difErr: true},
		{a: 0, b: -math.MaxInt64, sum: -math.MaxInt64, dif: math.MaxInt64},
		{a: 0, b: math.MaxInt64, sum: math.MaxInt64, dif: -math.MaxInt64},
		{a: -1, b: math.MaxInt64, sum: math.MaxInt64 - 1, difErr: true}, // −2^63 is out of range
		{a: math.MinInt64, b: 1, sum: math.MinInt64 + 1, difErr: true},
		{a: 0, b: math.MinInt64, sumErr: true, difErr: true},
	} {
		sum, err := eur(tc.a).Add(eur(tc.b))
		switch {
		case tc.sumErr && !errors.Is(err, money.ErrOverflow):
			t.Errorf("%d + %d = %+v, %v; want ErrOverflow", tc.a, tc.b, sum, err)
		case !tc.sumErr && (err != nil || sum != eur(tc.sum)):
			t.Errorf("%d + %d = %+v, %v; want %d", tc.a, tc.b, sum, err, tc.sum)
		}
		dif, err := eur(tc.a).Sub(eur(tc.b))
		switch {
		case tc.difErr && !errors.Is(err, money.ErrOverflow):
			t.Errorf("%d - %d = %+v, %v; want ErrOverflow", tc.a, tc.b, dif, err)
		case !tc.difErr && (err != nil || dif != eur(tc.dif)):
			t.Errorf("%d - %d = %+v, %v; want %d", tc.a, tc.b, dif, err, tc.dif)
		}
	}
}

func TestAddSubMismatch(t *testing.T) {
	usd := money.Amount{Minor: 1, Currency: "USD"}
	if _, err := eur(1).Add(usd); !errors.Is(err, money.ErrCurrencyMismatch) {
		t.Errorf("EUR + USD: %v; want ErrCurrencyMismatch", err)
	}
	if _, err := eur(1).Sub(usd); !errors.Is(err, money.ErrCurrencyMismatch) {
		t.Errorf("EUR - USD: %v; want ErrCurrencyMismatch", err)
	}
	if _, err := eur(0).Add(money.Amount{}); !errors.Is(err, money.ErrCurrencyMismatch) {
		t.Errorf("EUR + zero Amount: %v; want ErrCurrencyMismatch", err)
	}
}

func TestSigns(t *testing.T) {
	for _, tc := range []struct {
		minor          int64
		zero, pos, neg bool
	}{
		{0, true, false, false},
		{1, false, true, false},
		{-1, false, false, true},
		{math.MaxInt64, false, true, false},
		{-math.MaxInt64, false, false, true},
	} {
		a := eur(tc.minor)
		if a.IsZero() != tc.zero || a.IsPositive() != tc.pos || a.IsNegative() != tc.neg {
			t.Errorf("%d: IsZero %v IsPositive %v IsNegative %v", tc.minor, a.IsZero(), a.IsPositive(), a.IsNegative())
		}
		if n := a.Neg(); n != eur(-tc.minor) {
			t.Errorf("%d: Neg() = %+v", tc.minor, n)
		}
		if n := a.Neg().Neg(); n != a {
			t.Errorf("%d: Neg().Neg() = %+v", tc.minor, n)
		}
	}
}

func TestNegMinInt64Panics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Neg of math.MinInt64 did not panic")
		}
	}()
	eur(math.MinInt64).Neg()
}

func mustParse(t *testing.T, s, cur string) money.Amount {
	t.Helper()
	a, err := money.ParseSigned(s, cur)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestConvert(t *testing.T) {
	for _, tc := range []struct {
		amount, from, to, rate, want string
	}{
		{"100.00", "EUR", "USD", "1.0834", "108.34"},
		{"100", "EUR", "USD", "1.0834", "108.34"},
		{"1", "EUR", "USD", "1", "1.00"},
		{"0", "EUR", "USD", "1.0834", "0.00"},
		{"12.34", "EUR", "EUR", "1", "12.34"},
		// 1 JPY into EUR: 0.62 cent rounds up, 0.49 cent down, half a cent up.
		{"1", "JPY", "EUR", "0.0062", "0.01"},
		{"1", "JPY", "EUR", "0.0049", "0.00"},
		{"1", "JPY", "EUR", "0.005", "0.01"},
		{"1", "JPY", "EUR", "0.0049999999", "0.00"},
		{"-1", "JPY", "EUR", "0.005", "-0.01"}, // half away from zero
		{"-1", "JPY", "EUR", "0.0049", "0.00"},
		{"10000", "JPY", "EUR", "0.0062", "62.00"},
		{"100.00", "EUR", "JPY", "161.235", "16124"}, // 16123.5 → 16124
		{"100.00", "EUR", "JPY", "161.2349999999", "16123"},
		{"-100.00", "EUR", "JPY", "161.235", "-16124"},
		{"1.000", "KWD", "USD", "3.2551", "3.26"}, // 3.2551
		{"0.001", "KWD", "EUR", "3.0", "0.00"},    // 0.003
		{"0.002", "KWD", "EUR", "2.5", "0.01"},    // 0.005
		{"1.00", "USD", "BHD", "0.376", "0.376"},
		{"0.01", "USD", "BHD", "0.3765", "0.004"},   // 0.003765
		{"1", "EUR", "USD", "0.0000000001", "0.00"}, // smallest rate
		{"50000000", "EUR", "USD", "0.0000000001", "0.01"},
		{"1", "EUR", "JPY", "00001.5000000000", "2"},
		{"999999999999999.99", "EUR", "USD", "1", "999999999999999.99"},
		{"999999999999999.99", "EUR", "JPY", "0.01", "10000000000000"}, // 9999999999999.9999
	} {
		a := mustParse(t, tc.amount, tc.from)
		got, err := money.Convert(a, tc.to, tc.rate)
		if err != nil {
			t.Errorf("Convert(%s %s → %s at %s): %v", tc.amount, tc.from, tc.to, tc.rate, err)
			continue
		}
		if want := mustParse(t, tc.want, tc.to); got != want {
			t.Errorf("Convert(%s %s → %s at %s) = %s %s; want %s", tc.amount, tc.from, tc.to, tc.rate, got, got.Currency, tc.want)
		}
	}
}

// TestConvertExact compares Convert with the same computation done on
// rationals and rounded by hand.
func TestConvertExact(t *testing.T) {
	rates := []string{"1.0834", "0.0062", "161.235", "0.9999999999", "1234.5678901234", "3.2551"}
	codes := []string{"EUR", "JPY", "KWD", "USD", "BHD"}
	minors := []int64{0, 1, 2, 3, 5, 7, 49, 50, 51, 99, 999, 12345, 10000000, 987654321987}
	for _, from := range codes {
		for _, to := range codes {
			for _, rate := range rates {
				r, _ := new(big.Rat).SetString(rate)
				for _, minor := range minors {
					for _, m := range []int64{minor, -minor} {
						got, err := money.Convert(money.Amount{Minor: m, Currency: from}, to, rate)
						if err != nil {
							t.Fatalf("Convert(%d %s → %s at %s): %v", m, from, to, rate, err)
						}
						if want := refConvert(m, from, to, r); got.Minor != want || got.Currency != to {
							t.Errorf("Convert(%d %s → %s at %s) = %+v; want %d", m, from, to, rate, got, want)
						}
					}
				}
			}
		}
	}
}

// refConvert rounds minor × rate × 10^(dt−ds) half away from zero using big.Rat.
func refConvert(minor int64, from, to string, rate *big.Rat) int64 {
	ds, _ := money.Digits(from)
	dt, _ := money.Digits(to)
	x := new(big.Rat).Mul(new(big.Rat).SetInt64(minor), rate)
	x.Mul(x, new(big.Rat).SetFrac(pow10(dt), pow10(ds)))
	neg := x.Sign() < 0
	x.Abs(x)
	x.Add(x, big.NewRat(1, 2))
	q := new(big.Int).Quo(x.Num(), x.Denom()) // floor of a non-negative rational
	if neg {
		q.Neg(q)
	}
	return q.Int64()
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

func TestConvertErrors(t *testing.T) {
	a := eur(10000)
	for _, tc := range []struct {
		a        money.Amount
		to, rate string
		check    func(error) bool
	}{
		{a, "ABC", "1", isErr(money.ErrUnknownCurrency)},
		{a, "XAU", "1", isErr(money.ErrUnknownCurrency)},
		{money.Amount{Minor: 1, Currency: "eur"}, "USD", "1", isErr(money.ErrUnknownCurrency)},
		{a, "USD", "", isParseError("is empty")},
		{a, "USD", "0", isParseError("must be positive")},
		{a, "USD", "0.0000000000", isParseError("must be positive")},
		{a, "USD", "-1.08", isParseError("must be positive")},
		{a, "USD", "+1.08", isParseError("plus sign")},
		{a, "USD", "1.00000000001", isParseError("more than 10 decimal places")},
		{a, "USD", "1e3", isParseError("exponent")},
		{a, "USD", ".5", isParseError("digit before the decimal point")},
		{a, "USD", "5.", isParseError("digit after the decimal point")},
		{a, "USD", "1,08", isParseError("thousands separators")},
		{a, "USD", " 1.08", isParseError("spaces")},
		{a, "USD", "NaN", isParseError("must be a decimal number")},
		{eur(math.MaxInt64), "USD", "1.0000000001", isErr(money.ErrOverflow)},
		{eur(-math.MaxInt64), "USD", "1.0000000001", isErr(money.ErrOverflow)},
		{eur(1), "JPY", "99999999999999999999999", isErr(money.ErrOverflow)},
	} {
		got, err := money.Convert(tc.a, tc.to, tc.rate)
		if !tc.check(err) {
			t.Errorf("Convert(%+v, %s, %q) = %+v, %v", tc.a, tc.to, tc.rate, got, err)
		}
	}
}

func isErr(target error) func(error) bool {
	return func(err error) bool { return errors.Is(err, target) }
}

func isParseError(reason string) func(error) bool {
	return func(err error) bool {
		var pe *money.ParseError
		return errors.As(err, &pe) && strings.Contains(pe.Reason, reason)
	}
}

func TestConvertFor(t *testing.T) {
	for _, tc := range []struct {
		dest, to, from, rate, want string
	}{
		{"108.34", "USD", "EUR", "1.0834", "100.00"},
		{"108.35", "USD", "EUR", "1.0834", "100.01"},
		{"0.01", "EUR", "JPY", "0.0062", "1"},
		{"62.00", "EUR", "JPY", "0.0062", "10000"},
		{"0.00", "EUR", "JPY", "0.0062", "0"},
		{"16124", "JPY", "EUR", "161.235", "100.00"},
		{"1.00", "EUR", "USD", "1", "1.00"},
		{"0.01", "USD", "EUR", "0.0000000001", "50000000.00"},
	} {
		dest := mustParse(t, tc.dest, tc.to)
		got, err := money.ConvertFor(dest, tc.from, tc.rate)
		if err != nil {
			t.Errorf("ConvertFor(%s %s from %s at %s): %v", tc.dest, tc.to, tc.from, tc.rate, err)
			continue
		}
		if want := mustParse(t, tc.want, tc.from); got != want {
			t.Errorf("ConvertFor(%s %s from %s at %s) = %s; want %s", tc.dest, tc.to, tc.from, tc.rate, got, tc.want)
		}
	}
}

// TestConvertForMinimal checks that the source ConvertFor quotes delivers at
// least the destination amount and that one minor unit less would not.
func TestConvertForMinimal(t *testing.T) {
	rates := []string{"1.0834", "0.0062", "161.235", "0.9999999999", "1", "3.2551", "0.0000000001", "12345.6789"}
	codes := []string{"EUR", "JPY", "KWD", "USD"}
	dests := []int64{0, 1, 2, 3, 5, 99, 100, 101, 10834, 123456789, 1000000000000}
	for _, from := range codes {
		for _, to := range codes {
			for _, rate := range rates {
				for _, d := range dests {
					checkConvertFor(t, money.Amount{Minor: d, Currency: to}, from, rate)
				}
			}
		}
	}
}

func checkConvertFor(t *testing.T, dest money.Amount, from, rate string) {
	t.Helper()
	src, err := money.ConvertFor(dest, from, rate)
	if errors.Is(err, money.ErrOverflow) {
		return
	}
	if err != nil {
		t.Fatalf("ConvertFor(%+v, %s, %s): %v", dest, from, rate, err)
	}
	if src.Currency != from || src.Minor < 0 {
		t.Fatalf("ConvertFor(%+v, %s, %s) = %+v", dest, from, rate, src)
	}
	got, err := money.Convert(src, dest.Currency, rate)
	if err != nil {
		t.Fatalf("Convert(%+v, %s, %s) after ConvertFor: %v", src, dest.Currency, rate, err)
	}
	if got.Minor < dest.Minor {
		t.Errorf("ConvertFor(%+v, %s, %s) = %+v delivers only %+v", dest, from, rate, src, got)
	}
	if src.Minor > 0 {
		less := money.Amount{Minor: src.Minor - 1, Currency: from}
		if got, _ := money.Convert(less, dest.Currency, rate); got.Minor >= dest.Minor {
			t.Errorf("ConvertFor(%+v, %s, %s) = %+v is not minimal: %+v delivers %+v", dest, from, rate, src, less, got)
		}
	}
}

func TestConvertForErrors(t *testing.T) {
	if _, err := money.ConvertFor(eur(-1), "USD", "1"); err == nil {
		t.Error("ConvertFor of a negative amount: no error")
	}
	if _, err := money.ConvertFor(eur(1), "ABC", "1"); !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("ConvertFor from ABC: %v", err)
	}
	if _, err := money.ConvertFor(money.Amount{Minor: 1, Currency: "ABC"}, "EUR", "1"); !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("ConvertFor into ABC: %v", err)
	}
	if _, err := money.ConvertFor(eur(1), "USD", "0"); !isParseError("must be positive")(err) {
		t.Errorf("ConvertFor at rate 0: %v", err)
	}
	// The source would not fit.
	if _, err := money.ConvertFor(eur(math.MaxInt64), "USD", "0.5"); !errors.Is(err, money.ErrOverflow) {
		t.Errorf("ConvertFor of a huge amount: %v", err)
	}
	// The source fits but what it delivers would not: 1 JPY buys 10^13 EUR cents.
	if _, err := money.ConvertFor(eur(math.MaxInt64), "JPY", "100000000000"); !errors.Is(err, money.ErrOverflow) {
		t.Errorf("ConvertFor delivering out of range: %v", err)
	}
}

func TestMulRatio(t *testing.T) {
	for _, tc := range []struct {
		minor, num, den, want int64
	}{
		{10000, 25, 10000, 25}, // 25 bp of 100.00 = 0.25
		{199, 25, 10000, 0},    // 0.4975 minor units
		{200, 25, 10000, 1},    // 0.5 rounds up
		{-200, 25, 10000, -1},  // and away from zero
		{-199, 25, 10000, 0},   //
		{600, 25, 10000, 2},    // 1.5 → 2
		{1000, 1, 3, 333},      // 333.33
		{1000, 2, 3, 667},      // 666.67
		{5, 1, 2, 3},           // 2.5 → 3
		{-5, 1, 2, -3},         // −2.5 → −3
		{5, -1, 2, -3},         // negative num
		{1234, 0, 7, 0},        //
		{0, 99, 1, 0},          //
		{math.MaxInt64, 1, 1, math.MaxInt64},
		{math.MaxInt64, 3, 3, math.MaxInt64}, // exact through 128 bits
		{math.MaxInt64, math.MaxInt64, math.MaxInt64, math.MaxInt64}, //
		{math.MaxInt64, 1, 2, 4611686018427387904},                   // 4611686018427387903.5
		{-math.MaxInt64, 1, 2, -4611686018427387904},                 //
		{math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64 - 1},
	} {
		got, err := money.MulRatio(eur(tc.minor), tc.num, tc.den)
		if err != nil || got != eur(tc.want) {
			t.Errorf("MulRatio(%d, %d, %d) = %+v, %v; want %d", tc.minor, tc.num, tc.den, got, err, tc.want)
		}
	}
}

func TestMulRatioErrors(t *testing.T) {
	for _, tc := range []struct {
		minor, num, den int64
		overflow        bool
	}{
		{1, 1, 0, false},
		{1, 1, -1, false},
		{math.MaxInt64, 2, 1, true},
		{math.MaxInt64, 10001, 10000, true},
		{-math.MaxInt64, 2, 1, true},
		{math.MinInt64, 1, 1, true}, // −2^63 is out of range
		{math.MinInt64, -1, 1, true},
	} {
		got, err := money.MulRatio(eur(tc.minor), tc.num, tc.den)
		if err == nil || errors.Is(err, money.ErrOverflow) != tc.overflow {
			t.Errorf("MulRatio(%d, %d, %d) = %+v, %v", tc.minor, tc.num, tc.den, got, err)
		}
	}
}

func TestJSON(t *testing.T) {
	for _, tc := range []struct {
		a    money.Amount
		want string
	}{
		{eur(1250), `{"amount":"12.50","currency":"EUR"}`},
		{eur(-5), `{"amount":"-0.05","currency":"EUR"}`},
		{money.Amount{Minor: 1000, Currency: "JPY"}, `{"amount":"1000","currency":"JPY"}`},
		{money.Amount{Minor: 1000, Currency: "KWD"}, `{"amount":"1.000","currency":"KWD"}`},
	} {
		b, err := json.Marshal(tc.a)
		if err != nil || string(b) != tc.want {
			t.Errorf("Marshal(%+v) = %s, %v; want %s", tc.a, b, err, tc.want)
			continue
		}
		var back money.Amount
		if err := json.Unmarshal(b, &back); err != nil || back != tc.a {
			t.Errorf("Unmarshal(%s) = %+v, %v; want %+v", b, back, err, tc.a)
		}
	}

	// Inside a record, by value and by pointer.
	type quote struct {
		Source money.Amount  `json:"source"`
		Fee    *money.Amount `json:"fee"`
	}
	fee := eur(25)
	q := quote{Source: eur(10000), Fee: &fee}
	b, err := json.Marshal(q)
	if want := `{"source":{"amount":"100.00","currency":"EUR"},"fee":{"amount":"0.25","currency":"EUR"}}`; err != nil || string(b) != want {
		t.Fatalf("Marshal(quote) = %s, %v; want %s", b, err, want)
	}
	var back quote
	if err := json.Unmarshal(b, &back); err != nil || back.Source != q.Source || back.Fee == nil || *back.Fee != fee {
		t.Fatalf("Unmarshal(%s) = %+v, %v", b, back, err)
	}
	b, err = json.Marshal(quote{Source: eur(1)})
	if want := `{"source":{"amount":"0.01","currency":"EUR"},"fee":null}`; err != nil || string(b) != want {
		t.Fatalf("Marshal(quote without fee) = %s, %v; want %s", b, err, want)
	}
}

func TestJSONMarshalUnknownCurrency(t *testing.T) {
	for _, a := range []money.Amount{{}, {Minor: 1, Currency: "ABC"}, {Minor: 1, Currency: `"}`}} {
		if b, err := json.Marshal(a); !errors.Is(err, money.ErrUnknownCurrency) {
			t.Errorf("Marshal(%+v) = %s, %v; want ErrUnknownCurrency", a, b, err)
		}
	}
}

func TestJSONUnmarshal(t *testing.T) {
	// null leaves the value alone, as encoding/json does for other types.
	a := eur(7)
	if err := json.Unmarshal([]byte(`null`), &a); err != nil || a != eur(7) {
		t.Errorf("Unmarshal(null) = %+v, %v", a, err)
	}
	// Spaces and member order do not matter.
	if err := json.Unmarshal([]byte(` { "currency" : "JPY" , "amount" : "980" } `), &a); err != nil ||
		a != (money.Amount{Minor: 980, Currency: "JPY"}) {
		t.Errorf("Unmarshal(JPY) = %+v, %v", a, err)
	}

	for _, tc := range []struct {
		in     string
		reason string // "" when any error will do
	}{
		{`{"amount":"12.345","currency":"EUR"}`, "has more decimal places than EUR allows (2)"},
		{`{"amount":"10.5","currency":"JPY"}`, "has more decimal places than JPY allows (0)"},
		{`{"amount":"1e3","currency":"EUR"}`, "exponent"},
		{`{"amount":"","currency":"EUR"}`, "is empty"},
		{`{"amount":"+1","currency":"EUR"}`, "plus sign"},
		{`{"amount":12.5,"currency":"EUR"}`, "must be a string"},
		{`{"amount":"12.50","currency":"XAU"}`, "not a supported currency"},
		{`{"amount":"12.50","currency":"eur"}`, "not a supported currency"},
		{`{"amount":"12.50","currency":""}`, "not a supported currency"},
		{`{"amount":"12.50","currency":1}`, "must be a string"},
		{`{"amount":"12.50"}`, "missing the currency"},
		{`{"currency":"EUR"}`, "missing the amount"},
		{`{"amount":null,"currency":"EUR"}`, "missing the amount"},
		{`{}`, "missing"},
		{`{"amount":"12.50","currency":"EUR","rate":"1"}`, ""},
		{`"12.50"`, ""},
		{`[]`, ""},
		{`12.5`, ""},
	} {
		var got money.Amount
		err := json.Unmarshal([]byte(tc.in), &got)
		if err == nil {
			t.Errorf("Unmarshal(%s) = %+v; want an error", tc.in, got)
			continue
		}
		if tc.reason != "" && !isParseError(tc.reason)(err) {
			t.Errorf("Unmarshal(%s): %v; want a ParseError saying %q", tc.in, err, tc.reason)
		}
		if got != (money.Amount{}) {
			t.Errorf("Unmarshal(%s) set %+v despite its error", tc.in, got)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"12.5", "12.50", "1000", "0.01", "0", "-0.05", "+1", "1e3", " 1", "1,000", ".5", "5.",
		"12.345", "92233720368547758.07", "92233720368547758.08", "-92233720368547758.07",
		"9223372036854775807", "0000000000000000000000001", "--1", "-", "", "1.2.3", "١",
		"999999999999999.99", "999999999999999.999", "1000000000000000", "000999999999999999",
	} {
		for _, cur := range []string{"EUR", "JPY", "KWD", "BHD", "ABC", "eur", ""} {
			f.Add(s, cur)
		}
	}
	f.Fuzz(func(t *testing.T, s, cur string) {
		for _, signed := range []bool{false, true} {
			parse := money.Parse
			if signed {
				parse = money.ParseSigned
			}
			a, err := parse(s, cur)
			if err != nil {
				var pe *money.ParseError
				if !errors.As(err, &pe) || pe.Input != s || pe.Reason == "" {
					t.Fatalf("Parse(%q, %q, signed %v): error %v is not a proper *ParseError", s, cur, signed, err)
				}
				continue
			}
			if a.Currency != cur || a.Minor == math.MinInt64 || (!signed && a.Minor < 0) || !a.WithinLimit() {
				t.Fatalf("Parse(%q, %q, signed %v) = %+v", s, cur, signed, a)
			}
			str := a.String()
			b, err := parse(str, cur)
			if err != nil || b != a {
				t.Fatalf("Parse(%q, %q) = %+v, but Parse(%q) = %+v, %v", s, cur, a, str, b, err)
			}
			if b.String() != str {
				t.Fatalf("String is not stable: %q then %q", str, b.String())
			}
			js, err := json.Marshal(a)
			if err != nil {
				t.Fatalf("Marshal(%+v): %v", a, err)
			}
			var c money.Amount
			if err := json.Unmarshal(js, &c); err != nil || c != a {
				t.Fatalf("JSON round trip of %+v via %s = %+v, %v", a, js, c, err)
			}
		}
	})
}

func FuzzConvert(f *testing.F) {
	codes := []string{"EUR", "JPY", "KWD", "USD", "BHD", "XOF"}
	for _, rate := range []string{"1.0834", "0.0062", "1", "0.0000000001", "161.235", "99999999999", "0", "-1", "1e3", "1.00000000001", ""} {
		for _, minor := range []int64{0, 1, 5, 10000, -1, -10000, math.MaxInt64, -math.MaxInt64, math.MinInt64} {
			f.Add(minor, uint8(0), uint8(1), rate)
			f.Add(minor, uint8(1), uint8(0), rate)
			f.Add(minor, uint8(2), uint8(4), rate)
		}
	}
	f.Fuzz(func(t *testing.T, minor int64, fromIdx, toIdx uint8, rate string) {
		from, to := codes[int(fromIdx)%len(codes)], codes[int(toIdx)%len(codes)]
		a := money.Amount{Minor: minor, Currency: from}
		got, err := money.Convert(a, to, rate)
		if err == nil {
			if got.Currency != to || got.Minor == math.MinInt64 {
				t.Fatalf("Convert(%+v, %s, %q) = %+v", a, to, rate, got)
			}
			if minor >= 0 && got.Minor < 0 {
				t.Fatalf("Convert(%+v, %s, %q) = %+v is negative", a, to, rate, got)
			}
			if minor <= 0 && got.Minor > 0 {
				t.Fatalf("Convert(%+v, %s, %q) = %+v is positive", a, to, rate, got)
			}
			if minor != math.MinInt64 {
				// Rounding half away from zero is symmetric.
				neg, err := money.Convert(a.Neg(), to, rate)
				if err != nil || neg != got.Neg() {
					t.Fatalf("Convert(%+v) = %+v but Convert(%+v) = %+v, %v", a, got, a.Neg(), neg, err)
				}
			}
		}
		if minor < 0 {
			return
		}
		if isParseError("")(err) {
			// A malformed rate: ConvertFor refuses it the same way.
			if _, err2 := money.ConvertFor(money.Amount{Minor: minor, Currency: to}, from, rate); !isParseError("")(err2) {
				t.Fatalf("Convert refused rate %q (%v) but ConvertFor said %v", rate, err, err2)
			}
			return
		}
		checkConvertFor(t, money.Amount{Minor: minor, Currency: to}, from, rate)
	})
}

func TestCoins(t *testing.T) {
	for _, c := range []string{"USDC", "USDT", "EURC"} {
		if money.IsCurrency(c) || !money.IsCoin(c) {
			t.Errorf("%s: IsCurrency %v IsCoin %v; coins are not ISO 4217 currencies", c, money.IsCurrency(c), money.IsCoin(c))
		}
		if _, err := money.Parse("1", c); err == nil {
			t.Errorf("Parse accepted %s", c)
		}
	}
	a, err := money.ParseCoin("12.5", "USDC")
	if err != nil || a.Minor != 12_500_000 || a.String() != "12.500000" {
		t.Fatalf("ParseCoin 12.5 USDC = %+v (%s), %v", a, a, err)
	}
	for _, bad := range []string{"1.0000001", "-1", "1000000000000", "1e3", ""} {
		if _, err := money.ParseCoin(bad, "USDT"); err == nil {
			t.Errorf("ParseCoin accepted %q", bad)
		}
	}
	if a, err := money.ParseCoin("999999999999.999999", "EURC"); err != nil || a.Minor != 999_999_999_999_999_999 {
		t.Errorf("largest coin amount: %+v, %v", a, err)
	}
	if _, err := money.ParseCoin("1", "BTC"); !errors.Is(err, money.ErrUnknownCurrency) {
		t.Errorf("ParseCoin BTC: %v", err)
	}
}
