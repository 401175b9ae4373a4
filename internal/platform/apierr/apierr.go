// Package apierr holds the typed errors every Strongroom operation returns.
//
// Domain code returns *Error (or wraps one with %w); the HTTP layer alone
// maps a Type to a status code. Message is always a display-grade sentence
// that is safe to show to the caller; internal causes never go into it.
package apierr

import (
	"errors"
	"fmt"
	"slices"
	"sort"
)

// Type is the machine-readable error code clients branch on (error.type).
type Type string

// The error types clients branch on (docs/api.md, Errors).
const (
	InvalidRequest             Type = "invalid_request"
	InvalidCursor              Type = "invalid_cursor"
	InvalidCredentials         Type = "invalid_credentials"
	NotAuthenticated           Type = "not_authenticated"
	InvalidAPIKey              Type = "invalid_api_key"
	APIKeyNotPermitted         Type = "api_key_not_permitted"
	APIScopeMissing            Type = "api_scope_missing"
	OrganizationUnavailable    Type = "organization_unavailable"
	RoleExceedsCreator         Type = "role_exceeds_creator"
	StepUpRequired             Type = "step_up_required"
	Forbidden                  Type = "forbidden"
	NotFound                   Type = "not_found"
	MethodNotAllowed           Type = "method_not_allowed"
	Conflict                   Type = "conflict"
	APIKeyRevoked              Type = "api_key_revoked"
	IdempotencyConflict        Type = "idempotency_conflict"
	PayloadTooLarge            Type = "payload_too_large"
	IdempotencyKeyReused       Type = "idempotency_key_reused"
	InvalidCode                Type = "invalid_code"
	MatchCodeMismatch          Type = "match_code_mismatch"
	InvalidSignature           Type = "invalid_signature"
	ApprovalCredentialRequired Type = "approval_credential_required"
	QuoteExpired               Type = "quote_expired"
	QuoteAlreadyUsed           Type = "quote_already_used"
	InsufficientFunds          Type = "insufficient_funds"
	EntityRejected             Type = "entity_rejected"
	APIKeyLimitReached         Type = "api_key_limit_reached"
	ExpenseIncomplete          Type = "expense_incomplete"
	UnprocessableEntity        Type = "unprocessable_entity"
	FileTypeMismatch           Type = "file_type_mismatch"
	FileNotStored              Type = "file_not_stored"
	BillMismatch               Type = "bill_mismatch"
	BillNotPayable             Type = "bill_not_payable"
	CurrencyMismatch           Type = "currency_mismatch"
	AllocationExceeds          Type = "allocation_exceeds"
	RateLimited                Type = "rate_limited"
	Internal                   Type = "internal_error"
	PartnerError               Type = "partner_error"
	ServiceUnavailable         Type = "service_unavailable"
)

// FieldError names one invalid input and says what is wrong with it.
// Field is the JSON name of a body field or query parameter ("" for the body as a whole).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is the one error type of the API.
type Error struct {
	Type    Type
	Message string
	// Details holds structured details: []FieldError for invalid_request.
	Details any
	// StepUp is the StepUpChallenge of a step_up_required error.
	StepUp any
	// RetryAfterSeconds is sent as the Retry-After header when positive.
	RetryAfterSeconds int
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Type, e.Message) }

// New returns an error of type t with a display-grade message.
func New(t Type, message string) *Error { return &Error{Type: t, Message: message} }

// Newf is New with a formatted message.
func Newf(t Type, format string, args ...any) *Error {
	return &Error{Type: t, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an invalid_request error listing the offending fields.
func Invalid(details ...FieldError) *Error {
	return &Error{Type: InvalidRequest, Message: "The request is not valid; see details.", Details: details}
}

// InvalidField is Invalid for a single field.
func InvalidField(field, message string) *Error {
	return Invalid(FieldError{Field: field, Message: message})
}

// NotFoundf returns a not_found error for a kind of resource ("Organization").
func NotFoundf(kind string) *Error {
	return Newf(NotFound, "%s not found.", kind)
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Is reports whether err carries an *Error of type t.
func Is(err error, t Type) bool {
	e, ok := As(err)
	return ok && e.Type == t
}

// Fields collects field errors while a request is validated.
type Fields []FieldError

// Add records a problem with field.
func (f *Fields) Add(field, message string) { *f = append(*f, FieldError{field, message}) }

// Check records message for field unless ok.
func (f *Fields) Check(ok bool, field, message string) {
	if !ok {
		f.Add(field, message)
	}
}

// CheckQuery adds an error, in name order, for every query parameter of
// params that is not one of known (hint tells which are) and for every one
// given more than once.
func (f *Fields) CheckQuery(params map[string][]string, known []string, hint string) {
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch {
		case !slices.Contains(known, name):
			f.Add(name, "is not a known query parameter; "+hint)
		case len(params[name]) != 1:
			f.Add(name, "must be given only once.")
		}
	}
}

// Err returns the invalid_request error, or nil when nothing was recorded.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return Invalid(f...)
}
