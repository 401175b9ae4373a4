package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/strongroom/strongroom/client/api"
)

// CreateFile creates an empty file and its upload URL (createFile); send the
// bytes with [Client.UploadFileContent].
func (c *Client) CreateFile(ctx context.Context, organizationID string, file api.CreateFileRequest) (*api.FileCreated, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.FileCreated](c.raw.CreateFile(ctx, org, nil, file))
}

// File reads one file's record (getFile): its name, type, size and state.
func (c *Client) File(ctx context.Context, fileID string) (*api.File, error) {
	id, err := parseUUID("file id", fileID)
	if err != nil {
		return nil, err
	}
	return decode[api.File](c.raw.GetFile(ctx, id, nil))
}

// UploadFile stores a document in two steps: it creates the file
// (createFile) and sends its bytes to the upload URL (uploadFileContent).
// mimeType is what the bytes are (the server reads the type from them and
// refuses a mismatch with file_type_mismatch); the answer is the file at
// status stored. Attach it to a bill ([Client.CreateBill]) or an expense
// ([Client.AddExpenseReceipt]) by its Id.
func (c *Client) UploadFile(ctx context.Context, organizationID, fileName string, mimeType api.FileMimeType, content []byte) (*api.File, error) {
	f, err := c.CreateFile(ctx, organizationID, api.CreateFileRequest{FileName: fileName, MimeType: mimeType, Size: int64(len(content))})
	if err != nil {
		return nil, err
	}
	return c.UploadFileContent(ctx, f.UploadUrl, mimeType, bytes.NewReader(content))
}

// UploadFileContent sends a file's bytes, exactly the size it was created
// with, to the UploadUrl that [Client.CreateFile] answered
// (uploadFileContent). The signed URL is the permission: no bearer is sent
// with it. A second upload of a stored file is an [*Error] of type
// conflict.
func (c *Client) UploadFileContent(ctx context.Context, uploadURL string, mimeType api.FileMimeType, content io.Reader) (*api.File, error) {
	req, err := c.signedRequest(ctx, http.MethodPut, uploadURL, content)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", string(mimeType))
	return decode[api.File](doer{c}.Do(req))
}

// DownloadFileContent opens the bytes behind a file's DownloadUrl, or a
// receipt's thumbnail URL (downloadFileContent, getFileThumbnail); the
// caller reads and closes them. contentType is the stored file's type.
// Read the file again ([Client.File]) for a fresh URL: one is valid 15
// minutes.
func (c *Client) DownloadFileContent(ctx context.Context, downloadURL string) (content io.ReadCloser, contentType string, err error) {
	req, err := c.signedRequest(ctx, http.MethodGet, downloadURL, nil)
	if err != nil {
		return nil, "", err
	}
	return stream(doer{c}.Do(req))
}

// signedRequest is a request to a signed URL the server answered (a path
// beginning with /, resolved against the client's base URL), sent without
// the bearer: the signature is the permission.
func (c *Client) signedRequest(ctx context.Context, method, signedURL string, body io.Reader) (*http.Request, error) {
	ref, err := url.Parse(signedURL)
	if err != nil || !strings.HasPrefix(signedURL, "/") || ref.Query().Get("signature") == "" {
		return nil, fmt.Errorf("strongroom: %q is not a signed URL of the API", signedURL)
	}
	base, err := url.Parse(c.base)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(withoutBearer(ctx), method, base.ResolveReference(ref).String(), body)
	if err != nil {
		return nil, err
	}
	return req, nil
}
