package client

import (
	"context"
	"github.com/strongroom/strongroom/client/api"
	"iter"
)

// Cards iterates over the organization's cards (a member sees only their
// own), every page of them. filters (may be nil) are sent with every page;
// its Cursor is ignored.
func (c *Client) Cards(ctx context.Context, organizationID string, filters *api.ListCardsParams) iter.Seq2[api.Card, error] {
	var params api.ListCardsParams
	if filters != nil {
		params = *filters
	}
	return pages(ctx, func(ctx context.Context, cursor *string) (page[api.Card], error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return page[api.Card]{}, err
		}
		p := params
		p.Cursor = cursor
		r, err := c.api.ListCardsWithResponse(ctx, org, &p)
		if err != nil {
			return page[api.Card]{}, err
		}
		if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
			return page[api.Card]{}, err
		}
		return page[api.Card]{items: r.JSON200.Data, hasMore: r.JSON200.HasMore, next: r.JSON200.NextCursor}, nil
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
	r, err := c.api.FreezeCardWithResponse(ctx, id, nil, api.EmptyObject{})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}

// UnfreezeCard unfreezes a frozen card (unfreezeCard); a card that is not
// frozen: an [*Error] of type conflict.
func (c *Client) UnfreezeCard(ctx context.Context, cardID string) (*api.Card, error) {
	id, err := parseUUID("card id", cardID)
	if err != nil {
		return nil, err
	}
	r, err := c.api.UnfreezeCardWithResponse(ctx, id, nil, api.EmptyObject{})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return r.JSON200, nil
}
