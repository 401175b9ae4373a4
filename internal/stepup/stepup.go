// Package stepup makes a person present for sensitive actions: it mints
// step-up challenges (a sudo session waiting for verification, and an
// assurance challenge in the person's approving app), verifies them by app
// approval, authenticator code or emailed code, and opens the sudo window.
//
// The state machines of sudo sessions and challenges live
// here alone; every move is a conditional update, so concurrent answers and
// an answer racing an expiry settle to one outcome.
package stepup

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/metrics"
)

// Limits of step-up (docs/api.md, Step-up and the approving app).
const (
	ChallengeLifetime = 5 * time.Minute
	WindowLifetime    = 10 * time.Minute
	// MaxCodeFailures wrong codes end a step-up.
	MaxCodeFailures = 5
	// MaxMatchFailures wrong match codes decline a challenge.
	MaxMatchFailures = 3
	// DeclineAlertThreshold declines within DeclineAlertWindow raise a security alert.
	DeclineAlertThreshold = 3
	DeclineAlertWindow    = 24 * time.Hour
	// MaxWrongCodes wrong step-up codes of a person within WrongCodeWindow,
	// across any number of step-ups, lock step-up for them for LockoutDuration.
	MaxWrongCodes   = 10
	WrongCodeWindow = 24 * time.Hour
	LockoutDuration = 15 * time.Minute
)

// Sudo-session states.
const (
	StatusPending  = "pending"
	StatusActive   = "active"
	StatusDeclined = "declined"
	StatusExpired  = "expired"
)

// Challenge states beyond those shared with sudo sessions.
const (
	ChallengeSatisfied = "satisfied"
	ChallengeConsumed  = "consumed"
)

// Verification methods.
const (
	MethodApp   = "app"
	MethodTOTP  = "totp"
	MethodEmail = "email"
)

// Challenge kinds.
const (
	KindStepUp          = "step_up"
	KindPaymentApproval = "payment_approval"
)

// Service runs step-up. It is also the one Guard of sensitive operations
// (Require, guard.go).
type Service struct {
	DB       *db.DB
	Clock    clock.Clock
	Keys     *keyring.Keyring
	Identity *identity.Service
}

// StepUpChallenge is error.step_up of a step_up_required answer.
type StepUpChallenge struct {
	// Delivery is the first of Methods: where the person is asked first.
	Delivery               string
	ExpiresAt              *time.Time
	ID                     uuid.UUID
	MatchCode              *string
	Methods                []string
	StepUpAuthenticationID uuid.UUID
	// WebAuthn is the passkey assertion to answer with, when the person holds passkeys.
	WebAuthn *identity.AssertionOptions
}

// Request describes a step-up to mint.
type Request struct {
	Purpose       string // identity or payment_approval
	Kind          string // KindStepUp or KindPaymentApproval
	Binding       string // none or tx_signed
	ApprovalID    *uuid.UUID
	ActionSummary *string
	// WithoutApp leaves the app out: no app method and no challenge in its inbox.
	WithoutApp bool
}

// Mint creates a pending sudo session, its step-up authentication and the
// assurance challenge in the person's inbox, in one transaction.
func (s *Service) Mint(ctx context.Context, a actor.Actor, r Request) (StepUpChallenge, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (StepUpChallenge, error) { return s.mint(ctx, tx, a, r) })
}

func (s *Service) mint(ctx context.Context, tx *db.Tx, a actor.Actor, r Request) (StepUpChallenge, error) {
	expires := tx.Now().Add(ChallengeLifetime)
	matchCode := identity.RandomDigits(3)
	sudoID, stepUpID, challengeID := uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7()), uuid.Must(uuid.NewV7())
	inserts := func(methods []string) []db.Statement {
		rows := []db.Statement{{Query: `
			INSERT INTO sudo_sessions (id, session_id, user_id, purpose, approval_id, status, inserted_at, updated_at)
			SELECT $1, $2, $3, $4, $5, 'pending', $6, $6`, Args: []any{sudoID, a.Session.ID, a.UserID, r.Purpose, r.ApprovalID, tx.Now()}}, {Query: `
			INSERT INTO step_up_authentications (id, sudo_session_id, user_id, methods, expires_at, inserted_at)
			SELECT $1, $2, $3, $4, $5, $6`, Args: []any{stepUpID, sudoID, a.UserID, strings.Join(methods, ","), expires, tx.Now()}}}
		if slices.Contains(methods, MethodApp) {
			rows = append(rows, s.insertChallenge(tx, a, r, challengeID, stepUpID, matchCode, expires))
		}
		return rows
	}
	var methods []string
	if r.Binding == "tx_signed" {
		// A payment approval is answered in the app alone.
		methods = []string{MethodApp}
		if err := insertIfApp(ctx, tx, a.UserID, inserts(methods)); err != nil {
			return StepUpChallenge{}, err
		}
	} else {
		app, lockedUntil, err := mintState(ctx, tx, a.UserID)
		if err != nil {
			return StepUpChallenge{}, err
		}
		if methods, err = s.methods(ctx, tx, a.UserID, app, r); err != nil {
			return StepUpChallenge{}, err
		}
		if err := lockedOut(tx, lockedUntil); err != nil {
			return StepUpChallenge{}, err
		}
		if err := tx.ExecTogether(ctx, inserts(methods)...); err != nil {
			return StepUpChallenge{}, err
		}
	}
	tx.AfterCommit(func() { metrics.StepUp(metrics.StepUpStarted) })
	out := StepUpChallenge{Delivery: methods[0], ExpiresAt: &expires, ID: sudoID, MatchCode: &matchCode, Methods: methods, StepUpAuthenticationID: stepUpID}
	if r.Binding != "tx_signed" {
		var err error
		if out.WebAuthn, err = s.Identity.PasskeyAssertion(ctx, tx, a.UserID); err != nil {
			return StepUpChallenge{}, err
		}
	}
	return out, nil
}

// mintStateQuery reads what minting a step-up for the person $1 depends
// on: whether they registered an approving app (app), and the end of their
// step-up lockout (locked_until, null when they have none).
const mintStateQuery = `
	SELECT EXISTS (SELECT 1 FROM approval_credentials WHERE user_id = $1) AS app, l.locked_until
	FROM (SELECT 1 AS one) o LEFT JOIN step_up_lockouts l ON l.user_id = $1`

// mintState reads mintStateQuery for userID in one statement.
func mintState(ctx context.Context, tx *db.Tx, userID uuid.UUID) (app bool, lockedUntil *time.Time, err error) {
	err = tx.QueryRowContext(ctx, mintStateQuery, userID).Scan(&app, &lockedUntil)
	return app, lockedUntil, err
}

// insertIfApp runs the inserts of a payment approval's step-up (each an
// INSERT ... SELECT without FROM) unless userID has no approving app
// (approval_credential_required: a payment approval is answered in the app
// alone) or their step-up is locked (rate_limited), checked in that order.
// On PostgreSQL the reading of both and the inserts are one statement, the
// inserts taking their row from a WITH query that holds one exactly when
// neither refuses.
func insertIfApp(ctx context.Context, tx *db.Tx, userID uuid.UUID, inserts []db.Statement) error {
	if tx.Dialect() != db.Postgres {
		app, lockedUntil, err := mintState(ctx, tx, userID)
		if err != nil {
			return err
		}
		if !app {
			return errNoCredential
		}
		if err := lockedOut(tx, lockedUntil); err != nil {
			return err
		}
		return tx.ExecTogether(ctx, inserts...)
	}
	query := `WITH st AS (` + mintStateQuery + `),
		ok AS (SELECT 1 AS one FROM st WHERE st.app AND (st.locked_until IS NULL OR st.locked_until <= $2))`
	args := []any{userID, tx.Now()}
	for i, ins := range inserts {
		query += fmt.Sprintf(",\n\ts%d AS (%s FROM ok)", i, db.Renumber(ins.Query, len(args)))
		args = append(args, ins.Args...)
	}
	var app, inserted bool
	var lockedUntil *time.Time
	if err := tx.QueryRowContext(ctx, query+`
		SELECT st.app, st.locked_until, EXISTS (SELECT 1 FROM ok) FROM st`, args...).Scan(&app, &lockedUntil, &inserted); err != nil {
		return err
	}
	if !app {
		return errNoCredential
	}
	if err := lockedOut(tx, lockedUntil); err != nil {
		return err
	}
	if !inserted {
		// Only a lockout ending within the microsecond of tx.Now() can
		// part the two checks; the rows are not there, so the answer is the lockout's.
		return errLockedOut(tx, *lockedUntil)
	}
	return nil
}

// insertChallenge is the statement that puts the assurance challenge of a
// step-up in the person's app inbox.
func (s *Service) insertChallenge(tx *db.Tx, a actor.Actor, r Request, challengeID, stepUpID uuid.UUID,
	matchCode string, expires time.Time) db.Statement {
	rail, level := "web", "l2"
	if a.Session.Platform.IsApp() {
		rail = "native_app"
	}
	if r.Binding == "tx_signed" {
		level = "l3"
	}
	payload := signingPayload(challengeID, a.UserID, r, expires)
	return db.Statement{Query: `
		INSERT INTO assurance_challenges (id, user_id, step_up_authentication_id, approval_id, kind, binding, action_summary,
		                                  origin_rail, required_level, status, match_code_hash, signing_payload, expires_at, inserted_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, 'pending', $10, $11, $12, $13`, Args: []any{
		challengeID, a.UserID, stepUpID, r.ApprovalID, r.Kind, r.Binding, r.ActionSummary, rail, level,
		s.Keys.Hash(matchPurpose, challengeID.String()+":"+matchCode), payload, expires, tx.Now()}}
}

// matchPurpose keys the hashes of match codes (bound to their challenge).
const matchPurpose = "challenge-match-code"

// errNoCredential refuses a payment approval to a person without the app.
var errNoCredential = apierr.New(apierr.ApprovalCredentialRequired,
	"Payments are approved in the Strongroom app: set up the app on your phone (it registers its approval credential) before approving.")

// methods lists how the person can answer a step-up other than a payment
// approval (see insertIfApp): the app when they registered an approval
// credential (app; unless r leaves it out), their authenticator when they
// have one, and email.
func (s *Service) methods(ctx context.Context, tx *db.Tx, userID uuid.UUID, app bool, r Request) ([]string, error) {
	u, err := identity.GetUser(ctx, tx, userID)
	if err != nil {
		return nil, err
	}
	var m []string
	if app && !r.WithoutApp {
		m = append(m, MethodApp)
	}
	if u.TOTPEnabled {
		m = append(m, MethodTOTP)
	}
	return append(m, MethodEmail), nil
}

// signingPayload is what the app signs: the challenge, the person, what is
// approved and until when, so a signature cannot be replayed on another challenge.
func signingPayload(id, userID uuid.UUID, r Request, expires time.Time) string {
	summary := ""
	if r.ActionSummary != nil {
		summary = *r.ActionSummary
	}
	approval := ""
	if r.ApprovalID != nil {
		approval = r.ApprovalID.String()
	}
	text := fmt.Sprintf("strongroom-assurance-challenge/v1\nchallenge:%s\nuser:%s\nkind:%s\nbinding:%s\napproval:%s\naction:%s\nexpires:%s\n",
		id, userID, r.Kind, r.Binding, approval, summary, expires.UTC().Format(time.RFC3339))
	return base64.RawURLEncoding.EncodeToString([]byte(text))
}
