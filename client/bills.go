package client

import (
	"bytes"
	"context"
	"io"
	"iter"
	"mime/multipart"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/client/api"
)

// UploadBill uploads an invoice (PDF, PNG, JPEG, or UBL/CII XML) and opens
// a bill on it (uploadBill). The bill answered is at status extracting: the
// server reads the file in the background; [Client.WaitBill] waits for it.
// fileName names the stored file; the server reads the type from the
// bytes.
func (c *Client) UploadBill(ctx context.Context, organizationID, fileName string, content io.Reader) (*api.Bill, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", fileName)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(part, content); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.UploadBillWithBody(ctx, org, nil, w.FormDataContentType(), &body))
}

// Bill reads one bill (getBill).
func (c *Client) Bill(ctx context.Context, billID string) (*api.Bill, error) {
	id, err := parseUUID("bill id", billID)
	if err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.GetBill(ctx, id, nil))
}

// WaitBill polls the bill every interval (1 s when not positive) until its
// status is no longer extracting and returns it: extracted with the fields
// read from the file, or with ExtractionFailedAt set when nothing could be
// read. ctx bounds the wait.
func (c *Client) WaitBill(ctx context.Context, billID string, interval time.Duration) (*api.Bill, error) {
	if interval <= 0 {
		interval = time.Second
	}
	for {
		b, err := c.Bill(ctx, billID)
		if err != nil {
			return nil, err
		}
		if b.Status != api.BillStatusExtracting {
			return b, nil
		}
		if err := sleep(ctx, interval); err != nil {
			return nil, err
		}
	}
}

// CreateBill opens a bill on a file already stored with [Client.CreateFile]
// (createBill); like [Client.UploadBill], the bill starts at status
// extracting.
func (c *Client) CreateBill(ctx context.Context, organizationID string, bill api.CreateBillRequest) (*api.Bill, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.CreateBill(ctx, org, nil, bill))
}

// Bills iterates over the organization's bills, every page of them. filters
// (may be nil; by status, due date, or text) are sent with every page; its
// Cursor is ignored.
func (c *Client) Bills(ctx context.Context, organizationID string, filters *api.ListBillsParams) iter.Seq2[api.Bill, error] {
	var params api.ListBillsParams
	if filters != nil {
		params = *filters
	}
	return list[api.Bill](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListBills(ctx, org, &p)
	})
}

// UpdateBill changes a bill's fields (updateBill): what extraction read
// wrong or missed, before it is paid.
func (c *Client) UpdateBill(ctx context.Context, billID string, update api.UpdateBillRequest) (*api.Bill, error) {
	id, err := parseUUID("bill id", billID)
	if err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.UpdateBill(ctx, id, nil, update))
}

// CancelBill cancels a bill that is not paid (cancelBill).
func (c *Client) CancelBill(ctx context.Context, billID string) (*api.Bill, error) {
	id, err := parseUUID("bill id", billID)
	if err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.CancelBill(ctx, id, nil))
}

// CreateBillPaymentContact creates the payment contact of the bill's
// supplier from the bank details read off the invoice
// (createBillPaymentContact) and answers the bill, now linked to it.
func (c *Client) CreateBillPaymentContact(ctx context.Context, billID string) (*api.Bill, error) {
	id, err := parseUUID("bill id", billID)
	if err != nil {
		return nil, err
	}
	return decode[api.Bill](c.raw.CreateBillPaymentContact(ctx, id, nil))
}
