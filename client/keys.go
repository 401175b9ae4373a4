package client

import (
	"context"
	"github.com/strongroom/strongroom/client/api"
	"iter"
)

// APIKeys iterates over the organization's API keys, revoked ones
// included, every page of them. filters (may be nil) are sent with every
// page; its Cursor is ignored.
func (c *Client) APIKeys(ctx context.Context, organizationID string, filters *api.ListApiKeysParams) iter.Seq2[api.ApiKey, error] {
	var params api.ListApiKeysParams
	if filters != nil {
		params = *filters
	}
	return pages(ctx, func(ctx context.Context, cursor *string) (page[api.ApiKey], error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return page[api.ApiKey]{}, err
		}
		p := params
		p.Cursor = cursor
		r, err := c.api.ListApiKeysWithResponse(ctx, org, &p)
		if err != nil {
			return page[api.ApiKey]{}, err
		}
		if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
			return page[api.ApiKey]{}, err
		}
		return page[api.ApiKey]{items: r.JSON200.Data, hasMore: r.JSON200.HasMore, next: r.JSON200.NextCursor}, nil
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
	r, err := c.api.RotateApiKeyWithResponse(ctx, org, id, nil, api.EmptyObject{})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
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
	r, err := c.api.RevokeApiKeyWithResponse(ctx, org, id, nil, api.EmptyObject{})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}
