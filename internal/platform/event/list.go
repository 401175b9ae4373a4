package event

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// ErrNotFound: no event of that id in the organization within the window.
var ErrNotFound = errors.New("event: not found")

// Filter selects an organization's events for List.
type Filter struct {
	// Since is the oldest occurred_at shown (the window kept for reading).
	Since time.Time
	// From (inclusive) and To (exclusive) narrow occurred_at further when set.
	From, To *time.Time
	// Types are exact event types, Prefixes type prefixes ("payment."): an
	// event matches either; none of both matches every type.
	Types, Prefixes []string
}

// ListKey is a position in the newest-first order of List: an event's
// occurred_at and id.
type ListKey struct {
	OccurredAt time.Time
	ID         uuid.UUID
}

// KeyOf is e's position in List's order.
func KeyOf(e Event) ListKey { return ListKey{OccurredAt: e.OccurredAt, ID: e.ID} }

// List returns up to limit of orgID's events matching f, newest first (by
// occurred_at, then id), after the position after when set.
func List(ctx context.Context, q db.Reader, orgID uuid.UUID, f Filter, after *ListKey, limit int) ([]Event, error) {
	from := f.Since.UTC()
	if f.From != nil && f.From.After(from) {
		from = f.From.UTC()
	}
	args := []any{orgID, from}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var where strings.Builder
	if f.To != nil {
		where.WriteString(` AND occurred_at < ` + arg(f.To.UTC()))
	}
	if after != nil {
		at := after.OccurredAt.UTC()
		where.WriteString(` AND (occurred_at < ` + arg(at) + ` OR (occurred_at = ` + arg(at) + ` AND id < ` + arg(after.ID) + `))`)
	}
	if len(f.Types)+len(f.Prefixes) > 0 {
		var alts []string
		for _, t := range f.Types {
			alts = append(alts, `type = `+arg(t))
		}
		for _, p := range f.Prefixes {
			alts = append(alts, `type LIKE `+arg(likePrefix(p))+` ESCAPE '\'`)
		}
		where.WriteString(` AND (` + strings.Join(alts, ` OR `) + `)`)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM domain_events
		WHERE organization_id = $1 AND occurred_at >= $2`+where.String()+`
		ORDER BY occurred_at DESC, id DESC LIMIT `+arg(limit), args...)
	if err != nil {
		return nil, err
	}
	return scanEvents(rows, nil)
}

// likePrefix is a LIKE pattern matching what starts with p.
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p) + "%"
}

// Get returns orgID's event id if it occurred at or after since, else
// ErrNotFound.
func Get(ctx context.Context, q db.Reader, orgID, id uuid.UUID, since time.Time) (Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM domain_events
		WHERE id = $1 AND organization_id = $2 AND occurred_at >= $3`, id, orgID, since.UTC())
	if err != nil {
		return Event{}, err
	}
	events, err := scanEvents(rows, nil)
	if err != nil {
		return Event{}, err
	}
	if len(events) == 0 {
		return Event{}, ErrNotFound
	}
	return events[0], nil
}
