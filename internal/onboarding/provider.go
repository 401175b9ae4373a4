package onboarding

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// IdentityProvider is the identity-verification provider: it issues the
// short-lived token its SDK takes to run one person's check. The sandbox's
// stand-in is internal/sandbox, IdentityProvider; a live server has none
// configured yet (the Service's Provider is nil).
type IdentityProvider interface {
	// AccessToken issues a token for userID's own check, in the context of
	// organization orgID when it is not nil, valid from now.
	AccessToken(ctx context.Context, userID uuid.UUID, orgID *uuid.UUID, now time.Time) (AccessToken, error)
}

// TokenLifetime is how long an identity-check token works.
const TokenLifetime = 10 * time.Minute

// VerifiedToken is what a valid identity-check token says, once the
// provider that issued it has verified it (the sandbox's page does so
// before it decides a check through DecideByLink).
type VerifiedToken struct {
	// ID is the token's own id (its jti): the link it is in decides once.
	ID             string
	UserID         uuid.UUID
	OrganizationID *uuid.UUID
	ExpiresAt      time.Time
}
