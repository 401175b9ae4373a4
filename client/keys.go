package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// APIKeys iterates over the organization's API keys, revoked ones
// included, every page of them. filters (may be nil) are sent with every
// page; its Cursor is ignored.
func (c *Client) APIKeys(ctx context.Context, organizationID string, filters *api.ListApiKeysParams) iter.Seq2[api.ApiKey, error] {
	var params api.ListApiKeysParams
	if filters != nil {
		params = *filters
	}
	return list[api.ApiKey](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListApiKeys(ctx, org, &p)
	})
}

// RotateAPIKey gives a key a new secret (rotateApiKey); the previous one
// keeps working 24 hours. It needs a step-up, answered through the
// client's [StepUpFunc]. The new secret is shown this once.
func (c *Client) RotateAPIKey(ctx context.Context, organizationID, apiKeyID string) (*api.ApiKeyWithSecret, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	id, err := parseUUID("API key id", apiKeyID)
	if err != nil {
		return nil, err
	}
	return decode[api.ApiKeyWithSecret](c.raw.RotateApiKey(ctx, org, id, nil, api.EmptyObject{}))
}

// RevokeAPIKey stops a key at once, both its secrets (revokeApiKey). No
// step-up: revoking only protects.
func (c *Client) RevokeAPIKey(ctx context.Context, organizationID, apiKeyID string) (*api.ApiKey, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	id, err := parseUUID("API key id", apiKeyID)
	if err != nil {
		return nil, err
	}
	return decode[api.ApiKey](c.raw.RevokeApiKey(ctx, org, id, nil, api.EmptyObject{}))
}

// UpdateAPIKey changes an API key's name or scopes (updateApiKey).
func (c *Client) UpdateAPIKey(ctx context.Context, organizationID, apiKeyID string, update api.ApiKeyChange) (*api.ApiKey, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	apiKey, err := parseUUID("api key id", apiKeyID)
	if err != nil {
		return nil, err
	}
	return decode[api.ApiKey](c.raw.UpdateApiKey(ctx, org, apiKey, nil, update))
}
