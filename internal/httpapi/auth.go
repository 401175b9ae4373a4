package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/stepup"
)

type actorKey struct{}

// actorOf returns the person a session-authenticated request acts as.
func actorOf(r *http.Request) actor.Actor {
	a, _ := r.Context().Value(actorKey{}).(actor.Actor)
	return a
}

// authenticate resolves the bearer: a session token, or an API key where the
// operation accepts one (otherwise api_key_not_permitted once the key is
// known to be valid). Each credential has its own rate limit.
func (s *server) authenticate(r *http.Request, keysAllowed bool) (*http.Request, error) {
	token, ok := bearer(r)
	if !ok {
		return r, identity.ErrNotAuthenticated()
	}
	var a actor.Actor
	var err error
	credential := ""
	if strings.HasPrefix(token, apikey.Prefix) {
		if a, err = s.APIKeys.Authenticate(r.Context(), token); err != nil {
			infoOf(r).tokenRefused = true
			return r, err
		}
		infoOf(r).apiKeyLookup = a.Key.Lookup
		if !keysAllowed {
			return r, organization.ErrKeyNotPermitted
		}
		credential = "api-key:" + a.Key.ID.String()
	} else {
		if a, err = s.Identity.Authenticate(r.Context(), token); err != nil {
			infoOf(r).tokenRefused = true
			return r, err
		}
		credential = "session:" + a.Session.ID.String()
	}
	if err := s.limit(r, s.LocalLimiter, credential, s.Limits.PerCredential); err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), actorKey{}, a)), nil
}

// refuseAPIKey answers api_key_not_permitted when an API operation that
// takes no bearer (the sign-in family, sign-out, the document) is called
// with an API key: a key can never sign in or act as a person.
func (s *server) refuseAPIKey(r *http.Request, path string) error {
	token, ok := bearer(r)
	if !ok || !strings.HasPrefix(token, apikey.Prefix) || !strings.HasPrefix(path, "/api/v1/") {
		return nil
	}
	a, err := s.APIKeys.Authenticate(r.Context(), token)
	if err != nil {
		infoOf(r).tokenRefused = true
		return err
	}
	infoOf(r).apiKeyLookup = a.Key.Lookup
	return organization.ErrKeyNotPermitted
}

// userRecord is the signed-in person as the API shows them.
type userRecord struct {
	ID          uuid.UUID `json:"id"`
	Email       string    `json:"email"`
	FirstName   *string   `json:"first_name"`
	LastName    *string   `json:"last_name"`
	TOTPEnabled bool      `json:"totp_enabled"`
}

func newUserRecord(u *identity.User) *userRecord {
	if u == nil {
		return nil
	}
	return &userRecord{ID: u.ID, Email: u.Email, FirstName: u.FirstName, LastName: u.LastName, TOTPEnabled: u.TOTPEnabled}
}

type signInRecord struct {
	Status         string      `json:"status"`
	Token          *string     `json:"token"`
	ChallengeToken *string     `json:"challenge_token"`
	DeviceID       *uuid.UUID  `json:"device_id"`
	User           *userRecord `json:"user"`
	TrustToken     *string     `json:"trust_token,omitempty"`
}

func newSignInRecord(res identity.SignInResult) signInRecord {
	out := signInRecord{Status: res.Status, Token: res.Token, ChallengeToken: res.ChallengeToken, User: newUserRecord(res.User), TrustToken: res.TrustToken}
	if res.DeviceID != uuid.Nil {
		out.DeviceID = &res.DeviceID
	}
	return out
}

func (s *server) signIn(w http.ResponseWriter, r *http.Request) error {
	var req identity.SignInRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	// Wrong passwords are counted per (email, client address) by the
	// service, never per email alone: a stranger cannot lock a person out.
	req.ClientAddress = clientAddress(r)
	res, err := s.Identity.SignIn(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newSignInRecord(res))
}

func (s *server) mfa(w http.ResponseWriter, r *http.Request) error {
	return decoding(w, r, http.StatusOK, s.Identity.MFA, newSignInRecord)
}

type totpSetupRecord struct {
	Enabled       bool      `json:"enabled"`
	InsertedAt    time.Time `json:"inserted_at"`
	SecretEncoded string    `json:"secret_encoded"`
	URI           string    `json:"uri"`
}

func (s *server) signInTOTPSetup(w http.ResponseWriter, r *http.Request) error {
	var req identity.ChallengeTokenRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	res, err := s.Identity.SignInTOTPSetup(r.Context(), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]string{"uri": res.URI, "secret_encoded": res.SecretEncoded})
}

func (s *server) signInTOTPActivate(w http.ResponseWriter, r *http.Request) error {
	return decoding(w, r, http.StatusOK, s.Identity.SignInTOTPActivate, newSignInRecord)
}

func (s *server) totpSetup(w http.ResponseWriter, r *http.Request) error {
	if err := noBody(r); err != nil {
		return err
	}
	a := actorOf(r)
	// Replacing a working authenticator is sensitive: whoever holds the
	// session must prove they are the person.
	if err := s.StepUp.Require(r.Context(), a, stepup.GateAuthenticator); err != nil {
		return err
	}
	res, err := s.Identity.StartTOTPEnrollment(r.Context(), a)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, totpSetupRecord(res))
}

func (s *server) totpActivate(w http.ResponseWriter, r *http.Request) error {
	return acting(w, r, http.StatusOK, s.Identity.ActivateTOTP, func(v identity.TOTPSetup) totpSetupRecord { return totpSetupRecord(v) })
}

// signOut ends the bearer's session; it answers the same for a dead token.
func (s *server) signOut(w http.ResponseWriter, r *http.Request) error {
	if token, ok := bearer(r); ok {
		if err := s.Identity.SignOut(r.Context(), token); err != nil {
			return err
		}
	}
	return writeJSON(w, http.StatusOK, map[string]string{"message": "You have been signed out. See you soon."})
}

type membershipRecord struct {
	OrganizationID   uuid.UUID         `json:"organization_id"`
	OrganizationName string            `json:"organization_name"`
	Role             organization.Role `json:"role"`
}

type meRecord struct {
	User        *userRecord        `json:"user"`
	Memberships []membershipRecord `json:"memberships"`
	Session     struct {
		DeviceID      uuid.UUID `json:"device_id"`
		ExpiresAt     time.Time `json:"expires_at"`
		IdleExpiresAt time.Time `json:"idle_expires_at"`
	} `json:"session"`
	IdentityCheck identityCheckRecord `json:"identity_check"`
}

func (s *server) me(w http.ResponseWriter, r *http.Request) error {
	a := actorOf(r)
	u, err := identity.GetUser(r.Context(), s.DB.Reader(), a.UserID)
	if err != nil {
		return err
	}
	ms, err := organization.Memberships(r.Context(), s.DB.Reader(), a.UserID)
	if err != nil {
		return err
	}
	check, err := onboarding.CheckOf(r.Context(), s.DB.Reader(), a.UserID)
	if err != nil {
		return err
	}
	out := meRecord{User: newUserRecord(&u), Memberships: make([]membershipRecord, len(ms)), IdentityCheck: newIdentityCheckRecord(check)}
	for i, m := range ms {
		out.Memberships[i] = membershipRecord(m)
	}
	out.Session.DeviceID, out.Session.ExpiresAt, out.Session.IdleExpiresAt = a.Session.DeviceID, a.Session.ExpiresAt, a.Session.IdleExpiresAt
	return writeJSON(w, http.StatusOK, out)
}

type deviceRecord struct {
	ID         uuid.UUID      `json:"id"`
	ThisDevice bool           `json:"this_device"`
	Name       *string        `json:"name"`
	Platform   actor.Platform `json:"platform"`
	InsertedAt time.Time      `json:"inserted_at"`
	LastSeenAt time.Time      `json:"last_seen_at"`
}

func (s *server) devices(w http.ResponseWriter, r *http.Request) error {
	pages := s.pages("devices")
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	a := actorOf(r)
	ds, err := s.Identity.Devices(r.Context(), a, req)
	if err != nil {
		return err
	}
	p := page.Build(pages, req, ds, identity.DevicePageKey)
	return writeJSON(w, http.StatusOK, mapPage(p, func(d identity.Device) deviceRecord {
		return deviceRecord{ID: d.ID, ThisDevice: d.ID == a.Session.DeviceID, Name: d.Name, Platform: d.Platform, InsertedAt: d.InsertedAt, LastSeenAt: d.LastSeenAt}
	}))
}

// mapPage converts a page of domain values into a page of records.
func mapPage[T, R any](p page.Page[T], f func(T) R) page.Page[R] {
	out := page.Page[R]{HasMore: p.HasMore, NextCursor: p.NextCursor, Data: make([]R, len(p.Data))}
	for i, v := range p.Data {
		out.Data[i] = f(v)
	}
	return out
}

type passkeyRecord struct {
	ID         uuid.UUID  `json:"id"`
	InsertedAt time.Time  `json:"inserted_at"`
	Label      *string    `json:"label"`
	LastUsedAt *time.Time `json:"last_used_at"`
	Transports []string   `json:"transports"`
}

func newPasskeyRecord(p identity.Passkey) passkeyRecord {
	out := passkeyRecord{ID: p.ID, InsertedAt: p.InsertedAt, Label: p.Label, LastUsedAt: p.LastUsedAt, Transports: p.Transports}
	if out.Transports == nil {
		out.Transports = []string{}
	}
	return out
}

func (s *server) passkeys(w http.ResponseWriter, r *http.Request) error {
	return listing(w, r, s.pages("passkeys"), s.Identity.Passkeys, identity.PasskeyPageKey, newPasskeyRecord)
}

func (s *server) beginPasskeyRegistration(w http.ResponseWriter, r *http.Request) error {
	if err := noBody(r); err != nil {
		return err
	}
	opts, err := s.Identity.BeginPasskeyRegistration(r.Context(), actorOf(r))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"ceremony_id": opts.CeremonyID, "expires_at": opts.ExpiresAt, "public_key": opts.PublicKey})
}

func (s *server) registerPasskey(w http.ResponseWriter, r *http.Request) error {
	return acting(w, r, http.StatusCreated, s.Identity.RegisterPasskey, newPasskeyRecord)
}

func (s *server) removePasskey(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "passkey_id", "Passkey")
	if err != nil {
		return err
	}
	p, err := s.Identity.RemovePasskey(r.Context(), actorOf(r), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newPasskeyRecord(p))
}
