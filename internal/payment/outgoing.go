package payment

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Outgoing is a payment as a flow binding it to an expense sees it:
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
