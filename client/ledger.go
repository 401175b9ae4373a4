package client

import (
	"context"

	"github.com/strongroom/strongroom/client/api"
)

// Transaction reads one row of the transactions feed (getTransaction).
func (c *Client) Transaction(ctx context.Context, organizationID, transactionID string) (*api.Transaction, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	transaction, err := parseUUID("transaction id", transactionID)
	if err != nil {
		return nil, err
	}
	return decode[api.Transaction](c.raw.GetTransaction(ctx, org, transaction, nil))
}
