package httpapi

import (
	"log/slog"
	"net/http"

	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/sandbox"
	"github.com/strongroom/strongroom/internal/stepup"
)

// Observe exposes the outermost middleware to tests that need a handler the
// real routes do not have (one that panics).
func Observe(logger *slog.Logger, h http.Handler) http.Handler {
	s := &server{logger: logger}
	return s.observe(h)
}

// Decode exposes the strict JSON decoder to its fuzz test.
var Decode = decode

// DecodeBytes exposes decodeBytes, and CheckRequestText the check of path
// values and query parameters, to their tests.
var (
	DecodeBytes      = decodeBytes
	CheckRequestText = checkRequestText
)

// RequestBodies makes a new value of every type a handler decodes a JSON
// body into, by name, so the decoder's tests and fuzz target run over the
// real request types (their Validate methods included).
func RequestBodies() map[string]func() any {
	return map[string]func() any{
		"apikey.CreateRequest":            func() any { return new(apikey.CreateRequest) },
		"apikey.UpdateRequest":            func() any { return new(apikey.UpdateRequest) },
		"identity.SignInRequest":          func() any { return new(identity.SignInRequest) },
		"identity.MFARequest":             func() any { return new(identity.MFARequest) },
		"identity.ChallengeTokenRequest":  func() any { return new(identity.ChallengeTokenRequest) },
		"identity.ActivateRequest":        func() any { return new(identity.ActivateRequest) },
		"identity.RegisterPasskeyRequest": func() any { return new(identity.RegisterPasskeyRequest) },
		"mca.RequestBody":                 func() any { return new(mca.RequestBody) },
		"mca.Webhook":                     func() any { return new(mca.Webhook) },
		"payment.ContactRequest":          func() any { return new(payment.ContactRequest) },
		"payment.PreflightRequest":        func() any { return new(payment.PreflightRequest) },
		"payment.ExecuteRequest":          func() any { return new(payment.ExecuteRequest) },
		"payment.RejectRequest":           func() any { return new(payment.RejectRequest) },
		"payment.BatchRequest":            func() any { return new(payment.BatchRequest) },
		"sandbox.DepositRequest":          func() any { return new(sandbox.DepositRequest) },
		"sandbox.NewOrganization":         func() any { return new(sandbox.NewOrganization) },
		"sandbox.NewMember":               func() any { return new(sandbox.NewMember) },
		"sandbox.StatusChange":            func() any { return new(sandbox.StatusChange) },
		"sandbox.EntityChange":            func() any { return new(sandbox.EntityChange) },
		"sandbox.ClockAdvance":            func() any { return new(sandbox.ClockAdvance) },
		"stepup.CompleteRequest":          func() any { return new(stepup.CompleteRequest) },
		"stepup.FallbackRequest":          func() any { return new(stepup.FallbackRequest) },
		"stepup.CredentialRequest":        func() any { return new(stepup.CredentialRequest) },
		"stepup.ApproveRequest":           func() any { return new(stepup.ApproveRequest) },
		"sandbox.ApproveRequest":          func() any { return new(sandbox.ApproveRequest) },
		"settleRequest":                   func() any { return new(settleRequest) },
		"partnerSettingsRequest":          func() any { return new(partnerSettingsRequest) },
		"exitRequest":                     func() any { return new(exitRequest) },
	}
}

// ServeRecord answers every request through the outermost middleware and
// a route's layers with record encoded as JSON and 200, for the test of a
// record that cannot be encoded.
func ServeRecord(logger *slog.Logger, record any) http.Handler {
	s := &server{logger: logger}
	return s.observe(s.wrap(route{method: "GET", path: "/api/v1/record", auth: authNone,
		handle: func(w http.ResponseWriter, r *http.Request) error { return writeJSON(w, http.StatusOK, record) }}))
}
