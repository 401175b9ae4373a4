package stepup

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Guessing step-up codes is bounded per person, not per step-up: every
// wrong authenticator or emailed code is a row of
// step_up_code_failures, and when MaxWrongCodes of them fall within
// WrongCodeWindow, step_up_lockouts.locked_until closes completion and
// minting for LockoutDuration. A right code does not wipe the count, so
// while ten wrong codes stay within the last 24 hours each further wrong
// code locks step-up again. Both live in the database, so every server
// instance sees the same count.

// errLockedOut is the 429 answer, in tx, while the person's step-up is
// locked until until.
func errLockedOut(tx *db.Tx, until time.Time) error {
	e := apierr.Newf(apierr.RateLimited,
		"Too many wrong verification codes: confirming it is you is locked until %s UTC. Please wait before trying again.",
		until.UTC().Format("15:04"))
	e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(until.Sub(tx.Now()))
	return e
}

// checkLockout refuses while userID's step-up is locked.
func checkLockout(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	var until *time.Time
	err := tx.QueryRowContext(ctx, `SELECT locked_until FROM step_up_lockouts WHERE user_id = $1`, userID).Scan(&until)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return lockedOut(tx, until)
}

// lockedOut refuses, in tx, while a lockout ending at until (nil: none) lasts.
func lockedOut(tx *db.Tx, until *time.Time) error {
	if until != nil && until.After(tx.Now()) {
		return errLockedOut(tx, *until)
	}
	return nil
}

// lockGuessing takes userID's lockout row for the rest of the transaction
// (creating it on the first answer), so concurrent answers of one person
// are counted one after the other, then refuses while step-up is locked.
func lockGuessing(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	var until *time.Time
	err := tx.QueryRowContext(ctx, `
		INSERT INTO step_up_lockouts (user_id, updated_at) VALUES ($1, $2)
		ON CONFLICT (user_id) DO UPDATE SET updated_at = excluded.updated_at
		RETURNING locked_until`, userID, tx.Now()).Scan(&until)
	if err != nil {
		return err
	}
	return lockedOut(tx, until)
}

// recordWrongCode counts a wrong code against userID and, when it makes
// MaxWrongCodes within WrongCodeWindow, locks step-up and tells the person
// (one alert per window). It reports whether step-up is now locked.
func recordWrongCode(ctx context.Context, tx *db.Tx, userID uuid.UUID) (bool, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO step_up_code_failures (id, user_id, inserted_at) VALUES ($1, $2, $3)`,
		uuid.Must(uuid.NewV7()), userID, tx.Now()); err != nil {
		return false, err
	}
	var wrong int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM step_up_code_failures WHERE user_id = $1 AND inserted_at > $2`,
		userID, tx.Now().Add(-WrongCodeWindow)).Scan(&wrong); err != nil {
		return false, err
	}
	if wrong < MaxWrongCodes {
		return false, nil
	}
	until := tx.Now().Add(LockoutDuration)
	if _, err := tx.ExecContext(ctx, `UPDATE step_up_lockouts SET locked_until = $2, updated_at = $3 WHERE user_id = $1`,
		userID, until, tx.Now()); err != nil {
		return false, err
	}
	first, err := claimAlert(ctx, tx, userID, lockoutAlerted, WrongCodeWindow)
	if err != nil || !first {
		return true, err
	}
	_, err = outbox.Queue(ctx, tx, outbox.Message{UserID: &userID, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
		Subject: "Security alert: verification locked after repeated wrong codes",
		Body: fmt.Sprintf("%d wrong verification codes were entered for your Strongroom account in the last 24 hours, so confirming sensitive actions is locked until %s UTC. "+
			"If this was not you, someone may know your password: change it and review your signed-in devices.",
			wrong, until.UTC().Format("2006-01-02 15:04"))})
	return true, err
}

// The columns of step_up_lockouts that remember when a person was last sent
// each security alert of step-up.
const (
	lockoutAlerted  = "lockout_alerted_at"
	declinesAlerted = "declines_alerted_at"
)

// claimAlert records that userID is sent the alert remembered in column,
// unless one went out within window: one alert per window. It reports
// whether to send it.
func claimAlert(ctx context.Context, tx *db.Tx, userID uuid.UUID, column string, window time.Duration) (bool, error) {
	res, err := tx.ExecContext(ctx, `
		INSERT INTO step_up_lockouts (user_id, updated_at, `+column+`) VALUES ($1, $2, $2)
		ON CONFLICT (user_id) DO UPDATE SET `+column+` = excluded.`+column+`
		WHERE step_up_lockouts.`+column+` IS NULL OR step_up_lockouts.`+column+` <= $3`,
		userID, tx.Now(), tx.Now().Add(-window))
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
