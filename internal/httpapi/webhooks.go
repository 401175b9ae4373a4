package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/webhook"
)

type webhookEndpointRecord struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	URL            string    `json:"url"`
	EventTypes     []string  `json:"event_types"`
	Description    *string   `json:"description"`
	Disabled       bool      `json:"disabled"`
	DisabledReason *string   `json:"disabled_reason"`
	CreatedAt      time.Time `json:"created_at"`
	UpdatedAt      time.Time `json:"updated_at"`
}

func (r webhookEndpointRecord) organization() uuid.UUID { return r.OrganizationID }

type webhookEndpointWithSecret struct {
	WebhookEndpoint webhookEndpointRecord `json:"webhook_endpoint"`
	Secret          string                `json:"secret"`
}

type webhookDeliveryRecord struct {
	ID                uuid.UUID  `json:"id"`
	WebhookEndpointID uuid.UUID  `json:"webhook_endpoint_id"`
	EventID           uuid.UUID  `json:"event_id"`
	EventType         string     `json:"event_type"`
	Attempt           int        `json:"attempt"`
	Status            string     `json:"status"`
	ResponseStatus    *int       `json:"response_status"`
	ResponseBody      *string    `json:"response_body"`
	Error             *string    `json:"error"`
	DurationMS        *int64     `json:"duration_ms"`
	AttemptedAt       *time.Time `json:"attempted_at"`
	NextAttemptAt     *time.Time `json:"next_attempt_at"`
	CreatedAt         time.Time  `json:"created_at"`
}

type webhookPing struct {
	EventID uuid.UUID `json:"event_id"`
}

func webhookEndpointOf(e webhook.Endpoint) webhookEndpointRecord {
	return webhookEndpointRecord(e)
}

func webhookDeliveryOf(d webhook.Delivery) webhookDeliveryRecord {
	return webhookDeliveryRecord{ID: d.ID, WebhookEndpointID: d.EndpointID, EventID: d.EventID, EventType: d.EventType,
		Attempt: d.Attempt, Status: d.Status, ResponseStatus: d.ResponseStatus, ResponseBody: d.ResponseBody, Error: d.Error,
		DurationMS: d.DurationMS, AttemptedAt: d.AttemptedAt, NextAttemptAt: d.NextAttemptAt, CreatedAt: d.CreatedAt}
}

// The webhook feature's resources: endpoints of the organization in the
// path, answered as their record (with the secret when one is issued), and
// an endpoint's deliveries.
var (
	webhookEndpoints = resource[webhook.Endpoint, webhookEndpointRecord]{at: organizationID, record: webhookEndpointOf,
		pages: "webhook-endpoints", key: webhook.PageKey}
	issuedWebhookEndpoints = resource[issuedWebhookEndpoint, webhookEndpointWithSecret]{at: organizationID,
		record: func(e issuedWebhookEndpoint) webhookEndpointWithSecret {
			return webhookEndpointWithSecret{WebhookEndpoint: webhookEndpointOf(e.endpoint), Secret: e.secret}
		}}
	webhookDeliveries = resource[webhook.Delivery, webhookDeliveryRecord]{at: organizationID, record: webhookDeliveryOf,
		pages: "webhook-deliveries", key: webhook.DeliveryPageKey}
	webhookPings = resource[uuid.UUID, webhookPing]{at: webhookEndpointID, record: func(id uuid.UUID) webhookPing { return webhookPing{id} }}

	webhookEndpointID = param{"webhook_endpoint_id", "Webhook endpoint"}
	deliveryID        = param{"delivery_id", "Webhook delivery"}
	// endpointDeliveries reads the endpoint of a list of deliveries from the path.
	endpointDeliveries = &filter[uuid.UUID]{read: webhookEndpointID.id}
)

// issuedWebhookEndpoint is an endpoint with the secret issued for it, shown once.
type issuedWebhookEndpoint struct {
	endpoint webhook.Endpoint
	secret   string
}

func (s *server) createWebhookEndpoint(ctx context.Context, a actor.Actor, org uuid.UUID, req webhook.Request) (issuedWebhookEndpoint, error) {
	e, secret, err := s.Confirming.CreateWebhookEndpoint(ctx, a, org, req)
	return issuedWebhookEndpoint{e, secret}, err
}

func (s *server) rotateWebhookSecret(ctx context.Context, a actor.Actor, org, id uuid.UUID) (issuedWebhookEndpoint, error) {
	e, secret, err := s.Confirming.RotateWebhookSecret(ctx, a, org, id)
	return issuedWebhookEndpoint{e, secret}, err
}

// retryWebhookDelivery answers 202: the new attempt is queued, not made yet.
func (s *server) retryWebhookDelivery(w http.ResponseWriter, r *http.Request) error {
	return webhookDeliveries.serve(http.StatusAccepted, func(r *http.Request, org uuid.UUID) (webhook.Delivery, error) {
		endpoint, err := webhookEndpointID.id(r)
		if err != nil {
			return webhook.Delivery{}, err
		}
		delivery, err := deliveryID.id(r)
		if err == nil {
			err = noBody(r)
		}
		if err != nil {
			return webhook.Delivery{}, err
		}
		return s.Webhooks.Retry(r.Context(), actorOf(r), org, endpoint, delivery)
	})(w, r)
}

// sandboxPing queues a webhook.ping to the endpoint in the path; 202: it is
// delivered by the job that follows.
func (s *server) sandboxPing(r *http.Request, id uuid.UUID) (uuid.UUID, error) {
	if err := noBody(r); err != nil {
		return uuid.Nil, err
	}
	return s.Webhooks.Ping(r.Context(), id)
}

// WebhookEventTypes reports which event types reach webhook endpoints: those
// the events API shows (a type no one is shown is never delivered either).
func WebhookEventTypes(d Deps) func(typ string) bool {
	s := &server{Deps: d, logger: d.Logger}
	return s.carries
}
