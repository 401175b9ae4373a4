package webhook

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// The SQL of webhook_endpoints and webhook_deliveries, the tables this
// package owns.

const endpointColumns = `id, organization_id, url, event_types, description, disabled, disabled_reason, created_at, updated_at`

func scanEndpoint(row db.Scanner) (Endpoint, error) {
	var e Endpoint
	var types string
	err := row.Scan(&e.ID, &e.OrganizationID, &e.URL, &types, &e.Description, &e.Disabled, &e.DisabledReason, &e.CreatedAt, &e.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return e, errNotFound
	}
	e.EventTypes = strings.Split(types, ",")
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, err
}

func countEndpoints(ctx context.Context, q db.Reader, orgID uuid.UUID) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM webhook_endpoints WHERE organization_id = $1`, orgID).Scan(&n)
	return n, err
}

func insertEndpoint(ctx context.Context, tx *db.Tx, e Endpoint, sealed string) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO webhook_endpoints (id, organization_id, url, event_types, description, disabled, secret_sealed, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, FALSE, $6, $7, $7)`,
		e.ID, e.OrganizationID, e.URL, strings.Join(e.EventTypes, ","), e.Description, sealed, e.CreatedAt)
	return err
}

// listEndpoints reads a page of orgID's endpoints, newest first.
func listEndpoints(ctx context.Context, q db.Reader, orgID uuid.UUID, req page.Request) ([]Endpoint, error) {
	return db.QueryAll(ctx, q, scanEndpoint, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE organization_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
}

// loadEndpoint reads endpoint id of orgID (of any organization when orgID
// is uuid.Nil), or not_found; lock is the dialect's row-lock clause or empty.
func loadEndpoint(ctx context.Context, q db.Reader, orgID, id uuid.UUID, lock string) (Endpoint, error) {
	return scanEndpoint(q.QueryRowContext(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE id = $1 AND (organization_id = $2 OR $3)`+lock, id, orgID, orgID == uuid.Nil))
}

func deleteEndpoint(ctx context.Context, tx *db.Tx, id uuid.UUID) error {
	// Deliveries go with it (ON DELETE CASCADE); their jobs find nothing
	// and end.
	_, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1`, id)
	return err
}

func updateEndpoint(ctx context.Context, tx *db.Tx, e Endpoint) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE webhook_endpoints SET url = $2, event_types = $3, description = $4, disabled = $5, disabled_reason = $6,
			failing_since = CASE WHEN $5 THEN failing_since ELSE NULL END, updated_at = $7
		WHERE id = $1`,
		e.ID, e.URL, strings.Join(e.EventTypes, ","), e.Description, e.Disabled, e.DisabledReason, e.UpdatedAt)
	return err
}

func rotateSecret(ctx context.Context, tx *db.Tx, id uuid.UUID, sealed string, previousUntil, now time.Time) error {
	_, err := tx.ExecContext(ctx, `
		UPDATE webhook_endpoints SET previous_secret_sealed = secret_sealed, previous_secret_expires_at = $3,
			secret_sealed = $2, updated_at = $4
		WHERE id = $1`, id, sealed, previousUntil, now)
	return err
}

// sending is what a delivery attempt needs of its endpoint.
type sending struct {
	endpoint     Endpoint
	sealed       []string // the current secret, then the previous one while it still signs
	failingSince *time.Time
}

// lockSending reads and locks endpoint id for a delivery attempt at now.
func lockSending(ctx context.Context, tx *db.Tx, id uuid.UUID) (sending, error) {
	var (
		s        sending
		types    string
		prev     *string
		prevTill *time.Time
		cur      string
	)
	e := &s.endpoint
	err := tx.QueryRowContext(ctx, `SELECT id, organization_id, url, event_types, disabled, secret_sealed,
			previous_secret_sealed, previous_secret_expires_at, failing_since
		FROM webhook_endpoints WHERE id = $1`+tx.ForUpdate(), id).
		Scan(&e.ID, &e.OrganizationID, &e.URL, &types, &e.Disabled, &cur, &prev, &prevTill, &s.failingSince)
	if errors.Is(err, sql.ErrNoRows) {
		return s, errNotFound
	}
	if err != nil {
		return s, err
	}
	e.EventTypes = strings.Split(types, ",")
	s.sealed = []string{cur}
	if prev != nil && prevTill != nil && tx.Now().Before(*prevTill) {
		s.sealed = append(s.sealed, *prev)
	}
	return s, nil
}

// setFailing records the endpoint's failing streak: since (nil after a success).
func setFailing(ctx context.Context, tx *db.Tx, id uuid.UUID, since *time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET failing_since = $2 WHERE id = $1`, id, since)
	return err
}

// disable disables endpoint id for reason; false when it was already.
func disable(ctx context.Context, tx *db.Tx, id uuid.UUID, reason string) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET disabled = TRUE, disabled_reason = $2, updated_at = $3
		WHERE id = $1 AND NOT disabled`, id, reason, tx.Now())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// matchingEndpoints lists the enabled endpoints of orgID (at most
// MaxEndpoints exist).
func matchingEndpoints(ctx context.Context, q db.Reader, orgID uuid.UUID) ([]Endpoint, error) {
	return db.QueryAll(ctx, q, scanEndpoint, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE organization_id = $1 AND NOT disabled ORDER BY id LIMIT $2`, orgID, MaxEndpoints)
}

const deliveryColumns = `id, organization_id, endpoint_id, event_id, event_type, attempt, status, response_status, response_body,
	error, duration_ms, attempted_at, next_attempt_at, created_at`

func scanDelivery(row db.Scanner) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.OrganizationID, &d.EndpointID, &d.EventID, &d.EventType, &d.Attempt, &d.Status, &d.ResponseStatus,
		&d.ResponseBody, &d.Error, &d.DurationMS, &d.AttemptedAt, &d.NextAttemptAt, &d.CreatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, errDeliveryNotFound
	}
	d.CreatedAt = d.CreatedAt.UTC()
	for _, t := range []**time.Time{&d.AttemptedAt, &d.NextAttemptAt} {
		if *t != nil {
			u := (*t).UTC()
			*t = &u
		}
	}
	return d, err
}

// listDeliveries reads a page of endpointID's deliveries, newest first.
func listDeliveries(ctx context.Context, q db.Reader, endpointID uuid.UUID, req page.Request) ([]Delivery, error) {
	return db.QueryAll(ctx, q, scanDelivery, `SELECT `+deliveryColumns+` FROM webhook_deliveries
		WHERE endpoint_id = $1 AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`, endpointID, req.AfterUUID(), req.Limit+1)
}

// endpointOf reads the endpoint of delivery id.
func endpointOf(ctx context.Context, q db.Reader, id uuid.UUID) (uuid.UUID, error) {
	var endpointID uuid.UUID
	err := q.QueryRowContext(ctx, `SELECT endpoint_id FROM webhook_deliveries WHERE id = $1`, id).Scan(&endpointID)
	if errors.Is(err, sql.ErrNoRows) {
		return endpointID, errDeliveryNotFound
	}
	return endpointID, err
}

// deliveryState is what the delivery job reads of a delivery beside its record.
type deliveryState struct {
	sendingUntil *time.Time
	waiting      bool
	seq          int
}

// lockDelivery reads and locks delivery id.
func lockDelivery(ctx context.Context, tx *db.Tx, id uuid.UUID) (Delivery, deliveryState, error) {
	var st deliveryState
	row := tx.QueryRowContext(ctx, `SELECT `+deliveryColumns+`, sending_until, waiting, seq FROM webhook_deliveries WHERE id = $1`+tx.ForUpdate(), id)
	var d Delivery
	err := row.Scan(&d.ID, &d.OrganizationID, &d.EndpointID, &d.EventID, &d.EventType, &d.Attempt, &d.Status, &d.ResponseStatus,
		&d.ResponseBody, &d.Error, &d.DurationMS, &d.AttemptedAt, &d.NextAttemptAt, &d.CreatedAt, &st.sendingUntil, &st.waiting, &st.seq)
	if errors.Is(err, sql.ErrNoRows) {
		return d, st, errDeliveryNotFound
	}
	return d, st, err
}

// insertDelivery adds a pending delivery of eventID to endpoint e; false
// when the event already has one there.
func insertDelivery(ctx context.Context, tx *db.Tx, id uuid.UUID, e Endpoint, eventID uuid.UUID, eventType string) (bool, error) {
	res, err := tx.ExecContext(ctx, `
		INSERT INTO webhook_deliveries (id, organization_id, endpoint_id, event_id, event_type, status, next_attempt_at, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6, $6)
		ON CONFLICT (endpoint_id, event_id) DO NOTHING`, id, e.OrganizationID, e.ID, eventID, eventType, tx.Now())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// setScheduled makes delivery id pending, due at at, under job seq.
func setScheduled(ctx context.Context, tx *db.Tx, id uuid.UUID, seq int, at time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'pending', seq = $2, next_attempt_at = $3,
		waiting = FALSE, sending_until = NULL, updated_at = $4 WHERE id = $1`, id, seq, at, tx.Now())
	return err
}

// othersSending counts endpointID's deliveries other than id holding a
// sending slot at now.
func othersSending(ctx context.Context, tx *db.Tx, endpointID, id uuid.UUID) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_deliveries
		WHERE endpoint_id = $1 AND sending_until IS NOT NULL AND sending_until > $2 AND id <> $3`, endpointID, tx.Now(), id).Scan(&n)
	return n, err
}

// dueOrSending counts endpointID's deliveries that are sending or whose job
// is due, up to most: the rest of the pending ones wait for a slot or for
// a later attempt.
func dueOrSending(ctx context.Context, tx *db.Tx, endpointID uuid.UUID, most int) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries
		WHERE endpoint_id = $1 AND status = 'pending' AND NOT waiting AND next_attempt_at <= $2 LIMIT $3) due`,
		endpointID, tx.Now(), most).Scan(&n)
	return n, err
}

// setSending gives delivery id a sending slot until until.
func setSending(ctx context.Context, tx *db.Tx, id uuid.UUID, until time.Time) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET sending_until = $2, waiting = FALSE, updated_at = $3 WHERE id = $1`,
		id, until, tx.Now())
	return err
}

// setWaiting makes delivery id wait for a slot.
func setWaiting(ctx context.Context, tx *db.Tx, id uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET sending_until = NULL, waiting = TRUE, updated_at = $2 WHERE id = $1`,
		id, tx.Now())
	return err
}

// firstWaiting returns the oldest delivery of endpointID waiting for a
// slot, with its seq; ok is false when none waits.
func firstWaiting(ctx context.Context, tx *db.Tx, endpointID uuid.UUID) (uuid.UUID, int, bool, error) {
	var (
		id  uuid.UUID
		seq int
	)
	err := tx.QueryRowContext(ctx, `SELECT id, seq FROM webhook_deliveries WHERE endpoint_id = $1 AND waiting
		ORDER BY id LIMIT 1`, endpointID).Scan(&id, &seq)
	if errors.Is(err, sql.ErrNoRows) {
		return id, 0, false, nil
	}
	return id, seq, err == nil, err
}

// attemptRecord is the outcome of one attempt.
type attemptRecord struct {
	status         string
	responseStatus *int
	responseBody   *string
	err            *string
	durationMS     int64
	next           *time.Time
}

// recordAttempt stores the outcome of delivery id's attempt and frees its slot.
func recordAttempt(ctx context.Context, tx *db.Tx, id uuid.UUID, r attemptRecord) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET attempt = attempt + 1, status = $2, response_status = $3,
			response_body = $4, error = $5, duration_ms = $6, attempted_at = $7, next_attempt_at = $8,
			sending_until = NULL, waiting = FALSE, updated_at = $7
		WHERE id = $1`, id, r.status, r.responseStatus, r.responseBody, r.err, r.durationMS, tx.Now(), r.next)
	return err
}

// stopDelivery ends delivery id without an attempt (its endpoint is
// disabled or the event cannot be delivered), with why.
func stopDelivery(ctx context.Context, tx *db.Tx, id uuid.UUID, why string) error {
	_, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET status = 'failed', error = $2, next_attempt_at = NULL,
			sending_until = NULL, waiting = FALSE, updated_at = $3
		WHERE id = $1`, id, why, tx.Now())
	return err
}
