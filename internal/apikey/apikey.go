// Package apikey holds the API keys programs act through (docs/api.md, API
// keys): their format, scopes and roles, rotation with a 24-hour overlap, revocation, and
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
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/platform/watched"
)

// At most MaxActive unrevoked keys per organization; after a rotation the
// previous secret works for RotationOverlap.
const (
	MaxActive       = 50
	RotationOverlap = 24 * time.Hour
	// lastUsedPrecision: last_used_at is written at most once a minute per key,
	// so reading with a key does not turn every request into a write.
	lastUsedPrecision = time.Minute
)

// Scopes maps every scope to the lowest role allowed to hold it.
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

// Service manages and authenticates API keys.
type Service struct {
	DB    *db.DB
	Clock clock.Clock
	Keys  *keyring.Keyring
	// Env is the environment keys are minted for and accepted in: test or live.
	Env string

	cacheOnce sync.Once
	cache     *watched.Cache[credentials]
}

// credentialCache returns the service's cache of credentials, made on first use.
func (s *Service) credentialCache() *watched.Cache[credentials] {
	s.cacheOnce.Do(func() { s.cache = newCredentialCache(s.DB) })
	return s.cache
}

const secretPurpose = "api-key-secret"

// The alphabets of a key's lookup and secret.
const (
	lookupAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	secretAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// Token is an API key as a program sends it: sr_<env>_<lookup>_<secret>.
type Token struct {
	Env, Lookup, Secret string
}

// String is the key's text.
func (t Token) String() string { return Prefix + t.Env + "_" + t.Lookup + "_" + t.Secret }

// ParseToken reads a key sent as a bearer token. It accepts only the exact
// format (a lookup of 8 [a-z0-9], a secret of 43 base62 characters), so
// only a well-formed lookup ever reaches the database: bytes that are not
// UTF-8 would make PostgreSQL fail the query.
func ParseToken(s string) (Token, bool) {
	parts := strings.Split(s, "_")
	if len(parts) != 4 || parts[0]+"_" != Prefix || parts[1] == "" || len(parts[2]) != 8 || len(parts[3]) != 43 ||
		strings.Trim(parts[2], lookupAlphabet) != "" || strings.Trim(parts[3], secretAlphabet) != "" {
		return Token{}, false
	}
	return Token{Env: parts[1], Lookup: parts[2], Secret: parts[3]}, true
}

// mint returns a new key of the service's environment.
func (s *Service) mint() Token {
	return Token{Env: s.Env, Lookup: randomString(8, lookupAlphabet), Secret: randomString(43, secretAlphabet)}
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

// checkGrant applies the grant rules: no scope above the key's role, no key
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
func (s *Service) manager(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, write bool) (organization.Role, error) {
	return organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Admin, Write: write})
}

// keyManager is manager for operations on one key: to anyone but owners and
// admins the key id is simply not found.
func (s *Service) keyManager(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, write bool) (organization.Role, error) {
	role, err := s.manager(ctx, q, a, orgID, write)
	if apierr.Is(err, apierr.Forbidden) {
		return role, errNotFound
	}
	return role, err
}

var errNotFound = apierr.NotFoundf("API key")

// Creation is a request to create a key that CheckCreate let through, for Create.
type Creation struct {
	a      actor.Actor
	orgID  uuid.UUID
	name   string
	role   organization.Role
	scopes []string
}

// CheckCreate checks that a may create the key r describes for orgID: an
// owner or admin, granting no more than they hold. Creating a key also
// needs a step-up, which internal/flow/confirming asks for after this
// check and before Create, so nobody confirms a change that cannot happen.
func (s *Service) CheckCreate(ctx context.Context, a actor.Actor, orgID uuid.UUID, r CreateRequest) (Creation, error) {
	role, err := s.manager(ctx, s.DB.Reader(), a, orgID, true)
	if err != nil {
		return Creation{}, err
	}
	scopes := normalizeScopes(*r.Scopes)
	if err := checkGrant(role, *r.Role, scopes); err != nil {
		return Creation{}, err
	}
	return Creation{a: a, orgID: orgID, name: strings.TrimSpace(*r.Name), role: *r.Role, scopes: scopes}, nil
}

// Create mints the key CheckCreate let through and returns it with its
// secret, shown this once. A retry creates a second key (the secret is not
// kept).
func (s *Service) Create(ctx context.Context, c Creation) (Key, string, error) {
	t := s.mint()
	k, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Key, error) {
		// Counting inside the transaction that inserts keeps two concurrent creates from passing 50.
		active, err := countActive(ctx, tx, c.orgID)
		if err != nil {
			return Key{}, err
		}
		if active >= MaxActive {
			return Key{}, apierr.Newf(apierr.APIKeyLimitReached, "This organization already has %d active API keys; revoke one first.", MaxActive)
		}
		k := Key{ID: uuid.Must(uuid.NewV7()), OrganizationID: c.orgID, Name: c.name, Role: c.role, Scopes: c.scopes,
			Lookup: t.Lookup, Environment: t.Env, CreatedByID: c.a.UserID, InsertedAt: tx.Now()}
		if err := insertKey(ctx, tx, k, s.hash(t.Lookup, t.Secret)); err != nil {
			return Key{}, err
		}
		return k, audit.Record(ctx, tx, c.orgID, audit.APIKeyCreated, audit.To("api_key", k.ID))
	})
	if err != nil {
		return Key{}, "", err
	}
	return k, t.String(), nil
}

// List returns a page of the organization's keys, newest first.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]Key, error) {
	q := s.DB.Reader()
	if _, err := s.manager(ctx, q, a, orgID, false); err != nil {
		return nil, err
	}
	return listKeys(ctx, q, orgID, req)
}

// PageKey positions a page after k.
func PageKey(k Key) page.Key { return page.Key{ID: k.ID.String()} }

var errRevoked = apierr.New(apierr.APIKeyRevoked, "This API key is revoked and cannot be changed.")

// changeable reads one of orgID's keys for a change by a manager: not_found
// to anyone else, api_key_revoked once revoked. It returns the
// manager's role with the key.
func (s *Service) changeable(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (organization.Role, Key, error) {
	q := s.DB.Reader()
	role, err := s.keyManager(ctx, q, a, orgID, true)
	if err != nil {
		return "", Key{}, err
	}
	k, err := loadKey(ctx, q, orgID, id)
	if err != nil {
		return "", Key{}, err
	}
	if k.RevokedAt != nil {
		return "", Key{}, errRevoked
	}
	return role, k, nil
}

// Change is a change of a key that CheckUpdate let through, for Update.
type Change struct {
	orgID, id uuid.UUID
	name      string
	role      organization.Role
	scopes    []string
}

// Rotation is a rotation of a key that CheckRotate let through, for Rotate.
type Rotation struct {
	orgID, id   uuid.UUID
	env, lookup string
}

// CheckUpdate checks that a may change key id of orgID as r says: an owner
// or admin, granting no more than they hold, while the key is not revoked.
// Changing a key also needs a step-up, which internal/flow/confirming asks
// for after this check and before Update.
func (s *Service) CheckUpdate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r UpdateRequest) (Change, error) {
	role, k, err := s.changeable(ctx, a, orgID, id)
	if err != nil {
		return Change{}, err
	}
	newRole, scopes := k.Role, k.Scopes
	if r.Role != nil {
		newRole = *r.Role
	}
	if r.Scopes != nil {
		scopes = normalizeScopes(*r.Scopes)
	}
	if err := checkGrant(role, newRole, scopes); err != nil {
		return Change{}, err
	}
	name := k.Name
	if r.Name != nil {
		name = strings.TrimSpace(*r.Name)
	}
	return Change{orgID: orgID, id: id, name: name, role: newRole, scopes: scopes}, nil
}

// Update changes a key's name, role or scopes as CheckUpdate let through.
func (s *Service) Update(ctx context.Context, c Change) (Key, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Key, error) {
		k, err := updateUnrevoked(ctx, tx, c.orgID, c.id, `name = $3, role = $4, scopes = $5`, c.name, c.role, joinScopes(c.scopes))
		if err != nil {
			return Key{}, err
		}
		return k, audit.Record(ctx, tx, c.orgID, audit.APIKeyUpdated, audit.To("api_key", c.id))
	})
}

// CheckRotate checks that a may rotate key id of orgID: an owner or admin,
// while the key is not revoked. Rotating also needs a step-up, which
// internal/flow/confirming asks for after this check and before Rotate.
func (s *Service) CheckRotate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Rotation, error) {
	_, k, err := s.changeable(ctx, a, orgID, id)
	if err != nil {
		return Rotation{}, err
	}
	return Rotation{orgID: orgID, id: id, env: k.Environment, lookup: k.Lookup}, nil
}

// Rotate gives the key CheckRotate let through a new secret and keeps its
// lookup; the previous secret works for 24 hours more, and only the two
// latest secrets ever work.
func (s *Service) Rotate(ctx context.Context, c Rotation) (Key, string, error) {
	t := s.mint()
	t.Env, t.Lookup = c.env, c.lookup
	out, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Key, error) {
		k, err := updateUnrevoked(ctx, tx, c.orgID, c.id,
			`previous_secret_hash = secret_hash, previous_secret_expires_at = $3, secret_hash = $4, rotated_at = $5`,
			tx.Now().Add(RotationOverlap), s.hash(t.Lookup, t.Secret), tx.Now())
		if err != nil {
			return Key{}, err
		}
		return k, audit.Record(ctx, tx, c.orgID, audit.APIKeyRotated, audit.To("api_key", c.id))
	})
	if err != nil {
		return Key{}, "", err
	}
	return out, t.String(), nil
}

// Revoke stops the key at once. No step-up: revoking only protects, so a
// paused organization may revoke too (a leaked key must not come back to
// life when the organization is active again). Revoking a revoked key
// returns it unchanged.
func (s *Service) Revoke(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Key, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Key, error) {
		if _, err := s.keyManager(ctx, tx, a, orgID, false); err != nil {
			return Key{}, err
		}
		revoked, err := revokeKey(ctx, tx, orgID, id)
		if err != nil {
			return Key{}, err
		}
		k, err := loadKey(ctx, tx, orgID, id)
		if err != nil || !revoked {
			return k, err
		}
		return k, audit.Record(ctx, tx, orgID, audit.APIKeyRevoked, audit.To("api_key", id))
	})
}

var errInvalidKey = apierr.New(apierr.InvalidAPIKey, "The API key is not valid.")

// accepts reports whether secretHash, the keyed hash of the secret sent,
// opens the key at now: its current secret, or the previous one within the
// overlap after a rotation; never once revoked.
func (c credentials) accepts(secretHash string, now time.Time) bool {
	if c.revokedAt != nil {
		return false
	}
	return keyring.Equal(c.secretHash, secretHash) ||
		(c.previousSecretHash != nil && c.previousSecretExpiresAt != nil && now.Before(*c.previousSecretExpiresAt) &&
			keyring.Equal(*c.previousSecretHash, secretHash))
}

// Authenticate resolves a key sent as a bearer token: invalid_api_key when it
// is malformed, unknown, revoked, of the other environment or its secret is
// wrong; organization_unavailable when its organization is not active.
func (s *Service) Authenticate(ctx context.Context, bearer string) (actor.Actor, error) {
	t, ok := ParseToken(bearer)
	if !ok || t.Env != s.Env {
		return actor.Actor{}, errInvalidKey
	}
	now := s.Clock.Now()
	cache := s.credentialCache()
	c, ok := cache.Get(t.Lookup, now)
	if !ok {
		epoch := cache.Begin()
		var err error
		c, err = readCredentials(ctx, s.DB.Reader(), t.Env, t.Lookup)
		if errors.Is(err, sql.ErrNoRows) {
			return actor.Actor{}, errInvalidKey
		}
		if err != nil {
			return actor.Actor{}, err
		}
		cache.Put(epoch, t.Lookup, c, now)
	}
	if !c.accepts(s.hash(t.Lookup, t.Secret), now) {
		return actor.Actor{}, errInvalidKey
	}
	if !c.organizationStatus.AdmitsKeys() {
		return actor.Actor{}, organization.ErrUnavailable
	}
	if c.lastUsedAt == nil || now.Sub(*c.lastUsedAt) >= lastUsedPrecision {
		if err := s.DB.Tx(ctx, func(tx *db.Tx) error { return touch(ctx, tx, c.id) }); err != nil {
			return actor.Actor{}, err
		}
		cache.Update(t.Lookup, func(c credentials) credentials { c.lastUsedAt = &now; return c })
	}
	return actor.Actor{Name: c.name, Key: &actor.Key{ID: c.id, OrganizationID: c.organizationID, Lookup: t.Lookup, Role: c.role,
		Scopes: splitScopes(c.scopes), OrganizationStatus: string(c.organizationStatus)}}, nil
}

// Live returns the key with id as it stands now, for a request that lasts
// (the realtime channel) and must end when the key does: invalid_api_key
// once it is revoked or gone, organization_unavailable while its
// organization is not active. Its scopes and role are the current ones.
// Every change that affects it notifies Topic or organization.StatusTopic.
func (s *Service) Live(ctx context.Context, id uuid.UUID) (actor.Key, error) {
	k, err := readLive(ctx, s.DB.Reader(), id)
	if errors.Is(err, errNotFound) || err == nil && k.RevokedAt != nil {
		return actor.Key{}, errInvalidKey
	}
	if err != nil {
		return actor.Key{}, err
	}
	status, err := organization.StatusOf(ctx, s.DB.Reader(), k.OrganizationID, "")
	if err != nil {
		return actor.Key{}, err
	}
	if !status.AdmitsKeys() {
		return actor.Key{}, organization.ErrUnavailable
	}
	return actor.Key{ID: k.ID, OrganizationID: k.OrganizationID, Lookup: k.Lookup, Role: string(k.Role),
		Scopes: k.Scopes, OrganizationStatus: string(status)}, nil
}
