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
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/metrics"
	"github.com/strongroom/strongroom/internal/platform/outbox"
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
// after moving stale states on, and locks it. The sudo session row is the
// lock of its whole step-up (its step-up authentication and challenges):
// every transaction that changes them locks it first (see lockSudo), so a
// poll and an approval in the app cannot lock the same rows in opposite
// orders and deadlock on PostgreSQL. A sudo session of another
// bearer session is not found.
func (s *Service) loadSudo(ctx context.Context, tx *db.Tx, a actor.Actor, column string, id uuid.UUID) (sudo, error) {
	if err := expireStale(ctx, tx, a.UserID); err != nil {
		return sudo{}, err
	}
	var x sudo
	var methods string
	err := tx.QueryRowContext(ctx, `
		SELECT ss.id, ss.session_id, ss.user_id, su.id, ss.purpose, ss.status, ss.approval_id, ss.expires_at,
		       su.expires_at, su.failed_attempts, su.email_code_hash, su.email_code_expires_at, su.methods
		FROM sudo_sessions ss JOIN step_up_authentications su ON su.sudo_session_id = ss.id
		WHERE `+column+` = $1 AND ss.session_id = $2`+tx.ForUpdateOf("ss"), id, a.Session.ID).
		Scan(&x.id, &x.sessionID, &x.userID, &x.stepUpID, &x.purpose, &x.status, &x.approvalID, &x.windowEnd,
			&x.stepUpExpires, &x.failures, &x.emailCodeHash, &x.emailCodeExpires, &methods)
	if errors.Is(err, sql.ErrNoRows) {
		return x, errSudoNotFound
	}
	x.methods = strings.Split(methods, ",")
	return x, err
}

// expireStale moves on, for one person, every state whose time is up at
// tx.Now(): pending challenges past their expiry, pending step-ups whose
// verification ran out, and sudo windows past their end. Reading through it
// is what makes the state machines follow the (manual) clock. Each statement
// reads only the person's pending and active rows (by index), so its cost does
// not grow with their history.
func expireStale(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, `
		UPDATE assurance_challenges SET status = 'expired', decided_at = $2
		WHERE user_id = $1 AND status = 'pending' AND expires_at <= $2`, userID, tx.Now()); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		UPDATE sudo_sessions SET status = 'expired', updated_at = $2
		WHERE user_id = $1 AND status IN ('active', 'pending') AND (
		      (status = 'active' AND expires_at <= $2)
		   OR (status = 'pending' AND EXISTS (SELECT 1 FROM step_up_authentications su
		                                      WHERE su.sudo_session_id = sudo_sessions.id AND su.expires_at <= $2)))`,
		userID, tx.Now())
	return err
}

// Status is a step-up as GET /api/v1/auth/step-up/{id} answers it.
type Status struct {
	Status    string
	Active    bool
	ExpiresAt *time.Time // the end of the sudo window, once it opened
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
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Status, error) {
		x, err := s.loadSudo(ctx, tx, a, "ss.id", id)
		return x.view(), err
	})
}

// activate opens the sudo window of a pending step-up and settles its
// challenge as settled (ChallengeSatisfied, or ChallengeConsumed for a
// payment approval recorded in the same transaction). False when the
// step-up was no longer pending, and then nothing changed. On PostgreSQL
// its three updates are one statement: the step-up and the challenge
// change only when the sudo session did.
func activate(ctx context.Context, tx *db.Tx, sudoID, stepUpID uuid.UUID, method, settled string) (bool, error) {
	var userID uuid.UUID
	var err error
	openWindow := `UPDATE sudo_sessions SET status = 'active', expires_at = $2, updated_at = $3 WHERE id = $1 AND status = 'pending'
		RETURNING user_id`
	complete := `UPDATE step_up_authentications SET completed_method = $5, completed_at = $3 WHERE id = $4`
	settleChallenge := `UPDATE assurance_challenges SET status = $6, decided_at = $3 WHERE step_up_authentication_id = $4 AND status = 'pending'`
	args := []any{sudoID, tx.Now().Add(WindowLifetime), tx.Now(), stepUpID, method, settled}
	if tx.Dialect() == db.Postgres {
		err = tx.QueryRowContext(ctx, `WITH ss AS (`+openWindow+`),
			su AS (`+complete+` AND EXISTS (SELECT 1 FROM ss)),
			c AS (`+settleChallenge+` AND EXISTS (SELECT 1 FROM ss))
			SELECT user_id FROM ss`, args...).Scan(&userID)
	} else {
		err = tx.QueryRowContext(ctx, openWindow, args[:3]...).Scan(&userID)
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE step_up_authentications SET completed_method = $2, completed_at = $3 WHERE id = $1`,
				stepUpID, method, tx.Now())
		}
		if err == nil {
			_, err = tx.ExecContext(ctx, `UPDATE assurance_challenges SET status = $2, decided_at = $3
				WHERE step_up_authentication_id = $1 AND status = 'pending'`, stepUpID, settled, tx.Now())
		}
	}
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	tx.AfterCommit(func() { metrics.StepUp(metrics.StepUpCompleted) })
	// A step-up is the person's, in no one organization: each of theirs
	// records it, naming who answered (the person, or the sandbox's app).
	err = audit.RecordForPerson(ctx, tx, userID, audit.OriginOf(ctx).Actor, audit.StepUpVerified, audit.To("step_up", stepUpID))
	return err == nil, err
}

// end moves a pending or active step-up to status (declined or expired),
// taking its pending challenge along (one statement on PostgreSQL).
func end(ctx context.Context, tx *db.Tx, sudoID, stepUpID uuid.UUID, status string) error {
	if err := tx.ExecTogether(ctx, db.Statement{Query: `
		UPDATE sudo_sessions SET status = $2, updated_at = $3 WHERE id = $1 AND status IN ('pending', 'active')`,
		Args: []any{sudoID, status, tx.Now()}}, db.Statement{Query: `
		UPDATE assurance_challenges SET status = $2, decided_at = $3 WHERE step_up_authentication_id = $1 AND status = 'pending'`,
		Args: []any{stepUpID, status, tx.Now()}}); err != nil {
		return err
	}
	tx.AfterCommit(func() { metrics.StepUp(status) }) // metrics.StepUpDeclined or StepUpExpired
	return nil
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
	return Answering(ctx, s.DB, func(tx *db.Tx) (Status, error) {
		if err := lockGuessing(ctx, tx, a.UserID); err != nil {
			return Status{}, err
		}
		x, err := s.loadSudo(ctx, tx, a, "ss.id", uuid.MustParse(r.SudoSessionID))
		if err != nil {
			return Status{}, err
		}
		switch {
		case x.status == StatusActive:
			return x.view(), nil
		case x.status != StatusPending:
			return Status{}, apierr.New(apierr.InvalidCode, "This step-up has ended; retry the action to start a new one.")
		case !slices.Contains(x.methods, r.Method):
			return Status{}, apierr.InvalidField("method", "is not available for this step-up.")
		}
		ok, err := s.codeMatches(ctx, tx, a, x, r)
		if err != nil {
			return Status{}, err
		}
		if !ok {
			return Status{}, s.wrongCode(ctx, tx, a, x)
		}
		if _, err := activate(ctx, tx, x.id, x.stepUpID, r.Method, ChallengeSatisfied); err != nil {
			return Status{}, err
		}
		x.status, x.windowEnd = StatusActive, ptr(tx.Now().Add(WindowLifetime))
		return x.view(), nil
	})
}

// codeMatches checks an authenticator code, or the step-up's emailed code
// while it works.
func (s *Service) codeMatches(ctx context.Context, tx *db.Tx, a actor.Actor, x sudo, r CompleteRequest) (bool, error) {
	if r.Method == MethodTOTP {
		return s.Identity.VerifyTOTP(ctx, tx, a.UserID, r.Code)
	}
	return x.emailCodeHash != nil && x.emailCodeExpires != nil && tx.Now().Before(*x.emailCodeExpires) &&
		keyring.Equal(*x.emailCodeHash, s.Keys.Hash(emailPurpose, x.stepUpID.String()+":"+r.Code)), nil
}

// wrongCode counts a wrong code on the step-up and against the person, ends
// the step-up at its MaxCodeFailures-th, and returns the refusal to answer
// with (kept: see Answering).
func (s *Service) wrongCode(ctx context.Context, tx *db.Tx, a actor.Actor, x sudo) error {
	wrong := errInvalidCode
	if _, err := tx.ExecContext(ctx, `UPDATE step_up_authentications SET failed_attempts = failed_attempts + 1 WHERE id = $1`, x.stepUpID); err != nil {
		return err
	}
	tx.AfterCommit(func() { metrics.StepUp(metrics.StepUpWrongCode) })
	locked, err := recordWrongCode(ctx, tx, a.UserID)
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
		if err := end(ctx, tx, x.id, x.stepUpID, StatusExpired); err != nil {
			return err
		}
	}
	return refuse(wrong)
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
	Delivery  string
	ExpiresAt time.Time // when the emailed code stops working
}

// RequestFallback emails a six-digit code that completes the step-up; a new
// request replaces the previous code and keeps the step-up open for its life.
func (s *Service) RequestFallback(ctx context.Context, a actor.Actor, r FallbackRequest) (Fallback, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Fallback, error) {
		x, err := s.loadSudo(ctx, tx, a, "su.id", uuid.MustParse(r.StepUpAuthenticationID))
		if err != nil {
			return Fallback{}, err
		}
		if x.status != StatusPending {
			return Fallback{}, apierr.New(apierr.Conflict, "This step-up is no longer waiting for verification.")
		}
		if !slices.Contains(x.methods, MethodEmail) {
			return Fallback{}, apierr.InvalidField("method", "is not available for this step-up.")
		}
		// No code is sent that could not be entered: a locked-out person waits.
		if err := checkLockout(ctx, tx, a.UserID); err != nil {
			return Fallback{}, err
		}
		code := identity.RandomDigits(6)
		out := Fallback{Delivery: MethodEmail, ExpiresAt: tx.Now().Add(EmailCodeLifetime)}
		if _, err := tx.ExecContext(ctx, `
			UPDATE step_up_authentications SET email_code_hash = $2, email_code_expires_at = $3,
			       expires_at = CASE WHEN expires_at < $3 THEN $3 ELSE expires_at END
			WHERE id = $1`, x.stepUpID, s.Keys.Hash(emailPurpose, x.stepUpID.String()+":"+code), out.ExpiresAt); err != nil {
			return Fallback{}, err
		}
		_, err = s.Identity.Outbox.Queue(ctx, tx, outbox.Message{
			UserID: &a.UserID, Kind: outbox.StepUpEmailCode, Channel: outbox.ChannelEmail,
			Subject: "Your Strongroom verification code",
			Body:    fmt.Sprintf("Your code to confirm a sensitive action is %s. It expires in 5 minutes. If you did not ask for it, do not share it and change your password.", code),
			Code:    &code,
		})
		return out, err
	})
}

// ExpiredSudoSession answers exiting a step-up.
type ExpiredSudoSession struct {
	Active    bool
	ExpiresAt time.Time // when the window ended
	ID        uuid.UUID
}

// Exit ends a sudo window (or a step-up still waiting) of the bearer session.
func (s *Service) Exit(ctx context.Context, a actor.Actor, id uuid.UUID) (ExpiredSudoSession, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (ExpiredSudoSession, error) {
		x, err := s.loadSudo(ctx, tx, a, "ss.id", id)
		if err != nil {
			return ExpiredSudoSession{}, err
		}
		out := ExpiredSudoSession{ID: x.id, ExpiresAt: tx.Now()}
		switch x.status {
		case StatusPending, StatusActive:
			_, err := tx.ExecContext(ctx, `UPDATE sudo_sessions SET status = 'expired', expires_at = $2, updated_at = $2 WHERE id = $1`, x.id, tx.Now())
			if err != nil {
				return ExpiredSudoSession{}, err
			}
			return out, end(ctx, tx, x.id, x.stepUpID, StatusExpired)
		case StatusExpired:
			if x.windowEnd != nil {
				out.ExpiresAt = x.windowEnd.UTC()
			}
		}
		return out, nil
	})
}
