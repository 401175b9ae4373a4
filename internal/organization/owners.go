package organization

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// CoOwnersOf lists the owners of every organization userID belongs to,
// userID aside, each once: the people told when someone of theirs may be
// under attack.
func CoOwnersOf(ctx context.Context, q db.Reader, userID uuid.UUID) ([]uuid.UUID, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT DISTINCT o.user_id FROM memberships m JOIN memberships o ON o.organization_id = m.organization_id AND o.role = 'owner'
		WHERE m.user_id = $1 AND o.user_id <> $1 ORDER BY o.user_id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}

// RequiresTOTPFor reports whether any organization userID belongs to
// requires an authenticator app of its members.
func RequiresTOTPFor(ctx context.Context, q db.Reader, userID uuid.UUID) (bool, error) {
	var requires bool
	err := q.QueryRowContext(ctx, `
		SELECT EXISTS (SELECT 1 FROM memberships m JOIN organizations o ON o.id = m.organization_id
		               WHERE m.user_id = $1 AND o.requires_totp)`, userID).Scan(&requires)
	return requires, err
}

// MembersAtLeast lists the members of orgID whose role is role or higher
// (owners and admins for Admin): the people told of a security-relevant
// change in the organization.
func MembersAtLeast(ctx context.Context, q db.Reader, orgID uuid.UUID, role Role) ([]uuid.UUID, error) {
	var roles []any
	for _, r := range []Role{Owner, Admin, Member} {
		if r.AtLeast(role) {
			roles = append(roles, string(r))
		}
	}
	for len(roles) < 3 {
		roles = append(roles, string(Owner))
	}
	rows, err := q.QueryContext(ctx, `
		SELECT user_id FROM memberships WHERE organization_id = $1 AND role IN ($2, $3, $4) ORDER BY user_id LIMIT 1000`,
		append([]any{orgID}, roles...)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []uuid.UUID
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
