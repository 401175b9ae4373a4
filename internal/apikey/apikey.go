// Package apikey holds the API keys programs act through (spec 4.13): their
// format, scopes and roles, rotation with a 24-hour overlap, revocation, and
// the authentication of a key sent as a bearer token.
package apikey

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"math/big"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Rules of spec 4.13.
const (
	MaxActive       = 50
	RotationOverlap = 24 * time.Hour
	// lastUsedPrecision: last_used_at is written at most once a minute per key,
	// so reading with a key does not turn every request into a write.
	lastUsedPrecision = time.Minute
)

// Scopes maps every scope to the lowest role allowed to hold it (spec 4.13 rule 2).
var Scopes = map[string]organization.Role{
	"balances:read":          organization.Member,
	"events:read":            organization.Member,
	"events:subscribe":       organization.Member,
	"payment_requests:read":  organization.Member,
	"payment_requests:write": organization.Member,
	"payments:read":          organization.Member,
	"transactions:read":      organization.Member,
	"refunds:write":          organization.Admin,
	"webhooks:manage":        organization.Admin,
}

// Prefix starts every key; a bearer with it is treated as an API key.
const Prefix = "sr_"

// Key is an API key's record (its secret is never kept, only keyed hashes).
type Key struct {
	ID                      uuid.UUID
	OrganizationID          uuid.UUID
	Name                    string
	Role                    organization.Role
	Scopes                  []string
	Lookup                  string
	Environment             string
	CreatedByID             uuid.UUID
	InsertedAt              time.Time
	LastUsedAt              *time.Time
	RotatedAt               *time.Time
	PreviousSecretExpiresAt *time.Time
	RevokedAt               *time.Time
}

// Guard demands a person be present (step-up) before a sensitive change.
type Guard interface {
	Require(ctx context.Context, a actor.Actor) error
}

// Service manages and authenticates API keys.
type Service struct {
	DB    *db.DB
	Clock clock.Clock
	Keys  *keyring.Keyring
	// Env is the environment keys are minted for and accepted in: test or live.
	Env   string
	Guard Guard
}

const secretPurpose = "api-key-secret"

// The alphabets of a key's lookup and secret (CONTRACT §5).
const (
	lookupAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	secretAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// mint returns a new lookup and secret and the full key text.
func (s *Service) mint() (lookup, secret, full string) {
	lookup = randomString(8, lookupAlphabet)
	secret = randomString(43, secretAlphabet)
	return lookup, secret, Prefix + s.Env + "_" + lookup + "_" + secret
}

func randomString(n int, alphabet string) string {
	b := make([]byte, n)
	max := big.NewInt(int64(len(alphabet)))
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(err)
		}
		b[i] = alphabet[v.Int64()]
	}
	return string(b)
}

func (s *Service) hash(lookup, secret string) string {
	return s.Keys.Hash(secretPurpose, lookup+":"+secret)
}

// Request is the body of createApiKey and, with every field optional, of updateApiKey.
type Request struct {
	Name   *string            `json:"name"`
	Role   *organization.Role `json:"role"`
	Scopes *[]string          `json:"scopes"`
}

func (r Request) validate(create bool) error {
	var f apierr.Fields
	if r.Name != nil || create {
		f.Check(r.Name != nil && strings.TrimSpace(*r.Name) != "" && len(*r.Name) <= 100, "name", "is required (1 to 100 characters).")
	}
	if r.Role != nil || create {
		// owner passes here so that asking for a role above one's own is
		// role_exceeds_creator (checkGrant); keys are never owners.
		f.Check(r.Role != nil && slices.Contains(organization.Roles, *r.Role), "role", "must be admin or member.")
	}
	if r.Scopes != nil || create {
		if r.Scopes == nil {
			f.Add("scopes", "is required: an array of scope names.")
		} else {
			for i, sc := range *r.Scopes {
				if _, ok := Scopes[sc]; !ok {
					f.Add("scopes", "holds an unknown scope at position "+strconv.Itoa(i)+": "+truncate(sc, 40))
				}
			}
			f.Check(len(*r.Scopes) <= len(Scopes), "scopes", "lists too many scopes.")
		}
	}
	if !create && r.Name == nil && r.Role == nil && r.Scopes == nil {
		f.Add("", "Give at least one of name, role or scopes.")
	}
	return f.Err()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// CreateRequest is the body of createApiKey.
type CreateRequest struct{ Request }

// Validate checks the body's fields.
func (r CreateRequest) Validate() error { return r.validate(true) }

// UpdateRequest is the body of updateApiKey.
type UpdateRequest struct{ Request }

// Validate checks the body's fields.
func (r UpdateRequest) Validate() error { return r.validate(false) }

// checkGrant applies rules 2 and 3: no scope above the key's role, no key
// role above the creator's.
func checkGrant(creator, role organization.Role, scopes []string) error {
	if !creator.AtLeast(role) {
		return apierr.New(apierr.RoleExceedsCreator, "A key's role cannot be higher than your own role.")
	}
	if role == organization.Owner {
		return apierr.InvalidField("role", "must be admin or member: a key is never an owner.")
	}
	for _, sc := range scopes {
		if !role.AtLeast(Scopes[sc]) {
			return apierr.Newf(apierr.Forbidden, "The scope %s needs a key with the %s role.", sc, Scopes[sc])
		}
	}
	return nil
}

func normalizeScopes(scopes []string) []string {
	out := slices.Clone(scopes)
	sort.Strings(out)
	return slices.Compact(out)
}

// manager checks the actor manages keys of orgID: owners and admins only
// (forbidden to members, not_found to outsiders, organization_unavailable
// when the organization's status refuses a read, or a write when write).
func (s *Service) manager(ctx context.Context, q db.Querier, a actor.Actor, orgID uuid.UUID, write bool) (organization.Role, error) {
	return organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Admin, Write: write})
}

// keyManager is manager for operations on one key: to anyone but owners and
// admins the key id is simply not found (rule 7).
func (s *Service) keyManager(ctx context.Context, q db.Querier, a actor.Actor, orgID uuid.UUID, write bool) (organization.Role, error) {
	role, err := s.manager(ctx, q, a, orgID, write)
	if apierr.Is(err, apierr.Forbidden) {
		return role, errNotFound
	}
	return role, err
}

var errNotFound = apierr.NotFoundf("API key")

// Create mints a key for orgID behind step-up and returns it with its secret,
// shown this once. A retry creates a second key (the secret is not kept).
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, r CreateRequest) (Key, string, error) {
	role, err := s.manager(ctx, s.DB.Reader(), a, orgID, true)
	if err != nil {
		return Key{}, "", err
	}
	scopes := normalizeScopes(*r.Scopes)
	if err := checkGrant(role, *r.Role, scopes); err != nil {
		return Key{}, "", err
	}
	if err := s.Guard.Require(ctx, a); err != nil {
		return Key{}, "", err
	}
	lookup, secret, full := s.mint()
	now := s.Clock.Now()
	k := Key{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Name: strings.TrimSpace(*r.Name), Role: *r.Role, Scopes: scopes,
		Lookup: lookup, Environment: s.Env, CreatedByID: a.UserID, InsertedAt: now}
	err = s.DB.Tx(ctx, func(tx *db.Tx) error {
		// Counting inside the transaction that inserts keeps two concurrent creates from passing 50.
		var active int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM api_keys WHERE organization_id = $1 AND revoked_at IS NULL`, orgID).Scan(&active); err != nil {
			return err
		}
		if active >= MaxActive {
			return apierr.Newf(apierr.APIKeyLimitReached, "This organization already has %d active API keys; revoke one first.", MaxActive)
		}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO api_keys (id, organization_id, name, role, scopes, lookup, environment, secret_hash, created_by_id, inserted_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			k.ID, orgID, k.Name, k.Role, strings.Join(scopes, ","), lookup, s.Env, s.hash(lookup, secret), a.UserID, now)
		return err
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, full, nil
}

const keyColumns = `id, organization_id, name, role, scopes, lookup, environment, created_by_id, inserted_at,
	last_used_at, rotated_at, previous_secret_expires_at, revoked_at`

func scanKey(row interface{ Scan(...any) error }) (Key, error) {
	var k Key
	var scopes string
	err := row.Scan(&k.ID, &k.OrganizationID, &k.Name, &k.Role, &scopes, &k.Lookup, &k.Environment, &k.CreatedByID, &k.InsertedAt,
		&k.LastUsedAt, &k.RotatedAt, &k.PreviousSecretExpiresAt, &k.RevokedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return k, errNotFound
	}
	k.Scopes = []string{}
	if scopes != "" {
		k.Scopes = strings.Split(scopes, ",")
	}
	k.InsertedAt = k.InsertedAt.UTC()
	for _, t := range []**time.Time{&k.LastUsedAt, &k.RotatedAt, &k.PreviousSecretExpiresAt, &k.RevokedAt} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	return k, err
}

// List returns a page of the organization's keys, newest first.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]Key, error) {
	q := s.DB.Reader()
	if _, err := s.manager(ctx, q, a, orgID, false); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+keyColumns+` FROM api_keys
		WHERE organization_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// PageKey positions a page after k.
func PageKey(k Key) page.Key { return page.Key{ID: k.ID.String()} }

// load reads one of orgID's keys for a manager; locked when for update.
func (s *Service) load(ctx context.Context, q db.Querier, orgID, id uuid.UUID, lock string) (Key, error) {
	return scanKey(q.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE id = $1 AND organization_id = $2`+lock, id, orgID))
}

var errRevoked = apierr.New(apierr.APIKeyRevoked, "This API key is revoked and cannot be changed.")

// Update changes a key's name, role or scopes, behind step-up.
func (s *Service) Update(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r UpdateRequest) (Key, error) {
	role, err := s.keyManager(ctx, s.DB.Reader(), a, orgID, true)
	if err != nil {
		return Key{}, err
	}
	k, err := s.load(ctx, s.DB.Reader(), orgID, id, "")
	if err != nil {
		return Key{}, err
	}
	if k.RevokedAt != nil {
		return Key{}, errRevoked
	}
	newRole, scopes := k.Role, k.Scopes
	if r.Role != nil {
		newRole = *r.Role
	}
	if r.Scopes != nil {
		scopes = normalizeScopes(*r.Scopes)
	}
	if err := checkGrant(role, newRole, scopes); err != nil {
		return Key{}, err
	}
	if err := s.Guard.Require(ctx, a); err != nil {
		return Key{}, err
	}
	name := k.Name
	if r.Name != nil {
		name = strings.TrimSpace(*r.Name)
	}
	var out Key
	err = s.DB.Tx(ctx, func(tx *db.Tx) error {
		out, err = scanKey(tx.QueryRowContext(ctx, `
			UPDATE api_keys SET name = $3, role = $4, scopes = $5 WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL
			RETURNING `+keyColumns, id, orgID, name, newRole, strings.Join(scopes, ",")))
		if apierr.Is(err, apierr.NotFound) {
			return errRevoked // revoked between the check and the update
		}
		return err
	})
	return out, err
}

// Rotate gives the key a new secret and keeps its lookup; the previous secret
// works for 24 hours more, and only the two latest secrets ever work.
func (s *Service) Rotate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Key, string, error) {
	if _, err := s.keyManager(ctx, s.DB.Reader(), a, orgID, true); err != nil {
		return Key{}, "", err
	}
	k, err := s.load(ctx, s.DB.Reader(), orgID, id, "")
	if err != nil {
		return Key{}, "", err
	}
	if k.RevokedAt != nil {
		return Key{}, "", errRevoked
	}
	if err := s.Guard.Require(ctx, a); err != nil {
		return Key{}, "", err
	}
	_, secret, _ := s.mint()
	var out Key
	err = s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		out, err = scanKey(tx.QueryRowContext(ctx, `
			UPDATE api_keys SET previous_secret_hash = secret_hash, previous_secret_expires_at = $3, secret_hash = $4, rotated_at = $5
			WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL
			RETURNING `+keyColumns, id, orgID, now.Add(RotationOverlap), s.hash(k.Lookup, secret), now))
		if apierr.Is(err, apierr.NotFound) {
			return errRevoked
		}
		return err
	})
	if err != nil {
		return Key{}, "", err
	}
	return out, Prefix + out.Environment + "_" + out.Lookup + "_" + secret, nil
}

// Revoke stops the key at once. No step-up: revoking only protects, so a
// paused organization may revoke too (a leaked key must not come back to
// life when the organization is active again). Revoking a revoked key
// returns it unchanged.
func (s *Service) Revoke(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Key, error) {
	var out Key
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		if _, err := s.keyManager(ctx, tx, a, orgID, false); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $3 WHERE id = $1 AND organization_id = $2 AND revoked_at IS NULL`,
			id, orgID, s.Clock.Now()); err != nil {
			return err
		}
		var err error
		out, err = s.load(ctx, tx, orgID, id, "")
		return err
	})
	return out, err
}

// RevokeAll revokes every key of orgID in the caller's transaction: a banned
// organization loses its keys for good (rule 6).
func RevokeAll(ctx context.Context, q db.Querier, now time.Time, orgID uuid.UUID) error {
	_, err := q.ExecContext(ctx, `UPDATE api_keys SET revoked_at = $2 WHERE organization_id = $1 AND revoked_at IS NULL`, orgID, now)
	return err
}

var errInvalidKey = apierr.New(apierr.InvalidAPIKey, "The API key is not valid.")

// Authenticate resolves a key sent as a bearer token: invalid_api_key when it
// is malformed, unknown, revoked, of the other environment or its secret is
// wrong; organization_unavailable when its organization is not active.
func (s *Service) Authenticate(ctx context.Context, token string) (actor.Actor, error) {
	parts := strings.Split(token, "_")
	if len(parts) != 4 || parts[0]+"_" != Prefix || len(parts[2]) != 8 || len(parts[3]) != 43 || parts[1] != s.Env ||
		strings.Trim(parts[2], lookupAlphabet) != "" || strings.Trim(parts[3], secretAlphabet) != "" {
		// Only a well-formed lookup reaches the database (bytes that are
		// not UTF-8 would make PostgreSQL fail the query).
		return actor.Actor{}, errInvalidKey
	}
	lookup, secret := parts[2], parts[3]
	var (
		k                 actor.Key
		scopes, hash      string
		prevHash          *string
		prevExpires, used *time.Time
		revoked           *time.Time
		orgStatus         organization.Status
	)
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT k.id, k.organization_id, k.role, k.scopes, k.secret_hash, k.previous_secret_hash, k.previous_secret_expires_at,
		       k.revoked_at, k.last_used_at, o.status
		FROM api_keys k JOIN organizations o ON o.id = k.organization_id
		WHERE k.lookup = $1 AND k.environment = $2`, lookup, s.Env).
		Scan(&k.ID, &k.OrganizationID, &k.Role, &scopes, &hash, &prevHash, &prevExpires, &revoked, &used, &orgStatus)
	if errors.Is(err, sql.ErrNoRows) {
		return actor.Actor{}, errInvalidKey
	}
	if err != nil {
		return actor.Actor{}, err
	}
	now := s.Clock.Now()
	given := s.hash(lookup, secret)
	ok := keyring.Equal(hash, given) || (prevHash != nil && prevExpires != nil && now.Before(*prevExpires) && keyring.Equal(*prevHash, given))
	if !ok || revoked != nil {
		return actor.Actor{}, errInvalidKey
	}
	if orgStatus != organization.Active {
		return actor.Actor{}, organization.ErrUnavailable
	}
	k.Lookup = lookup
	if scopes != "" {
		k.Scopes = strings.Split(scopes, ",")
	}
	if used == nil || now.Sub(*used) >= lastUsedPrecision {
		if err := s.DB.Tx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2 WHERE id = $1`, k.ID, now)
			return err
		}); err != nil {
			return actor.Actor{}, err
		}
	}
	return actor.Actor{Key: &k}, nil
}
