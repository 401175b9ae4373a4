package mca

import (
	"context"
	"errors"

	"github.com/google/uuid"
)

// Partner is the banking partner that opens receiving accounts. The
// sandbox's stand-in is internal/sandbox, Partner; UnconfiguredPartner below
// serves a live server with no partner connected.
type Partner interface {
	// Offered reads which currencies the partner offers this business
	// (the eligibility read). An error fails the request as a whole.
	Offered(ctx context.Context, orgID uuid.UUID) ([]string, error)
	// Open asks for an account in currency. ErrUnavailable means the partner
	// could not be reached and the request must be retried.
	Open(ctx context.Context, orgID uuid.UUID, currency string, hasActiveAccount bool) (Opening, error)
}

// Opening is the partner's answer to an account request.
type Opening string

// Openings.
const (
	// Opened: attached to an existing account, usable at once.
	Opened Opening = "active"
	// Provisioning: a new account, opened asynchronously (a webhook tells).
	Provisioning Opening = "processing"
	// Refused: the partner does not open it for this business.
	Refused Opening = "failed"
)

// ErrUnavailable means the partner could not be reached.
var ErrUnavailable = errors.New("banking partner unavailable")

// UnconfiguredPartner is the partner of a live server with no banking
// partner connected: every eligibility read fails, so requests answer
// partner_error and change nothing.
type UnconfiguredPartner struct{}

// Offered implements Partner.
func (UnconfiguredPartner) Offered(context.Context, uuid.UUID) ([]string, error) {
	return nil, errors.New("no banking partner is configured")
}

// Open implements Partner.
func (UnconfiguredPartner) Open(context.Context, uuid.UUID, string, bool) (Opening, error) {
	return "", ErrUnavailable
}
