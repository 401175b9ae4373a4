package money

import (
	"fmt"
	"slices"
)

// Stablecoins the ledger holds beside currencies (docs/api.md, Invoicing): crypto
// deposits arrive in them. They are not ISO 4217 codes, so Digits,
// IsCurrency, Parse and MarshalJSON refuse them; ParseCoin reads their
// amounts and Amount.String formats them at CoinDigits.
var Coins = []string{"EURC", "USDC", "USDT"}

// CoinDigits is the minor-unit digits of every coin: amounts are kept in
// millionths (the tokens' own 6 decimals).
const CoinDigits = 6

// MaxCoinIntegerDigits is the most digits a coin amount may have before its
// decimal point: with 6 decimals that keeps every amount below 10^18 minor
// units, as MaxIntegerDigits does for currencies.
const MaxCoinIntegerDigits = 12

// IsCoin reports whether code is one of Coins.
func IsCoin(code string) bool { return slices.Contains(Coins, code) }

// ParseCoin reads a non-negative decimal amount of coin with Parse's rules,
// at most CoinDigits decimal places and MaxCoinIntegerDigits digits before
// the point. A code not in Coins is ErrUnknownCurrency.
func ParseCoin(s, coin string) (Amount, error) {
	if !IsCoin(coin) {
		return Amount{}, &ParseError{Input: s, Reason: fmt.Sprintf("is in an unsupported coin (%q)", coin), err: ErrUnknownCurrency}
	}
	return parseDigits(s, coin, CoinDigits, MaxCoinIntegerDigits, false)
}
