package client

import (
	"context"

	"github.com/strongroom/strongroom/client/api"
)

// PersonalQuestionnaireOptions lists the answers the personal questionnaire
// of onboarding offers (getPersonalQuestionnaireOptions).
func (c *Client) PersonalQuestionnaireOptions(ctx context.Context) (*api.PersonalQuestionnaireOptions, error) {
	return decode[api.PersonalQuestionnaireOptions](c.raw.GetPersonalQuestionnaireOptions(ctx, nil))
}

// SubscriptionAcknowledgement reads whether and when the organization
// acknowledged its subscription plan (getSubscriptionAcknowledgement).
func (c *Client) SubscriptionAcknowledgement(ctx context.Context, organizationID string) (*api.SubscriptionAcknowledgement, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.SubscriptionAcknowledgement](c.raw.GetSubscriptionAcknowledgement(ctx, org, nil))
}

// AcknowledgeSubscription acknowledges the organization's subscription plan
// (acknowledgeSubscription), a step of onboarding.
func (c *Client) AcknowledgeSubscription(ctx context.Context, organizationID string) (*api.SubscriptionAcknowledgement, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.SubscriptionAcknowledgement](c.raw.AcknowledgeSubscription(ctx, org, nil))
}

// CreateIdentityCheckToken gets a token that opens the identity-check
// provider's flow for the signed-in person (createIdentityCheckToken).
func (c *Client) CreateIdentityCheckToken(ctx context.Context, request api.IdentityCheckTokenRequest) (*api.IdentityCheckToken, error) {
	return decode[api.IdentityCheckToken](c.raw.CreateIdentityCheckToken(ctx, nil, request))
}
