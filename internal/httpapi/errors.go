package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// statusOf is the one table from error type to HTTP status.
var statusOf = map[apierr.Type]int{
	apierr.InvalidRequest:             http.StatusBadRequest,
	apierr.InvalidCursor:              http.StatusBadRequest,
	apierr.InvalidCredentials:         http.StatusUnauthorized,
	apierr.NotAuthenticated:           http.StatusUnauthorized,
	apierr.InvalidAPIKey:              http.StatusUnauthorized,
	apierr.APIKeyNotPermitted:         http.StatusForbidden,
	apierr.APIScopeMissing:            http.StatusForbidden,
	apierr.OrganizationUnavailable:    http.StatusForbidden,
	apierr.RoleExceedsCreator:         http.StatusForbidden,
	apierr.StepUpRequired:             http.StatusForbidden,
	apierr.Forbidden:                  http.StatusForbidden,
	apierr.NotFound:                   http.StatusNotFound,
	apierr.MethodNotAllowed:           http.StatusMethodNotAllowed,
	apierr.Conflict:                   http.StatusConflict,
	apierr.APIKeyRevoked:              http.StatusConflict,
	apierr.IdempotencyConflict:        http.StatusConflict,
	apierr.PayloadTooLarge:            http.StatusRequestEntityTooLarge,
	apierr.IdempotencyKeyReused:       http.StatusUnprocessableEntity,
	apierr.InvalidCode:                http.StatusUnprocessableEntity,
	apierr.MatchCodeMismatch:          http.StatusUnprocessableEntity,
	apierr.InvalidSignature:           http.StatusUnprocessableEntity,
	apierr.ApprovalCredentialRequired: http.StatusUnprocessableEntity,
	apierr.QuoteExpired:               http.StatusUnprocessableEntity,
	apierr.QuoteAlreadyUsed:           http.StatusUnprocessableEntity,
	apierr.InsufficientFunds:          http.StatusUnprocessableEntity,
	apierr.EntityRejected:             http.StatusUnprocessableEntity,
	apierr.APIKeyLimitReached:         http.StatusUnprocessableEntity,
	apierr.ExpenseIncomplete:          http.StatusUnprocessableEntity,
	apierr.UnprocessableEntity:        http.StatusUnprocessableEntity,
	apierr.FileTypeMismatch:           http.StatusUnprocessableEntity,
	apierr.FileNotStored:              http.StatusUnprocessableEntity,
	apierr.BillMismatch:               http.StatusUnprocessableEntity,
	apierr.BillNotPayable:             http.StatusUnprocessableEntity,
	apierr.CurrencyMismatch:           http.StatusUnprocessableEntity,
	apierr.AllocationExceeds:          http.StatusUnprocessableEntity,
	apierr.RateLimited:                http.StatusTooManyRequests,
	apierr.Internal:                   http.StatusInternalServerError,
	apierr.PartnerError:               http.StatusBadGateway,
	apierr.ServiceUnavailable:         http.StatusServiceUnavailable,
}

// StatusOf returns the HTTP status of an error type; unknown types are 422,
// as unprocessable_entity, the generic fallback (docs/api.md, Errors).
func StatusOf(t apierr.Type) int {
	if s, ok := statusOf[t]; ok {
		return s
	}
	return http.StatusUnprocessableEntity
}

type errorBody struct {
	Error errorEnvelope `json:"error"`
}

type errorEnvelope struct {
	Type      apierr.Type `json:"type"`
	Message   string      `json:"message"`
	RequestID string      `json:"request_id"`
	Details   any         `json:"details,omitempty"`
	StepUp    any         `json:"step_up,omitempty"`
}

// wwwAuthenticate is the challenge of every 401 (RFC 7235 section 3.1): the
// bearer scheme, with error="invalid_token" when a presented bearer was
// refused (RFC 6750 section 3.1); without one when none was presented, or
// when what failed was no bearer (a password, a challenge token, a webhook
// signature).
func wwwAuthenticate(tokenRefused bool) string {
	if tokenRefused {
		return `Bearer realm="strongroom", error="invalid_token"`
	}
	return `Bearer realm="strongroom"`
}

var internalError = apierr.New(apierr.Internal, "Something went wrong on our side. Please try again; if it keeps happening, contact support with the request id.")

// writeError answers with the error envelope. An error that is not an
// *apierr.Error is a defect: it is logged with the request id and the client
// sees only a generic 500.
func writeError(w http.ResponseWriter, r *http.Request, logger *slog.Logger, err error) {
	e, ok := apierr.As(err)
	if !ok {
		info := infoOf(r)
		logger.ErrorContext(r.Context(), "internal error", "request_id", info.id, "route", info.route, "error", err.Error())
		e = internalError
	}
	infoOf(r).errorType = string(e.Type)
	if e.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfterSeconds))
	}
	if StatusOf(e.Type) == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", wwwAuthenticate(infoOf(r).tokenRefused))
	}
	err = writeJSON(w, StatusOf(e.Type), errorBody{Error: errorEnvelope{
		Type: e.Type, Message: e.Message, RequestID: infoOf(r).id, Details: e.Details, StepUp: stepUpOf(e.StepUp),
	}})
	if err != nil {
		// The envelope's details or step-up could not be encoded: a defect,
		// answered as one with an envelope that always encodes.
		info := infoOf(r)
		logger.ErrorContext(r.Context(), "internal error", "request_id", info.id, "route", info.route, "error", err.Error())
		info.errorType = string(internalError.Type)
		_ = writeJSON(w, http.StatusInternalServerError, errorBody{Error: errorEnvelope{
			Type: internalError.Type, Message: internalError.Message, RequestID: info.id,
		}})
	}
}
