package stepup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/outbox"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// sudo is a sudo session with its step-up authentication, read for update.
type sudo struct {
	id, sessionID, userID, stepUpID uuid.UUID
	purpose, status                 string
	approvalID                      *uuid.UUID
	windowEnd                       *time.Time
	stepUpExpires                   time.Time
	failures                        int
	emailCodeHash                   *string
	emailCodeExpires                *time.Time
	methods                         []string
}

var errSudoNotFound = apierr.NotFoundf("Step-up")

// loadSudo reads a sudo session by its id or its step-up authentication's id,
// after moving stale states on, and locks it. A sudo session of another
// bearer session is not found (spec 4.6).
func (s *Service) loadSudo(ctx context.Context, tx *db.Tx, a actor.Actor, column string, id uuid.UUID) (sudo, error) {
	now := s.Clock.Now()
	if err := s.expireStale(ctx, tx, now, a.UserID); err != nil {
		return sudo{}, err
	}
	var x sudo
	var methods string
	err := tx.QueryRowContext(ctx, `
		SELECT ss.id, ss.session_id, ss.user_id, su.id, ss.purpose, ss.status, ss.approval_id, ss.expires_at,
		       su.expires_at, su.failed_attempts, su.email_code_hash, su.email_code_expires_at, su.methods
		FROM sudo_sessions ss JOIN step_up_authentications su ON su.sudo_session_id = ss.id
		WHERE `+column+` = $1 AND ss.session_id = $2`+s.DB.ForUpdate(), id, a.Session.ID).
		Scan(&x.id, &x.sessionID, &x.userID, &x.stepUpID, &x.purpose, &x.status, &x.approvalID, &x.windowEnd,
			&x.stepUpExpires, &x.failures, &x.emailCodeHash, &x.emailCodeExpires, &methods)
	if errors.Is(err, sql.ErrNoRows) {
		return x, errSudoNotFound
	}
	x.methods = strings.Split(methods, ",")
	return x, err
}

// expireStale moves on, for one person, every state whose time is up:
// pending challenges past their expiry, pending step-ups whose verification
// ran out, and sudo windows past their end. Reading through it is what makes
// the state machines follow the (manual) clock.
func (s *Service) expireStale(ctx context.Context, tx *db.Tx, now time.Time, userID uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, `
		UPDATE assurance_challenges SET status = 'expired', decided_at = $2
		WHERE user_id = $1 AND status = 'pending' AND expires_at <= $2`, userID, now); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE sudo_sessions SET status = 'expired', updated_at = $2
		WHERE user_id = $1 AND (
		      (status = 'active' AND expires_at <= $2)
		   OR (status = 'pending' AND id IN (SELECT sudo_session_id FROM step_up_authentications WHERE user_id = $1 AND expires_at <= $2)))`,
		userID, now)
	return err
}

// Status is StepUpStatus (spec 2.9).
type Status struct {
	Status    string     `json:"status"`
	Active    bool       `json:"active"`
	ExpiresAt *time.Time `json:"expires_at"`
}

func (x sudo) view() Status {
	st := Status{Status: x.status, Active: x.status == StatusActive}
	if x.windowEnd != nil {
		t := x.windowEnd.UTC()
		st.ExpiresAt = &t
	}
	return st
}

// GetStatus reports a sudo session of the bearer session, for polling.
func (s *Service) GetStatus(ctx context.Context, a actor.Actor, id uuid.UUID) (Status, error) {
	var out Status
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		x, err := s.loadSudo(ctx, tx, a, "ss.id", id)
		out = x.view()
		return err
	})
	return out, err
}

// activate opens the sudo window of a pending step-up and settles its
// challenge as satisfied. False when the step-up was no longer pending.
func (s *Service) activate(ctx context.Context, tx *db.Tx, now time.Time, x sudo, method string) (bool, error) {
	res, err := tx.ExecContext(ctx, `
		UPDATE sudo_sessions SET status = 'active', expires_at = $2, updated_at = $3 WHERE id = $1 AND status = 'pending'`,
		x.id, now.Add(WindowLifetime), now)
	if err != nil {
		return false, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE step_up_authentications SET completed_method = $2, completed_at = $3 WHERE id = $1`,
		x.stepUpID, method, now); err != nil {
		return false, err
	}
	_, err = tx.ExecContext(ctx, `
		UPDATE assurance_challenges SET status = 'satisfied', decided_at = $2 WHERE step_up_authentication_id = $1 AND status = 'pending'`,
		x.stepUpID, now)
	return err == nil, err
}

// end moves a pending or active step-up to status (declined or expired),
// taking its pending challenge along.
func (s *Service) end(ctx context.Context, tx *db.Tx, now time.Time, sudoID, stepUpID uuid.UUID, status string) error {
	if _, err := tx.ExecContext(ctx, `
		UPDATE sudo_sessions SET status = $2, updated_at = $3 WHERE id = $1 AND status IN ('pending', 'active')`, sudoID, status, now); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE assurance_challenges SET status = $2, decided_at = $3 WHERE step_up_authentication_id = $1 AND status = 'pending'`,
		stepUpID, status, now)
	return err
}

// CompleteRequest is the body of completeStepUp.
type CompleteRequest struct {
	SudoSessionID string `json:"sudo_session_id"`
	Method        string `json:"method"`
	Code          string `json:"code"`
}

// Validate checks the body's fields.
func (r CompleteRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.SudoSessionID)
	f.Check(err == nil, "sudo_session_id", "is required: the id of error.step_up.")
	f.Check(r.Method == MethodTOTP || r.Method == MethodEmail, "method", "must be totp or email.")
	f.Check(r.Code != "" && len(r.Code) <= 20, "code", "is required.")
	return f.Err()
}

var errInvalidCode = apierr.New(apierr.InvalidCode, "The code is not correct, has expired or has already been used.")

// Complete answers a step-up with an authenticator code or the emailed code.
// Wrong codes count twice: the fifth on one step-up ends it, and the
// MaxWrongCodes-th of the person within a day locks their step-up
// (rate_limited with Retry-After until the lockout ends).
func (s *Service) Complete(ctx context.Context, a actor.Actor, r CompleteRequest) (Status, error) {
	var out Status
	var wrong error
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		if err := s.lockGuessing(ctx, tx, a.UserID, now); err != nil {
			return err
		}
		x, err := s.loadSudo(ctx, tx, a, "ss.id", uuid.MustParse(r.SudoSessionID))
		if err != nil {
			return err
		}
		switch {
		case x.status == StatusActive:
			out = x.view()
			return nil
		case x.status != StatusPending:
			return apierr.New(apierr.InvalidCode, "This step-up has ended; retry the action to start a new one.")
		case !slices.Contains(x.methods, r.Method):
			return apierr.InvalidField("method", "is not available for this step-up.")
		}
		ok := false
		switch r.Method {
		case MethodTOTP:
			if ok, err = s.Identity.VerifyTOTP(ctx, tx, a.UserID, r.Code); err != nil {
				return err
			}
		case MethodEmail:
			ok = x.emailCodeHash != nil && x.emailCodeExpires != nil && now.Before(*x.emailCodeExpires) &&
				keyring.Equal(*x.emailCodeHash, s.Keys.Hash(emailPurpose, x.stepUpID.String()+":"+r.Code))
		}
		if !ok {
			wrong = errInvalidCode
			if _, err := tx.ExecContext(ctx, `UPDATE step_up_authentications SET failed_attempts = failed_attempts + 1 WHERE id = $1`, x.stepUpID); err != nil {
				return err
			}
			locked, err := s.recordWrongCode(ctx, tx, a.UserID, now)
			if err != nil {
				return err
			}
			if locked {
				wrong = apierr.New(apierr.InvalidCode, "The code is not correct. Too many wrong codes: confirming it is you is locked for 15 minutes.")
			}
			if x.failures+1 >= MaxCodeFailures {
				if !locked {
					wrong = apierr.New(apierr.InvalidCode, "Too many wrong codes: this step-up has ended. Retry the action to start a new one.")
				}
				return s.end(ctx, tx, now, x.id, x.stepUpID, StatusExpired)
			}
			return nil
		}
		if _, err := s.activate(ctx, tx, now, x, r.Method); err != nil {
			return err
		}
		x.status, x.windowEnd = StatusActive, ptr(now.Add(WindowLifetime))
		out = x.view()
		return nil
	})
	if err == nil && wrong != nil {
		return Status{}, wrong
	}
	return out, err
}

func ptr[T any](v T) *T { return &v }

// emailPurpose keys the hashes of emailed step-up codes.
const emailPurpose = "step-up-email-code"

// EmailCodeLifetime is how long an emailed step-up code works.
const EmailCodeLifetime = 5 * time.Minute

// FallbackRequest is the body of requestStepUpFallback.
type FallbackRequest struct {
	StepUpAuthenticationID string `json:"step_up_authentication_id"`
	Method                 string `json:"method"`
}

// Validate checks the body's fields.
func (r FallbackRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.StepUpAuthenticationID)
	f.Check(err == nil, "step_up_authentication_id", "is required: error.step_up.step_up_authentication_id.")
	f.Check(r.Method == MethodEmail, "method", "must be email.")
	return f.Err()
}

// Fallback is the answer of requestStepUpFallback.
type Fallback struct {
	Delivery  string    `json:"delivery"`
	ExpiresAt time.Time `json:"expires_at"`
}

// RequestFallback emails a six-digit code that completes the step-up; a new
// request replaces the previous code and keeps the step-up open for its life.
func (s *Service) RequestFallback(ctx context.Context, a actor.Actor, r FallbackRequest) (Fallback, error) {
	var out Fallback
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		x, err := s.loadSudo(ctx, tx, a, "su.id", uuid.MustParse(r.StepUpAuthenticationID))
		if err != nil {
			return err
		}
		if x.status != StatusPending {
			return apierr.New(apierr.Conflict, "This step-up is no longer waiting for verification.")
		}
		if !slices.Contains(x.methods, MethodEmail) {
			return apierr.InvalidField("method", "is not available for this step-up.")
		}
		code := identity.RandomDigits(6)
		out = Fallback{Delivery: MethodEmail, ExpiresAt: now.Add(EmailCodeLifetime)}
		if _, err := tx.ExecContext(ctx, `
			UPDATE step_up_authentications SET email_code_hash = $2, email_code_expires_at = $3,
			       expires_at = CASE WHEN expires_at < $3 THEN $3 ELSE expires_at END
			WHERE id = $1`, x.stepUpID, s.Keys.Hash(emailPurpose, x.stepUpID.String()+":"+code), out.ExpiresAt); err != nil {
			return err
		}
		_, err = outbox.Queue(ctx, tx, now, outbox.Message{
			UserID: &a.UserID, Kind: outbox.StepUpEmailCode, Channel: outbox.ChannelEmail,
			Subject: "Your Strongroom verification code",
			Body:    fmt.Sprintf("Your code to confirm a sensitive action is %s. It expires in 5 minutes. If you did not ask for it, do not share it and change your password.", code),
			Code:    &code,
		})
		return err
	})
	return out, err
}

// ExpiredSudoSession answers exit (spec 2.9).
type ExpiredSudoSession struct {
	Active    bool      `json:"active"`
	ExpiresAt time.Time `json:"expires_at"`
	ID        uuid.UUID `json:"id"`
}

// Exit ends a sudo window (or a step-up still waiting) of the bearer session.
func (s *Service) Exit(ctx context.Context, a actor.Actor, id uuid.UUID) (ExpiredSudoSession, error) {
	var out ExpiredSudoSession
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		x, err := s.loadSudo(ctx, tx, a, "ss.id", id)
		if err != nil {
			return err
		}
		out = ExpiredSudoSession{ID: x.id, ExpiresAt: now}
		switch x.status {
		case StatusPending, StatusActive:
			_, err := tx.ExecContext(ctx, `UPDATE sudo_sessions SET status = 'expired', expires_at = $2, updated_at = $2 WHERE id = $1`, x.id, now)
			if err != nil {
				return err
			}
			return s.end(ctx, tx, now, x.id, x.stepUpID, StatusExpired)
		case StatusExpired:
			if x.windowEnd != nil {
				out.ExpiresAt = x.windowEnd.UTC()
			}
		}
		return nil
	})
	return out, err
}
