// Package binding binds a transaction to an expense: a card transaction,
// which the feed describes, or a payment, which the payment feature
// describes from the moment it is created, before it has a row in the feed.
// Expense locks and checks the expense and stores the binding; payment
// tells what a payment counts for; both in one transaction. Neither
// feature knows the other: this use case calls both.
package binding

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Service binds transactions to expenses.
type Service struct {
	DB       *db.DB
	Expenses *expense.Service
}

// Bind binds a transaction of the expense's organization to it, in one
// transaction: not_found or conflict for the expense first (see
// expense.Service.OpenEdit), then not_found unless the organization has a
// transaction of the type given with that id, then what
// expense.Service.AddBinding refuses.
func (s *Service) Bind(ctx context.Context, a actor.Actor, id uuid.UUID, r expense.BindRequest) (expense.Expense, error) {
	kind, targetID := *r.TargetType, uuid.MustParse(*r.TargetID) // validated
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (expense.Expense, error) {
		ed, err := s.Expenses.OpenEdit(ctx, tx, a, id)
		if err != nil {
			return expense.Expense{}, err
		}
		var t expense.Binding
		if kind == expense.FiatOutgoing || kind == expense.CryptoOutgoing {
			t, err = paymentTarget(ctx, tx, ed.OrganizationID(), kind, targetID)
		} else {
			t, err = expense.Target(ctx, tx, ed, kind, targetID)
		}
		if err != nil {
			return expense.Expense{}, err
		}
		return s.Expenses.AddBinding(ctx, tx, ed, t)
	})
}

// paymentTarget finds the payment of orgID that a binding of kind names,
// by its id or its feed row's, on the rail kind says, counting the amount
// sent (the fee apart). Another organization's payment, or one of the
// other rail, is not found.
func paymentTarget(ctx context.Context, tx *db.Tx, orgID uuid.UUID, kind string, id uuid.UUID) (expense.Binding, error) {
	rail := payment.RailFiat
	if kind == expense.CryptoOutgoing {
		rail = payment.RailCrypto
	}
	p, err := payment.GetOutgoing(ctx, tx, orgID, id)
	if apierr.Is(err, apierr.NotFound) {
		// The payment's row in the feed names it too.
		if t, ferr := ledger.Get(ctx, tx, orgID, id); ferr == nil && t.Type == kind && t.PaymentID != nil {
			p, err = payment.GetOutgoing(ctx, tx, orgID, *t.PaymentID)
		}
	}
	if apierr.Is(err, apierr.NotFound) || (err == nil && p.Rail != rail) {
		return expense.Binding{}, expense.NoTarget(kind)
	}
	if err != nil {
		return expense.Binding{}, err
	}
	return expense.Binding{TargetID: p.ID, TargetType: kind, Total: p.Sent, TransactionID: p.TransactionID}, nil
}
