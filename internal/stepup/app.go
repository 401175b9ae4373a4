package stepup

import (
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/outbox"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Credential is the approving app's key on one device.
type Credential struct {
	ID         uuid.UUID `json:"id"`
	Label      string    `json:"label"`
	InsertedAt time.Time `json:"inserted_at"`
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

// errAppOnly refuses what only the service's own mobile apps may do (spec §5.9).
var errAppOnly = apierr.New(apierr.Forbidden, "Only the Strongroom iOS and Android apps can register an approval credential; a server must never act as a person's phone.")

// RegisterCredential stores the approving app's key for the calling device,
// replacing the device's earlier one. It is step-up gated (the first
// credential too) by a code, never by the app: the app's key is what
// changes, so a stolen app session alone cannot plant its own key. The
// person gets a security alert naming the device.
func (s *Service) RegisterCredential(ctx context.Context, a actor.Actor, r CredentialRequest) (Credential, error) {
	if !a.Session.Platform.IsApp() {
		return Credential{}, errAppOnly
	}
	if err := s.RequireWithoutApp(ctx, a); err != nil {
		return Credential{}, err
	}
	out := Credential{ID: uuid.Must(uuid.NewV7()), Label: r.Label}
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		out.InsertedAt = s.Clock.Now()
		return s.storeCredential(ctx, tx, out, a.UserID, a.Session.DeviceID, r.PublicKey, nil)
	})
	return out, err
}

// storeCredential makes c the approval credential of deviceID (replacing
// the device's earlier one) and tells the person.
func (s *Service) storeCredential(ctx context.Context, tx *db.Tx, c Credential, userID, deviceID uuid.UUID, publicKey string, sealedKey *string) error {
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
	_, err = outbox.Queue(ctx, tx, c.InsertedAt, outbox.Message{UserID: &userID, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
		Subject: "Security alert: a device can now approve for you",
		Body: fmt.Sprintf("The Strongroom app on %s was registered to approve payments and confirm sensitive actions for you (key %q) at %s UTC. "+
			"If this was not you, sign out that device, change your password and contact support.",
			device.Describe(), c.Label, c.InsertedAt.UTC().Format("2006-01-02 15:04"))})
	return err
}

// Challenge is an assurance challenge as the app sees it (spec 2.8, CONTRACT §4).
type Challenge struct {
	ID                     uuid.UUID  `json:"id"`
	ActionSummary          *string    `json:"action_summary"`
	Binding                string     `json:"binding"`
	ExpiresAt              *time.Time `json:"expires_at"`
	InsertedAt             time.Time  `json:"inserted_at"`
	OriginRail             string     `json:"origin_rail"`
	RequiredLevel          string     `json:"required_level"`
	Status                 string     `json:"status"`
	SigningPayload         string     `json:"signing_payload"`
	Kind                   string     `json:"kind"`
	StepUpAuthenticationID *uuid.UUID `json:"step_up_authentication_id"`
	ApprovalID             *uuid.UUID `json:"approval_id"`
}

const challengeColumns = `id, action_summary, binding, expires_at, inserted_at, origin_rail, required_level, status,
	signing_payload, kind, step_up_authentication_id, approval_id, match_failures`

func scanChallenge(row interface{ Scan(...any) error }) (Challenge, int, error) {
	var c Challenge
	var stepUpID uuid.UUID
	var expires time.Time
	var failures int
	err := row.Scan(&c.ID, &c.ActionSummary, &c.Binding, &expires, &c.InsertedAt, &c.OriginRail, &c.RequiredLevel, &c.Status,
		&c.SigningPayload, &c.Kind, &stepUpID, &c.ApprovalID, &failures)
	if err != nil {
		return c, 0, err
	}
	expires, c.InsertedAt = expires.UTC(), c.InsertedAt.UTC()
	c.ExpiresAt = &expires
	// A payment approval points at its approval alone (CONTRACT §4).
	if c.Kind == "step_up" {
		c.StepUpAuthenticationID = &stepUpID
	}
	return c, failures, nil
}

// Inbox lists the actor's pending challenges, newest first: the fallback
// for pushes that did not arrive.
func (s *Service) Inbox(ctx context.Context, a actor.Actor, req page.Request) ([]Challenge, error) {
	var out []Challenge
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		if err := s.expireStale(ctx, tx, s.Clock.Now(), a.UserID); err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+challengeColumns+` FROM assurance_challenges
			WHERE user_id = $1 AND status = 'pending' AND (id < $2 OR $2 IS NULL) ORDER BY id DESC LIMIT $3`,
			a.UserID, req.AfterUUID(), req.Limit+1)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			c, _, err := scanChallenge(rows)
			if err != nil {
				return err
			}
			out = append(out, c)
		}
		return rows.Err()
	})
	return out, err
}

// ChallengePageKey positions a page after c.
func ChallengePageKey(c Challenge) page.Key { return page.Key{ID: c.ID.String()} }

// loadChallenge reads one of the actor's challenges for update, after moving
// stale states on; another person's challenge is not found.
func (s *Service) loadChallenge(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Challenge, int, uuid.UUID, error) {
	if err := s.expireStale(ctx, tx, s.Clock.Now(), a.UserID); err != nil {
		return Challenge{}, 0, uuid.Nil, err
	}
	var stepUpID uuid.UUID
	if err := tx.QueryRowContext(ctx, `SELECT step_up_authentication_id FROM assurance_challenges WHERE id = $1 AND user_id = $2`+s.DB.ForUpdate(),
		id, a.UserID).Scan(&stepUpID); errors.Is(err, sql.ErrNoRows) {
		return Challenge{}, 0, uuid.Nil, apierr.NotFoundf("Challenge")
	} else if err != nil {
		return Challenge{}, 0, uuid.Nil, err
	}
	c, failures, err := scanChallenge(tx.QueryRowContext(ctx, `SELECT `+challengeColumns+` FROM assurance_challenges WHERE id = $1`, id))
	return c, failures, stepUpID, err
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

// Approve satisfies a pending challenge with the app's signature (and the
// match code shown on the originating surface, unless that surface is the
// app itself). Three wrong match codes decline it.
//
// A payment approval is recorded in the same transaction and its challenge
// answered at consumed; when funds fell short at that moment nothing is
// recorded, the challenge and its step-up are declined and the answer is
// insufficient_funds.
func (s *Service) Approve(ctx context.Context, a actor.Actor, id uuid.UUID, r ApproveRequest) (Challenge, error) {
	var out Challenge
	var failure error
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		c, failures, stepUpID, err := s.loadChallenge(ctx, tx, a, id)
		if err != nil {
			return err
		}
		if c.Status != StatusPending {
			return errNotPending(c)
		}
		var publicKey string
		err = tx.QueryRowContext(ctx, `SELECT public_key FROM approval_credentials WHERE device_id = $1 AND user_id = $2`,
			a.Session.DeviceID, a.UserID).Scan(&publicKey)
		if errors.Is(err, sql.ErrNoRows) {
			return apierr.New(apierr.ApprovalCredentialRequired, "Register this device's approval credential in the Strongroom app before approving.")
		}
		if err != nil {
			return err
		}
		if c.OriginRail != "native_app" {
			if r.MatchCode == nil {
				return apierr.InvalidField("match_code", "is required: enter the three digits shown where the action was started.")
			}
			var hash string
			if err := tx.QueryRowContext(ctx, `SELECT match_code_hash FROM assurance_challenges WHERE id = $1`, id).Scan(&hash); err != nil {
				return err
			}
			if !keyring.Equal(hash, s.Keys.Hash(matchPurpose, id.String()+":"+*r.MatchCode)) {
				failure = apierr.New(apierr.MatchCodeMismatch, "The code does not match the one shown where the action was started.")
				if _, err := tx.ExecContext(ctx, `UPDATE assurance_challenges SET match_failures = match_failures + 1 WHERE id = $1`, id); err != nil {
					return err
				}
				if failures+1 >= MaxMatchFailures {
					return s.decline(ctx, tx, now, a, id, stepUpID)
				}
				return nil
			}
		}
		key, _ := base64.RawURLEncoding.DecodeString(publicKey)
		payload, _ := base64.RawURLEncoding.DecodeString(c.SigningPayload)
		sig, _ := base64.RawURLEncoding.DecodeString(r.Signature)
		if !ed25519.Verify(key, payload, sig) {
			return apierr.New(apierr.InvalidSignature, "The signature does not verify with this device's approval credential.")
		}
		var x sudo
		if err := tx.QueryRowContext(ctx, `SELECT sudo_session_id FROM step_up_authentications WHERE id = $1`, stepUpID).Scan(&x.id); err != nil {
			return err
		}
		x.stepUpID = stepUpID
		payment := c.Kind == "payment_approval" && c.ApprovalID != nil && s.OnPaymentApproval != nil
		if payment {
			err := s.OnPaymentApproval(ctx, tx, *c.ApprovalID, a.UserID)
			if apierr.Is(err, apierr.InsufficientFunds) {
				// Nothing was recorded; the approver starts again with approve.
				failure = err
				if _, err := tx.ExecContext(ctx, `UPDATE assurance_challenges SET decline_reason = 'insufficient_funds' WHERE id = $1`, id); err != nil {
					return err
				}
				return s.end(ctx, tx, now, x.id, stepUpID, StatusDeclined)
			}
			if err != nil {
				return err
			}
		}
		ok, err := s.activate(ctx, tx, now, x, MethodApp)
		if err != nil {
			return err
		}
		if !ok {
			return errNotPending(c)
		}
		if payment {
			if _, err := tx.ExecContext(ctx, `UPDATE assurance_challenges SET status = 'consumed' WHERE id = $1`, id); err != nil {
				return err
			}
		}
		out, _, err = scanChallenge(tx.QueryRowContext(ctx, `SELECT `+challengeColumns+` FROM assurance_challenges WHERE id = $1`, id))
		return err
	})
	if err == nil && failure != nil {
		return Challenge{}, failure
	}
	return out, err
}

// Decline answers "I did not request this": the challenge and the step-up it
// gates die, and repeated declines raise a security alert.
func (s *Service) Decline(ctx context.Context, a actor.Actor, id uuid.UUID) (Challenge, error) {
	var out Challenge
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		c, _, stepUpID, err := s.loadChallenge(ctx, tx, a, id)
		if err != nil {
			return err
		}
		if c.Status != StatusPending {
			return errNotPending(c)
		}
		if err := s.decline(ctx, tx, now, a, id, stepUpID); err != nil {
			return err
		}
		out, _, err = scanChallenge(tx.QueryRowContext(ctx, `SELECT `+challengeColumns+` FROM assurance_challenges WHERE id = $1`, id))
		return err
	})
	return out, err
}

func (s *Service) decline(ctx context.Context, tx *db.Tx, now time.Time, a actor.Actor, id, stepUpID uuid.UUID) error {
	var sudoID uuid.UUID
	if err := tx.QueryRowContext(ctx, `SELECT sudo_session_id FROM step_up_authentications WHERE id = $1`, stepUpID).Scan(&sudoID); err != nil {
		return err
	}
	if err := s.end(ctx, tx, now, sudoID, stepUpID, StatusDeclined); err != nil {
		return err
	}
	return s.alertOnRepeatedDeclines(ctx, tx, now, a.UserID)
}

// alertOnRepeatedDeclines tells the person and the owners of their
// organizations when declines reach the threshold within a day: someone may
// know the password and be trying their luck. One alert per window.
func (s *Service) alertOnRepeatedDeclines(ctx context.Context, tx *db.Tx, now time.Time, userID uuid.UUID) error {
	since := now.Add(-DeclineAlertWindow)
	var declines, alerts int
	if err := tx.QueryRowContext(ctx, `
		SELECT (SELECT count(*) FROM assurance_challenges WHERE user_id = $1 AND status = 'declined' AND decline_reason IS NULL AND decided_at > $2),
		       (SELECT count(*) FROM outbox_messages WHERE user_id = $1 AND kind = 'security_alert' AND subject = $3 AND inserted_at > $2)`,
		userID, since, declineAlertSubject).Scan(&declines, &alerts); err != nil {
		return err
	}
	if declines < DeclineAlertThreshold || alerts > 0 {
		return nil
	}
	u, err := identity.GetUser(ctx, tx, userID)
	if err != nil {
		return err
	}
	rows, err := tx.QueryContext(ctx, `
		SELECT DISTINCT o.user_id FROM memberships m JOIN memberships o ON o.organization_id = m.organization_id AND o.role = 'owner'
		WHERE m.user_id = $1 AND o.user_id <> $1`, userID)
	if err != nil {
		return err
	}
	recipients := []uuid.UUID{userID}
	for rows.Next() {
		var id uuid.UUID
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		recipients = append(recipients, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	body := fmt.Sprintf("%s declined %d verification requests in the last 24 hours. Someone may know their password and be trying to act as them. Review their recent sign-ins and consider resetting their password.", u.Email, declines)
	for _, r := range recipients {
		if _, err := outbox.Queue(ctx, tx, now, outbox.Message{UserID: &r, Kind: outbox.SecurityAlert, Channel: outbox.ChannelEmail,
			Subject: declineAlertSubject, Body: body}); err != nil {
			return err
		}
	}
	return nil
}

const declineAlertSubject = "Security alert: repeated declined verification requests"
