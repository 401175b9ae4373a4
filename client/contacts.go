package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// PaymentContacts iterates over the organization's payment contacts, every
// page of them. filters (may be nil) are sent with every page; its Cursor
// is ignored.
func (c *Client) PaymentContacts(ctx context.Context, organizationID string, filters *api.ListPaymentContactsParams) iter.Seq2[api.PaymentContact, error] {
	var params api.ListPaymentContactsParams
	if filters != nil {
		params = *filters
	}
	return list[api.PaymentContact](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListPaymentContacts(ctx, org, &p)
	})
}

// PaymentContact reads one payment contact (getPaymentContact).
func (c *Client) PaymentContact(ctx context.Context, paymentContactID string) (*api.PaymentContact, error) {
	id, err := parseUUID("payment contact id", paymentContactID)
	if err != nil {
		return nil, err
	}
	return decode[api.PaymentContact](c.raw.GetPaymentContact(ctx, id, nil))
}
