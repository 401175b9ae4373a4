// Package statementing opens an organization's statement with the parties
// of its payments: statement reads the ledger's rows and writes the
// formats, payment names who each payment paid and the reference it
// carried. Neither feature knows the other: this use case joins them.
package statementing

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/statement"
)

// Service opens statements.
type Service struct {
	DB         *db.DB
	Statements *statement.Service
}

// Open opens the statement of orgID that q names for a (see
// statement.Service.Open), its payment rows naming their counterparty and
// reference.
func (s *Service) Open(ctx context.Context, a actor.Actor, orgID uuid.UUID, q statement.Query) (*statement.Statement, error) {
	st, err := s.Statements.Open(ctx, a, orgID, q)
	if err != nil {
		return nil, err
	}
	st.Parties = func(ctx context.Context, ids []uuid.UUID) (map[uuid.UUID]statement.Party, error) {
		found, err := payment.Parties(ctx, s.DB.Reader(), orgID, ids)
		out := make(map[uuid.UUID]statement.Party, len(found))
		for id, p := range found {
			out[id] = statement.Party{Counterparty: p.Name, Reference: p.Reference}
		}
		return out, err
	}
	return st, nil
}
