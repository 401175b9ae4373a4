// Package money holds amounts of money as integer minor units of an ISO 4217
// currency, and the exact arithmetic Strongroom does on them.
//
// An Amount never passes through float64: amounts are read from and written as
// decimal strings at the currency's precision ("12.50", "1000" for JPY,
// "1.000" for KWD), sums are checked for int64 overflow, and conversions and
// ratios are computed exactly with math/big and rounded half away from zero.
//
// # Currencies
//
// The currencies and their minor-unit digits come from golang.org/x/text/currency
// (CLDR data, standard rounding). A code is supported when it is written as
// three capital ASCII letters and CLDR lists it as current legal tender in at
// least one region. That one rule decides both Digits and IsCurrency, so every
// code Parse accepts can also be formatted, converted and encoded. It refuses:
//
//   - codes x/text does not know, including ones newer than its CLDR data
//     (x/text ships CLDR 32, 2017: for example VES, MRU, SLE, ZWG and XCG are
//     refused, while HRK, VEF, MRO and SLL, since replaced, are still accepted);
//   - the ISO 4217 codes that are not money one can hold: precious metals
//     (XAU, XAG, XPT, XPD), the SDR (XDR), bond-market units (XBA–XBD), XSU,
//     XUA, the testing code XTS and "no currency" XXX;
//   - fund and non-tender codes (BOV, CLF, COU, MXV, UYI, USN, CHE, CHW, CNH)
//     and historical currencies (DEM, FRF, …);
//   - lower- or mixed-case spellings ("eur"): the API's codes are capitals.
//
// CLDR's digits are what people actually use, and for some currencies they are
// fewer than ISO 4217's minor units. These have 0 digits here where ISO 4217
// says 2 (3 for IQD): AFN, ALL, AMD, COP, GYD, IDR, IQD, IRR, KPW, LAK, LBP,
// MGA, MMK, MNT, MRO, MUR, PKR, RSD, SLL, SOS, SYP, TZS, UZS, YER. Every
// currency of the default deployment list agrees with ISO 4217.
//
// # Range
//
// Parse reads at most MaxIntegerDigits (15) digits before the decimal point:
// the largest amount is 999999999999999.99 EUR (Max), below 10^18 minor
// units in every supported currency (at most 3 minor-unit digits). So sums
// of a few amounts, their fees and conversions cannot overflow int64;
// longer sums use Add, which reports overflow. Arithmetic is defined on all
// of int64: an Amount's Minor is kept within ±math.MaxInt64, and Add, Sub,
// Convert, ConvertFor and MulRatio report ErrOverflow rather than produce
// math.MinInt64, so Neg is always exact for amounts that came from this
// package. WithinLimit tells whether a computed amount (a conversion) is
// still one Parse would accept.
package money

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/currency"
)

// Errors that callers may test for with errors.Is.
var (
	// ErrUnknownCurrency: a currency code is not one this package supports
	// (see the package comment).
	ErrUnknownCurrency = errors.New("money: unknown currency")
	// ErrCurrencyMismatch: two amounts in different currencies were combined.
	ErrCurrencyMismatch = errors.New("money: currency mismatch")
	// ErrOverflow: a result does not fit in int64 minor units.
	ErrOverflow = errors.New("money: amount out of range")
)

// RateDecimals is the most decimal places a conversion rate may have.
const RateDecimals = 10

// MaxIntegerDigits is the most digits an amount may have before its decimal
// point (leading zeros aside); more is invalid_request (docs/api.md, Basics).
const MaxIntegerDigits = 15

// digitsByCode maps each supported currency code to its minor-unit digits.
// It is built once from x/text and only read afterwards.
var digitsByCode = buildDigits()

// nonCurrency are ISO 4217 codes that are not money an account can hold.
// CLDR lists none of them as legal tender, so they are already absent from
// digitsByCode; the list keeps the rule explicit should the data change.
var nonCurrency = []string{
	"XAG", "XAU", "XPD", "XPT", // precious metals
	"XBA", "XBB", "XBC", "XBD", // bond-market units
	"XDR", "XSU", "XUA", // SDR, Sucre, ADB unit of account
	"XTS", "XXX", // testing, no currency
	"XEU", "XFO", "XFU", "XRE", // historical units
}

func buildDigits() map[string]int {
	m := make(map[string]int)
	// The default query lists the units that CLDR has as legal tender in a
	// region with no end date. It does not depend on today's date.
	for it := currency.Query(); it.Next(); {
		u := it.Unit()
		scale, increment := currency.Standard.Rounding(u)
		if increment != 1 || scale < 0 || scale > 4 {
			continue
		}
		m[u.String()] = scale
	}
	for _, code := range nonCurrency {
		delete(m, code)
	}
	return m
}

// Digits returns the number of minor-unit digits of an ISO 4217 currency code
// (JPY 0, EUR 2, KWD 3). ok is false for a code this package does not support;
// see the package comment for which codes those are.
func Digits(code string) (digits int, ok bool) {
	if !wellFormedCode(code) {
		return 0, false
	}
	digits, ok = digitsByCode[code]
	return digits, ok
}

// IsCurrency reports whether code is a known ISO 4217 currency that money can
// be held in; it is true exactly when Digits reports ok.
func IsCurrency(code string) bool {
	_, ok := Digits(code)
	return ok
}

func wellFormedCode(code string) bool {
	if len(code) != 3 {
		return false
	}
	for i := 0; i < 3; i++ {
		if code[i] < 'A' || code[i] > 'Z' {
			return false
		}
	}
	return true
}

// Amount is money in integer minor units of its currency: Amount{1250, "EUR"}
// is 12.50 EUR, Amount{1000, "JPY"} is 1000 JPY.
type Amount struct {
	Minor    int64
	Currency string
}

// ParseError says why a decimal string was refused. Reason is a display-grade
// phrase about the input, such as "has more decimal places than EUR allows (2)";
// callers put the field's name in front of it ("amount has more decimal places
// than EUR allows (2).").
type ParseError struct {
	Input  string
	Reason string
	err    error // ErrUnknownCurrency or ErrOverflow, for errors.Is
}

func (e *ParseError) Error() string { return fmt.Sprintf("money: %q %s", e.Input, e.Reason) }

// Unwrap returns ErrUnknownCurrency or ErrOverflow when one of them is the cause.
func (e *ParseError) Unwrap() error { return e.err }

// Parse reads a non-negative decimal string in currency: "12.5", "12.50",
// "1000", "0.01". It returns a *ParseError when s is empty, has a sign ("+",
// "-"), an exponent, spaces or thousands separators, starts or ends with the
// decimal point (".5", "5."), has more decimal places than the currency has
// ("12.345" EUR, "10.5" or "10.0" JPY), or has more than MaxIntegerDigits
// digits before the decimal point (errors.Is ErrOverflow), and when currency
// is not supported (errors.Is ErrUnknownCurrency). Leading zeros are
// accepted ("007.50").
func Parse(s, currency string) (Amount, error) { return parse(s, currency, false) }

// ParseSigned is Parse that also accepts a leading "-" ("-0.05"). "+" is still
// refused.
func ParseSigned(s, currency string) (Amount, error) { return parse(s, currency, true) }

func parse(s, code string, signed bool) (Amount, error) {
	digits, ok := Digits(code)
	if !ok {
		return Amount{}, &ParseError{Input: s, Reason: fmt.Sprintf("is in an unsupported currency (%q)", code), err: ErrUnknownCurrency}
	}
	return parseDigits(s, code, digits, MaxIntegerDigits, signed)
}

// parseDigits is parse for an asset of digits minor-unit digits whose
// amounts have at most maxInt digits before the decimal point.
func parseDigits(s, code string, digits, maxInt int, signed bool) (Amount, error) {
	neg := false
	body := s
	if signed && len(body) > 0 && body[0] == '-' {
		neg = true
		body = body[1:]
	}
	intPart, fracPart, reason := scanDecimal(s, body)
	if reason != "" {
		return Amount{}, &ParseError{Input: s, Reason: reason}
	}
	if len(fracPart) > digits {
		return Amount{}, &ParseError{Input: s, Reason: fmt.Sprintf("has more decimal places than %s allows (%d)", code, digits)}
	}
	if significant := strings.TrimLeft(intPart, "0"); len(significant) > maxInt {
		return Amount{}, &ParseError{Input: s, err: ErrOverflow, Reason: fmt.Sprintf(
			"has more than %d digits before the decimal point (the largest %s amount is %s)", maxInt, code, maxAmount(code, digits, maxInt))}
	}
	// Minor units: the integer digits followed by the fraction padded to the
	// currency's precision, accumulated with an overflow check.
	var minor uint64
	push := func(d byte) bool {
		if minor > (math.MaxInt64-uint64(d))/10 {
			return false
		}
		minor = minor*10 + uint64(d)
		return true
	}
	okAll := true
	for i := 0; i < len(intPart) && okAll; i++ {
		okAll = push(intPart[i] - '0')
	}
	for i := 0; i < digits && okAll; i++ {
		d := byte(0)
		if i < len(fracPart) {
			d = fracPart[i] - '0'
		}
		okAll = push(d)
	}
	if !okAll {
		return Amount{}, &ParseError{Input: s, Reason: "is too large", err: ErrOverflow}
	}
	a := Amount{Minor: int64(minor), Currency: code}
	if neg {
		a.Minor = -a.Minor
	}
	return a, nil
}

// Max returns the largest amount of currency Parse accepts: MaxIntegerDigits
// nines before the decimal point and nines after it (999999999999999.99
// EUR). ok is false for a currency Digits does not know.
func Max(currency string) (a Amount, ok bool) {
	digits, ok := Digits(currency)
	if !ok {
		return Amount{}, false
	}
	return maxAmount(currency, digits, MaxIntegerDigits), true
}

func maxAmount(code string, digits, maxInt int) Amount {
	minor := int64(1)
	for i := 0; i < maxInt+digits; i++ {
		minor *= 10
	}
	return Amount{Minor: minor - 1, Currency: code}
}

// WithinLimit reports whether a is an amount ParseSigned would accept: its
// currency is supported and |a| is at most Max of it. Conversions and sums
// can leave the limit; check them with this before they become amounts of
// their own (a quote's other side).
func (a Amount) WithinLimit() bool {
	m, ok := Max(a.Currency)
	return ok && a.Minor <= m.Minor && a.Minor >= -m.Minor
}

// scanDecimal splits body (s without an accepted sign) into its integer and
// fraction digits, or returns why it is not a plain decimal number.
func scanDecimal(s, body string) (intPart, fracPart, reason string) {
	if s == "" {
		return "", "", "is empty"
	}
	dot := -1
	for i, r := range body {
		switch {
		case r >= '0' && r <= '9':
		case r == '.':
			if dot >= 0 {
				return "", "", "has more than one decimal point"
			}
			dot = i
		case r == '+' || r == '-':
			if i == 0 && len(body) == len(s) {
				if r == '+' {
					return "", "", "must not have a plus sign"
				}
				return "", "", "must not be negative"
			}
			return "", "", "must be a decimal number"
		case r == 'e' || r == 'E':
			return "", "", "must not use exponent notation"
		case r == ',' || r == '_' || r == '\'' || r == '\u2019':
			return "", "", `must not contain thousands separators and must use "." as the decimal point`
		case unicode.IsSpace(r):
			return "", "", "must not contain spaces"
		default:
			return "", "", "must be a decimal number"
		}
	}
	if body == "" {
		return "", "", "has no digits"
	}
	if dot < 0 {
		return body, "", ""
	}
	if dot == 0 {
		return "", "", "must have a digit before the decimal point"
	}
	if dot == len(body)-1 {
		return "", "", "must have a digit after the decimal point"
	}
	return body[:dot], body[dot+1:], ""
}

// String formats a at its currency's precision: "12.50", "1000" (JPY),
// "-0.05", "1.000" (KWD). An amount in a currency Digits does not know is
// printed as its minor units ("1250").
func (a Amount) String() string {
	digits, ok := Digits(a.Currency)
	if !ok && IsCoin(a.Currency) {
		digits = CoinDigits
	}
	return string(a.appendDecimal(nil, digits))
}

func (a Amount) appendDecimal(b []byte, digits int) []byte {
	var mag uint64
	if a.Minor < 0 {
		b = append(b, '-')
		mag = uint64(-(a.Minor + 1)) + 1 // also right for math.MinInt64
	} else {
		mag = uint64(a.Minor)
	}
	var buf [24]byte
	num := strconv.AppendUint(buf[:0], mag, 10)
	if digits == 0 {
		return append(b, num...)
	}
	for len(num) <= digits { // at least one digit before the point
		num = append([]byte{'0'}, num...)
	}
	cut := len(num) - digits
	b = append(b, num[:cut]...)
	b = append(b, '.')
	return append(b, num[cut:]...)
}

// Add returns a + b. It returns an error wrapping ErrCurrencyMismatch when the
// currencies differ and ErrOverflow when the sum is out of range.
func (a Amount) Add(b Amount) (Amount, error) {
	if a.Currency != b.Currency {
		return Amount{}, mismatch(a, b)
	}
	sum := a.Minor + b.Minor
	// Overflow when both operands have the same sign and the sum has the other.
	if (a.Minor >= 0) == (b.Minor >= 0) && (sum >= 0) != (a.Minor >= 0) || sum == math.MinInt64 {
		return Amount{}, fmt.Errorf("%w: %s + %s", ErrOverflow, a, b)
	}
	return Amount{Minor: sum, Currency: a.Currency}, nil
}

// Sub returns a − b, with Add's errors.
func (a Amount) Sub(b Amount) (Amount, error) {
	if a.Currency != b.Currency {
		return Amount{}, mismatch(a, b)
	}
	diff := a.Minor - b.Minor
	// Overflow when the operands have different signs and the difference
	// does not have a's sign.
	if (a.Minor >= 0) != (b.Minor >= 0) && (diff >= 0) != (a.Minor >= 0) || diff == math.MinInt64 {
		return Amount{}, fmt.Errorf("%w: %s - %s", ErrOverflow, a, b)
	}
	return Amount{Minor: diff, Currency: a.Currency}, nil
}

func mismatch(a, b Amount) error {
	return fmt.Errorf("%w: %q and %q", ErrCurrencyMismatch, a.Currency, b.Currency)
}

// Neg returns −a. It panics when a.Minor is math.MinInt64, which no operation
// of this package produces (see the package comment).
func (a Amount) Neg() Amount {
	if a.Minor == math.MinInt64 {
		panic("money: Neg of an amount below the supported range")
	}
	return Amount{Minor: -a.Minor, Currency: a.Currency}
}

// IsZero reports whether a is zero (in any currency).
func (a Amount) IsZero() bool { return a.Minor == 0 }

// IsPositive reports whether a is greater than zero.
func (a Amount) IsPositive() bool { return a.Minor > 0 }

// IsNegative reports whether a is less than zero.
func (a Amount) IsNegative() bool { return a.Minor < 0 }

// Convert converts a into currency to at rate, the price of one unit of a's
// currency in units of to, given as a positive decimal string of at most
// RateDecimals decimal places ("1.0834"). The result is rounded half away from
// zero to to's minor units; the arithmetic is exact. Negative amounts convert
// symmetrically. Errors: an unknown currency (ErrUnknownCurrency), a malformed,
// zero or too precise rate (*ParseError), a result out of range (ErrOverflow).
func Convert(a Amount, to string, rate string) (Amount, error) {
	c, err := newConversion(a.Currency, to, rate)
	if err != nil {
		return Amount{}, err
	}
	return c.convert(a.Minor)
}

// ConvertFor returns the smallest non-negative source amount in currency from
// that Convert(source, dest.Currency, rate) turns into at least dest: what a
// payer must send so the recipient receives dest. dest must not be negative.
// Its errors are Convert's; it also reports ErrOverflow when the source, or
// what it delivers, is out of range.
func ConvertFor(dest Amount, from string, rate string) (Amount, error) {
	c, err := newConversion(from, dest.Currency, rate)
	if err != nil {
		return Amount{}, err
	}
	if dest.Minor < 0 {
		return Amount{}, fmt.Errorf("money: ConvertFor of a negative amount (%s %s)", dest, dest.Currency)
	}
	if dest.Minor == 0 {
		return Amount{Minor: 0, Currency: from}, nil
	}
	// Convert(s) = floor((2·s·K + D) / 2D) for s ≥ 0, where K = rate·10^(10+dt)
	// and D = 10^(10+ds). It is at least m exactly when s ≥ D·(2m−1) / 2K.
	m := big.NewInt(dest.Minor)
	num := new(big.Int).Lsh(m, 1)
	num.Sub(num, big.NewInt(1))
	num.Mul(num, c.den)
	den := new(big.Int).Lsh(c.mul, 1)
	s := ceilDiv(num, den)
	if !s.IsInt64() {
		return Amount{}, fmt.Errorf("%w: source for %s %s at %s", ErrOverflow, dest, dest.Currency, rate)
	}
	source := Amount{Minor: s.Int64(), Currency: from}
	// What the quote delivers must itself be representable.
	if _, err := c.convert(source.Minor); err != nil {
		return Amount{}, err
	}
	return source, nil
}

// conversion holds Convert's exact factors: target minor units are
// source minor units × mul / den, rounded.
type conversion struct {
	to       string
	mul, den *big.Int
}

func newConversion(from, to, rate string) (conversion, error) {
	ds, ok := Digits(from)
	if !ok {
		return conversion{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, from)
	}
	dt, ok := Digits(to)
	if !ok {
		return conversion{}, fmt.Errorf("%w: %q", ErrUnknownCurrency, to)
	}
	r, err := parseRate(rate)
	if err != nil {
		return conversion{}, err
	}
	// rate = r / 10^RateDecimals; target major = source minor / 10^ds × rate.
	mul := new(big.Int).Mul(r, pow10(dt))
	den := pow10(RateDecimals + ds)
	return conversion{to: to, mul: mul, den: den}, nil
}

func (c conversion) convert(minor int64) (Amount, error) {
	n := new(big.Int).Mul(big.NewInt(minor), c.mul)
	q := divRoundHalfAway(n, c.den)
	if !inRange(q) {
		return Amount{}, fmt.Errorf("%w: conversion into %s", ErrOverflow, c.to)
	}
	return Amount{Minor: q.Int64(), Currency: c.to}, nil
}

// parseRate reads a positive decimal rate of at most RateDecimals places and
// returns it scaled by 10^RateDecimals.
func parseRate(s string) (*big.Int, error) {
	intPart, fracPart, reason := scanDecimal(s, s)
	if reason == "must not be negative" {
		reason = "must be positive"
	}
	if reason != "" {
		return nil, &ParseError{Input: s, Reason: reason}
	}
	if len(fracPart) > RateDecimals {
		return nil, &ParseError{Input: s, Reason: fmt.Sprintf("has more than %d decimal places", RateDecimals)}
	}
	digits := make([]byte, 0, len(intPart)+RateDecimals)
	digits = append(digits, intPart...)
	digits = append(digits, fracPart...)
	for i := len(fracPart); i < RateDecimals; i++ {
		digits = append(digits, '0')
	}
	r, ok := new(big.Int).SetString(string(digits), 10)
	if !ok { // cannot happen: scanDecimal let only ASCII digits through
		return nil, &ParseError{Input: s, Reason: "must be a decimal number"}
	}
	if r.Sign() <= 0 {
		return nil, &ParseError{Input: s, Reason: "must be positive"}
	}
	return r, nil
}

// MulRatio returns a × num / den rounded half away from zero, computed
// exactly: MulRatio(a, 25, 10000) is 25 basis points of a. num may be negative.
// It returns an error when den ≤ 0 and ErrOverflow when the result is out of
// range.
func MulRatio(a Amount, num, den int64) (Amount, error) {
	if den <= 0 {
		return Amount{}, fmt.Errorf("money: MulRatio with denominator %d", den)
	}
	n := new(big.Int).Mul(big.NewInt(a.Minor), big.NewInt(num))
	q := divRoundHalfAway(n, big.NewInt(den))
	if !inRange(q) {
		return Amount{}, fmt.Errorf("%w: %s × %d / %d", ErrOverflow, a, num, den)
	}
	return Amount{Minor: q.Int64(), Currency: a.Currency}, nil
}

var (
	bigMax = big.NewInt(math.MaxInt64)
	bigMin = big.NewInt(-math.MaxInt64)
)

func inRange(x *big.Int) bool { return x.Cmp(bigMin) >= 0 && x.Cmp(bigMax) <= 0 }

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// divRoundHalfAway returns n / d rounded to the nearest integer, halves away
// from zero. d must be positive.
func divRoundHalfAway(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int)) // truncated toward zero
	r.Abs(r)
	r.Lsh(r, 1)
	if r.Cmp(d) >= 0 {
		if n.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	return q
}

// ceilDiv returns ⌈n / d⌉ for n ≥ 0 and d > 0.
func ceilDiv(n, d *big.Int) *big.Int {
	q, r := new(big.Int).QuoRem(n, d, new(big.Int))
	if r.Sign() != 0 {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// MarshalJSON encodes a as the API's money object,
// {"amount": "12.50", "currency": "EUR"}. It fails for a currency Digits does
// not know, so an unset Amount is never sent as money; use *Amount for an
// optional one.
func (a Amount) MarshalJSON() ([]byte, error) {
	digits, ok := Digits(a.Currency)
	if !ok {
		return nil, fmt.Errorf("%w: cannot encode an amount in %q", ErrUnknownCurrency, a.Currency)
	}
	b := make([]byte, 0, 48)
	b = append(b, `{"amount":"`...)
	b = a.appendDecimal(b, digits)
	b = append(b, `","currency":"`...)
	b = append(b, a.Currency...) // three capital letters: nothing to escape
	b = append(b, `"}`...)
	return b, nil
}

// UnmarshalJSON decodes the API's money object. Both members are required and
// must be strings; other members are refused; the amount is read with
// ParseSigned in the object's currency (check the sign where it matters).
// Problems with the members are reported as *ParseError. A JSON null leaves
// a unchanged.
func (a *Amount) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	var obj struct {
		Amount   json.RawMessage `json:"amount"`
		Currency json.RawMessage `json:"currency"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&obj); err != nil {
		return fmt.Errorf("money: decoding a money object: %w", err)
	}
	var amount, code string
	if err := stringMember(obj.Currency, "currency", &code); err != nil {
		return err
	}
	if !IsCurrency(code) {
		return &ParseError{Input: code, Reason: "is not a supported currency code", err: ErrUnknownCurrency}
	}
	if err := stringMember(obj.Amount, "amount", &amount); err != nil {
		return err
	}
	v, err := ParseSigned(amount, code)
	if err != nil {
		return err
	}
	*a = v
	return nil
}

func stringMember(raw json.RawMessage, name string, dst *string) error {
	if len(raw) == 0 || string(raw) == "null" {
		return &ParseError{Input: "", Reason: fmt.Sprintf("is missing the %s member", name)}
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return &ParseError{Input: string(raw), Reason: fmt.Sprintf("must be a string (the %s)", name)}
	}
	return nil
}
