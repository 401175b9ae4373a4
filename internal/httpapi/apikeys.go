package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/page"
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

// orgID parses the organization of the path and names it in the access log.
func orgID(r *http.Request) (uuid.UUID, error) {
	id, err := pathID(r, "organization_id", "Organization")
	if err == nil {
		setOrganization(r, id.String())
	}
	return id, err
}

// keyPath parses the organization and API key of the path.
func keyPath(r *http.Request) (uuid.UUID, uuid.UUID, error) {
	org, err := orgID(r)
	if err != nil {
		return org, uuid.Nil, err
	}
	id, err := pathID(r, "api_key_id", "API key")
	return org, id, err
}

func (s *server) createAPIKey(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	var req apikey.CreateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	k, secret, err := s.Confirming.CreateAPIKey(r.Context(), actorOf(r), org, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, apiKeyWithSecret{APIKey: apiKeyRecord(k), Secret: secret})
}

func (s *server) listAPIKeys(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	pages := s.pages("api-keys")
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	keys, err := s.APIKeys.List(r.Context(), actorOf(r), org, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mapPage(page.Build(pages, req, keys, apikey.PageKey), func(k apikey.Key) apiKeyRecord { return apiKeyRecord(k) }))
}

func (s *server) updateAPIKey(w http.ResponseWriter, r *http.Request) error {
	org, id, err := keyPath(r)
	if err != nil {
		return err
	}
	var req apikey.UpdateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	k, err := s.Confirming.UpdateAPIKey(r.Context(), actorOf(r), org, id, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, apiKeyRecord(k))
}

func (s *server) rotateAPIKey(w http.ResponseWriter, r *http.Request) error {
	org, id, err := keyPath(r)
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	k, secret, err := s.Confirming.RotateAPIKey(r.Context(), actorOf(r), org, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, apiKeyWithSecret{APIKey: apiKeyRecord(k), Secret: secret})
}

func (s *server) revokeAPIKey(w http.ResponseWriter, r *http.Request) error {
	org, id, err := keyPath(r)
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	k, err := s.APIKeys.Revoke(r.Context(), actorOf(r), org, id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, apiKeyRecord(k))
}
