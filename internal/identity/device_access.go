package identity

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// GetDevice returns userID's device id; not_found when it is not theirs.
func GetDevice(ctx context.Context, q db.Reader, userID, id uuid.UUID) (Device, error) {
	d, ok, err := findDevice(ctx, q, userID, id)
	if err == nil && !ok {
		err = apierr.NotFoundf("Device")
	}
	return d, err
}

// CreateDevice records a device for userID that no sign-in made: the
// sandbox's software approving app. No new-device notice is sent.
func CreateDevice(ctx context.Context, q db.Querier, userID uuid.UUID, name string, p actor.Platform) (Device, error) {
	return createDevice(ctx, q, userID, &name, p)
}

// Describe names the device for messages to its person: "iPhone (ios)", or
// the platform alone when the device has no name.
func (d Device) Describe() string {
	if d.Name == nil || *d.Name == "" {
		return string(d.Platform)
	}
	return fmt.Sprintf("%s (%s)", *d.Name, d.Platform)
}
