package file

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

var errNotFound = apierr.New(apierr.NotFound, "There is no file with this id.")

const fileColumns = `id, organization_id, created_by_id, file_name, mime_type, size, status, COALESCE(sha256, ''), COALESCE(blob_key, ''), created_at, stored_at, COALESCE(decoded_size, 0)`

func scanFile(row db.Scanner) (File, error) {
	var f File
	err := row.Scan(&f.ID, &f.OrganizationID, &f.CreatedByID, &f.Name, &f.MimeType, &f.Size, &f.Status, &f.SHA256, &f.blobKey, &f.InsertedAt, &f.StoredAt, &f.decodedSize)
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, errNotFound
	}
	if err != nil {
		return File{}, err
	}
	f.InsertedAt = f.InsertedAt.UTC()
	if f.StoredAt != nil {
		t := f.StoredAt.UTC()
		f.StoredAt = &t
	}
	return f, nil
}

func insertFile(ctx context.Context, q db.Querier, f File) error {
	var key, sum *string
	if f.Status == Stored {
		key, sum = &f.blobKey, &f.SHA256
	}
	_, err := q.ExecContext(ctx, `INSERT INTO files (id, organization_id, created_by_id, file_name, mime_type, size, status, blob_key, sha256, created_at, stored_at, decoded_size)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		f.ID, f.OrganizationID, f.CreatedByID, f.Name, f.MimeType, f.Size, f.Status, key, sum, f.InsertedAt, f.StoredAt, nullSize(f.decodedSize))
	return err
}

// nullSize stores an unknown decoded size (0) as NULL.
func nullSize(n int64) *int64 {
	if n == 0 {
		return nil
	}
	return &n
}

func loadFile(ctx context.Context, q db.Reader, id uuid.UUID) (File, error) {
	return scanFile(q.QueryRowContext(ctx, `SELECT `+fileColumns+` FROM files WHERE id = $1`, id))
}

// loadFiles reads the files of orgID among ids.
func loadFiles(ctx context.Context, q db.Reader, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]File, error) {
	out := make(map[uuid.UUID]File, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := []any{orgID}
	for _, id := range ids {
		args = append(args, id)
	}
	files, err := db.QueryAll(ctx, q, scanFile, `SELECT `+fileColumns+` FROM files WHERE organization_id = $1 AND id IN (`+db.Placeholders(2, len(ids))+`)`, args...)
	for _, f := range files {
		out[f.ID] = f
	}
	return out, err
}

// markStored makes pending file id stored with the bytes written; false
// when it was no longer pending (another upload won).
func markStored(ctx context.Context, q db.Querier, id uuid.UUID, w written) (bool, error) {
	now := q.Now()
	res, err := q.ExecContext(ctx, `UPDATE files SET status = 'stored', blob_key = $2, sha256 = $3, stored_at = $4, decoded_size = $5
		WHERE id = $1 AND status = 'pending'`, id, w.key, w.sum, now, nullSize(w.decodedSize))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
