package event

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// ErrNotFound is Get's answer for an event that is not stored.
var ErrNotFound = errors.New("event: not found")

// Get reads the event with id.
func Get(ctx context.Context, q db.Reader, id uuid.UUID) (Event, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM domain_events WHERE id = $1`, id)
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
