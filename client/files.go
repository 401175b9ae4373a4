package client

import (
	"context"
	"io"

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

// UploadFileContent sends a file's bytes (uploadFileContent), once, to the
// file [Client.CreateFile] created. contentType is the type the file was
// created with (application/pdf, image/png, image/jpeg or application/xml);
// the server checks the bytes against it and the size.
func (c *Client) UploadFileContent(ctx context.Context, fileID, contentType string, content io.Reader) (*api.File, error) {
	id, err := parseUUID("file id", fileID)
	if err != nil {
		return nil, err
	}
	return decode[api.File](c.raw.UploadFileContentWithBody(ctx, id, nil, contentType, content))
}

// DownloadFileContent opens a file's bytes (downloadFileContent); the caller
// reads and closes them. contentType is the stored file's type.
func (c *Client) DownloadFileContent(ctx context.Context, fileID string) (content io.ReadCloser, contentType string, err error) {
	id, err := parseUUID("file id", fileID)
	if err != nil {
		return nil, "", err
	}
	return stream(c.raw.DownloadFileContent(ctx, id, nil))
}

// FileThumbnail opens the PNG thumbnail of an image file
// (getFileThumbnail); the caller reads and closes it.
func (c *Client) FileThumbnail(ctx context.Context, fileID string) (io.ReadCloser, error) {
	id, err := parseUUID("file id", fileID)
	if err != nil {
		return nil, err
	}
	body, _, err := stream(c.raw.GetFileThumbnail(ctx, id, nil))
	return body, err
}
