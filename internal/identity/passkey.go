package identity

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// CeremonyLifetime bounds a passkey registration between its two calls.
const CeremonyLifetime = 5 * time.Minute

// NewWebAuthn configures passkeys for the service's web address (publicURL):
// a passkey is bound to that origin and cannot be used from anywhere else.
func NewWebAuthn(publicURL string) (*webauthn.WebAuthn, error) {
	host := publicURL
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	return webauthn.New(&webauthn.Config{RPID: host, RPDisplayName: "Strongroom", RPOrigins: []string{strings.TrimRight(publicURL, "/")}})
}

// Passkey is a registered WebAuthn credential (its key material stays inside).
type Passkey struct {
	ID         uuid.UUID
	Label      *string
	Transports []string
	InsertedAt time.Time
	LastUsedAt *time.Time
}

// webauthnUser adapts a user to go-webauthn.
type webauthnUser struct {
	user        User
	credentials []webauthn.Credential
}

func (u webauthnUser) WebAuthnID() []byte                         { return u.user.ID[:] }
func (u webauthnUser) WebAuthnName() string                       { return u.user.Email }
func (u webauthnUser) WebAuthnDisplayName() string                { return u.user.Email }
func (u webauthnUser) WebAuthnCredentials() []webauthn.Credential { return u.credentials }

func (s *Service) webauthnUser(ctx context.Context, q db.Reader, userID uuid.UUID) (webauthnUser, error) {
	u, err := GetUser(ctx, q, userID)
	if err != nil {
		return webauthnUser{}, err
	}
	rows, err := q.QueryContext(ctx, `SELECT credential FROM passkeys WHERE user_id = $1`, userID)
	if err != nil {
		return webauthnUser{}, err
	}
	defer rows.Close()
	out := webauthnUser{user: u}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return out, err
		}
		var c webauthn.Credential
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			return out, err
		}
		out.credentials = append(out.credentials, c)
	}
	return out, rows.Err()
}

// PasskeyOptions starts a registration: the options for navigator.credentials.create.
type PasskeyOptions struct {
	CeremonyID uuid.UUID
	ExpiresAt  time.Time
	PublicKey  protocol.PublicKeyCredentialCreationOptions
}

// BeginPasskeyRegistration starts registering a passkey for the actor.
func (s *Service) BeginPasskeyRegistration(ctx context.Context, a actor.Actor) (PasskeyOptions, error) {
	var out PasskeyOptions
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		user, err := s.webauthnUser(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		creation, session, err := s.WebAuthn.BeginRegistration(user, webauthn.WithExclusions(webauthn.Credentials(user.credentials).CredentialDescriptors()))
		if err != nil {
			return err
		}
		// Expiry is ours to enforce, on the injected clock.
		session.Expires = time.Time{}
		raw, err := json.Marshal(session)
		if err != nil {
			return err
		}
		out = PasskeyOptions{CeremonyID: uuid.Must(uuid.NewV7()), ExpiresAt: now.Add(CeremonyLifetime), PublicKey: creation.Response}
		_, err = tx.ExecContext(ctx, `INSERT INTO passkey_ceremonies (id, user_id, session_data, expires_at, inserted_at) VALUES ($1, $2, $3, $4, $5)`,
			out.CeremonyID, a.UserID, string(raw), out.ExpiresAt, now)
		return err
	})
	return out, err
}

// RegisterPasskeyRequest finishes a registration.
type RegisterPasskeyRequest struct {
	CeremonyID string          `json:"ceremony_id"`
	Label      *string         `json:"label"`
	Credential json.RawMessage `json:"credential"`
}

// Validate checks the body's fields.
func (r RegisterPasskeyRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.CeremonyID)
	f.Check(err == nil, "ceremony_id", "is required: the ceremony_id of the registration options.")
	if r.Label != nil {
		f.Check(len(*r.Label) <= 100, "label", "must be at most 100 characters.")
	}
	f.Check(len(r.Credential) > 0 && r.Credential[0] == '{', "credential", "is required: the PublicKeyCredential from navigator.credentials.create.")
	return f.Err()
}

var errPasskeyRefused = apierr.New(apierr.UnprocessableEntity, "The passkey could not be registered: the ceremony expired or the authenticator's response was not valid. Start again.")

// RegisterPasskey verifies the authenticator's attestation and stores the passkey.
func (s *Service) RegisterPasskey(ctx context.Context, a actor.Actor, req RegisterPasskeyRequest) (Passkey, error) {
	var out Passkey
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		var raw string
		// Deleting the ceremony makes it one-use whatever the outcome.
		err := tx.QueryRowContext(ctx, `DELETE FROM passkey_ceremonies WHERE id = $1 AND user_id = $2 AND expires_at > $3 RETURNING session_data`,
			uuid.MustParse(req.CeremonyID), a.UserID, now).Scan(&raw)
		if errors.Is(err, sql.ErrNoRows) {
			return errPasskeyRefused
		}
		if err != nil {
			return err
		}
		var session webauthn.SessionData
		if err := json.Unmarshal([]byte(raw), &session); err != nil {
			return err
		}
		parsed, err := protocol.ParseCredentialCreationResponseBody(bytes.NewReader(req.Credential))
		if err != nil {
			return apierr.InvalidField("credential", "is not a valid WebAuthn registration response.")
		}
		user, err := s.webauthnUser(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		cred, err := s.WebAuthn.CreateCredential(user, session, parsed)
		if err != nil {
			return errPasskeyRefused
		}
		transports := make([]string, len(cred.Transport))
		for i, t := range cred.Transport {
			transports[i] = string(t)
		}
		stored, err := json.Marshal(cred)
		if err != nil {
			return err
		}
		tj, _ := json.Marshal(transports)
		out = Passkey{ID: uuid.Must(uuid.NewV7()), Label: req.Label, Transports: transports, InsertedAt: now}
		_, err = tx.ExecContext(ctx, `
			INSERT INTO passkeys (id, user_id, credential_id, label, transports, credential, inserted_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			out.ID, a.UserID, base64.RawURLEncoding.EncodeToString(cred.ID), req.Label, string(tj), string(stored), now)
		if db.IsConstraint(err, "passkeys_credential_key") {
			return apierr.New(apierr.Conflict, "This passkey is already registered.")
		}
		if err != nil {
			return err
		}
		return audit.RecordForPerson(ctx, tx, a.UserID, audit.OriginOf(ctx).Actor, audit.PasskeyRegistered, audit.To("passkey", out.ID))
	})
	return out, err
}

const passkeyColumns = `id, label, transports, inserted_at, last_used_at`

func scanPasskey(row interface{ Scan(...any) error }) (Passkey, error) {
	var p Passkey
	var transports string
	if err := row.Scan(&p.ID, &p.Label, &transports, &p.InsertedAt, &p.LastUsedAt); err != nil {
		return p, err
	}
	p.InsertedAt = p.InsertedAt.UTC()
	if p.LastUsedAt != nil {
		t := p.LastUsedAt.UTC()
		p.LastUsedAt = &t
	}
	err := json.Unmarshal([]byte(transports), &p.Transports)
	return p, err
}

// Passkeys lists the actor's passkeys, newest first.
func (s *Service) Passkeys(ctx context.Context, a actor.Actor, req page.Request) ([]Passkey, error) {
	return db.QueryAll(ctx, s.DB.Reader(), scanPasskey, `SELECT `+passkeyColumns+` FROM passkeys
		WHERE user_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, a.UserID, req.AfterUUID(), req.Limit+1)
}

// PasskeyPageKey positions a page after p.
func PasskeyPageKey(p Passkey) page.Key { return page.Key{ID: p.ID.String()} }

// RemovePasskey deletes one of the actor's passkeys; another person's is not found.
func (s *Service) RemovePasskey(ctx context.Context, a actor.Actor, id uuid.UUID) (Passkey, error) {
	var out Passkey
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		p, err := scanPasskey(tx.QueryRowContext(ctx, `DELETE FROM passkeys WHERE id = $1 AND user_id = $2 RETURNING `+passkeyColumns, id, a.UserID))
		if errors.Is(err, sql.ErrNoRows) {
			return apierr.NotFoundf("Passkey")
		}
		out = p
		return err
	})
	return out, err
}

// AssertionOptions are the passkey options of a step-up challenge (error.step_up).
type AssertionOptions struct {
	AllowCredentials []AllowedCredential `json:"allow_credentials"`
	Challenge        string              `json:"challenge"`
	ChallengeID      uuid.UUID           `json:"challenge_id"`
	RPID             string              `json:"rp_id"`
	Timeout          int                 `json:"timeout"`
	UserVerification string              `json:"user_verification"`
}

// AllowedCredential names one passkey the assertion may use.
type AllowedCredential struct {
	ID         string   `json:"id"`
	Transports []string `json:"transports"`
	Type       string   `json:"type"`
}

// PasskeyAssertion starts a passkey assertion for userID when they hold
// passkeys (nil otherwise), keeping its ceremony for the same lifetime as registrations.
func (s *Service) PasskeyAssertion(ctx context.Context, q db.Querier, userID uuid.UUID) (*AssertionOptions, error) {
	user, err := s.webauthnUser(ctx, q, userID)
	if err != nil || len(user.credentials) == 0 {
		return nil, err
	}
	assertion, session, err := s.WebAuthn.BeginLogin(user)
	if err != nil {
		return nil, err
	}
	session.Expires = time.Time{}
	raw, err := json.Marshal(session)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	opts := assertion.Response
	out := &AssertionOptions{
		Challenge: opts.Challenge.String(), ChallengeID: uuid.Must(uuid.NewV7()), RPID: opts.RelyingPartyID,
		Timeout: opts.Timeout, UserVerification: string(opts.UserVerification), AllowCredentials: []AllowedCredential{},
	}
	if out.Timeout == 0 {
		out.Timeout = int(CeremonyLifetime / time.Millisecond)
	}
	for _, c := range opts.AllowedCredentials {
		transports := make([]string, len(c.Transport))
		for i, t := range c.Transport {
			transports[i] = string(t)
		}
		out.AllowCredentials = append(out.AllowCredentials, AllowedCredential{
			ID: base64.RawURLEncoding.EncodeToString(c.CredentialID), Transports: transports, Type: string(c.Type)})
	}
	_, err = q.ExecContext(ctx, `INSERT INTO passkey_ceremonies (id, user_id, session_data, expires_at, inserted_at) VALUES ($1, $2, $3, $4, $5)`,
		out.ChallengeID, userID, string(raw), now.Add(CeremonyLifetime), now)
	return out, err
}
