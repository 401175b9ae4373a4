package client

import (
	"bytes"
	"context"
	"github.com/strongroom/strongroom/client/api"
	"io"
	"mime/multipart"
	"time"
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
	r, err := c.api.UploadBillWithBodyWithResponse(ctx, org, nil, w.FormDataContentType(), &body)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON201, nil
}

// Bill reads one bill (getBill).
func (c *Client) Bill(ctx context.Context, billID string) (*api.Bill, error) {
	id, err := parseUUID("bill id", billID)
	if err != nil {
		return nil, err
	}
	r, err := c.api.GetBillWithResponse(ctx, id, nil)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
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
