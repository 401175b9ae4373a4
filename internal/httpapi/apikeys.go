package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/organization"
)

type apiKeyRecord struct {
	ID                      uuid.UUID         `json:"id"`
	OrganizationID          uuid.UUID         `json:"organization_id"`
	Name                    string            `json:"name"`
	Role                    organization.Role `json:"role"`
	Scopes                  []string          `json:"scopes"`
	Lookup                  string            `json:"lookup"`
	Environment             string            `json:"environment"`
	CreatedByID             uuid.UUID         `json:"created_by_id"`
	InsertedAt              time.Time         `json:"inserted_at"`
	LastUsedAt              *time.Time        `json:"last_used_at"`
	RotatedAt               *time.Time        `json:"rotated_at"`
	PreviousSecretExpiresAt *time.Time        `json:"previous_secret_expires_at"`
	RevokedAt               *time.Time        `json:"revoked_at"`
}

type apiKeyWithSecret struct {
	APIKey apiKeyRecord `json:"api_key"`
	Secret string       `json:"secret"`
}

// The API-key feature's resources: keys of the organization in the path,
// answered as their record, with the secret when one is issued.
var (
	apiKeys = resource[apikey.Key, apiKeyRecord]{at: organizationID, record: func(k apikey.Key) apiKeyRecord { return apiKeyRecord(k) },
		pages: "api-keys", key: apikey.PageKey}
	issuedKeys = resource[issuedKey, apiKeyWithSecret]{at: organizationID, record: func(k issuedKey) apiKeyWithSecret {
		return apiKeyWithSecret{APIKey: apiKeyRecord(k.key), Secret: k.secret}
	}}
	apiKeyID = param{"api_key_id", "API key"}
)

// issuedKey is a key with the secret issued for it, shown once.
type issuedKey struct {
	key    apikey.Key
	secret string
}

func (s *server) createAPIKey(ctx context.Context, a actor.Actor, org uuid.UUID, req apikey.CreateRequest) (issuedKey, error) {
	k, secret, err := s.Confirming.CreateAPIKey(ctx, a, org, req)
	return issuedKey{k, secret}, err
}

func (s *server) rotateAPIKey(ctx context.Context, a actor.Actor, org, id uuid.UUID) (issuedKey, error) {
	k, secret, err := s.Confirming.RotateAPIKey(ctx, a, org, id)
	return issuedKey{k, secret}, err
}
