package client

import (
	"context"

	"github.com/strongroom/strongroom/client/api"
)

// Balances lists the organization's balances, one per currency it holds,
// available and pending (getBalances).
func (c *Client) Balances(ctx context.Context, organizationID string) ([]api.Balance, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	r, err := c.raw.GetBalancesWithResponse(ctx, org, nil)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200.Data, nil
}

// PaymentsConfig is what a payment of the organization may carry: its
// rails with their fees, the payout reasons and the longest statement
// description (getPaymentsConfig).
func (c *Client) PaymentsConfig(ctx context.Context, organizationID string) (*api.PaymentsConfig, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentsConfig](c.raw.GetPaymentsConfig(ctx, org, nil))
}
