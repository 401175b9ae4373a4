package stepup

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/base64"
	"errors"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// The sandbox's software approving app (docs/api.md, The sandbox): an approval
// credential whose Ed25519 key the server holds, sealed with the keyring,
// so tests and integrators can answer challenges without a phone. It exists
// only behind the sandbox helpers of environment test.

// SandboxAppName names the sandbox app's device and credential.
const SandboxAppName = "Sandbox approving app"

// sandboxKeyPurpose keys the sealing of the sandbox app's private keys.
const sandboxKeyPurpose = "sandbox-approving-app"

// SandboxApp answers the sandbox's approving-app helper.
type SandboxApp struct {
	DeviceID     uuid.UUID
	CredentialID uuid.UUID
}

// RegisterSandboxApp gives userID a software approving app: a device of its
// own (platform ios) with an approval credential whose private key the
// server keeps sealed. No step-up; it replaces the person's earlier sandbox
// app, keeping its device. The person gets the usual security alert.
func (s *Service) RegisterSandboxApp(ctx context.Context, userID uuid.UUID) (SandboxApp, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return SandboxApp{}, err
	}
	sealed, err := s.Keys.Seal(sandboxKeyPurpose, key.Seed())
	if err != nil {
		return SandboxApp{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (SandboxApp, error) {
		if _, err := identity.GetUser(ctx, tx, userID); err != nil {
			return SandboxApp{}, err
		}
		var out SandboxApp
		err := tx.QueryRowContext(ctx, `SELECT device_id FROM approval_credentials WHERE user_id = $1 AND sandbox_private_key IS NOT NULL`,
			userID).Scan(&out.DeviceID)
		if errors.Is(err, sql.ErrNoRows) {
			d, err := identity.CreateDevice(ctx, tx, tx.Now(), userID, SandboxAppName, actor.PlatformIOS)
			if err != nil {
				return SandboxApp{}, err
			}
			out.DeviceID = d.ID
		} else if err != nil {
			return SandboxApp{}, err
		}
		out.CredentialID = uuid.Must(uuid.NewV7())
		c := Credential{ID: out.CredentialID, Label: SandboxAppName, InsertedAt: tx.Now()}
		return out, storeCredential(ctx, tx, c, userID, out.DeviceID, base64.RawURLEncoding.EncodeToString(pub), &sealed)
	})
}

// SandboxApproveRequest is the body of the sandbox's challenge approval.
type SandboxApproveRequest struct {
	MatchCode *string `json:"match_code"`
}

// Validate checks the body's fields.
func (r SandboxApproveRequest) Validate() error {
	var f apierr.Fields
	if r.MatchCode != nil {
		f.Check(len(*r.MatchCode) == 3, "match_code", "must be the three digits shown where the action was started.")
	}
	return f.Err()
}

// SandboxAnswer is the approval the sandbox app of the challenge's person
// would send: it signs the challenge's signing_payload with the sealed key.
// Approving it (approving.Service.SandboxApprove) goes through every check
// and error of the phone's approval. not_found for an unknown challenge;
// approval_credential_required when the person has no sandbox app.
func (s *Service) SandboxAnswer(ctx context.Context, challengeID uuid.UUID, r SandboxApproveRequest) (actor.Actor, ApproveRequest, error) {
	var userID, deviceID uuid.UUID
	var payload string
	var sealed *string
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT c.user_id, c.signing_payload, k.device_id, k.sandbox_private_key
		FROM assurance_challenges c
		LEFT JOIN approval_credentials k ON k.user_id = c.user_id AND k.sandbox_private_key IS NOT NULL
		WHERE c.id = $1`, challengeID).Scan(&userID, &payload, &deviceID, &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return actor.Actor{}, ApproveRequest{}, apierr.NotFoundf("Challenge")
	}
	if err != nil {
		return actor.Actor{}, ApproveRequest{}, err
	}
	if sealed == nil {
		return actor.Actor{}, ApproveRequest{}, apierr.New(apierr.ApprovalCredentialRequired,
			"This person has no sandbox approving app: create one with POST /api/v1/sandbox/users/{user_id}/approving-app first.")
	}
	seed, err := s.Keys.Open(sandboxKeyPurpose, *sealed)
	if err != nil {
		return actor.Actor{}, ApproveRequest{}, err
	}
	message, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return actor.Actor{}, ApproveRequest{}, err
	}
	signature := base64.RawURLEncoding.EncodeToString(ed25519.Sign(ed25519.NewKeyFromSeed(seed), message))
	a := actor.Actor{UserID: userID, Session: actor.Session{UserID: userID, DeviceID: deviceID, Platform: actor.PlatformIOS}}
	return a, ApproveRequest{MatchCode: r.MatchCode, Signature: signature}, nil
}
