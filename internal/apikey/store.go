package apikey

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// The SQL of api_keys, the one table this package owns.

const keyColumns = `id, organization_id, name, role, scopes, lookup, environment, created_by_id, inserted_at,
	last_used_at, rotated_at, previous_secret_expires_at, revoked_at`

// scopes are stored as one comma-separated text, sorted (normalizeScopes).
func joinScopes(scopes []string) string { return strings.Join(scopes, ",") }

func splitScopes(s string) []string {
	if s == "" {
		return []string{}
	}
	return strings.Split(s, ",")
}

func scanKey(row interface{ Scan(...any) error }) (Key, error) {
	var k Key
	var scopes string
	err := row.Scan(&k.ID, &k.OrganizationID, &k.Name, &k.Role, &scopes, &k.Lookup, &k.Environment, &k.CreatedByID, &k.InsertedAt,
		&k.LastUsedAt, &k.RotatedAt, &k.PreviousSecretExpiresAt, &k.RevokedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return k, errNotFound
	}
	k.Scopes = splitScopes(scopes)
	k.InsertedAt = k.InsertedAt.UTC()
	for _, t := range []**time.Time{&k.LastUsedAt, &k.RotatedAt, &k.PreviousSecretExpiresAt, &k.RevokedAt} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	return k, err
}

// countActive counts orgID's keys that are not revoked.
func countActive(ctx context.Context, q db.Reader, orgID uuid.UUID) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL`, orgID).Scan(&n)
	return n, err
}

func insertKey(ctx context.Context, tx *db.Tx, k Key, secretHash string) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO api_keys (id, organization_id, name, role, scopes, lookup, environment, secret_hash, created_by_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		k.ID, k.OrganizationID, k.Name, k.Role, joinScopes(k.Scopes), k.Lookup, k.Environment, secretHash, k.CreatedByID, k.InsertedAt)
	return err
}

// listKeys reads a page of orgID's keys, newest first.
func listKeys(ctx context.Context, q db.Reader, orgID uuid.UUID, req page.Request) ([]Key, error) {
	return db.QueryAll(ctx, q, scanKey, `SELECT `+keyColumns+` FROM api_keys
		WHERE organization_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
}

// loadKey reads one of orgID's keys, or not_found.
func loadKey(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (Key, error) {
	return scanKey(q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 AND organization_id = $2`, id, orgID))
}

// updateUnrevoked applies set (an SQL SET list whose parameters start at $3)
// to one of orgID's keys unless it is revoked, and returns the key as
// changed; a key revoked meanwhile is api_key_revoked.
func updateUnrevoked(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID, set string, args ...any) (Key, error) {
	tx.Notify(Topic)
	k, err := scanKey(tx.QueryRowContext(ctx, `UPDATE api_keys SET `+set+`
		WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL
		RETURNING `+keyColumns, append([]any{id, orgID}, args...)...))
	if apierr.Is(err, apierr.NotFound) {
		return Key{}, errRevoked // revoked between the check and the update
	}
	return k, err
}

// revokeKey marks one of orgID's keys revoked at tx.Now(), unless it already is.
func revokeKey(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID) (revoked bool, err error) {
	tx.Notify(Topic)
	res, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL`,
		id, orgID, tx.Now())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// RevokeAll revokes every key of orgID in the caller's transaction: a banned
// organization loses its keys for good: lifting the ban restores none.
func RevokeAll(ctx context.Context, tx *db.Tx, orgID uuid.UUID) error {
	tx.Notify(Topic)
	_, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE organization_id = $1 AND revoked_at IS NULL`, orgID, tx.Now())
	return err
}

// credentials is what authenticating a key reads: the key as an actor
// knows it, and what its secrets are checked against.
type credentials struct {
	id, organizationID      uuid.UUID
	name, role, scopes      string
	secretHash              string
	previousSecretHash      *string
	previousSecretExpiresAt *time.Time
	revokedAt, lastUsedAt   *time.Time
	organizationStatus      organization.Status
}

// readCredentials reads the key with lookup in env and its organization's
// status: one indexed read, the hot path of every request made with a key;
// sql.ErrNoRows when there is none.
func readCredentials(ctx context.Context, q db.Reader, env, lookup string) (credentials, error) {
	var c credentials
	err := q.QueryRowContext(ctx, `
		SELECT id, organization_id, name, role, scopes, secret_hash, previous_secret_hash, previous_secret_expires_at, revoked_at, last_used_at,
		       `+organization.StatusExpr("organization_id")+`
		FROM api_keys WHERE lookup = $1 AND environment = $2`, lookup, env).
		Scan(&c.id, &c.organizationID, &c.name, &c.role, &c.scopes, &c.secretHash, &c.previousSecretHash, &c.previousSecretExpiresAt,
			&c.revokedAt, &c.lastUsedAt, &c.organizationStatus)
	return c, err
}

// touch records that the key was used at tx.Now().
func touch(ctx context.Context, tx *db.Tx, id uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, id, tx.Now())
	return err
}

// NameOf returns the name of key id of orgID (not_found otherwise), for a
// record that names the program that made it.
func NameOf(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (string, error) {
	k, err := loadKey(ctx, q, orgID, id)
	return k.Name, err
}

// readLive reads the key with id, in any organization.
func readLive(ctx context.Context, q db.Reader, id uuid.UUID) (Key, error) {
	return scanKey(q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1`, id))
}
