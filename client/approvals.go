package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
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
	return list[api.Approval](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListApprovals(ctx, org, &p)
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
	return decode[api.Approval](c.raw.ApprovePayment(ctx, id, nil, api.EmptyObject{}))
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
	return decode[api.Approval](c.raw.RejectPayment(ctx, id, nil, body))
}
