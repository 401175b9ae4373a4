package httpapi

import (
	"bytes"
	"net/http"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/stepup"
)

func (s *server) stepUpStatus(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "sudo_session_id", "Step-up")
	if err != nil {
		return err
	}
	st, err := s.StepUp.GetStatus(r.Context(), actorOf(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *server) completeStepUp(w http.ResponseWriter, r *http.Request) error {
	var req stepup.CompleteRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	st, err := s.StepUp.Complete(r.Context(), actorOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, st)
	return nil
}

func (s *server) stepUpFallback(w http.ResponseWriter, r *http.Request) error {
	var req stepup.FallbackRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.StepUp.RequestFallback(r.Context(), actorOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
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
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) registerApprovalCredential(w http.ResponseWriter, r *http.Request) error {
	var req stepup.CredentialRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.StepUp.RegisterCredential(r.Context(), actorOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func (s *server) challenges(w http.ResponseWriter, r *http.Request) error {
	pages := s.pages("challenges")
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	cs, err := s.StepUp.Inbox(r.Context(), actorOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page.Build(pages, req, cs, stepup.ChallengePageKey))
	return nil
}

func (s *server) approveChallenge(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "challenge_id", "Challenge")
	if err != nil {
		return err
	}
	var req stepup.ApproveRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	c, err := s.StepUp.Approve(r.Context(), actorOf(r), id, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

func (s *server) declineChallenge(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "challenge_id", "Challenge")
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	c, err := s.StepUp.Decline(r.Context(), actorOf(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
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
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// sandboxApproveChallenge answers a challenge as the person's sandbox
// approving app; the body ({match_code}) may be left out when the challenge
// needs no match code.
func (s *server) sandboxApproveChallenge(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "challenge_id", "Challenge")
	if err != nil {
		return err
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	var req stepup.SandboxApproveRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := decodeBytes(body, &req); err != nil {
			return err
		}
	}
	c, err := s.StepUp.SandboxApprove(r.Context(), id, req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}
