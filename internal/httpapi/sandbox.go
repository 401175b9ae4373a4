package httpapi

import (
	"context"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

// authenticateSandbox admits the sandbox token. Anything else gets the same
// 404 as a server without the sandbox, so the helpers' existence is not revealed.
func (s *server) authenticateSandbox(r *http.Request) error {
	token, ok := bearer(r)
	if !ok || s.SandboxToken == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.SandboxToken)) != 1 {
		return apierr.New(apierr.NotFound, "There is nothing at this path.")
	}
	return nil
}

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return "", false
	}
	t := strings.TrimSpace(h[7:])
	return t, t != ""
}

// pathID parses a UUID path parameter; a malformed one is simply not found.
func pathID(r *http.Request, name, kind string) (uuid.UUID, error) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		return uuid.Nil, apierr.NotFoundf(kind)
	}
	return id, nil
}

// sandboxUserRecord is a user the sandbox made; totp_secret is null
// without an authenticator.
type sandboxUserRecord struct {
	UserID     uuid.UUID `json:"user_id"`
	TOTPSecret *string   `json:"totp_secret"`
}

func newSandboxUserRecord(u sandbox.CreatedUser) sandboxUserRecord {
	return sandboxUserRecord{UserID: u.UserID, TOTPSecret: u.TOTPSecret}
}

type sandboxOrganizationRef struct {
	ID   uuid.UUID `json:"id"`
	Name string    `json:"name"`
}

type sandboxOrganizationRecord struct {
	Organization sandboxOrganizationRef `json:"organization"`
	Owner        sandboxUserRecord      `json:"owner"`
}

type sandboxStatusRecord struct {
	ID     uuid.UUID           `json:"id"`
	Status organization.Status `json:"status"`
}

type sandboxEntityRecord struct {
	ID           uuid.UUID                 `json:"id"`
	EntityStatus organization.EntityStatus `json:"entity_status"`
}

type partnerSettingsRecord struct {
	OfferedCurrencies []string `json:"offered_currencies"`
	Unavailable       bool     `json:"unavailable"`
	EligibilityError  bool     `json:"eligibility_error"`
}

func (s *server) sandboxCreateOrganization(w http.ResponseWriter, r *http.Request) error {
	var req sandbox.NewOrganization
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.Sandbox.CreateOrganization(r.Context(), req)
	if err != nil {
		return err
	}
	setOrganization(r, out.Organization.ID.String())
	return writeJSON(w, http.StatusCreated, sandboxOrganizationRecord{
		Organization: sandboxOrganizationRef(out.Organization),
		Owner:        newSandboxUserRecord(out.Owner),
	})
}

func (s *server) sandboxAddUser(w http.ResponseWriter, r *http.Request) error {
	return onOrganization(w, r, s.Sandbox.AddUser, http.StatusCreated, newSandboxUserRecord)
}

func (s *server) sandboxSetStatus(w http.ResponseWriter, r *http.Request) error {
	return onOrganization(w, r, s.Sandbox.SetStatus, http.StatusOK, func(o organization.Organization) sandboxStatusRecord {
		return sandboxStatusRecord{ID: o.ID, Status: o.Status}
	})
}

func (s *server) sandboxSetEntity(w http.ResponseWriter, r *http.Request) error {
	return onOrganization(w, r, s.Sandbox.SetEntity, http.StatusOK, func(o organization.Organization) sandboxEntityRecord {
		return sandboxEntityRecord{ID: o.ID, EntityStatus: o.EntityStatus}
	})
}

// onOrganization runs a sandbox helper acting on the organization of the
// path: it decodes the body, calls the helper and writes what it returns as
// record renders it, with status.
func onOrganization[Body, Out, Record any](w http.ResponseWriter, r *http.Request, helper func(context.Context, uuid.UUID, Body) (Out, error),
	status int, record func(Out) Record) error {
	orgID, err := pathID(r, "organization_id", "Organization")
	if err != nil {
		return err
	}
	setOrganization(r, orgID.String())
	var req Body
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := helper(r.Context(), orgID, req)
	if err != nil {
		return err
	}
	return writeJSON(w, status, record(out))
}

func (s *server) sandboxAdvanceClock(w http.ResponseWriter, r *http.Request) error {
	var req sandbox.ClockAdvance
	if err := decode(r, &req); err != nil {
		return err
	}
	now, err := s.Sandbox.AdvanceClock(req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]time.Time{"now": now})
}

type outboxMessage struct {
	ID         uuid.UUID   `json:"id"`
	UserID     *uuid.UUID  `json:"user_id"`
	Kind       outbox.Kind `json:"kind"`
	Channel    string      `json:"channel"`
	Subject    string      `json:"subject"`
	Body       string      `json:"body"`
	Code       *string     `json:"code"`
	InsertedAt time.Time   `json:"inserted_at"`
}

func (s *server) sandboxOutbox(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	var f apierr.Fields
	var filter outbox.Filter
	if v := q.Get("user_id"); v != "" {
		id, err := uuid.Parse(v)
		f.Check(err == nil, "user_id", "must be a UUID.")
		filter.UserID = &id
	}
	if v := q.Get("kind"); v != "" {
		filter.Kind = outbox.Kind(v)
		f.Check(slices.Contains(outbox.Kinds, filter.Kind), "kind", "must be one of totp_activation_code, new_device, step_up_email_code, security_alert, notification.")
	}
	if err := f.Err(); err != nil {
		return err
	}
	pages := s.pages("sandbox-outbox")
	req, err := pages.Parse(q, "user_id", "kind")
	if err != nil {
		return err
	}
	msgs, err := s.Sandbox.Outbox(r.Context(), filter, req)
	if err != nil {
		return err
	}
	p := page.Build(pages, req, msgs, outbox.PageKey)
	return writeJSON(w, http.StatusOK, mapPage(p, func(m outbox.Message) outboxMessage { return outboxMessage(m) }))
}

type partnerSettingsRequest struct {
	OfferedCurrencies []string `json:"offered_currencies"`
	Unavailable       *bool    `json:"unavailable"`
	EligibilityError  *bool    `json:"eligibility_error"`
}

func (p partnerSettingsRequest) Validate() error {
	var f apierr.Fields
	for i, c := range p.OfferedCurrencies {
		f.Check(mca.IsCurrencyCode(c), fmt.Sprintf("offered_currencies[%d]", i), "must be a three-letter ISO 4217 code in capitals.")
	}
	return f.Err()
}

func (s *server) sandboxPartner(w http.ResponseWriter, r *http.Request) error {
	var req partnerSettingsRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, partnerSettingsRecord(s.Partner.Configure(req.OfferedCurrencies, req.Unavailable, req.EligibilityError)))
}

// sandboxPartnerWebhook sends a webhook as the partner would: signed, and
// through the same code as the real endpoint.
func (s *server) sandboxPartnerWebhook(w http.ResponseWriter, r *http.Request) error {
	var hook mca.Webhook
	if err := decode(r, &hook); err != nil {
		return err
	}
	body, err := json.Marshal(hook)
	if err != nil {
		return err
	}
	if err := s.receiveWebhook(r.Context(), body, "sha256="+hex.EncodeToString(signWebhook(s.PartnerSecret, body))); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
