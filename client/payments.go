package client

import (
	"context"
	"github.com/strongroom/strongroom/client/api"
)

// CreatePaymentQuote prices a payment to a contact (createPaymentQuote, the
// preflight): what leaves the balance, what the contact receives, the fee
// and the rate. Pass its Id as QuoteId to [Client.ExecutePayment] within
// 15 minutes; a quote pays once.
func (c *Client) CreatePaymentQuote(ctx context.Context, quote api.PaymentQuoteRequest) (*api.Quote, error) {
	r, err := c.api.CreatePaymentQuoteWithResponse(ctx, nil, quote)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON201, nil
}

// Payment reads one payment (getPayment).
func (c *Client) Payment(ctx context.Context, paymentID string) (*api.Payment, error) {
	id, err := parseUUID("payment id", paymentID)
	if err != nil {
		return nil, err
	}
	r, err := c.api.GetPaymentWithResponse(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}
