package mca

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/google/uuid"
)

// Partner is the banking partner that opens receiving accounts.
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

// SandboxSettings control the sandbox partner (POST /api/v1/sandbox/partner).
type SandboxSettings struct {
	OfferedCurrencies []string
	Unavailable       bool
	EligibilityError  bool
}

// SandboxPartner stands in for the banking partner in `test`: it offers
// EUR, GBP and USD until told otherwise, attaches a currency at once to a
// business that already has an active account and provisions the first one.
type SandboxPartner struct {
	mu       sync.Mutex
	settings SandboxSettings
}

// NewSandboxPartner returns the partner with its default settings.
func NewSandboxPartner() *SandboxPartner {
	return &SandboxPartner{settings: SandboxSettings{OfferedCurrencies: []string{"EUR", "GBP", "USD"}}}
}

// Settings returns the current settings.
func (p *SandboxPartner) Settings() SandboxSettings {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.settings
	s.OfferedCurrencies = slices.Clone(s.OfferedCurrencies)
	return s
}

// Configure replaces the settings given (nil fields are kept).
func (p *SandboxPartner) Configure(offered []string, unavailable, eligibilityError *bool) SandboxSettings {
	p.mu.Lock()
	if offered != nil {
		p.settings.OfferedCurrencies = slices.Clone(offered)
		slices.Sort(p.settings.OfferedCurrencies)
	}
	if unavailable != nil {
		p.settings.Unavailable = *unavailable
	}
	if eligibilityError != nil {
		p.settings.EligibilityError = *eligibilityError
	}
	p.mu.Unlock()
	return p.Settings()
}

// Offered implements Partner.
func (p *SandboxPartner) Offered(context.Context, uuid.UUID) ([]string, error) {
	s := p.Settings()
	if s.EligibilityError {
		return nil, errors.New("sandbox partner: eligibility read failed")
	}
	return s.OfferedCurrencies, nil
}

// Open implements Partner.
func (p *SandboxPartner) Open(_ context.Context, _ uuid.UUID, currency string, hasActiveAccount bool) (Opening, error) {
	s := p.Settings()
	switch {
	case s.Unavailable:
		return "", ErrUnavailable
	case !slices.Contains(s.OfferedCurrencies, currency):
		return Refused, nil
	case hasActiveAccount:
		return Opened, nil
	}
	return Provisioning, nil
}

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
