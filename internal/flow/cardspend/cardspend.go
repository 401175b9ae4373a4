// Package cardspend decides a merchant's request to charge or refund a
// card. Card decides it and moves the money; an approved purchase of a
// card that has a cardholder is then filed as that person's expense, in
// the same transaction, so a purchase never lands without its expense nor
// an expense without its purchase. Neither feature knows the other: this
// use case calls both.
package cardspend

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Service decides card authorizations.
type Service struct {
	DB       *db.DB
	Cards    *card.Service
	Expenses *expense.Service
}

// Authorize decides request r for card id in one transaction (see
// card.Service.Decide for the order of the checks and what moves). An
// approved purchase of a held card files a pending expense of its
// cardholder, bound to the purchase's feed row; a refund, a declined
// request and a purchase of an organization card file none. The amount is
// priced in US dollars before the transaction begins.
func (s *Service) Authorize(ctx context.Context, id uuid.UUID, r card.AuthorizationRequest) (card.Decision, error) {
	priced, err := s.Cards.Price(ctx, id, r)
	if err != nil {
		return card.Decision{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (card.Decision, error) {
		d, err := s.Cards.Decide(ctx, tx, priced)
		if err != nil || d.Purchase == nil {
			return d, err
		}
		p := d.Purchase
		if err := s.Expenses.FileCardPurchase(ctx, tx, p.OrganizationID, p.HolderID, p.Transaction.ID, p.Total(), p.Bill, p.Merchant); err != nil {
			return card.Decision{}, fmt.Errorf("cardspend: file the purchase as an expense: %w", err)
		}
		return d, nil
	})
}
