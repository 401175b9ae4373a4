package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/strongroom/strongroom/client/api"
)

// How a person answers a step-up challenge (the challenge's Methods).
const (
	// StepUpApp: the person approves in the Strongroom app, entering the
	// challenge's MatchCode; the client polls until the step-up is no
	// longer pending.
	StepUpApp = "app"
	// StepUpTOTP: a code of the person's authenticator app.
	StepUpTOTP = "totp"
	// StepUpEmail: a code sent by email; ask for it first with
	// [Client.RequestStepUpEmail].
	StepUpEmail = "email"
)

// StepUpAnswer is how the caller's [StepUpFunc] answered a challenge.
type StepUpAnswer struct {
	// Method is StepUpApp (the default when empty), StepUpTOTP or
	// StepUpEmail.
	Method string
	// Code is the authenticator or emailed code (not for StepUpApp).
	Code string
}

// StepUpFunc is called when a call needs a step-up. It shows the person
// what they need: the challenge's MatchCode to enter in the Strongroom app
// (then it returns StepUpAnswer{Method: StepUpApp} at once, and the client
// polls), or a prompt for an authenticator or emailed code (then it returns
// that code). The client then retries the gated call once. An error
// returned stops the call with that error. Gated calls made at the same
// time from several goroutines call it at the same time, once each.
type StepUpFunc func(ctx context.Context, challenge *api.StepUpChallenge) (StepUpAnswer, error)

// StepUpError is returned when a step-up ended without opening the sudo
// window: the person declined it, or it expired. It wraps the
// step_up_required [*Error] of the gated call.
type StepUpError struct {
	// Status is the step-up's last status: "declined" or "expired".
	Status string
	// Err is the gated call's step_up_required error.
	Err *Error
}

func (e *StepUpError) Error() string {
	return fmt.Sprintf("strongroom: step-up %s: %v", e.Status, e.Err)
}

func (e *StepUpError) Unwrap() error { return e.Err }

// answerStepUp has the caller answer the challenge of apiErr and returns
// nil once the sudo window is open.
func (c *Client) answerStepUp(ctx context.Context, apiErr *Error) error {
	ch := apiErr.StepUp
	ans, err := c.stepUp(ctx, ch)
	if err != nil {
		return fmt.Errorf("strongroom: step-up: %w", err)
	}
	var st *api.StepUpStatus
	switch ans.Method {
	case StepUpApp, "":
		st, err = c.WaitStepUp(ctx, ch.Id.String())
	case StepUpTOTP, StepUpEmail:
		st, err = c.CompleteStepUp(ctx, ch.Id.String(), ans.Method, ans.Code)
	default:
		return fmt.Errorf("strongroom: step-up: unknown method %q", ans.Method)
	}
	if err != nil {
		return err
	}
	if st.Status != api.StepUpStatusStatusActive {
		return &StepUpError{Status: string(st.Status), Err: apiErr}
	}
	return nil
}

// StepUpStatus reads the state of a step-up (sudo session) of this
// client's session.
func (c *Client) StepUpStatus(ctx context.Context, sudoSessionID string) (*api.StepUpStatus, error) {
	id, err := parseUUID("sudo session id", sudoSessionID)
	if err != nil {
		return nil, err
	}
	return decode[api.StepUpStatus](c.raw.GetStepUpStatus(ctx, id, nil))
}

// WaitStepUp polls the step-up until its status is anything but pending
// and returns that status. ctx bounds the wait.
func (c *Client) WaitStepUp(ctx context.Context, sudoSessionID string) (*api.StepUpStatus, error) {
	for {
		st, err := c.StepUpStatus(ctx, sudoSessionID)
		if err != nil {
			return nil, err
		}
		if st.Status != api.StepUpStatusStatusPending {
			return st, nil
		}
		if err := sleep(ctx, c.pollInterval); err != nil {
			return nil, err
		}
	}
}

// CompleteStepUp answers a step-up with a code: method is StepUpTOTP or
// StepUpEmail. A wrong code is an [*Error] of type invalid_code.
func (c *Client) CompleteStepUp(ctx context.Context, sudoSessionID, method, code string) (*api.StepUpStatus, error) {
	id, err := parseUUID("sudo session id", sudoSessionID)
	if err != nil {
		return nil, err
	}
	r, err := c.raw.CompleteStepUpWithResponse(ctx, nil, api.CompleteStepUpJSONRequestBody{
		SudoSessionId: id,
		Method:        api.StepUpCompletionMethod(method),
		Code:          code,
	})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

// RequestStepUpEmail has a step-up code sent to the person by email, to
// answer the challenge with StepUpEmail.
func (c *Client) RequestStepUpEmail(ctx context.Context, challenge *api.StepUpChallenge) error {
	if challenge == nil {
		return errors.New("strongroom: no step-up challenge")
	}
	r, err := c.raw.RequestStepUpFallbackWithResponse(ctx, nil, api.RequestStepUpFallbackJSONRequestBody{
		StepUpAuthenticationId: challenge.StepUpAuthenticationId,
		Method:                 api.StepUpFallbackRequestMethodEmail,
	})
	if err != nil {
		return err
	}
	return ErrorFromResponse(r.HTTPResponse, r.Body)
}

// ExitStepUp closes a sudo window before it runs out (exitStepUp): the next
// gated call asks for a step-up again.
func (c *Client) ExitStepUp(ctx context.Context, sudoSessionID string) (*api.ExpiredSudoSession, error) {
	id, err := parseUUID("sudo session id", sudoSessionID)
	if err != nil {
		return nil, err
	}
	return decode[api.ExpiredSudoSession](c.raw.ExitStepUp(ctx, nil, api.StepUpExit{Id: id}))
}
