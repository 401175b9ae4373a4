package client

import (
	"context"

	"github.com/strongroom/strongroom/client/api"
)

// Insights sums the organization's money in and out over time (getInsights):
// a preset range or explicit dates in params, grouped by day, week or month.
func (c *Client) Insights(ctx context.Context, organizationID string, params *api.GetInsightsParams) (*api.Insights, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.Insights](c.raw.GetInsights(ctx, org, params))
}
