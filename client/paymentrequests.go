package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// CreatePaymentRequest proposes a payment to one of the organization's
// payment contacts (createPaymentRequest), as a program with an API key
// holding payment_requests:write or as a person; a person who may pay
// answers it. It always carries an Idempotency-Key (idempotencyKey, or a
// fresh one when empty), so the client's retries replay the first answer
// instead of proposing twice; pass your own (your purchase order's number,
// say) to make retries of your own safe too.
func (c *Client) CreatePaymentRequest(ctx context.Context, organizationID string, request api.PaymentRequestCreation, idempotencyKey string) (*api.PaymentRequest, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	if idempotencyKey == "" {
		idempotencyKey = NewIdempotencyKey()
	}
	return decode[api.PaymentRequest](c.raw.CreatePaymentRequest(ctx, org, &api.CreatePaymentRequestParams{IdempotencyKey: &idempotencyKey}, request))
}

// PaymentRequests iterates over the organization's payment requests, newest
// first, every page of them; filters.Status and filters.ExternalId narrow
// them. filters (may be nil) are sent with every page; its Cursor is
// ignored.
func (c *Client) PaymentRequests(ctx context.Context, organizationID string, filters *api.ListPaymentRequestsParams) iter.Seq2[api.PaymentRequest, error] {
	var params api.ListPaymentRequestsParams
	if filters != nil {
		params = *filters
	}
	return list[api.PaymentRequest](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListPaymentRequests(ctx, org, &p)
	})
}

// PaymentRequest reads one payment request (getPaymentRequest).
func (c *Client) PaymentRequest(ctx context.Context, organizationID, requestID string) (*api.PaymentRequest, error) {
	return paymentRequestCall(organizationID, requestID, func(org, id api.OrganizationId) (*http.Response, error) {
		return c.raw.GetPaymentRequest(ctx, org, id, nil)
	})
}

// CancelPaymentRequest withdraws a pending payment request
// (cancelPaymentRequest); only its requester may.
func (c *Client) CancelPaymentRequest(ctx context.Context, organizationID, requestID string) (*api.PaymentRequest, error) {
	return paymentRequestCall(organizationID, requestID, func(org, id api.OrganizationId) (*http.Response, error) {
		return c.raw.CancelPaymentRequest(ctx, org, id, nil, api.EmptyObject{})
	})
}

// AcceptPaymentRequest turns a pending payment request into a payment in
// the signed-in person's name (acceptPaymentRequest): the answer names it
// (PaymentId) and it awaits approval; approve it with
// [Client.ApprovePayment] and the payment's ApprovalRequestId, as any
// payment. An API key never may.
func (c *Client) AcceptPaymentRequest(ctx context.Context, organizationID, requestID string) (*api.PaymentRequest, error) {
	return paymentRequestCall(organizationID, requestID, func(org, id api.OrganizationId) (*http.Response, error) {
		return c.raw.AcceptPaymentRequest(ctx, org, id, nil, api.EmptyObject{})
	})
}

// DeclinePaymentRequest refuses a pending payment request
// (declinePaymentRequest), telling the requester why (reason, 1 to 500
// characters). An API key never may.
func (c *Client) DeclinePaymentRequest(ctx context.Context, organizationID, requestID, reason string) (*api.PaymentRequest, error) {
	return paymentRequestCall(organizationID, requestID, func(org, id api.OrganizationId) (*http.Response, error) {
		return c.raw.DeclinePaymentRequest(ctx, org, id, nil, api.PaymentRequestDecline{Reason: reason})
	})
}

// paymentRequestCall parses the two ids of a request's operation and
// decodes call's answer.
func paymentRequestCall(organizationID, requestID string, call func(org, id api.OrganizationId) (*http.Response, error)) (*api.PaymentRequest, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	id, err := parseUUID("payment request id", requestID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentRequest](call(org, id))
}

// SandboxCreatePaymentRequest makes a payment request as a program would,
// without a key (sandboxCreatePaymentRequest; sandbox token, environment
// test only): its requester is the sandbox.
func (c *Client) SandboxCreatePaymentRequest(ctx context.Context, organizationID string, request api.PaymentRequestCreation) (*api.PaymentRequest, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentRequest](c.raw.SandboxCreatePaymentRequest(ctx, org, nil, request))
}
