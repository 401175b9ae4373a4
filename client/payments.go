package client

import (
	"context"
	"iter"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/client/api"
)

// CreatePaymentQuote prices a payment to a contact (createPaymentQuote, the
// preflight): what leaves the balance, what the contact receives, the fee
// and the rate. Pass its Id as QuoteId to [Client.ExecutePayment] within
// 15 minutes; a quote pays once.
func (c *Client) CreatePaymentQuote(ctx context.Context, quote api.PaymentQuoteRequest) (*api.Quote, error) {
	return decode[api.Quote](c.raw.CreatePaymentQuote(ctx, nil, quote))
}

// Payment reads one payment (getPayment).
func (c *Client) Payment(ctx context.Context, paymentID string) (*api.Payment, error) {
	id, err := parseUUID("payment id", paymentID)
	if err != nil {
		return nil, err
	}
	return decode[api.Payment](c.raw.GetPayment(ctx, id, nil))
}

// Payments iterates over the organization's payments (listPayments),
// newest first, every page of them; filters.Status picks the payments of
// one status. filters (may be nil) are sent with every page; its Cursor is
// ignored.
func (c *Client) Payments(ctx context.Context, organizationID string, filters *api.ListPaymentsParams) iter.Seq2[api.Payment, error] {
	var params api.ListPaymentsParams
	if filters != nil {
		params = *filters
	}
	return list[api.Payment](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListPayments(ctx, org, &p)
	})
}

// CreatePaymentContact creates a payment contact, the recipient of payments
// (createPaymentContact); IBAN, BIC and ABA numbers are checked.
func (c *Client) CreatePaymentContact(ctx context.Context, organizationID string, contact api.PaymentContactCreation) (*api.PaymentContact, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentContact](c.raw.CreatePaymentContact(ctx, org, nil, contact))
}

// CancelPayment cancels a payment still waiting for approval
// (cancelPayment); no money moves.
func (c *Client) CancelPayment(ctx context.Context, paymentID string) (*api.Payment, error) {
	id, err := parseUUID("payment id", paymentID)
	if err != nil {
		return nil, err
	}
	return decode[api.Payment](c.raw.CancelPayment(ctx, id, nil, api.EmptyObject{}))
}

// CreatePaymentBatch executes several quoted payments under one approval
// (createPaymentBatch): one [Client.ApprovePayment] of the batch's approval
// pays them all.
func (c *Client) CreatePaymentBatch(ctx context.Context, batch api.PaymentBatchCreation) (*api.PaymentBatch, error) {
	return decode[api.PaymentBatch](c.raw.CreatePaymentBatch(ctx, nil, batch))
}

// PaymentBatch reads one payment batch (getPaymentBatch).
func (c *Client) PaymentBatch(ctx context.Context, batchID string) (*api.PaymentBatch, error) {
	id, err := parseUUID("batch id", batchID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentBatch](c.raw.GetPaymentBatch(ctx, id, nil))
}

// WaitPayment polls the payment every interval (1 s when not positive)
// until it no longer awaits approval and returns it: approved and moving
// (approved, processing, completed, or failed at the rail), rejected, or
// cancelled. An approver answers in their own session, so this is how the
// payer learns the outcome without the realtime channel. ctx bounds the
// wait.
func (c *Client) WaitPayment(ctx context.Context, paymentID string, interval time.Duration) (*api.Payment, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		p, err := c.Payment(ctx, paymentID)
		if err != nil {
			return nil, err
		}
		if p.Status != api.PaymentStatusAwaitingApproval {
			return p, nil
		}
		if err := sleep(ctx, interval); err != nil {
			return nil, err
		}
	}
}
