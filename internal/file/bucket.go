package file

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/memblob" // mem:// buckets, for tests
	_ "gocloud.dev/blob/s3blob"  // s3:// buckets (S3-compatible stores), for several instances
)

// OpenBucket opens the blob store named by location (STRONGROOM_FILES):
// file:DIR (relative or absolute; created when missing), s3://bucket?…
// (an S3-compatible store: endpoint, region and credentials as the AWS SDK
// reads them), or mem:// (this process only).
func OpenBucket(ctx context.Context, location string) (*blob.Bucket, error) {
	u, err := url.Parse(location)
	if err != nil {
		return nil, fmt.Errorf("STRONGROOM_FILES: %w", err)
	}
	if u.Scheme != "file" {
		b, err := blob.OpenBucket(ctx, location)
		if err != nil {
			return nil, fmt.Errorf("STRONGROOM_FILES: %w", err)
		}
		return b, nil
	}
	// file:DIR is opaque (relative); file:///DIR is absolute.
	dir := u.Opaque
	if dir == "" {
		dir = u.Path
	}
	if dir == "" || strings.ContainsRune(dir, 0) {
		return nil, fmt.Errorf("STRONGROOM_FILES: %q names no directory", location)
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("STRONGROOM_FILES: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("STRONGROOM_FILES: %w", err)
	}
	// Temporary files go beside the blobs so the final rename never
	// crosses file systems; the content type is known from the record.
	return fileblob.OpenBucket(dir, &fileblob.Options{NoTempDir: true, Metadata: fileblob.MetadataDontWrite})
}
