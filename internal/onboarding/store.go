package onboarding

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Register records whether the new organization orgID must acknowledge its
// subscription plan; the organization's creator calls it in the creating
// transaction.
func Register(ctx context.Context, tx *db.Tx, orgID uuid.UUID, required bool) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO subscription_acknowledgements (organization_id, required) VALUES ($1, $2)`,
		orgID, required)
	return err
}

// loadAcknowledgement reads orgID's acknowledgement. An organization
// without a row (created before acknowledgements existed) requires none and
// has not acknowledged.
func loadAcknowledgement(ctx context.Context, q db.Querier, orgID uuid.UUID) (Acknowledgement, error) {
	a := Acknowledgement{OrganizationID: orgID}
	var at sql.NullTime
	err := q.QueryRowContext(ctx, `SELECT required, acknowledged_at FROM subscription_acknowledgements WHERE organization_id = $1`,
		orgID).Scan(&a.Required, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return a, nil
	}
	if err != nil {
		return Acknowledgement{}, err
	}
	if at.Valid {
		t := at.Time.UTC()
		a.AcknowledgedAt = &t
	}
	return a, nil
}

// acknowledge records userID's acknowledgement of orgID's plan at now
// unless one is recorded already: one statement, so of two at once (on any
// instance) exactly one sets the time and the other keeps it.
func acknowledge(ctx context.Context, tx *db.Tx, orgID, userID uuid.UUID, now time.Time) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO subscription_acknowledgements (organization_id, required, acknowledged_at, acknowledged_by)
		VALUES ($1, FALSE, $2, $3)
		ON CONFLICT (organization_id) DO UPDATE
		SET acknowledged_at = excluded.acknowledged_at, acknowledged_by = excluded.acknowledged_by
		WHERE subscription_acknowledgements.acknowledged_at IS NULL`, orgID, now, userID)
	return err
}

// CheckOf returns where userID's identity check stands: the narrow read
// behind /me's identity_check.
func CheckOf(ctx context.Context, q db.Querier, userID uuid.UUID) (IdentityCheck, error) {
	var c IdentityCheck
	var at time.Time
	err := q.QueryRowContext(ctx, `SELECT status, updated_at FROM identity_checks WHERE user_id = $1`, userID).Scan(&c.Status, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return IdentityCheck{Status: NotStarted}, nil
	}
	if err != nil {
		return IdentityCheck{}, err
	}
	at = at.UTC()
	c.UpdatedAt = &at
	return c, nil
}

// startCheck moves userID's check to pending, only from not_started.
func startCheck(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO identity_checks (user_id, status, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id) DO NOTHING`, userID, Pending, tx.Now())
	return err
}

// decideCheck gives userID's check the outcome status.
func decideCheck(ctx context.Context, tx *db.Tx, userID uuid.UUID, status string) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO identity_checks (user_id, status, updated_at) VALUES ($1, $2, $3)
		ON CONFLICT (user_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`, userID, status, tx.Now())
	return err
}

// spendLink records that the link of token v decided status; errLinkSpent
// when it already had. The insert is conditional on the token's key, so of
// two concurrent decisions by one link only one is recorded.
func spendLink(ctx context.Context, tx *db.Tx, v VerifiedToken, status string) error {
	res, err := tx.ExecContext(ctx, `INSERT INTO identity_check_links (token_id, user_id, status, decided_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (token_id) DO NOTHING`, v.ID, v.UserID, status, tx.Now())
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err == nil && n != 1 {
		err = errLinkSpent
	}
	return err
}

// LinkDecided reports whether the link of token id has decided a check.
func LinkDecided(ctx context.Context, q db.Querier, id string) (bool, error) {
	var decided bool
	err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM identity_check_links WHERE token_id = $1)`, id).Scan(&decided)
	return decided, err
}
