package client

import (
	"context"
	"github.com/strongroom/strongroom/client/api"
	"iter"
)

// Approvals iterates over the organization's approvals (of payments and
// payment batches), every page of them; filters.Status picks pending,
// approved or rejected ones. filters (may be nil) are sent with every page;
// its Cursor is ignored.
func (c *Client) Approvals(ctx context.Context, organizationID string, filters *api.ListApprovalsParams) iter.Seq2[api.Approval, error] {
	var params api.ListApprovalsParams
	if filters != nil {
		params = *filters
	}
	return pages(ctx, func(ctx context.Context, cursor *string) (page[api.Approval], error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return page[api.Approval]{}, err
		}
		p := params
		p.Cursor = cursor
		r, err := c.api.ListApprovalsWithResponse(ctx, org, &p)
		if err != nil {
			return page[api.Approval]{}, err
		}
		if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
			return page[api.Approval]{}, err
		}
		return page[api.Approval]{items: r.JSON200.Data, hasMore: r.JSON200.HasMore, next: r.JSON200.NextCursor}, nil
	})
}

// ApprovePayment approves a payment or payment batch (approvePayment). The
// server answers with a step-up bound to this one approval (tx_signed),
// which only the approving app can satisfy: with a [StepUpFunc] the client
// shows it, waits for the app and calls again, which answers the approved
// Approval. A person without an approving app gets an [*Error] of type
// approval_credential_required.
func (c *Client) ApprovePayment(ctx context.Context, approvalID string) (*api.Approval, error) {
	id, err := parseUUID("approval id", approvalID)
	if err != nil {
		return nil, err
	}
	r, err := c.api.ApprovePaymentWithResponse(ctx, id, nil, api.EmptyObject{})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

// RejectPayment refuses a payment or payment batch (rejectPayment); reason
// may be empty. No money moves.
func (c *Client) RejectPayment(ctx context.Context, approvalID, reason string) (*api.Approval, error) {
	id, err := parseUUID("approval id", approvalID)
	if err != nil {
		return nil, err
	}
	var body api.ApprovalRejection
	if reason != "" {
		body.Reason = &reason
	}
	r, err := c.api.RejectPaymentWithResponse(ctx, id, nil, body)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}
