package event

import (
	"context"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// ErrNotFound: no event of that id in the organization within the window.
var ErrNotFound = errors.New("event: not found")

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
