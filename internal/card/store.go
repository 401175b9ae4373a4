package card

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var errNotFound = apierr.New(apierr.NotFound, "There is no card with this id.")

// stored is a card row: the card and what only this package sees.
type stored struct {
	Card
	panSealed   string
	expiryMonth int
	expiryYear  int
	// activationHash is the keyed hash of the code on the physical card's
	// letter, from the order until the activation.
	activationHash *string
}

// cardColumns are read with a month parameter (the current one, in
// card_spend's key form) bound where spent is joined.
const cardColumns = `c.id, c.organization_id, c.user_id, c.card_holder_name, c.card_provider, c.status, c.frozen,
	c.allow_physical, c.physical_state, c.physical_replacement, c.shipping_address, c.shipped_at IS NOT NULL,
	c.last_four, c.pan_sealed, c.expiry_month, c.expiry_year, c.activation_code_hash, c.monthly_limit,
	CASE WHEN s.spent > 0 THEN s.spent ELSE 0 END, c.created_at, c.updated_at`

// cardFrom joins the spending of month $1 to every card read.
const cardFrom = ` FROM cards c LEFT JOIN card_spend s ON s.card_id = c.id AND s.month = $1`

func scanCard(row db.Scanner) (stored, error) {
	var c stored
	var shipping sql.NullString
	err := row.Scan(&c.ID, &c.OrganizationID, &c.UserID, &c.CardHolderName, &c.Provider, &c.Status, &c.Frozen,
		&c.AllowPhysical, &c.Physical.State, &c.Physical.Replacement, &shipping, &c.Physical.Shipped,
		&c.LastFour, &c.panSealed, &c.expiryMonth, &c.expiryYear, &c.activationHash, &c.MonthlyLimit, &c.SpentThisMonth, &c.CreatedAt, &c.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return stored{}, errNotFound
	}
	if err != nil {
		return stored{}, err
	}
	if shipping.Valid {
		c.Physical.Shipping = new(Address)
		if err := json.Unmarshal([]byte(shipping.String), c.Physical.Shipping); err != nil {
			return stored{}, err
		}
	}
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
	return c, nil
}

// loadCard reads card id with its spending in now's month; lock is the
// dialect's row-lock clause or empty. A locked read takes the lock first and
// reads after, so on PostgreSQL the spending is read once the lock is held,
// not from the snapshot of a statement that waited for it.
func loadCard(ctx context.Context, q db.Querier, now time.Time, id uuid.UUID, lock string) (stored, error) {
	if lock != "" {
		var locked uuid.UUID
		err := q.QueryRowContext(ctx, `SELECT id FROM cards WHERE id = $1`+lock, id).Scan(&locked)
		if errors.Is(err, sql.ErrNoRows) {
			return stored{}, errNotFound
		}
		if err != nil {
			return stored{}, err
		}
	}
	return scanCard(q.QueryRowContext(ctx, `SELECT `+cardColumns+cardFrom+` WHERE c.id = $2`, month(now), id))
}

func insertCard(ctx context.Context, tx *db.Tx, c stored) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO cards (id, organization_id, user_id, card_holder_name, card_provider, status, frozen, allow_physical,
		                   physical_state, physical_replacement, last_four, pan_sealed, expiry_month, expiry_year,
		                   monthly_limit, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, FALSE, $7, $8, FALSE, $9, $10, $11, $12, $13, $14, $14)`,
		c.ID, c.OrganizationID, c.UserID, c.CardHolderName, c.Provider, c.Status, c.AllowPhysical,
		c.Physical.State, c.LastFour, c.panSealed, c.expiryMonth, c.expiryYear, c.MonthlyLimit, c.CreatedAt)
	return err
}

// ListFilter narrows a card list.
type ListFilter struct {
	Status *string
	UserID *uuid.UUID
	Frozen *bool
}

func listCards(ctx context.Context, q db.Querier, now time.Time, orgID uuid.UUID, f ListFilter, req page.Request) ([]stored, error) {
	return db.QueryAll(ctx, q, scanCard, `SELECT `+cardColumns+cardFrom+`
		WHERE c.organization_id = $2
		  AND (c.status = $3 OR $3 IS NULL)
		  AND (c.user_id = $4 OR $4 IS NULL)
		  AND (c.frozen = $5 OR $5 IS NULL)
		  AND (c.id < $6 OR $6 IS NULL)
		ORDER BY c.id DESC LIMIT $7`, month(now), orgID, f.Status, f.UserID, f.Frozen, req.AfterUUID(), req.Limit+1)
}

// update applies set, an SQL SET list whose parameters start at $2, to
// card id, stamping updated_at.
func update(ctx context.Context, tx *db.Tx, id uuid.UUID, set string, args ...any) error {
	_, err := tx.ExecContext(ctx, `UPDATE cards SET `+set+`, updated_at = $`+strconv.Itoa(len(args)+2)+` WHERE id = $1`,
		append(append([]any{id}, args...), tx.Now())...)
	return err
}

// addSpend adds cents (negative for a refund) to card id's purchases minus
// refunds in tx.Now()'s month. A refund is approved only while the sum covers
// it, so the sum stays at zero or above; reads still show it from zero up,
// for months recorded before that rule.
func addSpend(ctx context.Context, tx *db.Tx, id uuid.UUID, cents int64) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO card_spend (card_id, month, spent) VALUES ($1, $2, $3)
		ON CONFLICT (card_id, month) DO UPDATE SET spent = card_spend.spent + excluded.spent`,
		id, month(tx.Now()), cents)
	return err
}

// authorization is one authorization asked of a card.
type authorization struct {
	ID            uuid.UUID
	CardID        uuid.UUID
	Organization  uuid.UUID
	Kind          string
	Channel       string
	Merchant      string
	Amount        int64
	Currency      string
	USDAmount     int64
	Approved      bool
	DeclineReason *string
	TransactionID *uuid.UUID
}

func insertAuthorization(ctx context.Context, tx *db.Tx, a authorization) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO card_authorizations (id, card_id, organization_id, kind, channel, merchant, amount, currency, usd_amount,
		                                 approved, decline_reason, transaction_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
		a.ID, a.CardID, a.Organization, a.Kind, a.Channel, a.Merchant, a.Amount, a.Currency, a.USDAmount,
		a.Approved, a.DeclineReason, a.TransactionID, tx.Now())
	return err
}

// activationFailures lists when userID entered a wrong activation code
// since since, oldest first. It first takes userID's guard row, so one
// person's guesses, on any card, are counted one after another.
func activationFailures(ctx context.Context, tx *db.Tx, userID uuid.UUID, since time.Time) ([]time.Time, error) {
	if _, err := tx.ExecContext(ctx, `INSERT INTO card_activation_guards (user_id) VALUES ($1)
		ON CONFLICT (user_id) DO UPDATE SET user_id = excluded.user_id`, userID); err != nil {
		return nil, err
	}
	return db.QueryAll(ctx, tx, func(row db.Scanner) (time.Time, error) {
		var t time.Time
		err := row.Scan(&t)
		return t, err
	}, `SELECT failed_at FROM card_activation_failures WHERE user_id = $1 AND failed_at > $2 ORDER BY failed_at`, userID, since)
}

func recordActivationFailure(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO card_activation_failures (id, user_id, failed_at) VALUES ($1, $2, $3)`,
		uuid.Must(uuid.NewV7()), userID, tx.Now())
	return err
}
