// Package webhook holds an organization's webhook endpoints and the
// deliveries of its events to them (docs/api.md, Webhooks): the endpoints
// and their signing secrets (rotated with a 24-hour overlap), the fan-out
// of committed events to the endpoints that want them, and the delivery
// jobs with their retry schedule, their limit of four in flight per
// endpoint and the rules that disable an endpoint.
package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
)

// Limits of the feature.
const (
	// MaxEndpoints bounds an organization's endpoints, and so the fan-out
	// of one event.
	MaxEndpoints = 20
	// MaxURL is the longest endpoint URL accepted.
	MaxURL = 2048
	// MaxEventTypes bounds the event types one endpoint lists.
	MaxEventTypes = 50
	// SecretOverlap is how long the previous secret keeps signing after a
	// rotation.
	SecretOverlap = 24 * time.Hour
	// Scope is the API-key scope of every operation here.
	Scope = "webhooks:manage"
	// PingType is the event the sandbox's ping sends to one endpoint.
	PingType = "webhook.ping"
)

// Endpoint is a webhook endpoint's record (its secrets are never shown
// again after they are issued).
type Endpoint struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	URL            string
	EventTypes     []string
	Description    *string
	Disabled       bool
	DisabledReason *string
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Delivery is one event's delivery to one endpoint, with its latest attempt.
type Delivery struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	EndpointID     uuid.UUID
	EventID        uuid.UUID
	EventType      string
	Attempt        int
	Status         string
	ResponseStatus *int
	ResponseBody   *string
	Error          *string
	DurationMS     *int64
	AttemptedAt    *time.Time
	NextAttemptAt  *time.Time
	CreatedAt      time.Time
}

// Delivery statuses.
const (
	Pending   = "pending"
	Succeeded = "succeeded"
	Failed    = "failed"
)

// Renderer renders event e of organization orgID as the body of a
// delivery, the Event JSON as the organization's owner would read it; ok
// is false when the event has nothing to deliver.
type Renderer func(ctx context.Context, orgID uuid.UUID, e event.Event) (body []byte, ok bool, err error)

// Outbound is how deliveries leave the service: the checks of an endpoint
// URL and the signed POST (docs/api.md, Webhooks).
type Outbound interface {
	// CheckURL refuses a URL that may not receive deliveries in this
	// environment (with an invalid_request naming the field url).
	CheckURL(ctx context.Context, rawURL string) error
	// Send posts m and reports what the receiver answered; an error means
	// no answer (refused address, timeout, connection failure).
	Send(ctx context.Context, m Message) (Response, error)
}

// Message is one signed delivery attempt.
type Message struct {
	URL string
	// ID is the webhook-id: the event's id, the same on every attempt.
	ID string
	// Timestamp is the webhook-timestamp; zero lets the sender stamp the wall time.
	Timestamp time.Time
	Body      []byte
	// Secrets sign the message, the current one first (whsec_ form).
	Secrets []string
}

// Response is what a receiver answered: its status and at most the first
// KiB of its body.
type Response struct {
	Status int
	Body   []byte
}

// Service manages endpoints and delivers events to them.
type Service struct {
	DB    *db.DB
	Clock clock.Clock
	Keys  *keyring.Keyring
	// Outbound checks URLs and sends deliveries.
	Outbound Outbound
	// Render renders an event for delivery.
	Render Renderer
	// Delivers reports whether events of a type are delivered at all (the
	// types the events API shows); nil delivers every type.
	Delivers func(typ string) bool
	// Lease is how long one attempt may hold its sending slot (default 5
	// minutes, the job runner's lease).
	Lease time.Duration
}

const secretPurpose = "webhook-secret"

var errNotFound = apierr.NotFoundf("Webhook endpoint")

// NewSecret returns a signing secret in the Standard Webhooks form:
// whsec_ and the base64 of 32 random bytes.
func NewSecret() string {
	secret, err := webhooksend.NewSecret()
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return secret.Reveal()
}

var eventTypePattern = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$`)

// Request is the body of createWebhookEndpoint.
type Request struct {
	URL         *string   `json:"url"`
	EventTypes  *[]string `json:"event_types"`
	Description *string   `json:"description"`
}

// Validate checks the body's fields.
func (r Request) Validate() error {
	var f apierr.Fields
	if r.URL == nil {
		f.Add("url", "is required.")
	} else {
		checkURL(&f, *r.URL)
	}
	if r.EventTypes == nil {
		f.Add("event_types", `is required: a list of event types, or ["*"] for every event.`)
	} else {
		checkEventTypes(&f, *r.EventTypes)
	}
	if r.Description != nil {
		checkDescription(&f, *r.Description)
	}
	return f.Err()
}

// UpdateRequest is the body of updateWebhookEndpoint: any of its fields.
type UpdateRequest struct {
	URL         *string                `json:"url"`
	EventTypes  *[]string              `json:"event_types"`
	Description field.Optional[string] `json:"description"`
	Disabled    *bool                  `json:"disabled"`
}

// Validate checks the body's fields.
func (r UpdateRequest) Validate() error {
	var f apierr.Fields
	if r.URL != nil {
		checkURL(&f, *r.URL)
	}
	if r.EventTypes != nil {
		checkEventTypes(&f, *r.EventTypes)
	}
	if r.Description.Value != nil {
		checkDescription(&f, *r.Description.Value)
	}
	if r.URL == nil && r.EventTypes == nil && !r.Description.Set && r.Disabled == nil {
		f.Add("", "Give at least one of url, event_types, description or disabled.")
	}
	return f.Err()
}

// checkURL applies the rules every environment shares: an absolute http
// or https URL of at most 2,048 characters, with a host and no user
// information. Outbound.CheckURL adds the environment's own.
func checkURL(f *apierr.Fields, raw string) {
	if len(raw) > MaxURL {
		f.Add("url", "must be at most 2,048 characters.")
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "":
		f.Add("url", "must be an absolute http or https URL.")
	case u.User != nil:
		f.Add("url", "must not hold a user name or password.")
	case u.Fragment != "" || strings.Contains(raw, "#"):
		f.Add("url", "must not hold a fragment (#…).")
	}
}

func checkEventTypes(f *apierr.Fields, types []string) {
	switch {
	case len(types) == 0:
		f.Add("event_types", `must list at least one event type, or ["*"] for every event.`)
	case len(types) > MaxEventTypes:
		f.Add("event_types", fmt.Sprintf("must list at most %d event types.", MaxEventTypes))
	case slices.Contains(types, "*") && len(types) > 1:
		f.Add("event_types", `"*" stands alone: it already means every event.`)
	default:
		for _, t := range types {
			if t != "*" && (len(t) > 100 || !eventTypePattern.MatchString(t)) {
				f.Add("event_types", "holds an event type that is not one: "+clip(t, 40))
				return
			}
		}
	}
}

func checkDescription(f *apierr.Fields, d string) {
	f.Check(utf8.RuneCountInString(d) <= 500, "description", "must be at most 500 characters.")
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func normalizeTypes(types []string) []string {
	out := slices.Clone(types)
	slices.Sort(out)
	return slices.Compact(out)
}

// Matches reports whether an endpoint listing types receives an event of type typ.
func Matches(types []string, typ string) bool {
	return slices.Contains(types, "*") || slices.Contains(types, typ)
}

// manager checks a manages the webhook endpoints of orgID: an owner or
// admin, or a key holding the webhooks:manage scope.
func manager(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, write bool) error {
	_, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Admin, Write: write, Scope: Scope})
	return err
}

// endpointManager is manager for an operation on one endpoint: to a member
// without the role the endpoint is simply not found.
func endpointManager(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, write bool) error {
	err := manager(ctx, q, a, orgID, write)
	if apierr.Is(err, apierr.Forbidden) && !a.IsKey() {
		return errNotFound
	}
	return err
}

// Creation is a creation CheckCreate let through, for Create.
type Creation struct {
	a     actor.Actor
	orgID uuid.UUID
	r     Request
}

// NeedsStepUp reports whether a person must confirm the creation with a
// step-up first: every person does; a program's key cannot, and its
// scope is what vouches for it.
func (c Creation) NeedsStepUp() bool { return !c.a.IsKey() }

// CheckCreate checks that a may create the endpoint r describes for
// orgID: an owner or admin (after a step-up, which
// internal/flow/confirming asks for between this check and Create), or a
// key with webhooks:manage; the URL must be one this environment delivers to.
func (s *Service) CheckCreate(ctx context.Context, a actor.Actor, orgID uuid.UUID, r Request) (Creation, error) {
	if err := manager(ctx, s.DB.Reader(), a, orgID, true); err != nil {
		return Creation{}, err
	}
	if err := s.Outbound.CheckURL(ctx, *r.URL); err != nil {
		return Creation{}, err
	}
	return Creation{a: a, orgID: orgID, r: r}, nil
}

// Create stores the endpoint CheckCreate let through and returns it with
// its secret, shown this once, and alerts the organization's owners and
// admins.
func (s *Service) Create(ctx context.Context, c Creation) (Endpoint, string, error) {
	secret := NewSecret()
	sealed, err := s.Keys.Seal(secretPurpose, []byte(secret))
	if err != nil {
		return Endpoint{}, "", err
	}
	e, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Endpoint, error) {
		if err := manager(ctx, tx, c.a, c.orgID, true); err != nil {
			return Endpoint{}, err
		}
		n, err := countEndpoints(ctx, tx, c.orgID)
		if err != nil {
			return Endpoint{}, err
		}
		if n >= MaxEndpoints {
			return Endpoint{}, apierr.Newf(apierr.Conflict, "This organization already has %d webhook endpoints; delete one first.", MaxEndpoints)
		}
		e := Endpoint{ID: uuid.Must(uuid.NewV7()), OrganizationID: c.orgID, URL: *c.r.URL, EventTypes: normalizeTypes(*c.r.EventTypes),
			Description: c.r.Description, CreatedAt: tx.Now(), UpdatedAt: tx.Now()}
		if err := insertEndpoint(ctx, tx, e, sealed); err != nil {
			return Endpoint{}, err
		}
		if err := audit.Record(ctx, tx, c.orgID, audit.WebhookEndpointCreated, audit.To("webhook_endpoint", e.ID)); err != nil {
			return Endpoint{}, err
		}
		return e, s.alert(ctx, tx, c.a, c.orgID, "Security alert: a webhook endpoint was added",
			"%s added a webhook endpoint that will receive this organization's events at %s. If this was not expected, delete it and review your API keys.", e.URL)
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return e, secret, nil
}

// List returns a page of the organization's endpoints, newest first.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]Endpoint, error) {
	q := s.DB.Reader()
	if err := manager(ctx, q, a, orgID, false); err != nil {
		return nil, err
	}
	return listEndpoints(ctx, q, orgID, req)
}

// PageKey positions a page after e.
func PageKey(e Endpoint) page.Key { return page.Key{ID: e.ID.String()} }

// DeliveryPageKey positions a page of deliveries after d.
func DeliveryPageKey(d Delivery) page.Key { return page.Key{ID: d.ID.String()} }

// Get returns endpoint id of orgID.
func (s *Service) Get(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Endpoint, error) {
	q := s.DB.Reader()
	if err := endpointManager(ctx, q, a, orgID, false); err != nil {
		return Endpoint{}, err
	}
	return loadEndpoint(ctx, q, orgID, id, "")
}

// Delete removes endpoint id of orgID with its deliveries; deliveries in
// flight stop at their next step.
func (s *Service) Delete(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Endpoint, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Endpoint, error) {
		if err := endpointManager(ctx, tx, a, orgID, true); err != nil {
			return Endpoint{}, err
		}
		e, err := loadEndpoint(ctx, tx, orgID, id, tx.ForUpdate())
		if err != nil {
			return Endpoint{}, err
		}
		if err := deleteEndpoint(ctx, tx, id); err != nil {
			return Endpoint{}, err
		}
		return e, audit.Record(ctx, tx, orgID, audit.WebhookEndpointDeleted, audit.To("webhook_endpoint", id))
	})
}

// Change is a change CheckUpdate let through, for Update.
type Change struct {
	a          actor.Actor
	orgID, id  uuid.UUID
	r          UpdateRequest
	urlChanged bool
}

// NeedsStepUp reports whether a person must confirm the change with a
// step-up first: when it changes the URL (where the events go).
func (c Change) NeedsStepUp() bool { return c.urlChanged && !c.a.IsKey() }

// CheckUpdate checks that a may change endpoint id of orgID as r says.
// Changing the URL also needs a person's step-up, which
// internal/flow/confirming asks for after this check and before Update.
func (s *Service) CheckUpdate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r UpdateRequest) (Change, error) {
	q := s.DB.Reader()
	if err := endpointManager(ctx, q, a, orgID, true); err != nil {
		return Change{}, err
	}
	e, err := loadEndpoint(ctx, q, orgID, id, "")
	if err != nil {
		return Change{}, err
	}
	c := Change{a: a, orgID: orgID, id: id, r: r}
	if r.URL != nil && *r.URL != e.URL {
		if err := s.Outbound.CheckURL(ctx, *r.URL); err != nil {
			return Change{}, err
		}
		c.urlChanged = true
	}
	return c, nil
}

// Update applies the change CheckUpdate let through. A new URL alerts the
// organization's owners and admins; enabling an endpoint again clears why
// it was disabled.
func (s *Service) Update(ctx context.Context, c Change) (Endpoint, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Endpoint, error) {
		if err := endpointManager(ctx, tx, c.a, c.orgID, true); err != nil {
			return Endpoint{}, err
		}
		e, err := loadEndpoint(ctx, tx, c.orgID, c.id, tx.ForUpdate())
		if err != nil {
			return Endpoint{}, err
		}
		old := e.URL
		if c.r.URL != nil {
			e.URL = *c.r.URL
		}
		if c.r.EventTypes != nil {
			e.EventTypes = normalizeTypes(*c.r.EventTypes)
		}
		if c.r.Description.Set {
			e.Description = c.r.Description.Value
		}
		if c.r.Disabled != nil && *c.r.Disabled != e.Disabled {
			e.Disabled = *c.r.Disabled
			e.DisabledReason = nil
			if e.Disabled {
				reason := "Disabled by a person or program of the organization."
				e.DisabledReason = &reason
			}
		}
		e.UpdatedAt = tx.Now()
		if err := updateEndpoint(ctx, tx, e); err != nil {
			return Endpoint{}, err
		}
		if err := audit.Record(ctx, tx, c.orgID, audit.WebhookEndpointUpdated, audit.To("webhook_endpoint", e.ID)); err != nil {
			return Endpoint{}, err
		}
		if e.URL != old {
			return e, s.alert(ctx, tx, c.a, c.orgID, "Security alert: a webhook endpoint's URL was changed",
				"%s changed a webhook endpoint of this organization: its events now go to %s (they went to "+old+"). If this was not expected, delete it and review your API keys.", e.URL)
		}
		return e, nil
	})
}

// Rotation is a rotation CheckRotate let through, for Rotate.
type Rotation struct {
	a         actor.Actor
	orgID, id uuid.UUID
}

// NeedsStepUp reports whether a person must confirm the rotation first.
func (r Rotation) NeedsStepUp() bool { return !r.a.IsKey() }

// CheckRotate checks that a may rotate the secret of endpoint id of orgID.
func (s *Service) CheckRotate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Rotation, error) {
	q := s.DB.Reader()
	if err := endpointManager(ctx, q, a, orgID, true); err != nil {
		return Rotation{}, err
	}
	if _, err := loadEndpoint(ctx, q, orgID, id, ""); err != nil {
		return Rotation{}, err
	}
	return Rotation{a: a, orgID: orgID, id: id}, nil
}

// Rotate gives the endpoint a new secret, returned this once; the
// previous one keeps signing beside it for 24 hours. The organization's
// owners and admins are alerted.
func (s *Service) Rotate(ctx context.Context, r Rotation) (Endpoint, string, error) {
	secret := NewSecret()
	sealed, err := s.Keys.Seal(secretPurpose, []byte(secret))
	if err != nil {
		return Endpoint{}, "", err
	}
	e, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Endpoint, error) {
		if err := endpointManager(ctx, tx, r.a, r.orgID, true); err != nil {
			return Endpoint{}, err
		}
		e, err := loadEndpoint(ctx, tx, r.orgID, r.id, tx.ForUpdate())
		if err != nil {
			return Endpoint{}, err
		}
		e.UpdatedAt = tx.Now()
		if err := rotateSecret(ctx, tx, e.ID, sealed, tx.Now().Add(SecretOverlap), tx.Now()); err != nil {
			return Endpoint{}, err
		}
		if err := audit.Record(ctx, tx, r.orgID, audit.WebhookEndpointSecretRotated, audit.To("webhook_endpoint", e.ID)); err != nil {
			return Endpoint{}, err
		}
		return e, s.alert(ctx, tx, r.a, r.orgID, "Security alert: a webhook signing secret was rotated",
			"%s rotated the signing secret of the webhook endpoint at %s. The previous secret keeps signing for 24 hours. If this was not expected, review your API keys.", e.URL)
	})
	if err != nil {
		return Endpoint{}, "", err
	}
	return e, secret, nil
}

// alert tells every owner and admin of orgID, in tx, what a did: format
// holds %s for who did it and then %s for the URL.
func (s *Service) alert(ctx context.Context, tx *db.Tx, a actor.Actor, orgID uuid.UUID, subject, format, url string) error {
	var who string
	if a.IsKey() {
		who = "A program using the API key " + keyName(a)
	} else {
		u, err := identity.GetUser(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		who = u.Email
	}
	return s.tell(ctx, tx, orgID, organization.Admin, subject, fmt.Sprintf(format, who, url))
}

// tell queues a security alert to every member of orgID of at least role.
func (s *Service) tell(ctx context.Context, tx *db.Tx, orgID uuid.UUID, role organization.Role, subject, body string) error {
	people, err := organization.MembersAtLeast(ctx, tx, orgID, role)
	if err != nil {
		return err
	}
	for _, id := range people {
		if _, err := outbox.Queue(ctx, tx, outbox.Message{UserID: &id, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
			Subject: subject, Body: body}); err != nil {
			return err
		}
	}
	return nil
}

func keyName(a actor.Actor) string { return "sr_…_" + a.Key.Lookup }

// Deliveries returns a page of endpoint id's deliveries, newest first.
func (s *Service) Deliveries(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, req page.Request) ([]Delivery, error) {
	q := s.DB.Reader()
	if err := endpointManager(ctx, q, a, orgID, false); err != nil {
		return nil, err
	}
	if _, err := loadEndpoint(ctx, q, orgID, id, ""); err != nil {
		return nil, err
	}
	return listDeliveries(ctx, q, id, req)
}

var errDeliveryNotFound = apierr.NotFoundf("Webhook delivery")

// Retry makes a new attempt of delivery deliveryID of endpoint id now,
// whatever its status; conflict while an attempt is in progress or the
// endpoint is disabled.
func (s *Service) Retry(ctx context.Context, a actor.Actor, orgID, id, deliveryID uuid.UUID) (Delivery, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Delivery, error) {
		if err := endpointManager(ctx, tx, a, orgID, true); err != nil {
			return Delivery{}, err
		}
		e, err := loadEndpoint(ctx, tx, orgID, id, tx.ForUpdate())
		if err != nil {
			return Delivery{}, err
		}
		d, st, err := lockDelivery(ctx, tx, deliveryID)
		if errors.Is(err, errDeliveryNotFound) || err == nil && d.EndpointID != id {
			return Delivery{}, errDeliveryNotFound
		}
		if err != nil {
			return Delivery{}, err
		}
		if e.Disabled {
			return Delivery{}, apierr.New(apierr.Conflict, "This webhook endpoint is disabled; enable it before retrying its deliveries.")
		}
		if st.sendingUntil != nil && st.sendingUntil.After(tx.Now()) {
			return Delivery{}, apierr.New(apierr.Conflict, "An attempt of this delivery is in progress; retry once it has ended.")
		}
		now := tx.Now()
		d.Status, d.NextAttemptAt = Pending, &now
		if err := s.schedule(ctx, tx, d.ID, st.seq+1, now); err != nil {
			return Delivery{}, err
		}
		return d, audit.Record(ctx, tx, orgID, audit.WebhookDeliveryRetried, audit.To("webhook_delivery", d.ID))
	})
}

// Ping queues a webhook.ping event to endpoint id alone (the sandbox's
// helper) and returns the event's id.
func (s *Service) Ping(ctx context.Context, id uuid.UUID) (uuid.UUID, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (uuid.UUID, error) {
		e, err := loadEndpoint(ctx, tx, uuid.Nil, id, "")
		if err != nil {
			return uuid.Nil, err
		}
		ref, err := event.Append(ctx, tx, e.OrganizationID, "webhook_endpoint", e.ID.String(), PingType,
			map[string]any{"webhook_endpoint_id": e.ID, "url": e.URL})
		if err != nil {
			return uuid.Nil, err
		}
		return ref.EventID, s.createDelivery(ctx, tx, e, ref.EventID, PingType)
	})
}

// pingBody renders a webhook.ping event, which concerns the endpoint
// alone, as the Event JSON every delivery carries.
func pingBody(e event.Event) ([]byte, error) {
	return json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "organization_id": e.OrganizationID,
		"occurred_at": e.OccurredAt.UTC(), "data": e.Data})
}
