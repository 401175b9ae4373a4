// Package confirming runs the sensitive operations of features that a
// person confirms with a step-up: setting a card's PIN, adding a card to a
// wallet, creating, changing and rotating an API key, creating a webhook
// endpoint, changing its URL and rotating its secret. Each goes in the same
// order: the feature's own checks (not found, forbidden, conflict), then
// the step-up (step_up_required while no sudo window is open), then the
// operation. Checking first means nobody is asked to confirm an action
// that cannot happen.
//
// The feature answers its checks with a value only its operation accepts
// (card.PINSetting, apikey.Creation, …), so the operation cannot run
// unchecked, and stays free of step-up: it neither imports stepup nor
// declares a guard for app to wire in. The step-up commits on its own
// before the operation's transaction, as stepup.Require does for every
// gated call.
package confirming

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/stepup"
	"github.com/strongroom/strongroom/internal/webhook"
)

// Service runs the confirmed operations.
type Service struct {
	StepUp  *stepup.Service
	Cards   *card.Service
	APIKeys *apikey.Service
	// Webhooks runs webhook endpoints; a program's key needs no step-up
	// there (it cannot give one), so each check says whether one is due.
	Webhooks *webhook.Service
}

// confirm asks a for the step-up every operation here needs: any open
// identity sudo window lets it through.
func (s *Service) confirm(ctx context.Context, a actor.Actor) error {
	return s.StepUp.Require(ctx, a, stepup.GateIdentity)
}

// SetCardPIN sets the PIN of card id: the cardholder of its active
// physical card, after a step-up.
func (s *Service) SetCardPIN(ctx context.Context, a actor.Actor, id uuid.UUID, r card.PINRequest) error {
	p, err := s.Cards.CheckSetPIN(ctx, a, id, r)
	if err != nil {
		return err
	}
	if err := s.confirm(ctx, a); err != nil {
		return err
	}
	return s.Cards.SetPIN(ctx, p)
}

// ProvisionWallet adds card id to its cardholder's wallet, after a step-up.
func (s *Service) ProvisionWallet(ctx context.Context, a actor.Actor, id uuid.UUID, r card.WalletRequest) (card.WalletProvision, error) {
	w, err := s.Cards.CheckProvisionWallet(ctx, a, id, r)
	if err != nil {
		return card.WalletProvision{}, err
	}
	if err := s.confirm(ctx, a); err != nil {
		return card.WalletProvision{}, err
	}
	return s.Cards.ProvisionWallet(ctx, w)
}

// CreateAPIKey mints a key for orgID, after a step-up, and returns it with
// its secret.
func (s *Service) CreateAPIKey(ctx context.Context, a actor.Actor, orgID uuid.UUID, r apikey.CreateRequest) (apikey.Key, string, error) {
	c, err := s.APIKeys.CheckCreate(ctx, a, orgID, r)
	if err != nil {
		return apikey.Key{}, "", err
	}
	if err := s.confirm(ctx, a); err != nil {
		return apikey.Key{}, "", err
	}
	return s.APIKeys.Create(ctx, c)
}

// UpdateAPIKey changes key id of orgID, after a step-up.
func (s *Service) UpdateAPIKey(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r apikey.UpdateRequest) (apikey.Key, error) {
	c, err := s.APIKeys.CheckUpdate(ctx, a, orgID, id, r)
	if err != nil {
		return apikey.Key{}, err
	}
	if err := s.confirm(ctx, a); err != nil {
		return apikey.Key{}, err
	}
	return s.APIKeys.Update(ctx, c)
}

// RotateAPIKey gives key id of orgID a new secret, after a step-up, and
// returns the key with it.
func (s *Service) RotateAPIKey(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (apikey.Key, string, error) {
	c, err := s.APIKeys.CheckRotate(ctx, a, orgID, id)
	if err != nil {
		return apikey.Key{}, "", err
	}
	if err := s.confirm(ctx, a); err != nil {
		return apikey.Key{}, "", err
	}
	return s.APIKeys.Rotate(ctx, c)
}

// CreateWebhookEndpoint adds a webhook endpoint to orgID, after a person's
// step-up, and returns it with its secret.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, a actor.Actor, orgID uuid.UUID, r webhook.Request) (webhook.Endpoint, string, error) {
	c, err := s.Webhooks.CheckCreate(ctx, a, orgID, r)
	if err != nil {
		return webhook.Endpoint{}, "", err
	}
	if c.NeedsStepUp() {
		if err := s.confirm(ctx, a); err != nil {
			return webhook.Endpoint{}, "", err
		}
	}
	return s.Webhooks.Create(ctx, c)
}

// UpdateWebhookEndpoint changes endpoint id of orgID, after a person's
// step-up when the change moves its URL.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r webhook.UpdateRequest) (webhook.Endpoint, error) {
	c, err := s.Webhooks.CheckUpdate(ctx, a, orgID, id, r)
	if err != nil {
		return webhook.Endpoint{}, err
	}
	if c.NeedsStepUp() {
		if err := s.confirm(ctx, a); err != nil {
			return webhook.Endpoint{}, err
		}
	}
	return s.Webhooks.Update(ctx, c)
}

// RotateWebhookSecret gives endpoint id of orgID a new signing secret,
// after a person's step-up, and returns the endpoint with it.
func (s *Service) RotateWebhookSecret(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (webhook.Endpoint, string, error) {
	c, err := s.Webhooks.CheckRotate(ctx, a, orgID, id)
	if err != nil {
		return webhook.Endpoint{}, "", err
	}
	if c.NeedsStepUp() {
		if err := s.confirm(ctx, a); err != nil {
			return webhook.Endpoint{}, "", err
		}
	}
	return s.Webhooks.Rotate(ctx, c)
}
