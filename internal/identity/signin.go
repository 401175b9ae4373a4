package identity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/watched"
)

// Sign-in limits (docs/api.md, Authentication).
const (
	ChallengeLifetime = 10 * time.Minute
	// MaxCodeFailures wrong codes lock a challenge token for good.
	MaxCodeFailures = 5
	DeviceTrustLife = 30 * 24 * time.Hour
)

// Service signs people in and keeps their sessions.
type Service struct {
	DB       *db.DB
	Clock    clock.Clock
	Keys     *keyring.Keyring
	WebAuthn *webauthn.WebAuthn
	// Guard bounds wrong passwords (guard.go); the zero value bounds nothing.
	Guard PasswordGuard
	// Outbox queues the messages that carry codes (never stored in plaintext).
	Outbox *outbox.Outbox

	sessionsOnce sync.Once
	sessions     *watched.Cache[actor.Actor]
}

// Sign-in outcomes: the status a sign-in step answers.
const (
	StatusAuthenticated     = "authenticated"
	StatusMFARequired       = "mfa_required"
	StatusTOTPSetupRequired = "totp_setup_required"
	StatusWebAuthnRequired  = "webauthn_required"
	StatusMFAFailed         = "mfa_failed"
	StatusChallengeExpired  = "challenge_expired"
)

// SignInRequest is the body of sign-in step 1.
type SignInRequest struct {
	Email      string          `json:"email"`
	Password   string          `json:"password"`
	DeviceID   *string         `json:"device_id"`
	DeviceName *string         `json:"device_name"`
	Platform   *actor.Platform `json:"platform"`
	// Device trust, for the service's own apps only.
	RememberMe     *bool    `json:"remember_me"`
	TrustTransport *string  `json:"trust_transport"`
	TrustTokens    []string `json:"trust_tokens"`
	// ClientAddress is the peer's address, set by the HTTP layer (never
	// from the body): the key of the per-address budget of wrong passwords.
	ClientAddress string `json:"-"`
}

// trustTransports are the ways a trust token can travel back to the app.
var trustTransports = []string{"body"}

// Validate checks the body's fields.
func (r SignInRequest) Validate() error {
	var f apierr.Fields
	f.Check(r.Email != "" && len(r.Email) <= 254, "email", "is required.")
	f.Check(r.Password != "" && len(r.Password) <= 200, "password", "is required (at most 200 characters).")
	if r.DeviceID != nil {
		_, err := uuid.Parse(*r.DeviceID)
		f.Check(err == nil, "device_id", "must be the id of a device from GET /api/v1/devices.")
	}
	if r.DeviceName != nil {
		f.Check(len(*r.DeviceName) <= 100, "device_name", "must be at most 100 characters.")
	}
	if r.Platform != nil {
		f.Check(slices.Contains(actor.Platforms, *r.Platform), "platform", "must be web, ios, android or cli.")
	}
	trust := r.RememberMe != nil || r.TrustTransport != nil || r.TrustTokens != nil
	if trust && !r.platform().IsApp() {
		msg := "device trust is only for the service's own ios and android apps; servers must leave it unset."
		for field, set := range map[string]bool{"remember_me": r.RememberMe != nil, "trust_transport": r.TrustTransport != nil, "trust_tokens": r.TrustTokens != nil} {
			if set {
				f.Add(field, msg)
			}
		}
	}
	if r.TrustTransport != nil {
		f.Check(slices.Contains(trustTransports, *r.TrustTransport), "trust_transport", "must be body.")
	}
	f.Check(len(r.TrustTokens) <= 10, "trust_tokens", "must hold at most 10 tokens.")
	return f.Err()
}

func (r SignInRequest) platform() actor.Platform {
	if r.Platform == nil {
		return actor.PlatformWeb
	}
	return *r.Platform
}

// SignInResult answers both sign-in calls.
type SignInResult struct {
	Status         string
	Token          *string
	ChallengeToken *string
	DeviceID       uuid.UUID
	User           *User
	// TrustToken skips the code on this device for 30 days (apps with remember_me only).
	TrustToken *string
}

var errInvalidCredentials = apierr.New(apierr.InvalidCredentials, "The email or password is not correct.")

// dummyHash is checked when the email is unknown, so an unknown email and a
// wrong password take the same time and give the same answer.
var dummyHash = sync.OnceValue(func() string { return HashPassword("not the password of anyone") })

// SignIn is step 1: email and password, and what must happen next. Wrong
// passwords are bounded per (email, client address) and slowed per email
// (guard.go); a sign-in from a known device of the person is never refused.
func (s *Service) SignIn(ctx context.Context, req SignInRequest) (SignInResult, error) {
	var cred struct {
		id          uuid.UUID
		hash        string
		totpEnabled bool
		passkeys    int
	}
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT u.id, u.password_hash, u.totp_enabled,
		       (SELECT count(*) FROM passkeys p WHERE p.user_id = u.id)
		FROM users u WHERE u.email_normalized = $1`, NormalizeEmail(req.Email)).
		Scan(&cred.id, &cred.hash, &cred.totpEnabled, &cred.passkeys)
	found := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return SignInResult{}, err
	}
	knownDevice := false
	if found && req.DeviceID != nil {
		if _, knownDevice, err = findDevice(ctx, s.DB.Reader(), cred.id, uuid.MustParse(*req.DeviceID)); err != nil {
			return SignInResult{}, err
		}
	}
	// The attempt is written as a wrong password before the password is
	// checked (guard.go); a right password clears it.
	at, err := s.guard(ctx, s.failureKeys(req.Email, req.ClientAddress), knownDevice)
	if err != nil {
		return SignInResult{}, err
	}
	if !found {
		_, _ = CheckPassword(dummyHash(), req.Password)
		return SignInResult{}, errInvalidCredentials
	}
	if ok, err := CheckPassword(cred.hash, req.Password); err != nil || !ok {
		return SignInResult{}, errInvalidCredentials
	}

	var out SignInResult
	err = s.DB.Tx(ctx, func(tx *db.Tx) error {
		if err := clearFailures(ctx, tx, at.keys); err != nil {
			return err
		}
		device, err := s.signInDevice(ctx, tx, cred.id, req)
		if err != nil {
			return err
		}
		out.DeviceID = device.ID
		remember := req.RememberMe != nil && *req.RememberMe
		if cred.totpEnabled {
			if s.trusted(ctx, tx, cred.id, device.ID, req.TrustTokens) {
				return s.authenticate(ctx, tx, cred.id, device.ID, false, &out)
			}
			return s.challenge(ctx, tx, cred.id, device.ID, "mfa", remember, StatusMFARequired, &out)
		}
		requiresTOTP, err := organization.RequiresTOTPFor(ctx, tx, cred.id)
		if err != nil {
			return err
		}
		switch {
		case requiresTOTP:
			return s.challenge(ctx, tx, cred.id, device.ID, "totp_setup", remember, StatusTOTPSetupRequired, &out)
		case cred.passkeys > 0:
			// A passkey is bound to the service's own web address and cannot complete sign-in
			// through the API: an authenticator app must be added.
			return s.challenge(ctx, tx, cred.id, device.ID, "totp_setup", remember, StatusWebAuthnRequired, &out)
		default:
			return s.authenticate(ctx, tx, cred.id, device.ID, false, &out)
		}
	})
	if err != nil {
		s.forget(ctx, at) // the password was right: not a failure
	}
	return out, err
}

// signInDevice reuses the person's device named by device_id, or records a
// new one and tells the person about a sign-in from it.
func (s *Service) signInDevice(ctx context.Context, tx *db.Tx, userID uuid.UUID, req SignInRequest) (Device, error) {
	now := tx.Now()
	if req.DeviceID != nil {
		d, ok, err := findDevice(ctx, tx, userID, uuid.MustParse(*req.DeviceID))
		if err != nil || ok {
			return d, err
		}
		// Another person's or an unknown device id: a new device, as without one.
	}
	d, err := createDevice(ctx, tx, userID, req.DeviceName, req.platform())
	if err != nil {
		return d, err
	}
	name := string(d.Platform)
	if d.Name != nil {
		name = fmt.Sprintf("%s (%s)", *d.Name, d.Platform)
	}
	_, err = outbox.Queue(ctx, tx, outbox.Message{
		UserID:  &userID,
		Kind:    outbox.NewDevice,
		Channel: outbox.ChannelEmail,
		Subject: "New sign-in to Strongroom",
		Body: fmt.Sprintf("Your password was used to sign in from a new device, %s, at %s UTC. If this was not you, change your password and contact support.",
			name, now.Format("2006-01-02 15:04")),
	})
	return d, err
}

// challenge issues a challenge token for the second call.
func (s *Service) challenge(ctx context.Context, tx *db.Tx, userID, deviceID uuid.UUID, purpose string, trust bool, status string, out *SignInResult) error {
	now := tx.Now()
	token := challengePrefix + keyring.RandomToken(32)
	_, err := tx.ExecContext(ctx, `
		INSERT INTO sign_in_challenges (id, token_hash, user_id, device_id, purpose, trust_device, expires_at, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		uuid.Must(uuid.NewV7()), s.Keys.Hash(challengePurpose, token), userID, deviceID, purpose, trust, now.Add(ChallengeLifetime), now)
	out.Status, out.ChallengeToken = status, &token
	return err
}

// authenticate starts the session (and, for apps that asked, device trust).
func (s *Service) authenticate(ctx context.Context, tx *db.Tx, userID, deviceID uuid.UUID, trust bool, out *SignInResult) error {
	now := tx.Now()
	sessionID, token, err := startSession(ctx, tx, s.Keys, userID, deviceID)
	if err != nil {
		return err
	}
	u, err := GetUser(ctx, tx, userID)
	if err != nil {
		return err
	}
	if err := s.recordSignIn(ctx, tx, u, sessionID); err != nil {
		return err
	}
	out.Status, out.Token, out.User, out.DeviceID = StatusAuthenticated, &token, &u, deviceID
	if trust {
		t := trustPrefix + keyring.RandomToken(32)
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO device_trusts (id, token_hash, user_id, device_id, expires_at, inserted_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			uuid.Must(uuid.NewV7()), s.Keys.Hash(trustPurpose, t), userID, deviceID, now.Add(DeviceTrustLife), now); err != nil {
			return err
		}
		out.TrustToken = &t
	}
	return nil
}

// trusted reports whether one of tokens is a live trust token of this person on this device.
func (s *Service) trusted(ctx context.Context, tx *db.Tx, userID, deviceID uuid.UUID, tokens []string) bool {
	now := tx.Now()
	for _, t := range tokens {
		if !strings.HasPrefix(t, trustPrefix) {
			continue
		}
		var n int
		err := tx.QueryRowContext(ctx, `SELECT count(*) FROM device_trusts WHERE token_hash = $1 AND user_id = $2 AND device_id = $3 AND expires_at > $4`,
			s.Keys.Hash(trustPurpose, t), userID, deviceID, now).Scan(&n)
		if err == nil && n > 0 {
			return true
		}
	}
	return false
}

// MFARequest is the body of sign-in step 2 and of sign-in authenticator activation.
type MFARequest struct {
	ChallengeToken string `json:"challenge_token"`
	Code           string `json:"code"`
}

// Validate checks the body's fields.
func (r MFARequest) Validate() error {
	var f apierr.Fields
	f.Check(r.ChallengeToken != "" && len(r.ChallengeToken) <= 200, "challenge_token", "is required.")
	f.Check(r.Code != "" && len(r.Code) <= 20, "code", "is required: the six-digit code of the authenticator app.")
	return f.Err()
}

// signInChallenge is a live challenge row, locked for the transaction.
type signInChallenge struct {
	id, userID, deviceID uuid.UUID
	purpose              string
	failures             int
	pendingSecret        *string
	trust                bool
	expiresAt            time.Time
	consumed             bool
}

// loadChallenge finds token's challenge of one of purposes and locks it.
func (s *Service) loadChallenge(ctx context.Context, tx *db.Tx, token string, purposes ...string) (signInChallenge, bool, error) {
	var c signInChallenge
	var consumedAt *time.Time
	err := tx.QueryRowContext(ctx, `
		SELECT id, user_id, device_id, purpose, failed_attempts, pending_totp_secret, trust_device, expires_at, consumed_at
		FROM sign_in_challenges WHERE token_hash = $1`+s.DB.ForUpdate(), s.Keys.Hash(challengePurpose, token)).
		Scan(&c.id, &c.userID, &c.deviceID, &c.purpose, &c.failures, &c.pendingSecret, &c.trust, &c.expiresAt, &consumedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	c.consumed = consumedAt != nil
	return c, err == nil && slices.Contains(purposes, c.purpose), err
}

// settle records a wrong code (failed) or spends the challenge (success).
func (s *Service) settle(ctx context.Context, tx *db.Tx, c signInChallenge, ok bool, out *SignInResult) error {
	now := tx.Now()
	out.DeviceID = c.deviceID
	if !ok {
		out.Status = StatusMFAFailed
		_, err := tx.ExecContext(ctx, `UPDATE sign_in_challenges SET failed_attempts = failed_attempts + 1 WHERE id = $1`, c.id)
		return err
	}
	res, err := tx.ExecContext(ctx, `UPDATE sign_in_challenges SET consumed_at = $2 WHERE id = $1 AND consumed_at IS NULL`, c.id, now)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		out.Status = StatusChallengeExpired
		return nil
	}
	return s.authenticate(ctx, tx, c.userID, c.deviceID, c.trust, out)
}

// blocked tells the outcome for a challenge that cannot take a code in tx
// (expired by tx.Now(), spent, locked), if any.
func (c signInChallenge) blocked(found bool, tx *db.Tx) string {
	switch {
	case !found || c.consumed || !tx.Now().Before(c.expiresAt):
		return StatusChallengeExpired
	case c.failures >= MaxCodeFailures:
		return StatusMFAFailed
	}
	return ""
}

// MFA is step 2: the authenticator code for a challenge token.
func (s *Service) MFA(ctx context.Context, req MFARequest) (SignInResult, error) {
	return s.answerChallenge(ctx, req.ChallengeToken, "mfa", func(tx *db.Tx, c signInChallenge, out *SignInResult) error {
		var sealed string
		if err := tx.QueryRowContext(ctx, `SELECT totp_secret FROM users WHERE id = $1 AND totp_enabled`, c.userID).Scan(&sealed); err != nil {
			return err
		}
		ok, err := checkTOTP(ctx, tx, s.Keys, c.userID, sealed, req.Code)
		if err != nil {
			return err
		}
		return s.settle(ctx, tx, c, ok, out)
	})
}

// answerChallenge runs answer, in one transaction, on the challenge of
// token with purpose; a challenge that cannot take a code (expired, spent,
// locked) answers that status instead.
func (s *Service) answerChallenge(ctx context.Context, token, purpose string, answer func(tx *db.Tx, c signInChallenge, out *SignInResult) error) (SignInResult, error) {
	var out SignInResult
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		c, found, err := s.loadChallenge(ctx, tx, token, purpose)
		if err != nil {
			return err
		}
		if status := c.blocked(found, tx); status != "" {
			out.Status, out.DeviceID = status, c.deviceID
			return nil
		}
		return answer(tx, c, &out)
	})
	return out, err
}

// recordSignIn appends session.created to the audit log of each
// organization the person belongs to: a sign-in belongs to no organization,
// and each one's owners see who entered (docs/api.md, Audit log). A failed
// sign-in records nothing there: no one is known to have acted (the
// failures are counted per email and address instead).
func (s *Service) recordSignIn(ctx context.Context, tx *db.Tx, u User, sessionID uuid.UUID) error {
	return audit.RecordForPerson(ctx, tx, u.ID, audit.User(u.ID, DisplayName(u.FirstName, u.LastName, u.Email)),
		audit.SessionCreated, audit.To("session", sessionID))
}
