package payment

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Outgoing is a payment as another feature sees it (an expense binds it):
// its rail, the amount sent (its feed row's total, the fee apart) and its
// row in the transactions feed, nil until it is approved.
type Outgoing struct {
	ID            uuid.UUID
	Rail          string
	Sent          money.Amount
	TransactionID *uuid.UUID
}

// GetOutgoing returns payment id of orgID; another organization's payment
// is not found.
func GetOutgoing(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (Outgoing, error) {
	p, err := loadPayment(ctx, q, id, "")
	if err != nil {
		return Outgoing{}, err
	}
	if p.OrganizationID != orgID {
		return Outgoing{}, apierr.NotFoundf("Payment")
	}
	return Outgoing{ID: p.ID, Rail: p.Rail, Sent: p.source, TransactionID: p.TransactionID}, nil
}

// TransactionIDs returns the feed rows of the payments ids that have one,
// by payment.
func TransactionIDs(ctx context.Context, q db.Reader, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := map[uuid.UUID]uuid.UUID{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	type pair struct{ payment, row uuid.UUID }
	pairs, err := db.QueryAll(ctx, q, func(row db.Scanner) (pair, error) {
		var p pair
		err := row.Scan(&p.payment, &p.row)
		return p, err
	}, `SELECT id, transaction_id FROM payments WHERE transaction_id IS NOT NULL AND id IN (`+db.Placeholders(1, len(ids))+`)`, args...)
	for _, p := range pairs {
		out[p.payment] = p.row
	}
	return out, err
}
