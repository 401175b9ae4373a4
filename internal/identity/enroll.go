package identity

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
)

// EnrollmentLifetime bounds how long a new authenticator seed waits for activation.
const EnrollmentLifetime = 10 * time.Minute

// TOTPSetup is a new authenticator seed to show to the person.
type TOTPSetup struct {
	Enabled       bool
	InsertedAt    time.Time
	SecretEncoded string
	URI           string
}

// ChallengeTokenRequest is the body of sign-in authenticator setup.
type ChallengeTokenRequest struct {
	ChallengeToken string `json:"challenge_token"`
}

// Validate checks the body's fields.
func (r ChallengeTokenRequest) Validate() error {
	var f apierr.Fields
	f.Check(r.ChallengeToken != "" && len(r.ChallengeToken) <= 200, "challenge_token", "is required.")
	return f.Err()
}

var errSetupChallenge = apierr.New(apierr.NotAuthenticated, "The sign-in challenge has expired or is not for authenticator setup. Please sign in again.")

// newSealedAuthenticator generates a seed for userID and seals it for storage.
func (s *Service) newSealedAuthenticator(ctx context.Context, tx *db.Tx, userID uuid.UUID) (Authenticator, string, error) {
	u, err := GetUser(ctx, tx, userID)
	if err != nil {
		return Authenticator{}, "", err
	}
	auth, err := NewAuthenticator(u.Email)
	if err != nil {
		return Authenticator{}, "", err
	}
	sealed, err := s.Keys.Seal(totpPurpose, []byte(auth.Secret))
	return auth, sealed, err
}

// SignInTOTPSetup generates the seed for a person who must set up an
// authenticator during sign-in (status totp_setup_required or webauthn_required).
func (s *Service) SignInTOTPSetup(ctx context.Context, req ChallengeTokenRequest) (TOTPSetup, error) {
	var out TOTPSetup
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		c, found, err := s.loadChallenge(ctx, tx, req.ChallengeToken, "totp_setup")
		if err != nil {
			return err
		}
		if c.blocked(found, tx) != "" {
			return errSetupChallenge
		}
		auth, sealed, err := s.newSealedAuthenticator(ctx, tx, c.userID)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE sign_in_challenges SET pending_totp_secret = $2 WHERE id = $1`, c.id, sealed); err != nil {
			return err
		}
		out = TOTPSetup{InsertedAt: now, SecretEncoded: auth.Secret, URI: auth.URI}
		return nil
	})
	return out, err
}

// SignInTOTPActivate enables the seed offered during sign-in with a code from
// the app and signs the person in; it answers like MFA.
func (s *Service) SignInTOTPActivate(ctx context.Context, req MFARequest) (SignInResult, error) {
	return s.answerChallenge(ctx, req.ChallengeToken, "totp_setup", func(tx *db.Tx, c signInChallenge, out *SignInResult) error {
		if c.pendingSecret == nil {
			return apierr.InvalidField("challenge_token", "call authenticator setup with this challenge token first.")
		}
		ok, err := checkTOTP(ctx, tx, s.Keys, c.userID, *c.pendingSecret, req.Code)
		if err != nil {
			return err
		}
		if ok {
			if err := enableTOTP(ctx, tx, c.userID, *c.pendingSecret); err != nil {
				return err
			}
		}
		return s.settle(ctx, tx, c, ok, out)
	})
}

func enableTOTP(ctx context.Context, tx *db.Tx, userID uuid.UUID, sealed string) error {
	now := tx.Now()
	_, err := tx.ExecContext(ctx, `UPDATE users SET totp_secret = $2, totp_enabled = TRUE, updated_at = $3 WHERE id = $1`, userID, sealed, now)
	return err
}

// enrollmentPurpose keys the hashes of messaging-app codes.
const enrollmentPurpose = "totp-enrollment-code"

// StartTOTPEnrollment creates a pending seed for a signed-in person and sends
// a confirmation code through the messaging app. Replacing an enabled
// authenticator needs step-up; the caller checks that first.
func (s *Service) StartTOTPEnrollment(ctx context.Context, a actor.Actor) (TOTPSetup, error) {
	var out TOTPSetup
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		auth, sealed, err := s.newSealedAuthenticator(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		code := RandomDigits(6)
		// A new setup replaces any earlier one still waiting.
		if _, err := tx.ExecContext(ctx, `UPDATE totp_enrollments SET consumed_at = $2 WHERE user_id = $1 AND consumed_at IS NULL`, a.UserID, now); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `
			INSERT INTO totp_enrollments (id, user_id, secret, messaging_code_hash, expires_at, inserted_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			uuid.Must(uuid.NewV7()), a.UserID, sealed, s.Keys.Hash(enrollmentPurpose, code), now.Add(EnrollmentLifetime), now); err != nil {
			return err
		}
		if _, err := s.Outbox.Queue(ctx, tx, outbox.Message{
			UserID: &a.UserID, Kind: outbox.TOTPActivationCode, Channel: outbox.ChannelMessaging,
			Subject: "Your Strongroom authenticator code",
			Body:    fmt.Sprintf("Your code to confirm your new authenticator app is %s. It expires in 10 minutes.", code),
			Code:    &code,
		}); err != nil {
			return err
		}
		out = TOTPSetup{InsertedAt: now, SecretEncoded: auth.Secret, URI: auth.URI}
		return nil
	})
	return out, err
}

// ActivateRequest is the body of signed-in authenticator activation.
type ActivateRequest struct {
	Code          string `json:"code"`
	MessagingCode string `json:"messaging_code"`
}

// Validate checks the body's fields.
func (r ActivateRequest) Validate() error {
	var f apierr.Fields
	f.Check(r.Code != "" && len(r.Code) <= 20, "code", "is required: the six-digit code of the authenticator app.")
	f.Check(r.MessagingCode != "" && len(r.MessagingCode) <= 20, "messaging_code", "is required: the code sent through the messaging app.")
	return f.Err()
}

var errInvalidCode = apierr.New(apierr.InvalidCode, "The code is not correct or has already been used.")

// ActivateTOTP enables the pending seed when both the app's code and the
// messaging-app code are right. Five wrong attempts end the setup.
func (s *Service) ActivateTOTP(ctx context.Context, a actor.Actor, req ActivateRequest) (TOTPSetup, error) {
	var out TOTPSetup
	var wrong bool
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		var id uuid.UUID
		var sealed, codeHash string
		var failures int
		err := tx.QueryRowContext(ctx, `
			SELECT id, secret, messaging_code_hash, failed_attempts, inserted_at FROM totp_enrollments
			WHERE user_id = $1 AND consumed_at IS NULL AND expires_at > $2 AND failed_attempts < $3
			ORDER BY inserted_at DESC LIMIT 1`+s.DB.ForUpdate(), a.UserID, now, MaxCodeFailures).
			Scan(&id, &sealed, &codeHash, &failures, &out.InsertedAt)
		if errors.Is(err, sql.ErrNoRows) {
			return apierr.New(apierr.InvalidCode, "There is no authenticator setup waiting; start the setup again.")
		}
		if err != nil {
			return err
		}
		ok := keyring.Equal(codeHash, s.Keys.Hash(enrollmentPurpose, req.MessagingCode))
		if ok {
			if ok, err = checkTOTP(ctx, tx, s.Keys, a.UserID, sealed, req.Code); err != nil {
				return err
			}
		}
		if !ok {
			wrong = true
			_, err := tx.ExecContext(ctx, `UPDATE totp_enrollments SET failed_attempts = failed_attempts + 1 WHERE id = $1`, id)
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE totp_enrollments SET consumed_at = $2 WHERE id = $1`, id, now); err != nil {
			return err
		}
		if err := enableTOTP(ctx, tx, a.UserID, sealed); err != nil {
			return err
		}
		if err := audit.RecordForPerson(ctx, tx, a.UserID, audit.OriginOf(ctx).Actor, audit.AuthenticatorActivated, audit.To("user", a.UserID)); err != nil {
			return err
		}
		secret, err := s.Keys.Open(totpPurpose, sealed)
		if err != nil {
			return err
		}
		u, err := GetUser(ctx, tx, a.UserID)
		if err != nil {
			return err
		}
		out.Enabled, out.SecretEncoded, out.URI = true, string(secret), AuthenticatorURI(u.Email, string(secret))
		out.InsertedAt = out.InsertedAt.UTC()
		return nil
	})
	if err == nil && wrong {
		return TOTPSetup{}, errInvalidCode
	}
	return out, err
}

// RandomDigits returns n random decimal digits (crypto/rand), for codes people type.
func RandomDigits(n int) string {
	max := big.NewInt(1)
	for range n {
		max.Mul(max, big.NewInt(10))
	}
	v, err := rand.Int(rand.Reader, max)
	if err != nil {
		panic(err)
	}
	return fmt.Sprintf("%0*d", n, v)
}
