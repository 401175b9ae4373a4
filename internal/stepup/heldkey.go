package stepup

import (
	"context"
	"database/sql"
	"errors"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// A held-key credential is an approval credential whose private key the
// server holds, sealed: the sandbox's software approving app
// (internal/sandbox, ApprovingApp), which answers challenges without a
// phone. Step-up owns the credentials' table, so the three functions below
// are its narrow door for that app: which device holds one, storing one,
// and what a challenge's answer needs. Making, sealing and signing with the
// key is the app's.

// HeldKeyDevice returns the device of userID's held-key credential, in tx;
// ok is false when the person has none.
func HeldKeyDevice(ctx context.Context, tx *db.Tx, userID uuid.UUID) (deviceID uuid.UUID, ok bool, err error) {
	err = tx.QueryRowContext(ctx, `SELECT device_id FROM approval_credentials WHERE user_id = $1 AND sandbox_private_key IS NOT NULL`,
		userID).Scan(&deviceID)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, false, nil
	}
	return deviceID, err == nil, err
}

// StoreHeldKeyCredential makes c, with publicKey and the private key sealed
// as sealedKey, the approval credential of deviceID (replacing the device's
// earlier one), with no step-up, and tells the person as for any new
// credential. c.InsertedAt is tx.Now().
func StoreHeldKeyCredential(ctx context.Context, tx *db.Tx, c Credential, userID, deviceID uuid.UUID, publicKey, sealedKey string) error {
	return storeCredential(ctx, tx, c, userID, deviceID, publicKey, &sealedKey)
}

// HeldKeyChallenge is what answering a challenge with a held key needs:
// the challenge's person and signing payload, and the device and sealed
// private key of that person's held-key credential (SealedKey nil when the
// person has none).
type HeldKeyChallenge struct {
	UserID         uuid.UUID
	SigningPayload string
	DeviceID       uuid.UUID
	SealedKey      *string
}

// HeldKeyFor reads challengeID for its answer by a held key; not_found for
// an unknown challenge.
func HeldKeyFor(ctx context.Context, q db.Reader, challengeID uuid.UUID) (HeldKeyChallenge, error) {
	var h HeldKeyChallenge
	err := q.QueryRowContext(ctx, `
		SELECT c.user_id, c.signing_payload, k.device_id, k.sandbox_private_key
		FROM assurance_challenges c
		LEFT JOIN approval_credentials k ON k.user_id = c.user_id AND k.sandbox_private_key IS NOT NULL
		WHERE c.id = $1`, challengeID).Scan(&h.UserID, &h.SigningPayload, &h.DeviceID, &h.SealedKey)
	if errors.Is(err, sql.ErrNoRows) {
		return HeldKeyChallenge{}, apierr.NotFoundf("Challenge")
	}
	return h, err
}
