package sandbox

import (
	"context"
	"errors"
	"net/url"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// The sandbox token's issuer and audience.
const (
	IdentityTokenIssuer   = "strongroom"
	IdentityTokenAudience = "strongroom-sandbox-kyc"
)

// IdentityCheckPagePath is the path of the sandbox's own identity-check
// page, where a check can be approved or rejected (its handlers are in
// internal/httpapi/sandbox.go).
const IdentityCheckPagePath = "/sandbox/kyc"

// identityKeyPurpose names the root-secret-derived key that signs sandbox tokens.
const identityKeyPurpose = "kyc/sandbox-token"

// IdentityProvider stands in for the identity-verification provider (the
// port onboarding.IdentityProvider): its token is a JWT (HS256) signed with
// a key derived from the root secret, and its web SDK is the service's own
// identity-check page.
type IdentityProvider struct {
	Keys *keyring.Keyring
}

// IdentityClaims are the claims of a sandbox token besides the registered ones.
type IdentityClaims struct {
	// Organization is the organization the token was asked in, absent without one.
	Organization *uuid.UUID `json:"org,omitempty"`
}

// AccessToken implements onboarding.IdentityProvider.
func (p IdentityProvider) AccessToken(_ context.Context, userID uuid.UUID, orgID *uuid.UUID, now time.Time) (onboarding.AccessToken, error) {
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: p.Keys.Key(identityKeyPurpose)},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return onboarding.AccessToken{}, err
	}
	std := jwt.Claims{
		Issuer:    IdentityTokenIssuer,
		Subject:   userID.String(),
		Audience:  jwt.Audience{IdentityTokenAudience},
		IssuedAt:  jwt.NewNumericDate(now),
		NotBefore: jwt.NewNumericDate(now),
		Expiry:    jwt.NewNumericDate(now.Add(onboarding.TokenLifetime)),
		ID:        uuid.Must(uuid.NewV7()).String(),
	}
	token, err := jwt.Signed(signer).Claims(std).Claims(IdentityClaims{Organization: orgID}).Serialize()
	if err != nil {
		return onboarding.AccessToken{}, err
	}
	return onboarding.AccessToken{Token: token, WebSDKLink: IdentityCheckPagePath + "?token=" + url.QueryEscape(token)}, nil
}

// ErrInvalidToken refuses a sandbox token that is malformed, altered,
// signed with another key, meant for another audience, or expired.
var ErrInvalidToken = errors.New("sandbox: the identity-check token is not valid")

// Verify checks a sandbox token at now: its signature, issuer, audience and
// times (a token is refused from its expiry on). Any failure is ErrInvalidToken.
func (p IdentityProvider) Verify(token string, now time.Time) (onboarding.VerifiedToken, error) {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		return onboarding.VerifiedToken{}, ErrInvalidToken
	}
	var std jwt.Claims
	var extra IdentityClaims
	if err := parsed.Claims(p.Keys.Key(identityKeyPurpose), &std, &extra); err != nil {
		return onboarding.VerifiedToken{}, ErrInvalidToken
	}
	if std.Expiry == nil || std.IssuedAt == nil || !now.Before(std.Expiry.Time()) {
		return onboarding.VerifiedToken{}, ErrInvalidToken
	}
	err = std.ValidateWithLeeway(jwt.Expected{Issuer: IdentityTokenIssuer, AnyAudience: jwt.Audience{IdentityTokenAudience}, Time: now}, 0)
	if err != nil {
		return onboarding.VerifiedToken{}, ErrInvalidToken
	}
	userID, err := uuid.Parse(std.Subject)
	if err != nil || std.ID == "" {
		return onboarding.VerifiedToken{}, ErrInvalidToken
	}
	return onboarding.VerifiedToken{ID: std.ID, UserID: userID, OrganizationID: extra.Organization, ExpiresAt: std.Expiry.Time().UTC()}, nil
}
