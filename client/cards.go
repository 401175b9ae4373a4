package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// Cards iterates over the organization's cards (a member sees only their
// own), every page of them. filters (may be nil) are sent with every page;
// its Cursor is ignored.
func (c *Client) Cards(ctx context.Context, organizationID string, filters *api.ListCardsParams) iter.Seq2[api.Card, error] {
	var params api.ListCardsParams
	if filters != nil {
		params = *filters
	}
	return list[api.Card](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListCards(ctx, org, &p)
	})
}

// FreezeCard freezes a card (freezeCard): every authorization is declined
// until it is unfrozen. A card that is not active: an [*Error] of type
// conflict.
func (c *Client) FreezeCard(ctx context.Context, cardID string) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.FreezeCard(ctx, id, nil, api.EmptyObject{}))
}

// UnfreezeCard unfreezes a frozen card (unfreezeCard); a card that is not
// frozen: an [*Error] of type conflict.
func (c *Client) UnfreezeCard(ctx context.Context, cardID string) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.UnfreezeCard(ctx, id, nil, api.EmptyObject{}))
}

// Card reads one card (getCard).
func (c *Client) Card(ctx context.Context, cardID string) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.GetCard(ctx, id, nil))
}

// UpdateCard changes a card's monthly limit or holder name (updateCard).
func (c *Client) UpdateCard(ctx context.Context, cardID string, update api.CardUpdate) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.UpdateCard(ctx, id, nil, update))
}

// OrderPhysicalCard orders a physical card for a virtual one
// (orderPhysicalCard), shipped to the address given; [Client.ActivateCard]
// activates it on arrival.
func (c *Client) OrderPhysicalCard(ctx context.Context, cardID string, order api.PhysicalCardOrder) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.OrderPhysicalCard(ctx, id, nil, order))
}

// ActivateCard activates the physical card that arrived (activateCard).
func (c *Client) ActivateCard(ctx context.Context, cardID string, activation api.CardActivation) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.Card](c.raw.ActivateCard(ctx, id, nil, activation))
}

// SetCardPIN sets the physical card's PIN (setCardPin).
func (c *Client) SetCardPIN(ctx context.Context, cardID string, pin api.CardPin) error {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return err
	}
	return done(c.raw.SetCardPin(ctx, id, nil, pin))
}

// ProvisionCardToMobileWallet adds a card to a mobile wallet
// (provisionCardToMobileWallet): the answer is the encrypted payload the
// wallet provider expects.
func (c *Client) ProvisionCardToMobileWallet(ctx context.Context, cardID string, provision api.WalletProvisionRequest) (*api.WalletProvision, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	return decode[api.WalletProvision](c.raw.ProvisionCardToMobileWallet(ctx, id, nil, provision))
}
