package client

import (
	"context"

	"github.com/strongroom/strongroom/client/api"
)

// CurrencyAccounts lists the organization's currency accounts, one entry
// per currency it may hold (listOrganizationMultiCurrencyAccounts). It is
// the one operation an API key with scope balances:read may call.
func (c *Client) CurrencyAccounts(ctx context.Context, organizationID string) ([]api.CurrencyAccount, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	r, err := c.raw.ListOrganizationMultiCurrencyAccountsWithResponse(ctx, org, nil)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200.Data, nil
}

// CreateAPIKey creates an API key (createApiKey). It needs a step-up: with
// a [StepUpFunc] the client has the person answer it and calls again. The
// secret in the answer is shown this once.
func (c *Client) CreateAPIKey(ctx context.Context, organizationID string, key api.ApiKeyCreation) (*api.ApiKeyWithSecret, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.ApiKeyWithSecret](c.raw.CreateApiKey(ctx, org, nil, key))
}

// ExecuteOptions are the optional parts of [Client.ExecutePayment].
type ExecuteOptions struct {
	// IdempotencyKey names this payment so that a retry does not pay twice
	// (your invoice or transfer reference, say). When empty the client
	// makes one, which serves its own retries of this call.
	IdempotencyKey string
}

// ExecutePayment creates a payment from a quote and submits it for
// approval (executePayment). It always carries an Idempotency-Key, so the
// client's retries (after 429, or after a connection lost before the
// answer) replay the first answer instead of paying twice.
func (c *Client) ExecutePayment(ctx context.Context, payment api.PaymentExecution, opts *ExecuteOptions) (*api.Payment, error) {
	key := ""
	if opts != nil {
		key = opts.IdempotencyKey
	}
	if key == "" {
		key = NewIdempotencyKey()
	}
	return decode[api.Payment](c.raw.ExecutePayment(ctx, &api.ExecutePaymentParams{IdempotencyKey: &key}, payment))
}

// RequestCurrencyAccounts asks the banking partner to open the
// organization's accounts in more currencies (requestMultiCurrencyAccounts);
// [Client.CurrencyAccounts] shows their state as they open.
func (c *Client) RequestCurrencyAccounts(ctx context.Context, organizationID string, request api.CurrencyAccountRequest) (*api.CurrencyAccountRequestResult, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.CurrencyAccountRequestResult](c.raw.RequestMultiCurrencyAccounts(ctx, org, nil, request))
}
