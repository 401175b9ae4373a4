package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// RegisterApprovalCredential registers the public key of an approving app
// for the signed-in person (registerApprovalCredential); the app then signs
// the challenges it approves.
func (c *Client) RegisterApprovalCredential(ctx context.Context, credential api.ApprovalCredentialRegistration) (*api.ApprovalCredential, error) {
	return decode[api.ApprovalCredential](c.raw.RegisterApprovalCredential(ctx, nil, credential))
}

// Challenges iterates over the signed-in person's pending challenges, as the
// approving app lists them, every page of them. filters (may be nil) are
// sent with every page; its Cursor is ignored.
func (c *Client) Challenges(ctx context.Context, filters *api.ListChallengesParams) iter.Seq2[api.Challenge, error] {
	var params api.ListChallengesParams
	if filters != nil {
		params = *filters
	}
	return list[api.Challenge](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		p := params
		p.Cursor = cursor
		return c.raw.ListChallenges(ctx, &p)
	})
}

// ApproveChallenge approves a challenge from the approving app
// (approveChallenge), with the signature of the app's key over the challenge
// and the match code the person entered.
func (c *Client) ApproveChallenge(ctx context.Context, challengeID string, approval api.ChallengeApproval) (*api.Challenge, error) {
	id, err := parseUUID("challenge id", challengeID)
	if err != nil {
		return nil, err
	}
	return decode[api.Challenge](c.raw.ApproveChallenge(ctx, id, nil, approval))
}

// DeclineChallenge declines a challenge ("I did not request this",
// declineChallenge): the gated call it belongs to stays refused.
func (c *Client) DeclineChallenge(ctx context.Context, challengeID string) (*api.Challenge, error) {
	id, err := parseUUID("challenge id", challengeID)
	if err != nil {
		return nil, err
	}
	return decode[api.Challenge](c.raw.DeclineChallenge(ctx, id, nil, api.EmptyObject{}))
}
