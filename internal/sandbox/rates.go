package sandbox

import (
	"context"
	"fmt"
	"math/big"
)

// Rates stands in for a market-data provider of exchange rates (the port
// payment.Rates, which card.Rates shares): a fixed table of US-dollar
// values, so quotes and card conversions are repeatable. Every deployment
// uses it until a live provider is plugged in.
type Rates struct{}

var usdValue = map[string]string{
	"USD": "1", "EUR": "1.0834", "GBP": "1.2650", "CHF": "1.1320", "JPY": "0.006690", "CAD": "0.7350",
	"AUD": "0.6550", "HKD": "0.1282", "SGD": "0.7460", "MXN": "0.0580",
}

// Rate implements payment.Rates and card.Rates: how many units of to one
// unit of from buys, with ten decimals.
func (Rates) Rate(_ context.Context, from, to string) (string, error) {
	if from == to {
		return "1", nil
	}
	f, okF := new(big.Rat).SetString(usdValue[from])
	t, okT := new(big.Rat).SetString(usdValue[to])
	if !okF || !okT {
		return "", fmt.Errorf("no sandbox rate from %s to %s", from, to)
	}
	return new(big.Rat).Quo(f, t).FloatString(10), nil
}
