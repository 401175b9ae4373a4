package payment

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// counterparty is the name by which the ledger and the transactions feed
// describe a payment's recipient: its payment contact's name, never an
// internal id (docs/api.md, Payments).
func counterparty(ctx context.Context, q db.Querier, contactID uuid.UUID) (string, error) {
	var name string
	err := q.QueryRowContext(ctx, `SELECT name FROM payment_contacts WHERE id = $1`, contactID).Scan(&name)
	return name, err
}
