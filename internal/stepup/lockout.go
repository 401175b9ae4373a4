package stepup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/outbox"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Guessing step-up codes is bounded per person, not per step-up (CONTRACT
// §3): every wrong authenticator or emailed code is a row of
// step_up_code_failures, and when MaxWrongCodes of them fall within
// WrongCodeWindow, step_up_lockouts.locked_until closes completion and
// minting for LockoutDuration. A right code does not wipe the count, so
// while ten wrong codes stay within the last 24 hours each further wrong
// code locks step-up again. Both live in the database, so every server
// instance sees the same count.

// errLockedOut is the 429 answer while the person's step-up is locked.
func errLockedOut(until, now time.Time) error {
	e := apierr.Newf(apierr.RateLimited,
		"Too many wrong verification codes: confirming it is you is locked until %s UTC. Please wait before trying again.",
		until.UTC().Format("15:04"))
	e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(until.Sub(now))
	return e
}

// checkLockout refuses while userID's step-up is locked.
func (s *Service) checkLockout(ctx context.Context, q db.Querier, userID uuid.UUID, now time.Time) error {
	var until *time.Time
	err := q.QueryRowContext(ctx, `SELECT locked_until FROM step_up_lockouts WHERE user_id = $1`, userID).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	if until != nil && until.After(now) {
		return errLockedOut(*until, now)
	}
	return nil
}

// lockGuessing takes userID's lockout row for the rest of the transaction
// (creating it on the first answer), so concurrent answers of one person
// are counted one after the other, then refuses while step-up is locked.
func (s *Service) lockGuessing(ctx context.Context, tx *db.Tx, userID uuid.UUID, now time.Time) error {
	var until *time.Time
	err := tx.QueryRowContext(ctx, `
		INSERT INTO step_up_lockouts (user_id, updated_at) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET updated_at = excluded.updated_at
		RETURNING locked_until`, userID, now).Scan(&until)
	if err != nil {
		return err
	}
	if until != nil && until.After(now) {
		return errLockedOut(*until, now)
	}
	return nil
}

// recordWrongCode counts a wrong code against userID and, when it makes
// MaxWrongCodes within WrongCodeWindow, locks step-up and tells the person
// (one alert per window). It reports whether step-up is now locked.
func (s *Service) recordWrongCode(ctx context.Context, tx *db.Tx, userID uuid.UUID, now time.Time) (bool, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO step_up_code_failures (id, user_id, inserted_at) VALUES ($1, $2, $3)`,
		uuid.Must(uuid.NewV7()), userID, now); err != nil {
		return false, err
	}
	since := now.Add(-WrongCodeWindow)
	var wrong, alerts int
	if err := tx.QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM step_up_code_failures WHERE user_id = $1 AND inserted_at > $2),
		       (SELECT count(*) FROM outbox_messages WHERE user_id = $1 AND kind = 'security_alert' AND subject = $3 AND inserted_at > $2)`,
		userID, since, lockoutAlertSubject).Scan(&wrong, &alerts); err != nil {
		return false, err
	}
	if wrong < MaxWrongCodes {
		return false, nil
	}
	until := now.Add(LockoutDuration)
	if _, err := tx.ExecContext(ctx, `UPDATE step_up_lockouts SET locked_until = $2, updated_at = $3 WHERE user_id = $1`,
		userID, until, now); err != nil {
		return false, err
	}
	if alerts > 0 {
		return true, nil
	}
	_, err := outbox.Queue(ctx, tx, now, outbox.Message{UserID: &userID, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
		Subject: lockoutAlertSubject,
		Body: fmt.Sprintf("%d wrong verification codes were entered for your Strongroom account in the last 24 hours, so confirming sensitive actions is locked until %s UTC. "+
			"If this was not you, someone may know your password: change it and review your signed-in devices.",
			wrong, until.UTC().Format("2006-01-02 15:04"))})
	return true, err
}

const lockoutAlertSubject = "Security alert: verification locked after repeated wrong codes"
