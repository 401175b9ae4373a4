package audit

import (
	"context"
	"database/sql"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service reads the audit log for the API.
type Service struct {
	DB *db.DB
}

// Filter narrows the list: one actor, one action, occurred_at within
// [From, To) (the handler turns inclusive calendar dates into instants).
type Filter struct {
	ActorID *uuid.UUID
	Action  string
	From    *time.Time
	To      *time.Time
}

// PageKey is an entry's place in the list: newest first, by seq.
func PageKey(e Entry) page.Key {
	return page.Key{Sort: strconv.FormatInt(e.Seq, 10), ID: e.ID.String()}
}

// List returns orgID's entries newest first, one more than the page's limit
// (page.Build cuts it). Owners and admins read it, with a session: no API
// key scope covers it (docs/api.md, Audit log).
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f Filter, req page.Request) ([]Entry, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Admin}); err != nil {
		return nil, err
	}
	query := `SELECT ` + entryColumns + ` FROM audit_entries WHERE organization_id = $1`
	args := []any{orgID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if req.After != nil {
		seq, err := strconv.ParseInt(req.After.Sort, 10, 64)
		if err != nil {
			return nil, err // a signed cursor always holds one
		}
		query += ` AND seq < ` + arg(seq)
	}
	if f.ActorID != nil {
		query += ` AND actor_id = ` + arg(*f.ActorID)
	}
	if f.Action != "" {
		query += ` AND action = ` + arg(f.Action)
	}
	if f.From != nil {
		query += ` AND occurred_at >= ` + arg(f.From.UTC())
	}
	if f.To != nil {
		query += ` AND occurred_at < ` + arg(f.To.UTC())
	}
	query += ` ORDER BY seq DESC LIMIT ` + arg(req.Limit+1)
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

const entryColumns = `id, organization_id, seq, occurred_at, actor_kind, actor_id, actor_name, action,
	target_type, target_id, request_id, client_address, hash`

func scanEntry(rows *sql.Rows) (Entry, error) {
	var (
		e       Entry
		actorID uuid.NullUUID
	)
	err := rows.Scan(&e.ID, &e.OrganizationID, &e.Seq, &e.OccurredAt, &e.Actor.Kind, &actorID, &e.Actor.Name, &e.Action,
		&e.Target.Type, &e.Target.ID, &e.RequestID, &e.ClientAddress, &e.Hash)
	if actorID.Valid {
		e.Actor.ID = &actorID.UUID
	}
	e.OccurredAt = e.OccurredAt.UTC()
	return e, err
}
