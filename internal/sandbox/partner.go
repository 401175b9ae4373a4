package sandbox

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/mca"
)

// PartnerSettings control the sandbox banking partner (POST /api/v1/sandbox/partner).
type PartnerSettings struct {
	OfferedCurrencies []string
	Unavailable       bool
	EligibilityError  bool
}

// Partner stands in for the banking partner that opens currency accounts
// (the port mca.Partner): it offers EUR, GBP and USD until told otherwise,
// attaches a currency at once to a business that already has an active
// account and provisions the first one. Its settings live in this process
// only, like the manual clock.
type Partner struct {
	mu       sync.Mutex
	settings PartnerSettings
}

// NewPartner returns the partner with its default settings.
func NewPartner() *Partner {
	return &Partner{settings: PartnerSettings{OfferedCurrencies: []string{"EUR", "GBP", "USD"}}}
}

// Settings returns the current settings.
func (p *Partner) Settings() PartnerSettings {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.settings
	s.OfferedCurrencies = slices.Clone(s.OfferedCurrencies)
	return s
}

// Configure replaces the settings given (nil fields are kept).
func (p *Partner) Configure(offered []string, unavailable, eligibilityError *bool) PartnerSettings {
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

// Offered implements mca.Partner.
func (p *Partner) Offered(context.Context, uuid.UUID) ([]string, error) {
	s := p.Settings()
	if s.EligibilityError {
		return nil, errors.New("sandbox partner: eligibility read failed")
	}
	return s.OfferedCurrencies, nil
}

// Open implements mca.Partner.
func (p *Partner) Open(_ context.Context, _ uuid.UUID, currency string, hasActiveAccount bool) (mca.Opening, error) {
	s := p.Settings()
	switch {
	case s.Unavailable:
		return "", mca.ErrUnavailable
	case !slices.Contains(s.OfferedCurrencies, currency):
		return mca.Refused, nil
	case hasActiveAccount:
		return mca.Opened, nil
	}
	return mca.Provisioning, nil
}
