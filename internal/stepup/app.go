package stepup

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/metrics"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Credential is the approving app's key on one device.
type Credential struct {
	ID         uuid.UUID
	Label      string
	InsertedAt time.Time
}

// CredentialRequest is the body of registering an approval credential.
type CredentialRequest struct {
	PublicKey string `json:"public_key"`
	Label     string `json:"label"`
}

// Validate checks the body's fields.
func (r CredentialRequest) Validate() error {
	var f apierr.Fields
	key, err := base64.RawURLEncoding.DecodeString(r.PublicKey)
	f.Check(err == nil && len(key) == ed25519.PublicKeySize, "public_key", "must be a base64url raw Ed25519 public key (32 bytes).")
	f.Check(r.Label != "" && len(r.Label) <= 100, "label", "is required (at most 100 characters).")
	return f.Err()
}

// errAppOnly refuses what only the service's own mobile apps may do: a
// server must never register itself as a person's phone.
var errAppOnly = apierr.New(apierr.Forbidden, "Only the Strongroom iOS and Android apps can register an approval credential; a server must never act as a person's phone.")

// RegisterCredential stores the approving app's key for the calling device,
// replacing the device's earlier one. It is step-up gated (the first
// credential too) by a code, never by the app: the app's key is what
// changes, so a stolen app session alone cannot plant its own key. The
// registration spends the step-up it relied on (see Spend): one code
// registers one key, and a second registration or any other gated call
// asks again, even within the sudo window. The person gets a security
// alert naming the device.
func (s *Service) RegisterCredential(ctx context.Context, a actor.Actor, r CredentialRequest) (Credential, error) {
	if !a.Session.Platform.IsApp() {
		return Credential{}, errAppOnly
	}
	return Spend(ctx, s, a, GateWithoutApp, func(tx *db.Tx) (Credential, error) {
		c := Credential{ID: uuid.Must(uuid.NewV7()), Label: r.Label, InsertedAt: tx.Now()}
		return c, storeCredential(ctx, tx, c, a.UserID, a.Session.DeviceID, r.PublicKey, nil)
	})
}

// storeCredential makes c the approval credential of deviceID (replacing
// the device's earlier one) and tells the person. c.InsertedAt is tx.Now().
func storeCredential(ctx context.Context, tx *db.Tx, c Credential, userID, deviceID uuid.UUID, publicKey string, sealedKey *string) error {
	device, err := identity.GetDevice(ctx, tx, userID, deviceID)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM approval_credentials WHERE device_id = $1`, deviceID); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO approval_credentials (id, user_id, device_id, public_key, label, sandbox_private_key, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		c.ID, userID, deviceID, publicKey, c.Label, sealedKey, c.InsertedAt); err != nil {
		return err
	}
	_, err = outbox.Queue(ctx, tx, outbox.Message{UserID: &userID, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
		Subject: "Security alert: a device can now approve for you",
		Body: fmt.Sprintf("The Strongroom app on %s was registered to approve payments and confirm sensitive actions for you (key %q) at %s UTC. "+
			"If this was not you, sign out that device, change your password and contact support.",
			device.Describe(), c.Label, c.InsertedAt.UTC().Format("2006-01-02 15:04"))})
	if err != nil {
		return err
	}
	return audit.RecordForPerson(ctx, tx, userID, audit.OriginOf(ctx).Actor, audit.ApprovingAppRegistered, audit.To("approval_credential", c.ID))
}

// Challenge is an assurance challenge as the app sees it (docs/api.md,
// Step-up and the approving app).
type Challenge struct {
	ID             uuid.UUID
	ActionSummary  *string
	Binding        string
	ExpiresAt      *time.Time
	InsertedAt     time.Time
	OriginRail     string
	RequiredLevel  string
	Status         string
	SigningPayload string
	Kind           string
	// StepUpAuthenticationID is set for a step_up challenge; a payment
	// approval points at its approval alone.
	StepUpAuthenticationID *uuid.UUID
	ApprovalID             *uuid.UUID
}

var challengeColumns = challengeColumnsOf("")

// challengeColumnsOf lists the columns scanChallenge reads, each prefixed
// with the table's alias and a dot when alias is given.
func challengeColumnsOf(alias string) string {
	cols := []string{"id", "action_summary", "binding", "expires_at", "inserted_at", "origin_rail", "required_level", "status",
		"signing_payload", "kind", "step_up_authentication_id", "approval_id", "match_failures"}
	if alias != "" {
		for i, c := range cols {
			cols[i] = alias + "." + c
		}
	}
	return strings.Join(cols, ", ")
}

// scanChallenge reads a row of challengeColumns, then extra columns into
// extra; it returns the challenge and its count of wrong match codes.
func scanChallenge(row interface{ Scan(...any) error }, extra ...any) (Challenge, int, error) {
	var c Challenge
	var stepUpID uuid.UUID
	var expires time.Time
	var failures int
	err := row.Scan(append([]any{&c.ID, &c.ActionSummary, &c.Binding, &expires, &c.InsertedAt, &c.OriginRail, &c.RequiredLevel, &c.Status,
		&c.SigningPayload, &c.Kind, &stepUpID, &c.ApprovalID, &failures}, extra...)...)
	if err != nil {
		return c, 0, err
	}
	expires, c.InsertedAt = expires.UTC(), c.InsertedAt.UTC()
	c.ExpiresAt = &expires
	if c.Kind == KindStepUp {
		c.StepUpAuthenticationID = &stepUpID
	}
	return c, failures, nil
}

// Inbox lists the actor's pending challenges, newest first: the fallback
// for pushes that did not arrive. It only reads: a challenge whose time is
// up is left out here and marked expired by the next write that meets it
// (expireStale), so polling the inbox never queues behind the writer.
func (s *Service) Inbox(ctx context.Context, a actor.Actor, req page.Request) ([]Challenge, error) {
	q := s.DB.Reader()
	rows, err := q.QueryContext(ctx, `SELECT `+challengeColumns+` FROM assurance_challenges
		WHERE user_id = $1 AND status = 'pending' AND expires_at > $2 AND (id < $3 OR $3 IS NULL) ORDER BY id DESC LIMIT $4`,
		a.UserID, q.Now().UTC(), req.AfterUUID(), req.Limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Challenge
	for rows.Next() {
		c, _, err := scanChallenge(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// ChallengePageKey positions a page after c.
func ChallengePageKey(c Challenge) page.Key { return page.Key{ID: c.ID.String()} }

// pendingChallenge is one of the actor's challenges read for update, still
// pending, with the step-up it answers, its match code's hash and the
// approval credential of the actor's device (nil when it holds none).
type pendingChallenge struct {
	Challenge
	matchFailures    int
	sudoID, stepUpID uuid.UUID
	matchCodeHash    string
	publicKey        *string
}

// loadPending reads one of the actor's challenges for update, with the
// step-up it answers: not_found for another person's challenge, conflict
// for one that is no longer pending (expired ones are marked so first).
//
// Its one statement locks the sudo session the challenge belongs to first,
// then the challenge, then its step-up authentication: the sudo session is
// the first lock of every transaction that changes a step-up (see
// loadSudo). PostgreSQL locks a row's tables in the order FOR UPDATE OF
// names them, and returns the rows it locked as they are once locked. The
// same statement reads the public key of the actor device's approval
// credential, which VerifyApproval needs.
func loadPending(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (pendingChallenge, error) {
	var p pendingChallenge
	var err error
	p.Challenge, p.matchFailures, err = scanChallenge(tx.QueryRowContext(ctx, `SELECT `+challengeColumnsOf("c")+`, su.id, ss.id,
		       c.match_code_hash, (SELECT k.public_key FROM approval_credentials k WHERE k.device_id = $3 AND k.user_id = $2)
		FROM sudo_sessions ss
		JOIN step_up_authentications su ON su.sudo_session_id = ss.id
		JOIN assurance_challenges c ON c.step_up_authentication_id = su.id
		WHERE c.id = $1 AND c.user_id = $2`+tx.ForUpdateOf("ss, c, su"), id, a.UserID, a.Session.DeviceID),
		&p.stepUpID, &p.sudoID, &p.matchCodeHash, &p.publicKey)
	if errors.Is(err, sql.ErrNoRows) {
		return p, apierr.NotFoundf("Challenge")
	}
	if err != nil {
		return p, err
	}
	if p.Status == StatusPending && !tx.Now().Before(*p.ExpiresAt) {
		// Its time is up: it and its step-up expire as every stale state of
		// the person does when next met.
		if err := expireStale(ctx, tx, a.UserID); err != nil {
			return p, err
		}
		p.Status = StatusExpired
	}
	if p.Status != StatusPending {
		return p, errNotPending(p.Challenge)
	}
	return p, nil
}

func errNotPending(c Challenge) error {
	return apierr.Newf(apierr.Conflict, "This challenge is no longer pending (it is %s).", c.Status)
}

// ApproveRequest is the body of approving a challenge in the app.
type ApproveRequest struct {
	MatchCode *string `json:"match_code"`
	Signature string  `json:"signature"`
}

// Validate checks the body's fields.
func (r ApproveRequest) Validate() error {
	var f apierr.Fields
	if r.MatchCode != nil {
		f.Check(len(*r.MatchCode) == 3, "match_code", "must be the three digits shown where the action was started.")
	}
	_, err := base64.RawURLEncoding.DecodeString(r.Signature)
	f.Check(r.Signature != "" && err == nil, "signature", "is required: base64url Ed25519 signature of the decoded signing_payload.")
	return f.Err()
}

// Verified is an approval of a challenge that VerifyApproval accepted in a
// transaction; that same transaction settles it with Satisfy, Consume or
// DeclineUnfunded.
type Verified struct {
	challenge pendingChallenge
}

// PaymentApprovalID is the payment approval the challenge approves, or nil
// for a step-up challenge.
func (v Verified) PaymentApprovalID() *uuid.UUID {
	if v.challenge.Kind != KindPaymentApproval {
		return nil
	}
	return v.challenge.ApprovalID
}

// VerifyApproval checks, in tx, an approval of challenge id by the actor's
// app: the challenge is the actor's (else not_found) and pending (else
// conflict), this device holds an approval credential (else
// approval_credential_required), the match code shown on the originating
// surface is given (else invalid_request) and right, unless that surface is
// the app itself, and the signature verifies (else invalid_signature).
//
// A wrong match code answers match_code_mismatch as a refusal (see
// Answering): it is counted, and the MaxMatchFailures-th declines the
// challenge and its step-up.
func (s *Service) VerifyApproval(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID, r ApproveRequest) (Verified, error) {
	c, err := loadPending(ctx, tx, a, id)
	if err != nil {
		return Verified{}, err
	}
	if c.publicKey == nil {
		return Verified{}, apierr.New(apierr.ApprovalCredentialRequired, "Register this device's approval credential in the Strongroom app before approving.")
	}
	if c.OriginRail != "native_app" {
		if err := s.checkMatchCode(ctx, tx, a, c, r.MatchCode); err != nil {
			return Verified{}, err
		}
	}
	key, _ := base64.RawURLEncoding.DecodeString(*c.publicKey)
	payload, _ := base64.RawURLEncoding.DecodeString(c.SigningPayload)
	sig, _ := base64.RawURLEncoding.DecodeString(r.Signature)
	if !ed25519.Verify(key, payload, sig) {
		return Verified{}, apierr.New(apierr.InvalidSignature, "The signature does not verify with this device's approval credential.")
	}
	return Verified{challenge: c}, nil
}

// checkMatchCode compares the match code the person typed in the app with
// the one shown where the action started; a mismatch is counted and is a
// refusal, the MaxMatchFailures-th declining the challenge.
func (s *Service) checkMatchCode(ctx context.Context, tx *db.Tx, a actor.Actor, c pendingChallenge, matchCode *string) error {
	if matchCode == nil {
		return apierr.InvalidField("match_code", "is required: enter the three digits shown where the action was started.")
	}
	if keyring.Equal(c.matchCodeHash, s.Keys.Hash(matchPurpose, c.ID.String()+":"+*matchCode)) {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE assurance_challenges SET match_failures = match_failures + 1 WHERE id = $1`, c.ID); err != nil {
		return err
	}
	tx.AfterCommit(func() { metrics.StepUp(metrics.StepUpMatchMismatch) })
	if c.matchFailures+1 >= MaxMatchFailures {
		if err := s.decline(ctx, tx, a, c); err != nil {
			return err
		}
	}
	return refuse(apierr.New(apierr.MatchCodeMismatch, "The code does not match the one shown where the action was started."))
}

// Satisfy settles a verified approval: the step-up's sudo window opens and
// the challenge is answered satisfied.
func (s *Service) Satisfy(ctx context.Context, tx *db.Tx, v Verified) (Challenge, error) {
	return settle(ctx, tx, v, ChallengeSatisfied)
}

// Consume is Satisfy for a payment approval recorded in the same
// transaction: its challenge ends consumed, not to be answered again.
func (s *Service) Consume(ctx context.Context, tx *db.Tx, v Verified) (Challenge, error) {
	return settle(ctx, tx, v, ChallengeConsumed)
}

// settle opens the sudo window of a verified approval and answers its
// challenge as status, returning the challenge as it now stands: as
// loadPending read it under lock, at status.
func settle(ctx context.Context, tx *db.Tx, v Verified, status string) (Challenge, error) {
	ok, err := activate(ctx, tx, v.challenge.sudoID, v.challenge.stepUpID, MethodApp, status)
	if err == nil && !ok {
		err = errNotPending(v.challenge.Challenge)
	}
	if err != nil {
		return Challenge{}, err
	}
	c := v.challenge.Challenge
	c.Status = status
	return c, nil
}

// DeclineRefused declines a verified payment approval that could not be
// recorded: funds fell short, or the approver lost the role since approve.
// The challenge (with the refusal's type as decline reason, which no
// decline alert counts) and its step-up end declined. It returns refused
// as a refusal (see Answering), so the decline commits and refused is the
// answer.
func (s *Service) DeclineRefused(ctx context.Context, tx *db.Tx, v Verified, refused *apierr.Error) error {
	if _, err := tx.ExecContext(ctx, `UPDATE assurance_challenges SET decline_reason = $2 WHERE id = $1`, v.challenge.ID, refused.Type); err != nil {
		return err
	}
	if err := end(ctx, tx, v.challenge.sudoID, v.challenge.stepUpID, StatusDeclined); err != nil {
		return err
	}
	return refuse(refused)
}

// Decline answers "I did not request this": the challenge and the step-up it
// gates die, and repeated declines raise a security alert.
func (s *Service) Decline(ctx context.Context, a actor.Actor, id uuid.UUID) (Challenge, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Challenge, error) {
		c, err := loadPending(ctx, tx, a, id)
		if err != nil {
			return Challenge{}, err
		}
		if err := s.decline(ctx, tx, a, c); err != nil {
			return Challenge{}, err
		}
		// decline moved the pending challenge, locked since loadPending, on.
		declined := c.Challenge
		declined.Status = StatusDeclined
		return declined, nil
	})
}

func (s *Service) decline(ctx context.Context, tx *db.Tx, a actor.Actor, c pendingChallenge) error {
	if err := end(ctx, tx, c.sudoID, c.stepUpID, StatusDeclined); err != nil {
		return err
	}
	if err := alertOnRepeatedDeclines(ctx, tx, a.UserID); err != nil {
		return err
	}
	return audit.RecordForPerson(ctx, tx, a.UserID, audit.OriginOf(ctx).Actor, audit.StepUpDeclined, audit.To("step_up", c.stepUpID))
}

// alertOnRepeatedDeclines tells the person and the owners of their
// organizations when declines reach the threshold within a day: someone may
// know the password and be trying their luck. One alert per window.
func alertOnRepeatedDeclines(ctx context.Context, tx *db.Tx, userID uuid.UUID) error {
	var declines int
	if err := tx.QueryRowContext(ctx, `
		SELECT count(*) FROM assurance_challenges WHERE user_id = $1 AND status = 'declined' AND decline_reason IS NULL AND decided_at > $2`,
		userID, tx.Now().Add(-DeclineAlertWindow)).Scan(&declines); err != nil {
		return err
	}
	if declines < DeclineAlertThreshold {
		return nil
	}
	first, err := claimAlert(ctx, tx, userID, declinesAlerted, DeclineAlertWindow)
	if err != nil || !first {
		return err
	}
	u, err := identity.GetUser(ctx, tx, userID)
	if err != nil {
		return err
	}
	owners, err := organization.CoOwnersOf(ctx, tx, userID)
	if err != nil {
		return err
	}
	body := fmt.Sprintf("%s declined %d verification requests in the last 24 hours. Someone may know their password and be trying to act as them. Review their recent sign-ins and consider resetting their password.", u.Email, declines)
	for _, r := range append([]uuid.UUID{userID}, owners...) {
		if _, err := outbox.Queue(ctx, tx, outbox.Message{UserID: &r, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
			Subject: "Security alert: repeated declined verification requests", Body: body}); err != nil {
			return err
		}
	}
	return nil
}
