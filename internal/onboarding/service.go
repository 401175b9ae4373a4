package onboarding

import (
	"context"
	"errors"
	"slices"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Service runs onboarding.
type Service struct {
	DB *db.DB
	// Provider issues identity-check tokens; nil when none is configured
	// (live today), and then getting a token is service_unavailable.
	Provider IdentityProvider
}

// Personal returns the personal questionnaire's options.
func (s *Service) Personal() PersonalOptions { return personal }

// managers is the policy of the subscription acknowledgement: owners and
// admins; anyone else of the organization is forbidden, outsiders not_found.
var managers = organization.Need{Role: organization.Admin}

// Acknowledgement returns orgID's subscription acknowledgement.
func (s *Service) Acknowledgement(ctx context.Context, a actor.Actor, orgID uuid.UUID) (Acknowledgement, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, managers); err != nil {
		return Acknowledgement{}, err
	}
	return loadAcknowledgement(ctx, q, orgID)
}

// Acknowledge records that orgID's subscription plan was acknowledged and
// returns the acknowledgement. It is idempotent: the first acknowledgement's
// time is kept.
func (s *Service) Acknowledge(ctx context.Context, a actor.Actor, orgID uuid.UUID) (Acknowledgement, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Acknowledgement, error) {
		need := managers
		need.Write = true
		if _, err := organization.Check(ctx, tx, a, orgID, need); err != nil {
			return Acknowledgement{}, err
		}
		if err := acknowledge(ctx, tx, orgID, a.UserID, tx.Now()); err != nil {
			return Acknowledgement{}, err
		}
		return loadAcknowledgement(ctx, tx, orgID)
	})
}

// AccessTokenRequest is the optional body of the access-token operation.
type AccessTokenRequest struct {
	OrganizationID *uuid.UUID `json:"organization_id"`
}

var errNoProvider = apierr.New(apierr.ServiceUnavailable,
	"Identity verification is not available at the moment. Please try again later.")

// AccessToken issues a token for the caller's own identity check, in the
// context of the organization the request names, which the caller must
// belong to (else not_found). A check not started yet becomes pending.
func (s *Service) AccessToken(ctx context.Context, a actor.Actor, req AccessTokenRequest) (AccessToken, error) {
	if s.Provider == nil {
		return AccessToken{}, errNoProvider
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (AccessToken, error) {
		if req.OrganizationID != nil {
			if _, err := organization.Check(ctx, tx, a, *req.OrganizationID, organization.Need{}); err != nil {
				return AccessToken{}, err
			}
		}
		if err := startCheck(ctx, tx, a.UserID); err != nil {
			return AccessToken{}, err
		}
		return s.Provider.AccessToken(ctx, a.UserID, req.OrganizationID, tx.Now())
	})
}

// Decision is the outcome given to an identity check.
type Decision struct {
	Status string `json:"status"`
}

// Validate checks the body's fields.
func (d Decision) Validate() error {
	var f apierr.Fields
	f.Check(slices.Contains(Decisions, d.Status), "status", "must be approved or rejected.")
	return f.Err()
}

// Decide gives userID's identity check an outcome, as the provider does
// when its check ends (the sandbox's helper; the page decides through
// DecideByLink), and returns the check.
func (s *Service) Decide(ctx context.Context, userID uuid.UUID, d Decision) (IdentityCheck, error) {
	if err := d.Validate(); err != nil {
		return IdentityCheck{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (IdentityCheck, error) {
		if _, err := identity.GetUser(ctx, tx, userID); err != nil {
			return IdentityCheck{}, err
		}
		if err := decideCheck(ctx, tx, userID, d.Status); err != nil {
			return IdentityCheck{}, err
		}
		return CheckOf(ctx, tx, userID)
	})
}

// errLinkSpent refuses a second decision through one identity-check link.
var errLinkSpent = apierr.New(apierr.Conflict,
	"This identity-check link has already decided the check; it cannot decide again. Ask for a new link to check again.")

// IsLinkSpent reports whether err is DecideByLink's refusal of a link that
// has already decided.
func IsLinkSpent(err error) bool { return errors.Is(err, errLinkSpent) }

// DecideByLink gives the check of the person a verified link's token names
// an outcome, as the provider's page does. A link decides once: the token
// that decided is spent, and deciding with it again is conflict and changes
// nothing (neither the outcome nor its time), so a replayed or
// double-submitted form cannot overturn the decision. A newer link may
// decide again.
func (s *Service) DecideByLink(ctx context.Context, v VerifiedToken, d Decision) (IdentityCheck, error) {
	if err := d.Validate(); err != nil {
		return IdentityCheck{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (IdentityCheck, error) {
		if _, err := identity.GetUser(ctx, tx, v.UserID); err != nil {
			return IdentityCheck{}, err
		}
		if err := spendLink(ctx, tx, v, d.Status); err != nil {
			return IdentityCheck{}, err
		}
		if err := decideCheck(ctx, tx, v.UserID, d.Status); err != nil {
			return IdentityCheck{}, err
		}
		return CheckOf(ctx, tx, v.UserID)
	})
}
