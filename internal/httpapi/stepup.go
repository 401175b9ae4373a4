package httpapi

import (
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/stepup"
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

type sandboxAppRecord struct {
	DeviceID     uuid.UUID `json:"device_id"`
	CredentialID uuid.UUID `json:"credential_id"`
}

func (s *server) stepUpStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "sudo_session_id", "Step-up")
	if err != nil {
		return err
	}
	st, err := s.StepUp.GetStatus(r.Context(), actorOf(r), id)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, stepUpStatusRecord(st))
}

func (s *server) completeStepUp(w http.ResponseWriter, r *http.Request) error {
	return acting(w, r, http.StatusOK, s.StepUp.Complete, func(v stepup.Status) stepUpStatusRecord { return stepUpStatusRecord(v) })
}

func (s *server) stepUpFallback(w http.ResponseWriter, r *http.Request) error {
	return acting(w, r, http.StatusOK, s.StepUp.RequestFallback, func(v stepup.Fallback) fallbackRecord { return fallbackRecord(v) })
}

type exitRequest struct {
	ID string `json:"id"`
}

func (e exitRequest) Validate() error {
	if _, err := uuid.Parse(e.ID); err != nil {
		return apierr.InvalidField("id", "is required: the sudo session id (error.step_up.id).")
	}
	return nil
}

func (s *server) exitStepUp(w http.ResponseWriter, r *http.Request) error {
	var req exitRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.StepUp.Exit(r.Context(), actorOf(r), uuid.MustParse(req.ID))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, expiredSudoSessionRecord(out))
}

func (s *server) registerApprovalCredential(w http.ResponseWriter, r *http.Request) error {
	return acting(w, r, http.StatusCreated, s.StepUp.RegisterCredential, func(v stepup.Credential) approvalCredentialRecord { return approvalCredentialRecord(v) })
}

func (s *server) challenges(w http.ResponseWriter, r *http.Request) error {
	return listing(w, r, s.pages("challenges"), s.StepUp.Inbox, stepup.ChallengePageKey, newChallengeRecord)
}

// answerChallenge runs answer on the challenge in the path and writes the
// challenge it leaves.
func answerChallenge(w http.ResponseWriter, r *http.Request, answer func(id uuid.UUID) (stepup.Challenge, error)) error {
	id, err := pathID(r, "challenge_id", "Challenge")
	if err != nil {
		return err
	}
	c, err := answer(id)
	return render(w, http.StatusOK, newChallengeRecord, c, err)
}

func (s *server) approveChallenge(w http.ResponseWriter, r *http.Request) error {
	return answerChallenge(w, r, func(id uuid.UUID) (stepup.Challenge, error) {
		var req stepup.ApproveRequest
		if err := decode(r, &req); err != nil {
			return stepup.Challenge{}, err
		}
		return s.Approving.Approve(r.Context(), actorOf(r), id, req)
	})
}

func (s *server) declineChallenge(w http.ResponseWriter, r *http.Request) error {
	return answerChallenge(w, r, func(id uuid.UUID) (stepup.Challenge, error) {
		if err := noBody(r); err != nil {
			return stepup.Challenge{}, err
		}
		return s.StepUp.Decline(r.Context(), actorOf(r), id)
	})
}

func (s *server) sandboxApprovingApp(w http.ResponseWriter, r *http.Request) error {
	userID, err := pathID(r, "user_id", "User")
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	out, err := s.StepUp.RegisterSandboxApp(r.Context(), userID)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, sandboxAppRecord(out))
}

// sandboxApproveChallenge answers a challenge as the person's sandbox
// approving app; the body ({match_code}) may be left out when the challenge
// needs no match code.
func (s *server) sandboxApproveChallenge(w http.ResponseWriter, r *http.Request) error {
	return answerChallenge(w, r, func(id uuid.UUID) (stepup.Challenge, error) {
		var req stepup.SandboxApproveRequest
		if err := decodeOptional(r, &req); err != nil {
			return stepup.Challenge{}, err
		}
		return s.Approving.SandboxApprove(r.Context(), id, req)
	})
}
