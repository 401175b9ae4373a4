package identity

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Device is a client a person signed in from.
type Device struct {
	ID         uuid.UUID
	UserID     uuid.UUID
	Name       *string
	Platform   actor.Platform
	InsertedAt time.Time
	LastSeenAt time.Time
}

func createDevice(ctx context.Context, q db.Querier, userID uuid.UUID, name *string, p actor.Platform) (Device, error) {
	now := q.Now()
	d := Device{ID: uuid.Must(uuid.NewV7()), UserID: userID, Name: name, Platform: p, InsertedAt: now, LastSeenAt: now}
	_, err := q.ExecContext(ctx, `INSERT INTO devices (id, user_id, name, platform, inserted_at, last_seen_at) VALUES ($1, $2, $3, $4, $5, $5)`,
		d.ID, userID, name, p, now)
	return d, err
}

// findDevice returns userID's device id, or ok=false when it is not theirs.
func findDevice(ctx context.Context, q db.Reader, userID, id uuid.UUID) (Device, bool, error) {
	var d Device
	err := q.QueryRowContext(ctx, `SELECT id, user_id, name, platform, inserted_at, last_seen_at FROM devices WHERE id = $1 AND user_id = $2`, id, userID).
		Scan(&d.ID, &d.UserID, &d.Name, &d.Platform, &d.InsertedAt, &d.LastSeenAt)
	if errors.Is(err, sql.ErrNoRows) {
		return d, false, nil
	}
	return d, err == nil, err
}

// Devices lists the actor's devices, newest first.
func (s *Service) Devices(ctx context.Context, a actor.Actor, req page.Request) ([]Device, error) {
	rows, err := s.DB.Reader().QueryContext(ctx, `
		SELECT id, user_id, name, platform, inserted_at, last_seen_at FROM devices
		WHERE user_id = $1 AND (id < $2 OR $2 IS NULL)
		ORDER BY id DESC LIMIT $3`, a.UserID, req.AfterUUID(), req.Limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Device
	for rows.Next() {
		var d Device
		if err := rows.Scan(&d.ID, &d.UserID, &d.Name, &d.Platform, &d.InsertedAt, &d.LastSeenAt); err != nil {
			return nil, err
		}
		d.InsertedAt, d.LastSeenAt = d.InsertedAt.UTC(), d.LastSeenAt.UTC()
		out = append(out, d)
	}
	return out, rows.Err()
}

// DevicePageKey positions a page after d.
func DevicePageKey(d Device) page.Key { return page.Key{ID: d.ID.String()} }
