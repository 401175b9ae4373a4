package payment

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// counterparty is the name by which the ledger and the transactions feed
// describe a payment's recipient: its payment contact's name, never an
// internal id (docs/api.md, Payments).
func counterparty(ctx context.Context, q db.Reader, contactID uuid.UUID) (string, error) {
	var name string
	err := q.QueryRowContext(ctx, `SELECT name FROM payment_contacts WHERE id = $1`, contactID).Scan(&name)
	return name, err
}

// Party is who a payment paid and the reference it carried to them (its
// statement description; nil for a crypto payment, which has none).
type Party struct {
	Name      string
	Reference *string
}

// Parties returns the party of each of orgID's payments among ids, by
// payment; another organization's payments are left out.
func Parties(ctx context.Context, q db.Reader, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]Party, error) {
	out := make(map[uuid.UUID]Party, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	args = append(args, orgID)
	for _, id := range ids {
		args = append(args, id)
	}
	type row struct {
		id    uuid.UUID
		party Party
	}
	rows, err := db.QueryAll(ctx, q, func(s db.Scanner) (row, error) {
		var r row
		return r, s.Scan(&r.id, &r.party.Name, &r.party.Reference)
	}, `SELECT p.id, c.name, p.statement_description FROM payments p JOIN payment_contacts c ON c.id = p.payment_contact_id
		WHERE p.organization_id = $1 AND p.id IN (`+db.Placeholders(2, len(ids))+`)`, args...)
	for _, r := range rows {
		out[r.id] = r.party
	}
	return out, err
}
