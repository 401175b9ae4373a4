package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

type questionnaireOptionRecord struct {
	ID    uuid.UUID `json:"id"`
	Label string    `json:"label"`
	Value string    `json:"value"`
}

type personalOptionsRecord struct {
	MonthlyVolumes []questionnaireOptionRecord `json:"monthly_volumes"`
	Occupations    []questionnaireOptionRecord `json:"occupations"`
	Purposes       []questionnaireOptionRecord `json:"purposes"`
	SourceOfFunds  []questionnaireOptionRecord `json:"source_of_funds"`
}

func optionRecords(os []onboarding.Option) []questionnaireOptionRecord {
	out := make([]questionnaireOptionRecord, len(os))
	for i, o := range os {
		out[i] = questionnaireOptionRecord(o)
	}
	return out
}

func (s *server) personalQuestionnaireOptions(w http.ResponseWriter, r *http.Request) error {
	p := s.Onboarding.Personal()
	return writeJSON(w, http.StatusOK, personalOptionsRecord{MonthlyVolumes: optionRecords(p.MonthlyVolumes),
		Occupations: optionRecords(p.Occupations), Purposes: optionRecords(p.Purposes), SourceOfFunds: optionRecords(p.SourceOfFunds)})
}

type subscriptionAcknowledgementRecord struct {
	OrganizationID                      uuid.UUID  `json:"organization_id"`
	RequiresSubscriptionAcknowledgement bool       `json:"requires_subscription_acknowledgement"`
	SubscriptionAcknowledgedAt          *time.Time `json:"subscription_acknowledged_at"`
}

func newSubscriptionAcknowledgementRecord(a onboarding.Acknowledgement) subscriptionAcknowledgementRecord {
	return subscriptionAcknowledgementRecord{OrganizationID: a.OrganizationID, RequiresSubscriptionAcknowledgement: a.Required,
		SubscriptionAcknowledgedAt: a.AcknowledgedAt}
}

func (s *server) getSubscriptionAcknowledgement(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	a, err := s.Onboarding.Acknowledgement(r.Context(), actorOf(r), org)
	return render(w, http.StatusOK, newSubscriptionAcknowledgementRecord, a, err)
}

func (s *server) acknowledgeSubscription(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	a, err := s.Onboarding.Acknowledge(r.Context(), actorOf(r), org)
	return render(w, http.StatusOK, newSubscriptionAcknowledgementRecord, a, err)
}

type identityCheckTokenRecord struct {
	AccessToken string `json:"access_token"`
	WebSDKLink  string `json:"websdk_link"`
}

func (s *server) createIdentityCheckToken(w http.ResponseWriter, r *http.Request) error {
	// The body is optional: without one the token is asked outside any organization.
	var req onboarding.AccessTokenRequest
	if err := decodeOptional(r, &req); err != nil {
		return err
	}
	if req.OrganizationID != nil {
		setOrganization(r, req.OrganizationID.String())
	}
	t, err := s.Onboarding.AccessToken(r.Context(), actorOf(r), req)
	return render(w, http.StatusOK, func(t onboarding.AccessToken) identityCheckTokenRecord {
		return identityCheckTokenRecord{AccessToken: t.Token, WebSDKLink: t.WebSDKLink}
	}, t, err)
}

type identityCheckRecord struct {
	Status    string     `json:"status"`
	UpdatedAt *time.Time `json:"updated_at"`
}

func newIdentityCheckRecord(c onboarding.IdentityCheck) identityCheckRecord {
	return identityCheckRecord(c)
}

func (s *server) sandboxDecideIdentityCheck(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "user_id", "User", http.StatusOK, s.Onboarding.Decide, newIdentityCheckRecord)
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
	d.Style, d.Action = template.CSS(kycPageStyle), onboarding.SandboxPagePath
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
