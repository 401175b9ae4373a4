package client

import (
	"context"
	"io"

	"github.com/strongroom/strongroom/client/api"
)

// Statement writes the organization's statement (getStatement) to w as it
// arrives: one currency over the days params names, in params.Format (JSON
// when unset; CSV, camt.053 or OFX). It returns the number of bytes
// written. A statement cut off on the way (the server aborts a response it
// cannot finish) is an error, never a shorter statement.
func (c *Client) Statement(ctx context.Context, organizationID string, params *api.GetStatementParams, w io.Writer) (int64, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return 0, err
	}
	body, _, err := stream(c.raw.GetStatement(ctx, org, params))
	if err != nil {
		return 0, err
	}
	defer body.Close()
	return io.Copy(w, body)
}
