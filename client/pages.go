package client

import (
	"context"
	"errors"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// page is one page of a list: its items and the cursor of the next one
// (nil on the last page).
type page[T any] struct {
	items   []T
	hasMore bool
	next    *string
}

// pages walks a list page by page as the API's pagination rules say: the
// first page without a cursor, then each next_cursor as it came, with the
// other parameters unchanged (fetch keeps them), while has_more is true and
// next_cursor is not null. An error is yielded once, as the last value.
// Stopping the range stops fetching.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, cursor *string) (page[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var cursor *string
		for {
			p, err := fetch(ctx, cursor)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, item := range p.items {
				if !yield(item, nil) {
					return
				}
			}
			if !p.hasMore || p.next == nil || *p.next == "" {
				return
			}
			if cursor != nil && *cursor == *p.next {
				var zero T
				yield(zero, errors.New("strongroom: the server answered the same cursor again"))
				return
			}
			next := *p.next
			cursor = &next
		}
	}
}

// Transactions iterates over the organization's transactions feed, newest
// first, every page of it:
//
//	for tx, err := range c.Transactions(ctx, org, &client.ListTransactionsParams{Limit: &limit}) {
//		if err != nil { … }
//		…
//	}
//
// filters (may be nil) are sent unchanged with every page; its Cursor is
// ignored (the iterator sets it).
func (c *Client) Transactions(ctx context.Context, organizationID string, filters *api.ListTransactionsParams) iter.Seq2[api.Transaction, error] {
	var params api.ListTransactionsParams
	if filters != nil {
		params = *filters
	}
	return list[api.Transaction](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListTransactions(ctx, org, &p)
	})
}

// Devices iterates over the signed-in person's devices; the one with
// ThisDevice true is the client's.
func (c *Client) Devices(ctx context.Context, filters *api.ListDevicesParams) iter.Seq2[api.Device, error] {
	var params api.ListDevicesParams
	if filters != nil {
		params = *filters
	}
	return list[api.Device](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		p := params
		p.Cursor = cursor
		return c.raw.ListDevices(ctx, &p)
	})
}
