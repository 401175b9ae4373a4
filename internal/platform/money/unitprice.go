package money

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// UnitPriceExtraDigits is how many decimal places a unit price may carry
// beyond its currency's: an invoice line may price one unit at 0.0125 USD
// (EN 16931 allows unit prices finer than the currency); only the amounts
// computed from it are rounded to the currency.
const UnitPriceExtraDigits = 4

// unitPriceScale is 10^UnitPriceExtraDigits.
const unitPriceScale = 10000

// UnitPrice is a non-negative price per unit: Minor whole minor units of
// Currency and Fraction ten-thousandths (0 to 9999) of one more minor unit.
// 0.0125 USD is {Minor: 1, Fraction: 2500}; 12.50 EUR is {Minor: 1250}.
type UnitPrice struct {
	Minor    int64
	Fraction int64
	Currency string
}

// ParseUnitPrice reads a unit price with Parse's rules, except that it may
// have up to UnitPriceExtraDigits more decimal places than currency has
// ("0.0125" USD, "0.1234" JPY). Parse itself is unchanged: amounts of money
// stay at the currency's precision.
func ParseUnitPrice(s, currency string) (UnitPrice, error) {
	digits, ok := Digits(currency)
	if !ok {
		return UnitPrice{}, &ParseError{Input: s, Reason: fmt.Sprintf("is in an unsupported currency (%q)", currency), err: ErrUnknownCurrency}
	}
	intPart, fracPart, reason := scanDecimal(s, s)
	if reason != "" {
		return UnitPrice{}, &ParseError{Input: s, Reason: reason}
	}
	if len(fracPart) > digits+UnitPriceExtraDigits {
		return UnitPrice{}, &ParseError{Input: s, Reason: fmt.Sprintf("has more decimal places than a unit price in %s allows (%d)", currency, digits+UnitPriceExtraDigits)}
	}
	// The currency's part goes through Parse (its bounds and messages); the
	// digits beyond it are the fraction of one minor unit.
	head, extra := intPart, ""
	if len(fracPart) > digits {
		extra = fracPart[digits:]
		fracPart = fracPart[:digits]
	}
	if fracPart != "" {
		head += "." + fracPart
	}
	a, err := Parse(head, currency)
	if err != nil {
		if pe, ok := err.(*ParseError); ok {
			pe.Input = s
		}
		return UnitPrice{}, err
	}
	var fraction int64
	if extra != "" {
		fraction, _ = strconv.ParseInt(extra+strings.Repeat("0", UnitPriceExtraDigits-len(extra)), 10, 64)
	}
	return UnitPrice{Minor: a.Minor, Fraction: fraction, Currency: currency}, nil
}

// Rat is p in minor units of its currency, exactly.
func (p UnitPrice) Rat() *big.Rat {
	n := new(big.Int).Mul(big.NewInt(p.Minor), big.NewInt(unitPriceScale))
	n.Add(n, big.NewInt(p.Fraction))
	return new(big.Rat).SetFrac(n, big.NewInt(unitPriceScale))
}

// String formats p at its currency's precision, followed by the further
// decimals it has, without trailing zeros beyond the currency's: "12.50",
// "0.0125" (USD), "0.125" (USD), "1000" and "0.5" (JPY).
func (p UnitPrice) String() string {
	s := Amount{Minor: p.Minor, Currency: p.Currency}.String()
	if p.Fraction == 0 {
		return s
	}
	extra := strings.TrimRight(fmt.Sprintf("%0*d", UnitPriceExtraDigits, p.Fraction), "0")
	if !strings.Contains(s, ".") {
		s += "."
	}
	return s + extra
}
