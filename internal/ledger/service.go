package ledger

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service lets members of an organization read its money: balances and the
// transactions feed. Another organization's are not found.
type Service struct {
	DB *db.DB
}

func (s *Service) authorize(ctx context.Context, a actor.Actor, orgID uuid.UUID) error {
	_, err := organization.Check(ctx, s.DB.Reader(), a, orgID, organization.Need{})
	return err
}

// OrganizationBalances lists the organization's balances by currency.
func (s *Service) OrganizationBalances(ctx context.Context, a actor.Actor, orgID uuid.UUID) ([]Balance, error) {
	if err := s.authorize(ctx, a, orgID); err != nil {
		return nil, err
	}
	return Balances(ctx, s.DB.Reader(), orgID)
}

// Feed returns a page of the organization's transactions feed.
func (s *Service) Feed(ctx context.Context, a actor.Actor, orgID uuid.UUID, f FeedFilter, req page.Request) ([]Transaction, error) {
	if err := s.authorize(ctx, a, orgID); err != nil {
		return nil, err
	}
	return List(ctx, s.DB.Reader(), orgID, f, req)
}

// FeedItem returns one row of the organization's feed.
func (s *Service) FeedItem(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Transaction, error) {
	if err := s.authorize(ctx, a, orgID); err != nil {
		return Transaction{}, err
	}
	return Get(ctx, s.DB.Reader(), orgID, id)
}
