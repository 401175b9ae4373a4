package client

import (
	"context"
	"github.com/strongroom/strongroom/client/api"
	"iter"
)

// PaymentContacts iterates over the organization's payment contacts, every
// page of them. filters (may be nil) are sent with every page; its Cursor
// is ignored.
func (c *Client) PaymentContacts(ctx context.Context, organizationID string, filters *api.ListPaymentContactsParams) iter.Seq2[api.PaymentContact, error] {
	var params api.ListPaymentContactsParams
	if filters != nil {
		params = *filters
	}
	return pages(ctx, func(ctx context.Context, cursor *string) (page[api.PaymentContact], error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return page[api.PaymentContact]{}, err
		}
		p := params
		p.Cursor = cursor
		r, err := c.api.ListPaymentContactsWithResponse(ctx, org, &p)
		if err != nil {
			return page[api.PaymentContact]{}, err
		}
		if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
			return page[api.PaymentContact]{}, err
		}
		return page[api.PaymentContact]{items: r.JSON200.Data, hasMore: r.JSON200.HasMore, next: r.JSON200.NextCursor}, nil
	})
}

// PaymentContact reads one payment contact (getPaymentContact).
func (c *Client) PaymentContact(ctx context.Context, paymentContactID string) (*api.PaymentContact, error) {
	id, err := parseUUID("payment contact id", paymentContactID)
	if err != nil {
		return nil, err
	}
	r, err := c.api.GetPaymentContactWithResponse(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}
