package onboarding

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// IdentityProvider is the identity-verification provider: it issues the
// short-lived token its SDK takes to run one person's check.
type IdentityProvider interface {
	// AccessToken issues a token for userID's own check, in the context of
	// organization orgID when it is not nil, valid from now.
	AccessToken(ctx context.Context, userID uuid.UUID, orgID *uuid.UUID, now time.Time) (AccessToken, error)
}

// TokenLifetime is how long an identity-check token works.
const TokenLifetime = 10 * time.Minute

// The sandbox token's issuer and audience.
const (
	SandboxIssuer   = "strongroom"
	SandboxAudience = "strongroom-sandbox-kyc"
)

// SandboxPagePath is the path of the sandbox's own identity-check page,
// where a check can be approved or rejected (env test only).
const SandboxPagePath = "/sandbox/kyc"

// keyPurpose names the root-secret-derived key that signs sandbox tokens.
const keyPurpose = "kyc/sandbox-token"

// SandboxProvider is the identity-verification provider of the test
// environment: its token is a JWT (HS256) signed with a key derived from
// the root secret, and its web SDK is the service's own sandbox page.
type SandboxProvider struct {
	Keys *keyring.Keyring
}

// SandboxClaims are the claims of a sandbox token besides the registered ones.
type SandboxClaims struct {
	// Organization is the organization the token was asked in, absent without one.
	Organization *uuid.UUID `json:"org,omitempty"`
}

// AccessToken implements IdentityProvider.
func (p SandboxProvider) AccessToken(_ context.Context, userID uuid.UUID, orgID *uuid.UUID, now time.Time) (AccessToken, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: p.Keys.Key(keyPurpose)},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return AccessToken{}, err
	}
	std := jwt.Claims{
		Issuer:    SandboxIssuer,
		Subject:   userID.String(),
		Audience:  jwt.Audience{SandboxAudience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(TokenLifetime)),
		ID:        uuid.Must(uuid.NewV7()).String(),
	}
	token, err := jwt.Signed(signer).Claims(std).Claims(SandboxClaims{Organization: orgID}).Serialize()
	if err != nil {
		return AccessToken{}, err
	}
	return AccessToken{Token: token, WebSDKLink: SandboxPagePath + "?token=" + url.QueryEscape(token)}, nil
}

// ErrInvalidToken refuses a sandbox token that is malformed, altered,
// signed with another key, meant for another audience, or expired.
var ErrInvalidToken = errors.New("onboarding: the identity-check token is not valid")

// VerifiedToken is what a valid sandbox token says.
type VerifiedToken struct {
	// ID is the token's own id (its jti): the link it is in decides once.
	ID             string
	UserID         uuid.UUID
	OrganizationID *uuid.UUID
	ExpiresAt      time.Time
}

// Verify checks a sandbox token at now: its signature, issuer, audience and
// times (a token is refused from its expiry on). Any failure is ErrInvalidToken.
func (p SandboxProvider) Verify(token string, now time.Time) (VerifiedToken, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return VerifiedToken{}, ErrInvalidToken
	}
	var std jwt.Claims
	var extra SandboxClaims
	if err := parsed.Claims(p.Keys.Key(keyPurpose), &std, &extra); err != nil {
		return VerifiedToken{}, ErrInvalidToken
	}
	if std.Expiry == nil || std.IssuedAt == nil || !now.Before(std.Expiry.Time()) {
		return VerifiedToken{}, ErrInvalidToken
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: SandboxIssuer, AnyAudience: jwt.Audience{SandboxAudience}, Time: now}, 0)
	if err != nil {
		return VerifiedToken{}, ErrInvalidToken
	}
	userID, err := uuid.Parse(std.Subject)
	if err != nil || std.ID == "" {
		return VerifiedToken{}, ErrInvalidToken
	}
	return VerifiedToken{ID: std.ID, UserID: userID, OrganizationID: extra.Organization, ExpiresAt: std.Expiry.Time().UTC()}, nil
}
