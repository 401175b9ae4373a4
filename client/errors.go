package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/client/api"
)

// Error types the client itself branches on. The set the server answers is
// open (see the Error schema of api/openapi.yaml): branch on Type with a
// default case.
const (
	TypeStepUpRequired      = "step_up_required"
	TypeRateLimited         = "rate_limited"
	TypeUnprocessableEntity = "unprocessable_entity"
)

// Error is a failure answer of the server: its error envelope, with the
// HTTP status. Get it with errors.As:
//
//	var e *client.Error
//	if errors.As(err, &e) && e.Type == "not_found" { … }
type Error struct {
	// StatusCode is the HTTP status.
	StatusCode int
	// Type is error.type, the machine-readable code to branch on.
	Type string
	// Message is error.message, a sentence safe to show to a person.
	Message string
	// RequestID is error.request_id (the X-Request-Id header): quote it
	// when reporting a problem.
	RequestID string
	// Details is error.details: the offending fields of an invalid_request.
	Details []api.FieldError
	// StepUp is error.step_up, the challenge of a 403 step_up_required.
	StepUp *api.StepUpChallenge
	// RetryAfter is the Retry-After of a 429 the client did not wait for.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	return fmt.Sprintf("strongroom: %d %s: %s (request %s)", e.StatusCode, e.Type, e.Message, e.RequestID)
}

// envelope is the error envelope on the wire.
type envelope struct {
	Error struct {
		Type      string               `json:"type"`
		Message   string               `json:"message"`
		RequestID string               `json:"request_id"`
		Details   []api.FieldError     `json:"details"`
		StepUp    *api.StepUpChallenge `json:"step_up"`
	} `json:"error"`
}

// ErrorFromResponse returns nil for a 1xx–3xx response and otherwise an
// [*Error] built from body (the read body of resp). A body that is not the
// error envelope still gives an Error: of type unprocessable_entity, the
// generic fallback (docs/api.md, Errors), with the status text as message.
func ErrorFromResponse(resp *http.Response, body []byte) error {
	if resp == nil {
		return fmt.Errorf("strongroom: no response")
	}
	if resp.StatusCode < 400 {
		return nil
	}
	e := &Error{StatusCode: resp.StatusCode, RequestID: resp.Header.Get("X-Request-Id")}
	var env envelope
	if json.Unmarshal(body, &env) == nil && env.Error.Type != "" {
		e.Type, e.Message, e.Details, e.StepUp = env.Error.Type, env.Error.Message, env.Error.Details, env.Error.StepUp
		if env.Error.RequestID != "" {
			e.RequestID = env.Error.RequestID
		}
	} else {
		e.Type, e.Message = TypeUnprocessableEntity, http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		e.RetryAfter = retryAfter(resp.Header, time.Now())
	}
	return e
}
