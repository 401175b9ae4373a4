package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
)

// webhookIDs parses an organization id and a webhook endpoint id.
func webhookIDs(organizationID, endpointID string) (uuid.UUID, uuid.UUID, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return uuid.Nil, uuid.Nil, err
	}
	id, err := parseUUID("webhook endpoint id", endpointID)
	return org, id, err
}

// CreateWebhookEndpoint adds a URL that receives the organization's events
// (createWebhookEndpoint). A person needs a step-up, answered through the
// client's [StepUpFunc]; a key with webhooks:manage does not. The signing
// secret in the answer is shown this once.
func (c *Client) CreateWebhookEndpoint(ctx context.Context, organizationID string, endpoint api.WebhookEndpointCreation) (*api.WebhookEndpointWithSecret, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookEndpointWithSecret](c.raw.CreateWebhookEndpoint(ctx, org, nil, endpoint))
}

// WebhookEndpoints iterates over the organization's webhook endpoints,
// every page of them.
func (c *Client) WebhookEndpoints(ctx context.Context, organizationID string) iter.Seq2[api.WebhookEndpoint, error] {
	return list[api.WebhookEndpoint](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		return c.raw.ListWebhookEndpoints(ctx, org, &api.ListWebhookEndpointsParams{Cursor: cursor})
	})
}

// WebhookEndpoint reads one webhook endpoint (getWebhookEndpoint).
func (c *Client) WebhookEndpoint(ctx context.Context, organizationID, endpointID string) (*api.WebhookEndpoint, error) {
	org, id, err := webhookIDs(organizationID, endpointID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookEndpoint](c.raw.GetWebhookEndpoint(ctx, org, id, nil))
}

// UpdateWebhookEndpoint changes a webhook endpoint (updateWebhookEndpoint);
// a new URL needs a person's step-up.
func (c *Client) UpdateWebhookEndpoint(ctx context.Context, organizationID, endpointID string, update api.WebhookEndpointUpdate) (*api.WebhookEndpoint, error) {
	org, id, err := webhookIDs(organizationID, endpointID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookEndpoint](c.raw.UpdateWebhookEndpoint(ctx, org, id, nil, update))
}

// DeleteWebhookEndpoint deletes a webhook endpoint with its deliveries log
// (deleteWebhookEndpoint) and returns it as it was.
func (c *Client) DeleteWebhookEndpoint(ctx context.Context, organizationID, endpointID string) (*api.WebhookEndpoint, error) {
	org, id, err := webhookIDs(organizationID, endpointID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookEndpoint](c.raw.DeleteWebhookEndpoint(ctx, org, id, nil))
}

// RotateWebhookSecret gives an endpoint a new signing secret
// (rotateWebhookEndpointSecret), shown this once; the previous one keeps
// signing for 24 hours. A person needs a step-up.
func (c *Client) RotateWebhookSecret(ctx context.Context, organizationID, endpointID string) (*api.WebhookEndpointWithSecret, error) {
	org, id, err := webhookIDs(organizationID, endpointID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookEndpointWithSecret](c.raw.RotateWebhookEndpointSecret(ctx, org, id, nil))
}

// WebhookDeliveries iterates over an endpoint's deliveries log, newest
// first, every page of it.
func (c *Client) WebhookDeliveries(ctx context.Context, organizationID, endpointID string) iter.Seq2[api.WebhookDelivery, error] {
	return list[api.WebhookDelivery](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, id, err := webhookIDs(organizationID, endpointID)
		if err != nil {
			return nil, err
		}
		return c.raw.ListWebhookDeliveries(ctx, org, id, &api.ListWebhookDeliveriesParams{Cursor: cursor})
	})
}

// RetryWebhookDelivery queues a new attempt of a delivery now
// (retryWebhookDelivery) and returns the delivery.
func (c *Client) RetryWebhookDelivery(ctx context.Context, organizationID, endpointID, deliveryID string) (*api.WebhookDelivery, error) {
	org, id, err := webhookIDs(organizationID, endpointID)
	if err != nil {
		return nil, err
	}
	delivery, err := parseUUID("delivery id", deliveryID)
	if err != nil {
		return nil, err
	}
	return decode[api.WebhookDelivery](c.raw.RetryWebhookDelivery(ctx, org, id, delivery, nil))
}

// SandboxPingWebhookEndpoint queues a webhook.ping event to one endpoint
// (sandboxPingWebhookEndpoint; sandbox token) and returns the event's id.
func (c *Client) SandboxPingWebhookEndpoint(ctx context.Context, endpointID string) (*api.SandboxWebhookPing, error) {
	id, err := parseUUID("webhook endpoint id", endpointID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxWebhookPing](c.raw.SandboxPingWebhookEndpoint(ctx, id, nil))
}
