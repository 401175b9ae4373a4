package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
)

// CreateBillingContact creates a billing contact, a customer the
// organization invoices (createBillingContact).
func (c *Client) CreateBillingContact(ctx context.Context, organizationID string, contact api.BillingContactCreate) (*api.BillingContact, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingContact](c.raw.CreateBillingContact(ctx, org, nil, contact))
}

// BillingContacts iterates over the organization's billing contacts, every
// page of them. filters (may be nil) are sent with every page; its Cursor is
// ignored.
func (c *Client) BillingContacts(ctx context.Context, organizationID string, filters *api.ListBillingContactsParams) iter.Seq2[api.BillingContact, error] {
	var params api.ListBillingContactsParams
	if filters != nil {
		params = *filters
	}
	return list[api.BillingContact](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListBillingContacts(ctx, org, &p)
	})
}

// BillingContact reads one billing contact (getBillingContact).
func (c *Client) BillingContact(ctx context.Context, organizationID, billingContactID string) (*api.BillingContact, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	contact, err := parseUUID("billing contact id", billingContactID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingContact](c.raw.GetBillingContact(ctx, org, contact, nil))
}

// UpdateBillingContact changes a billing contact (updateBillingContact).
func (c *Client) UpdateBillingContact(ctx context.Context, organizationID, billingContactID string, update api.BillingContactUpdate) (*api.BillingContact, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	contact, err := parseUUID("billing contact id", billingContactID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingContact](c.raw.UpdateBillingContact(ctx, org, contact, nil, update))
}

// DeleteBillingContact deletes a billing contact (deleteBillingContact;
// owners and admins): it leaves the list, and its invoices keep it.
func (c *Client) DeleteBillingContact(ctx context.Context, organizationID, billingContactID string) (*api.BillingContact, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	contact, err := parseUUID("billing contact id", billingContactID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingContact](c.raw.DeleteBillingContact(ctx, org, contact, nil))
}

// BillingAllocations iterates over a billing contact's allocation ledger
// (what of which deposit paid which invoice), every page of it. filters (may
// be nil) are sent with every page; its Cursor is ignored.
func (c *Client) BillingAllocations(ctx context.Context, organizationID, billingContactID string, filters *api.ListBillingAllocationsParams) iter.Seq2[api.BillingAllocation, error] {
	var params api.ListBillingAllocationsParams
	if filters != nil {
		params = *filters
	}
	return list[api.BillingAllocation](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		contact, err := parseUUID("billing contact id", billingContactID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListBillingAllocations(ctx, org, contact, &p)
	})
}

// CreateInvoice creates a draft invoice to a billing contact
// (createInvoice).
func (c *Client) CreateInvoice(ctx context.Context, organizationID string, invoice api.InvoiceCreate) (*api.BillingInvoice, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingInvoice](c.raw.CreateInvoice(ctx, org, nil, invoice))
}

// Invoices iterates over the organization's invoices, every page of them.
// filters (may be nil; by state, contact, overdue) are sent with every page;
// its Cursor is ignored.
func (c *Client) Invoices(ctx context.Context, organizationID string, filters *api.ListInvoicesParams) iter.Seq2[api.BillingInvoice, error] {
	var params api.ListInvoicesParams
	if filters != nil {
		params = *filters
	}
	return list[api.BillingInvoice](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListInvoices(ctx, org, &p)
	})
}

// Invoice reads one invoice (getInvoice).
func (c *Client) Invoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	invoice, err := parseUUID("billing invoice id", billingInvoiceID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingInvoice](c.raw.GetInvoice(ctx, org, invoice, nil))
}

// UpdateInvoice changes a draft invoice (updateInvoice).
func (c *Client) UpdateInvoice(ctx context.Context, organizationID, billingInvoiceID string, update api.InvoiceUpdate) (*api.BillingInvoice, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	invoice, err := parseUUID("billing invoice id", billingInvoiceID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingInvoice](c.raw.UpdateInvoice(ctx, org, invoice, nil, update))
}

// SubmitInvoice submits a draft invoice for approval (submitInvoice): it
// awaits approval by an owner or admin.
func (c *Client) SubmitInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.SubmitInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// ApproveInvoice approves an invoice awaiting approval, which sends it
// (approveInvoice; owners and admins).
func (c *Client) ApproveInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.ApproveInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// ReturnInvoice returns an invoice awaiting approval to draft
// (returnInvoice; owners and admins).
func (c *Client) ReturnInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.ReturnInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// SendInvoice sends a draft invoice without an approval (sendInvoice;
// owners and admins).
func (c *Client) SendInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.SendInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// FinalizeInvoice records a sent invoice as settled outside the service
// (finalizeInvoice; owners and admins).
func (c *Client) FinalizeInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.FinalizeInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// DeallocateInvoice reverses a paid invoice's allocations
// (deallocateInvoice): the deposits' money is free to allocate again.
func (c *Client) DeallocateInvoice(ctx context.Context, organizationID, billingInvoiceID string) (*api.BillingInvoice, error) {
	return c.moveInvoice(organizationID, billingInvoiceID, func(org, invoice uuid.UUID) (*http.Response, error) {
		return c.raw.DeallocateInvoice(ctx, org, invoice, nil, api.EmptyObject{})
	})
}

// AllocateInvoice allocates part of a crypto deposit to an invoice
// (allocateInvoice).
func (c *Client) AllocateInvoice(ctx context.Context, organizationID, billingInvoiceID string, allocation api.AllocationCreate) (*api.BillingAllocation, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	invoice, err := parseUUID("billing invoice id", billingInvoiceID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingAllocation](c.raw.AllocateInvoice(ctx, org, invoice, nil, allocation))
}

// CryptoIncoming iterates over the organization's crypto deposits, every
// page of them. filters (may be nil) are sent with every page; its Cursor is
// ignored.
func (c *Client) CryptoIncoming(ctx context.Context, organizationID string, filters *api.ListCryptoIncomingParams) iter.Seq2[api.CryptoIncoming, error] {
	var params api.ListCryptoIncomingParams
	if filters != nil {
		params = *filters
	}
	return list[api.CryptoIncoming](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListCryptoIncoming(ctx, org, &p)
	})
}

// moveInvoice runs one of an invoice's moves (submit, approve, return, send,
// finalize, deallocate): each takes the organization and invoice ids and no
// body, and answers the invoice.
func (c *Client) moveInvoice(organizationID, billingInvoiceID string, move func(org, invoice uuid.UUID) (*http.Response, error)) (*api.BillingInvoice, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	invoice, err := parseUUID("billing invoice id", billingInvoiceID)
	if err != nil {
		return nil, err
	}
	return decode[api.BillingInvoice](move(org, invoice))
}
