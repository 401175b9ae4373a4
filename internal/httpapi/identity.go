package httpapi

import (
	"context"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/stepup"
)

// The identity feature's resources: signing in, the person's authenticator
// and passkeys, and the person themself.
var (
	signIns     = resource[identity.SignInResult, signInRecord]{record: newSignInRecord}
	totpSecrets = resource[identity.TOTPSetup, map[string]string]{record: func(res identity.TOTPSetup) map[string]string {
		return map[string]string{"uri": res.URI, "secret_encoded": res.SecretEncoded}
	}}
	totpSetups = resource[identity.TOTPSetup, totpSetupRecord]{record: func(v identity.TOTPSetup) totpSetupRecord { return totpSetupRecord(v) }}
	signedIn   = resource[meRecord, meRecord]{record: func(m meRecord) meRecord { return m }}
	passkeys   = resource[identity.Passkey, passkeyRecord]{at: param{"passkey_id", "Passkey"}, record: newPasskeyRecord,
		pages: "passkeys", key: identity.PasskeyPageKey}
	passkeyCeremonies = resource[identity.PasskeyOptions, map[string]any]{record: func(o identity.PasskeyOptions) map[string]any {
		return map[string]any{"ceremony_id": o.CeremonyID, "expires_at": o.ExpiresAt, "public_key": o.PublicKey}
	}}
)

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

// signIn is written out: wrong passwords are counted by the client address,
// which comes from the connection.
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

type totpSetupRecord struct {
	Enabled       bool      `json:"enabled"`
	InsertedAt    time.Time `json:"inserted_at"`
	SecretEncoded string    `json:"secret_encoded"`
	URI           string    `json:"uri"`
}

// startTOTP starts enrolling an authenticator. Replacing a working one is
// sensitive: whoever holds the session must prove they are the person.
func (s *server) startTOTP(ctx context.Context, a actor.Actor) (identity.TOTPSetup, error) {
	if err := s.StepUp.Require(ctx, a, stepup.GateAuthenticator); err != nil {
		return identity.TOTPSetup{}, err
	}
	return s.Identity.StartTOTPEnrollment(ctx, a)
}

// signOut is written out: it ends the bearer's session, and answers the
// same for a dead token.
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

// me reads the signed-in person, their memberships and identity check.
func (s *server) me(ctx context.Context, a actor.Actor) (meRecord, error) {
	u, err := identity.GetUser(ctx, s.DB.Reader(), a.UserID)
	if err != nil {
		return meRecord{}, err
	}
	ms, err := organization.Memberships(ctx, s.DB.Reader(), a.UserID)
	if err != nil {
		return meRecord{}, err
	}
	check, err := onboarding.CheckOf(ctx, s.DB.Reader(), a.UserID)
	if err != nil {
		return meRecord{}, err
	}
	out := meRecord{User: newUserRecord(&u), Memberships: make([]membershipRecord, len(ms)), IdentityCheck: newIdentityCheckRecord(check)}
	for i, m := range ms {
		out.Memberships[i] = membershipRecord(m)
	}
	out.Session.DeviceID, out.Session.ExpiresAt, out.Session.IdleExpiresAt = a.Session.DeviceID, a.Session.ExpiresAt, a.Session.IdleExpiresAt
	return out, nil
}

type deviceRecord struct {
	ID         uuid.UUID      `json:"id"`
	ThisDevice bool           `json:"this_device"`
	Name       *string        `json:"name"`
	Platform   actor.Platform `json:"platform"`
	InsertedAt time.Time      `json:"inserted_at"`
	LastSeenAt time.Time      `json:"last_seen_at"`
}

// devices is written out: each row's record says whether it is the
// device of the request's session.
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
