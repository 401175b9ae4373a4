package httpapi

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/stepup"
)

// The step-up feature's resources: what each operation's path names first,
// and the record of its answer.
var (
	stepUps = resource[stepup.Status, stepUpStatusRecord]{at: param{"sudo_session_id", "Step-up"},
		record: func(v stepup.Status) stepUpStatusRecord { return stepUpStatusRecord(v) }}
	fallbacks       = resource[stepup.Fallback, fallbackRecord]{record: func(v stepup.Fallback) fallbackRecord { return fallbackRecord(v) }}
	sudoSessionEnds = resource[stepup.ExpiredSudoSession, expiredSudoSessionRecord]{
		record: func(v stepup.ExpiredSudoSession) expiredSudoSessionRecord { return expiredSudoSessionRecord(v) }}
	approvalCredentials = resource[stepup.Credential, approvalCredentialRecord]{
		record: func(v stepup.Credential) approvalCredentialRecord { return approvalCredentialRecord(v) }}
	challenges = resource[stepup.Challenge, challengeRecord]{at: param{"challenge_id", "Challenge"}, record: newChallengeRecord,
		pages: "challenges", key: stepup.ChallengePageKey}
)

// stepUpStatusRecord is a step-up as GET /api/v1/auth/step-up/{id} answers it.
type stepUpStatusRecord struct {
	Status    string     `json:"status"`
	Active    bool       `json:"active"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// stepUpChallengeRecord is error.step_up of a step_up_required answer.
type stepUpChallengeRecord struct {
	Delivery               string     `json:"delivery"`
	ExpiresAt              *time.Time `json:"expires_at"`
	ID                     uuid.UUID  `json:"id"`
	MatchCode              *string    `json:"match_code"`
	Methods                []string   `json:"methods"`
	StepUpAuthenticationID uuid.UUID  `json:"step_up_authentication_id"`
	// WebAuthn is rendered as identity gives it: the WebAuthn assertion
	// options, whose fields are the protocol's (identity owns them).
	WebAuthn *identity.AssertionOptions `json:"webauthn"`
}

// stepUpOf renders the step_up of an error envelope (apierr.Error.StepUp):
// a step-up challenge as its record, anything else (nil: left out) as it is.
func stepUpOf(v any) any {
	c, ok := v.(stepup.StepUpChallenge)
	if !ok {
		return v
	}
	return stepUpChallengeRecord(c)
}

type expiredSudoSessionRecord struct {
	Active    bool      `json:"active"`
	ExpiresAt time.Time `json:"expires_at"`
	ID        uuid.UUID `json:"id"`
}

type fallbackRecord struct {
	Delivery  string    `json:"delivery"`
	ExpiresAt time.Time `json:"expires_at"`
}

type approvalCredentialRecord struct {
	ID         uuid.UUID `json:"id"`
	Label      string    `json:"label"`
	InsertedAt time.Time `json:"inserted_at"`
}

// challengeRecord is an assurance challenge as the app sees it.
type challengeRecord struct {
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

func newChallengeRecord(c stepup.Challenge) challengeRecord { return challengeRecord(c) }

type exitRequest struct {
	ID string `json:"id"`
}

func (e exitRequest) Validate() error {
	if _, err := uuid.Parse(e.ID); err != nil {
		return apierr.InvalidField("id", "is required: the sudo session id (error.step_up.id).")
	}
	return nil
}

// exitStepUp ends the sudo session the body names.
func (s *server) exitStepUp(ctx context.Context, a actor.Actor, req exitRequest) (stepup.ExpiredSudoSession, error) {
	return s.StepUp.Exit(ctx, a, uuid.MustParse(req.ID))
}
