package sandbox

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/flow/approving"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/stepup"
)

// ApprovingAppName names the sandbox app's device and credential.
const ApprovingAppName = "Sandbox approving app"

// appKeyPurpose keys the sealing of the sandbox app's private keys.
const appKeyPurpose = "sandbox-approving-app"

// ApprovingApp stands in for the approving app on a person's phone
// (docs/api.md, The sandbox): an approval credential whose Ed25519 key the
// server holds, sealed with the keyring (stepup's held-key credential), so
// tests and integrators can answer challenges without a phone.
type ApprovingApp struct {
	DB   *db.DB
	Keys *keyring.Keyring
	// Approving answers a challenge as the phone's answer would be.
	Approving *approving.Service
}

// RegisteredApp answers the sandbox's approving-app helper.
type RegisteredApp struct {
	DeviceID     uuid.UUID
	CredentialID uuid.UUID
}

// Register gives userID a software approving app: a device of its own
// (platform ios) with an approval credential whose private key the server
// keeps sealed. No step-up; it replaces the person's earlier sandbox app,
// keeping its device. The person gets the usual security alert.
func (a *ApprovingApp) Register(ctx context.Context, userID uuid.UUID) (RegisteredApp, error) {
	return db.InTx(ctx, a.DB, func(tx *db.Tx) (RegisteredApp, error) { return a.register(ctx, tx, userID) })
}

// register is Register in the caller's transaction.
func (a *ApprovingApp) register(ctx context.Context, tx *db.Tx, userID uuid.UUID) (RegisteredApp, error) {
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return RegisteredApp{}, err
	}
	sealed, err := a.Keys.Seal(appKeyPurpose, key.Seed())
	if err != nil {
		return RegisteredApp{}, err
	}
	if _, err := identity.GetUser(ctx, tx, userID); err != nil {
		return RegisteredApp{}, err
	}
	var out RegisteredApp
	deviceID, ok, err := stepup.HeldKeyDevice(ctx, tx, userID)
	switch {
	case err != nil:
		return RegisteredApp{}, err
	case ok:
		out.DeviceID = deviceID
	default:
		d, err := identity.CreateDevice(ctx, tx, userID, ApprovingAppName, actor.PlatformIOS)
		if err != nil {
			return RegisteredApp{}, err
		}
		out.DeviceID = d.ID
	}
	out.CredentialID = uuid.Must(uuid.NewV7())
	c := stepup.Credential{ID: out.CredentialID, Label: ApprovingAppName, InsertedAt: tx.Now()}
	return out, stepup.StoreHeldKeyCredential(ctx, tx, c, userID, out.DeviceID, base64.RawURLEncoding.EncodeToString(pub), sealed)
}

// ApproveRequest is the body of the sandbox's challenge approval.
type ApproveRequest struct {
	MatchCode *string `json:"match_code"`
}

// Validate checks the body's fields.
func (r ApproveRequest) Validate() error {
	var f apierr.Fields
	if r.MatchCode != nil {
		f.Check(len(*r.MatchCode) == 3, "match_code", "must be the three digits shown where the action was started.")
	}
	return f.Err()
}

// Approve answers a challenge as the sandbox app of its person would: it
// signs the challenge's signing_payload with the sealed key, then approves
// through approving.Service.Approve, so every check and error is the
// phone's. not_found for an unknown challenge; approval_credential_required
// when the person has no sandbox app.
func (a *ApprovingApp) Approve(ctx context.Context, challengeID uuid.UUID, r ApproveRequest) (stepup.Challenge, error) {
	who, answer, err := a.answer(ctx, challengeID, r)
	if err != nil {
		return stepup.Challenge{}, err
	}
	return a.Approving.Approve(ctx, who, challengeID, answer)
}

// answer is the approval the sandbox app of the challenge's person would
// send, and who sends it: that person on the app's device.
func (a *ApprovingApp) answer(ctx context.Context, challengeID uuid.UUID, r ApproveRequest) (actor.Actor, stepup.ApproveRequest, error) {
	h, err := stepup.HeldKeyFor(ctx, a.DB.Reader(), challengeID)
	if err != nil {
		return actor.Actor{}, stepup.ApproveRequest{}, err
	}
	if h.SealedKey == nil {
		return actor.Actor{}, stepup.ApproveRequest{}, apierr.New(apierr.ApprovalCredentialRequired,
			"This person has no sandbox approving app: create one with POST /api/v1/sandbox/users/{user_id}/approving-app first.")
	}
	seed, err := a.Keys.Open(appKeyPurpose, *h.SealedKey)
	if err != nil {
		return actor.Actor{}, stepup.ApproveRequest{}, err
	}
	message, err := base64.RawURLEncoding.DecodeString(h.SigningPayload)
	if err != nil {
		return actor.Actor{}, stepup.ApproveRequest{}, err
	}
	signature := base64.RawURLEncoding.EncodeToString(ed25519.Sign(ed25519.NewKeyFromSeed(seed), message))
	who := actor.Actor{UserID: h.UserID, Session: actor.Session{UserID: h.UserID, DeviceID: h.DeviceID, Platform: actor.PlatformIOS}}
	return who, stepup.ApproveRequest{MatchCode: r.MatchCode, Signature: signature}, nil
}
