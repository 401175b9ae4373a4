package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

// The sandbox's helpers (test only): they stand in for the world outside
// the service (the banking partner, the card network, the approving app,
// the identity-verification provider, the clock) and set up what a test
// needs. They act as no person, so their service methods take no actor
// (noActor, noActorBody, noActorSend). Their resources, besides the
// features' own (cards, payments, transactions, challenges, identity checks):
var (
	sandboxOrganizations = resource[sandbox.CreatedOrganization, sandboxOrganizationRecord]{record: newSandboxOrganizationRecord}
	sandboxUsers         = resource[sandbox.CreatedUser, sandboxUserRecord]{at: organizationID, record: newSandboxUserRecord}
	sandboxStatuses      = resource[organization.Organization, sandboxStatusRecord]{at: organizationID,
		record: func(o organization.Organization) sandboxStatusRecord {
			return sandboxStatusRecord{ID: o.ID, Status: o.Status}
		}}
	sandboxEntities = resource[organization.Organization, sandboxEntityRecord]{at: organizationID,
		record: func(o organization.Organization) sandboxEntityRecord {
			return sandboxEntityRecord{ID: o.ID, EntityStatus: o.EntityStatus}
		}}
	sandboxClock = resource[time.Time, map[string]time.Time]{record: func(now time.Time) map[string]time.Time {
		return map[string]time.Time{"now": now}
	}}
	outboxMessages = resource[outbox.Message, outboxMessage]{record: func(m outbox.Message) outboxMessage { return outboxMessage(m) },
		pages: "sandbox-outbox", key: outbox.PageKey}
	partnerSettings = resource[sandbox.PartnerSettings, partnerSettingsRecord]{
		record: func(p sandbox.PartnerSettings) partnerSettingsRecord { return partnerSettingsRecord(p) }}
	shipments = resource[card.Shipment, shipmentRecord]{at: cardID, record: func(s card.Shipment) shipmentRecord {
		return shipmentRecord{Card: newCardRecord(s.Card), ActivationCode: s.ActivationCode}
	}}
	authorizations = resource[card.Decision, authorizationRecord]{at: cardID, record: newAuthorizationRecord}
	providerKeys   = resource[jose.JSONWebKey, jose.JSONWebKey]{record: func(k jose.JSONWebKey) jose.JSONWebKey { return k }}
	sandboxApps    = resource[sandbox.RegisteredApp, sandboxAppRecord]{at: userID,
		record: func(a sandbox.RegisteredApp) sandboxAppRecord { return sandboxAppRecord(a) }}
)

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

func newSandboxOrganizationRecord(o sandbox.CreatedOrganization) sandboxOrganizationRecord {
	return sandboxOrganizationRecord{Organization: sandboxOrganizationRef(o.Organization), Owner: newSandboxUserRecord(o.Owner)}
}

func (o sandboxOrganizationRecord) organization() uuid.UUID { return o.Organization.ID }

// sandboxAdvanceClock moves the sandbox's clock.
func (s *server) sandboxAdvanceClock(_ context.Context, req sandbox.ClockAdvance) (time.Time, error) {
	return s.Sandbox.AdvanceClock(req)
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

// outboxFilter reads the outbox's filters: the user and the kind of message.
var outboxFilter = &filter[outbox.Filter]{read: readOutboxFilter, params: []string{"user_id", "kind"}}

func readOutboxFilter(r *http.Request) (outbox.Filter, error) {
	q := r.URL.Query()
	var f apierr.Fields
	var of outbox.Filter
	if v := q.Get("user_id"); v != "" {
		id, err := uuid.Parse(v)
		f.Check(err == nil, "user_id", "must be a UUID.")
		of.UserID = &id
	}
	if v := q.Get("kind"); v != "" {
		of.Kind = outbox.Kind(v)
		f.Check(slices.Contains(outbox.Kinds, of.Kind), "kind", "must be one of totp_activation_code, new_device, step_up_email_code, security_alert, notification.")
	}
	return of, f.Err()
}

// sandboxOutbox lists the messages sent, filtered.
func (s *server) sandboxOutbox(ctx context.Context, _ actor.Actor, _ uuid.UUID, f outbox.Filter, req page.Request) ([]outbox.Message, error) {
	return s.Sandbox.Outbox(ctx, f, req)
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

// sandboxPartner sets how the sandbox banking partner answers.
func (s *server) sandboxPartner(_ context.Context, req partnerSettingsRequest) (sandbox.PartnerSettings, error) {
	return s.Partner.Configure(req.OfferedCurrencies, req.Unavailable, req.EligibilityError), nil
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

type settleRequest struct {
	Outcome string `json:"outcome"`
}

func (s settleRequest) Validate() error {
	if s.Outcome != payment.Completed && s.Outcome != payment.Failed {
		return apierr.InvalidField("outcome", "must be completed or failed.")
	}
	return nil
}

// sandboxSettle settles a payment on its rail as completed or failed.
func (s *server) sandboxSettle(ctx context.Context, id uuid.UUID, req settleRequest) (payment.Record, error) {
	return s.BillPay.Settle(ctx, id, req.Outcome)
}

// The card network's side.

// shipmentRecord is what the sandbox answers when it ships a physical card:
// the card and the activation code the card's letter would carry.
type shipmentRecord struct {
	Card           cardRecord `json:"card"`
	ActivationCode string     `json:"activation_code"`
}

// sandboxWalletProviderKey reads the network from the query and answers
// its wallet provider's private key (providerKeys.serve).
func (s *server) sandboxWalletProviderKey(r *http.Request, _ uuid.UUID) (jose.JSONWebKey, error) {
	network := r.URL.Query().Get("network")
	if !slices.Contains(sandbox.Networks, network) {
		return jose.JSONWebKey{}, apierr.InvalidField("network", "must be visa or mastercard.")
	}
	return s.SandboxIssuer.ProviderPrivateKey(r.Context(), network)
}

type authorizationRecord struct {
	Approved      bool               `json:"approved"`
	DeclineReason *string            `json:"decline_reason"`
	Transaction   *transactionRecord `json:"transaction"`
}

func newAuthorizationRecord(d card.Decision) authorizationRecord {
	out := authorizationRecord{Approved: d.Approved, DeclineReason: d.DeclineReason}
	if d.Transaction != nil {
		t := newTransactionRecord(*d.Transaction)
		out.Transaction = &t
	}
	return out
}

// The approving app's side.

type sandboxAppRecord struct {
	DeviceID     uuid.UUID `json:"device_id"`
	CredentialID uuid.UUID `json:"credential_id"`
}

// sandboxApprovingApp registers a sandbox approving app for the user in
// the path and answers 201 (sandboxApps.serve); it takes no body.
func (s *server) sandboxApprovingApp(r *http.Request, userID uuid.UUID) (sandbox.RegisteredApp, error) {
	if err := noBody(r); err != nil {
		return sandbox.RegisteredApp{}, err
	}
	return s.ApprovingApp.Register(r.Context(), userID)
}

// The sandbox's identity-check page (test only): the web SDK link of the
// sandbox provider, where a person's check is approved or rejected. The
// token in the link is the permission; it is never logged (the access log
// names the route, not the URL) and the page sends no referrer.

// kycPageStyle is the page's only style; the Content-Security-Policy
// admits exactly it, by hash.
const kycPageStyle = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}` +
	`dl{display:grid;grid-template-columns:max-content auto;gap:.25rem 1rem}dt{font-weight:600}` +
	`form{display:inline-block;margin-right:.5rem}button{font-size:1rem;padding:.5rem 1rem}`

var kycPagePolicy = "default-src 'none'; style-src 'sha256-" + styleHash(kycPageStyle) +
	"'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash(css string) string {
	sum := sha256.Sum256([]byte(css))
	return base64.StdEncoding.EncodeToString(sum[:])
}

var kycPage = template.Must(template.New("kyc").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sandbox identity check</title>
<style>{{.Style}}</style>
</head>
<body>
<h1>Sandbox identity check</h1>
{{if .Refusal}}<p role="alert">{{.Refusal}}</p>{{else}}
<p>This page stands in for an identity-verification provider in the sandbox. Choose the outcome of the check.</p>
<dl>
<dt>User</dt><dd>{{.UserID}}</dd>
{{if .OrganizationID}}<dt>Organization</dt><dd>{{.OrganizationID}}</dd>{{end}}
<dt>Status</dt><dd id="status">{{.Status}}</dd>
<dt>Link valid until</dt><dd>{{.ExpiresAt}}</dd>
</dl>
{{if .Decided}}<p role="status">The check is now {{.Status}}.</p>{{end}}
{{if .Spent}}<p>This link has decided the check and cannot decide again. Ask for a new link to check again.</p>{{else}}
<form method="post" action="{{.Action}}">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="status" value="approved">
<button type="submit">Approve</button>
</form>
<form method="post" action="{{.Action}}">
<input type="hidden" name="token" value="{{.Token}}">
<input type="hidden" name="status" value="rejected">
<button type="submit">Reject</button>
</form>
{{end}}
{{end}}
</body>
</html>
`))

type kycPageData struct {
	Style          template.CSS
	Refusal        string
	Action         string
	Token          string
	UserID         string
	OrganizationID string
	Status         string
	ExpiresAt      string
	Decided        bool
	// Spent: the link has decided; it offers no more decisions.
	Spent bool
}

const kycRefused = "This identity-check link is not valid or has expired. Ask for a new one."

// kycSpent refuses a second decision by one link; the first stands.
const kycSpent = "This identity-check link has already decided the check, which stays as it was decided. Ask for a new link to check again."

// writeKYCPage renders the page with its security headers. The page is
// rendered before anything is written, so a failure is a clean 500 rather
// than a status with half a page.
func writeKYCPage(w http.ResponseWriter, status int, d kycPageData) error {
	d.Style, d.Action = template.CSS(kycPageStyle), sandbox.IdentityCheckPagePath
	var page bytes.Buffer
	if err := kycPage.Execute(&page, d); err != nil {
		return fmt.Errorf("render the identity-check page: %w", err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", kycPagePolicy)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	w.WriteHeader(status)
	_, _ = w.Write(page.Bytes()) // a client gone mid-answer has nothing to be told
	return nil
}

// kycPageFor verifies token and fills the page's data for it; ok is false
// when the page has been answered with a refusal.
func (s *server) kycPageFor(w http.ResponseWriter, r *http.Request, token string) (kycPageData, onboarding.VerifiedToken, bool, error) {
	if token == "" {
		return kycPageData{}, onboarding.VerifiedToken{}, false, writeKYCPage(w, http.StatusBadRequest, kycPageData{Refusal: kycRefused})
	}
	v, err := s.SandboxKYC.Verify(token, s.Clock.Now())
	if err != nil {
		return kycPageData{}, v, false, writeKYCPage(w, http.StatusForbidden, kycPageData{Refusal: kycRefused})
	}
	d := kycPageData{Token: token, UserID: v.UserID.String(), ExpiresAt: v.ExpiresAt.Format(time.RFC3339)}
	if v.OrganizationID != nil {
		d.OrganizationID = v.OrganizationID.String()
	}
	return d, v, true, nil
}

func (s *server) sandboxKYCPage(w http.ResponseWriter, r *http.Request) error {
	d, v, ok, err := s.kycPageFor(w, r, r.URL.Query().Get("token"))
	if !ok || err != nil {
		return err
	}
	c, err := onboarding.CheckOf(r.Context(), s.DB.Reader(), v.UserID)
	if err != nil {
		return err
	}
	d.Status = c.Status
	if d.Spent, err = onboarding.LinkDecided(r.Context(), s.DB.Reader(), v.ID); err != nil {
		return err
	}
	return writeKYCPage(w, http.StatusOK, d)
}

// maxKYCForm bounds the page's form body: a token and a status.
const maxKYCForm = 16 << 10

func (s *server) sandboxKYCDecide(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxKYCForm)
	if err := r.ParseForm(); err != nil {
		return writeKYCPage(w, http.StatusBadRequest, kycPageData{Refusal: "The form could not be read."})
	}
	d, v, ok, err := s.kycPageFor(w, r, r.PostForm.Get("token"))
	if !ok || err != nil {
		return err
	}
	status := r.PostForm.Get("status")
	if !slices.Contains(onboarding.Decisions, status) {
		return writeKYCPage(w, http.StatusBadRequest, kycPageData{Refusal: "Choose approve or reject."})
	}
	c, err := s.Onboarding.DecideByLink(r.Context(), v, onboarding.Decision{Status: status})
	if apierr.Is(err, apierr.NotFound) {
		return writeKYCPage(w, http.StatusForbidden, kycPageData{Refusal: kycRefused})
	}
	if onboarding.IsLinkSpent(err) {
		return writeKYCPage(w, http.StatusConflict, kycPageData{Refusal: kycSpent})
	}
	if err != nil {
		return err
	}
	d.Status, d.Decided, d.Spent = c.Status, true, true
	return writeKYCPage(w, http.StatusOK, d)
}
