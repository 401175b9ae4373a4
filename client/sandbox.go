package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// SandboxCreateOrganization creates an organization with its owner, who can
// sign in at once (sandboxCreateOrganization).
func (c *Client) SandboxCreateOrganization(ctx context.Context, organization api.SandboxNewOrganization) (*api.SandboxCreatedOrganization, error) {
	return decode[api.SandboxCreatedOrganization](c.raw.SandboxCreateOrganization(ctx, nil, organization))
}

// SandboxAddOrganizationUser adds a person to an organization with a role
// (sandboxAddOrganizationUser).
func (c *Client) SandboxAddOrganizationUser(ctx context.Context, organizationID string, member api.SandboxNewMember) (*api.SandboxCreatedUser, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxCreatedUser](c.raw.SandboxAddOrganizationUser(ctx, org, nil, member))
}

// SandboxSetOrganizationStatus sets an organization's status
// (sandboxSetOrganizationStatus), say to try what a suspended one may do.
func (c *Client) SandboxSetOrganizationStatus(ctx context.Context, organizationID string, change api.SandboxStatusChange) (*api.SandboxOrganizationStatus, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxOrganizationStatus](c.raw.SandboxSetOrganizationStatus(ctx, org, nil, change))
}

// SandboxSetOrganizationEntity sets the outcome of the organization's
// business verification (sandboxSetOrganizationEntity).
func (c *Client) SandboxSetOrganizationEntity(ctx context.Context, organizationID string, entity api.SandboxEntityChange) (*api.SandboxOrganizationEntity, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxOrganizationEntity](c.raw.SandboxSetOrganizationEntity(ctx, org, nil, entity))
}

// SandboxAdvanceClock moves the server's manual clock forward
// (sandboxAdvanceClock); {Seconds: 0} reads it.
func (c *Client) SandboxAdvanceClock(ctx context.Context, advance api.SandboxClockAdvance) (*api.SandboxClock, error) {
	return decode[api.SandboxClock](c.raw.SandboxAdvanceClock(ctx, nil, advance))
}

// SandboxOutbox iterates over the messages the server queued (emails, texts,
// notices), every page of them. filters (may be nil; by person, kind) are
// sent with every page; its Cursor is ignored.
func (c *Client) SandboxOutbox(ctx context.Context, filters *api.SandboxListOutboxParams) iter.Seq2[api.OutboxMessage, error] {
	var params api.SandboxListOutboxParams
	if filters != nil {
		params = *filters
	}
	return list[api.OutboxMessage](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		p := params
		p.Cursor = cursor
		return c.raw.SandboxListOutbox(ctx, &p)
	})
}

// SandboxConfigurePartner configures the sandbox banking partner
// (sandboxConfigurePartner): how it answers account requests.
func (c *Client) SandboxConfigurePartner(ctx context.Context, settings api.SandboxPartnerChange) (*api.SandboxPartnerSettings, error) {
	return decode[api.SandboxPartnerSettings](c.raw.SandboxConfigurePartner(ctx, nil, settings))
}

// SandboxDeposit puts money into an organization as an incoming transfer
// would (sandboxDeposit) and answers its transaction.
func (c *Client) SandboxDeposit(ctx context.Context, organizationID string, deposit api.SandboxDeposit) (*api.Transaction, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.Transaction](c.raw.SandboxDeposit(ctx, org, nil, deposit))
}

// SandboxCryptoDeposit receives a crypto deposit for an organization
// (sandboxCryptoDeposit), to allocate to invoices.
func (c *Client) SandboxCryptoDeposit(ctx context.Context, organizationID string, deposit api.SandboxCryptoDeposit) (*api.CryptoIncoming, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.CryptoIncoming](c.raw.SandboxCryptoDeposit(ctx, org, nil, deposit))
}

// SandboxSettlePayment settles a processing payment as the rail would:
// completed or failed (sandboxSettlePayment).
func (c *Client) SandboxSettlePayment(ctx context.Context, paymentID string, settlement api.SandboxSettlement) (*api.Payment, error) {
	id, err := parseUUID("payment id", paymentID)
	if err != nil {
		return nil, err
	}
	return decode[api.Payment](c.raw.SandboxSettlePayment(ctx, id, nil, settlement))
}

// SandboxCreateApprovingApp gives a person a software approving app
// (sandboxCreateApprovingApp), so that [Client.SandboxApproveChallenge] can
// approve their challenges.
func (c *Client) SandboxCreateApprovingApp(ctx context.Context, userID string) (*api.SandboxApprovingApp, error) {
	id, err := parseUUID("user id", userID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxApprovingApp](c.raw.SandboxCreateApprovingApp(ctx, id, nil))
}

// SandboxApproveChallenge approves a challenge with the person's sandbox
// approving app (sandboxApproveChallenge), as they would in the app.
func (c *Client) SandboxApproveChallenge(ctx context.Context, challengeID string, approval api.SandboxChallengeApproval) (*api.Challenge, error) {
	id, err := parseUUID("challenge id", challengeID)
	if err != nil {
		return nil, err
	}
	return decode[api.Challenge](c.raw.SandboxApproveChallenge(ctx, id, nil, approval))
}

// SandboxSendPartnerWebhook sends a banking-partner notification through the
// same code as a signed one (sandboxSendPartnerWebhook).
func (c *Client) SandboxSendPartnerWebhook(ctx context.Context, webhook api.PartnerWebhook) error {
	return done(c.raw.SandboxSendPartnerWebhook(ctx, nil, webhook))
}

// SandboxCreateCard issues a card in an organization (sandboxCreateCard).
func (c *Client) SandboxCreateCard(ctx context.Context, organizationID string, card api.SandboxNewCard) (*api.Card, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.SandboxCreateCard(ctx, org, nil, card))
}

// SandboxSetCardStatus sets a card's status as the issuer would
// (sandboxSetCardStatus).
func (c *Client) SandboxSetCardStatus(ctx context.Context, cardID string, change api.SandboxCardStatusChange) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.SandboxSetCardStatus(ctx, id, nil, change))
}

// SandboxShipCard ships an ordered physical card (sandboxShipCard) and
// answers its activation code.
func (c *Client) SandboxShipCard(ctx context.Context, cardID string) (*api.SandboxShippedCard, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxShippedCard](c.raw.SandboxShipCard(ctx, id, nil, api.EmptyObject{}))
}

// SandboxWalletProviderKey reads a token service provider's private key
// (sandboxGetWalletProviderKey), to decrypt what
// [Client.ProvisionCardToMobileWallet] answers.
func (c *Client) SandboxWalletProviderKey(ctx context.Context, params *api.SandboxGetWalletProviderKeyParams) (*api.SandboxWalletProviderKey, error) {
	return decode[api.SandboxWalletProviderKey](c.raw.SandboxGetWalletProviderKey(ctx, params))
}

// SandboxAuthorizeCard authorizes a card payment as a merchant would
// (sandboxAuthorizeCard).
func (c *Client) SandboxAuthorizeCard(ctx context.Context, cardID string, authorization api.SandboxCardAuthorization) (*api.SandboxCardAuthorizationResult, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.SandboxCardAuthorizationResult](c.raw.SandboxAuthorizeCard(ctx, id, nil, authorization))
}

// SandboxDecideIdentityCheck approves or rejects a person's identity check
// (sandboxDecideIdentityCheck).
func (c *Client) SandboxDecideIdentityCheck(ctx context.Context, userID string, decision api.SandboxIdentityCheckDecision) (*api.IdentityCheck, error) {
	id, err := parseUUID("user id", userID)
	if err != nil {
		return nil, err
	}
	return decode[api.IdentityCheck](c.raw.SandboxDecideIdentityCheck(ctx, id, nil, decision))
}
