package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// AuditLog iterates over the organization's audit log (listAuditLog),
// newest first, every page of it; filters.ActorId, filters.Action,
// filters.From and filters.To (calendar days, inclusive, UTC) narrow it.
// Owners and admins read it with a session. filters (may be nil) are sent
// with every page; its Cursor is ignored.
func (c *Client) AuditLog(ctx context.Context, organizationID string, filters *api.ListAuditLogParams) iter.Seq2[api.AuditEntry, error] {
	var params api.ListAuditLogParams
	if filters != nil {
		params = *filters
	}
	return list[api.AuditEntry](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListAuditLog(ctx, org, &p)
	})
}
