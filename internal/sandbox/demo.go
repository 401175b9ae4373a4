package sandbox

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Demo is the scene a first start in environment test sets, so that a
// newcomer can sign in and pay at once: an organization and its owner,
// money in its balances, a supplier to pay, and a sandbox approving app
// for the owner to approve with.
type Demo struct {
	Organization NewOrganization
	Deposits     []DepositRequest
	Supplier     payment.ContactRequest
}

// SeededDemo is what SeedDemo made.
type SeededDemo struct {
	CreatedOrganization
	SupplierID uuid.UUID
}

// SeedDemo sets the scene d in one transaction: a start that dies half way
// leaves no half-made demo behind (the next start would take it for the
// newcomer's own data and seed nothing).
func (s *Service) SeedDemo(ctx context.Context, app *ApprovingApp, d Demo) (SeededDemo, error) {
	if err := d.validate(); err != nil {
		return SeededDemo{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (SeededDemo, error) {
		created, err := s.createOrganization(ctx, tx, d.Organization)
		if err != nil {
			return SeededDemo{}, err
		}
		orgID := created.Organization.ID
		for _, r := range d.Deposits {
			if _, err := deposit(ctx, tx, orgID, r); err != nil {
				return SeededDemo{}, err
			}
		}
		supplier, err := payment.AddContact(ctx, tx, actor.Actor{UserID: created.Owner.UserID}, orgID, d.Supplier)
		if err != nil {
			return SeededDemo{}, err
		}
		if _, err := app.register(ctx, tx, created.Owner.UserID); err != nil {
			return SeededDemo{}, err
		}
		return SeededDemo{CreatedOrganization: created, SupplierID: supplier.ID}, nil
	})
}

func (d *Demo) validate() error {
	if err := d.Organization.Validate(); err != nil {
		return err
	}
	for _, r := range d.Deposits {
		if err := r.Validate(); err != nil {
			return err
		}
	}
	return d.Supplier.Validate()
}
