package httpapi

// Authentication: who a request acts as, by its bearer.

import (
	"context"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// authenticate resolves the bearer: a session token, or an API key where the
// operation accepts one (otherwise api_key_not_permitted once the key is
// known to be valid). Each credential has its own rate limit.
func (s *server) authenticate(r *http.Request, keysAllowed bool) (*http.Request, error) {
	token, ok := bearer(r)
	if !ok {
		return r, identity.ErrNotAuthenticated()
	}
	var a actor.Actor
	var err error
	credential := ""
	if strings.HasPrefix(token, apikey.Prefix) {
		if a, err = s.APIKeys.Authenticate(r.Context(), token); err != nil {
			infoOf(r).tokenRefused = true
			return r, err
		}
		infoOf(r).apiKeyLookup = a.Key.Lookup
		if !keysAllowed {
			return r, organization.ErrKeyNotPermitted
		}
		credential = "api-key:" + a.Key.ID.String()
	} else {
		if a, err = s.Identity.Authenticate(r.Context(), token); err != nil {
			infoOf(r).tokenRefused = true
			return r, err
		}
		credential = "session:" + a.Session.ID.String()
		infoOf(r).userID = a.UserID.String()
	}
	if err := s.limit(r, s.LocalLimiter, policyCredential, credential, s.Limits.PerCredential); err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), actorKey{}, a)), nil
}

// refuseAPIKey answers api_key_not_permitted when an API operation that
// takes no bearer (the sign-in family, sign-out, the document) is called
// with an API key: a key can never sign in or act as a person.
func (s *server) refuseAPIKey(r *http.Request, path string) error {
	token, ok := bearer(r)
	if !ok || !strings.HasPrefix(token, apikey.Prefix) || !strings.HasPrefix(path, "/api/v1/") {
		return nil
	}
	a, err := s.APIKeys.Authenticate(r.Context(), token)
	if err != nil {
		infoOf(r).tokenRefused = true
		return err
	}
	infoOf(r).apiKeyLookup = a.Key.Lookup
	return organization.ErrKeyNotPermitted
}

// authenticateSandbox admits the sandbox token. Anything else gets the same
// 404 as a server without the sandbox, so the helpers' existence is not revealed.
func (s *server) authenticateSandbox(r *http.Request) error {
	token, ok := bearer(r)
	if !ok || s.SandboxToken == "" || subtle.ConstantTimeCompare([]byte(token), []byte(s.SandboxToken)) != 1 {
		return apierr.New(apierr.NotFound, "There is nothing at this path.")
	}
	infoOf(r).sandbox = true
	return nil
}
