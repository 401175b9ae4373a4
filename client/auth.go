package client

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"

	"github.com/google/uuid"
	"github.com/strongroom/strongroom/client/api"
)

// Credentials is what [Client.Login] needs to sign a person in.
type Credentials struct {
	Email, Password string
	// DeviceID, when set, signs in on that earlier device (the DeviceID of
	// an earlier sign-in): no new device is recorded and the person gets
	// no new-device notice.
	DeviceID string
	// DeviceName names a new device (at most 100 bytes).
	DeviceName string
	// Platform is the kind of client: "web" (the default when empty) or
	// "cli". The device-trust options of the service's own apps are never
	// sent.
	Platform string
	// Code returns the current code of the person's authenticator app. It
	// is called when the account has one (status mfa_required) and after
	// an authenticator was set up during sign-in.
	Code func(ctx context.Context) (string, error)
	// SetupAuthenticator is called when the account must set up an
	// authenticator app first (status totp_setup_required or
	// webauthn_required): show setup.Uri (for example as a QR code) or
	// setup.SecretEncoded to the person, who adds it to their app; Code is
	// then asked for the app's first code. Without it such a sign-in fails
	// with a [*SignInError].
	SetupAuthenticator func(ctx context.Context, setup *api.SignInTotpSetup) error
}

// SignInError is a sign-in that ended without a session: the status the
// server answered (mfa_failed, challenge_expired, or a step the
// credentials cannot take).
type SignInError struct {
	Status api.SignInStatus
}

func (e *SignInError) Error() string {
	return fmt.Sprintf("strongroom: sign-in ended at %s", e.Status)
}

// Login signs a person in: the password, then an authenticator code, or the
// setup of an authenticator app when the account must have one. On success
// the client sends the new session token from then on, and DeviceID tells
// the device to reuse next time. A wrong password is an [*Error] of type
// invalid_credentials; a wrong code a [*SignInError] with status mfa_failed.
func (c *Client) Login(ctx context.Context, cred Credentials) (*api.SignInResult, error) {
	res, err := c.SignIn(ctx, cred)
	if err != nil {
		return nil, err
	}
	if res.Status != api.SignInStatusAuthenticated && res.ChallengeToken == nil {
		return nil, &SignInError{Status: res.Status}
	}
	switch res.Status {
	case api.SignInStatusAuthenticated:
		return res, nil
	case api.SignInStatusMfaRequired:
		if cred.Code == nil {
			return nil, &SignInError{Status: res.Status}
		}
		code, cerr := cred.Code(ctx)
		if cerr != nil {
			return nil, cerr
		}
		res, err = c.CompleteMFA(ctx, *res.ChallengeToken, code)
	case api.SignInStatusTotpSetupRequired, api.SignInStatusWebauthnRequired:
		if cred.SetupAuthenticator == nil || cred.Code == nil {
			return nil, &SignInError{Status: res.Status}
		}
		challenge := *res.ChallengeToken
		setup, serr := c.SetupSignInAuthenticator(ctx, challenge)
		if serr != nil {
			return nil, serr
		}
		if serr := cred.SetupAuthenticator(ctx, setup); serr != nil {
			return nil, serr
		}
		code, cerr := cred.Code(ctx)
		if cerr != nil {
			return nil, cerr
		}
		res, err = c.ActivateSignInAuthenticator(ctx, challenge, code)
	default:
		return nil, &SignInError{Status: res.Status}
	}
	if err != nil {
		return nil, err
	}
	if res.Status != api.SignInStatusAuthenticated {
		return nil, &SignInError{Status: res.Status}
	}
	return res, nil
}

// SignIn is the password step alone (signIn). An authenticated answer sets
// the client's token; otherwise continue with CompleteMFA or the
// authenticator setup, with the answer's ChallengeToken.
func (c *Client) SignIn(ctx context.Context, cred Credentials) (*api.SignInResult, error) {
	body := api.SignInJSONRequestBody{Email: cred.Email, Password: &cred.Password}
	if cred.DeviceID != "" {
		id, err := parseUUID("device id", cred.DeviceID)
		if err != nil {
			return nil, err
		}
		body.DeviceId = &id
	}
	if cred.DeviceName != "" {
		body.DeviceName = &cred.DeviceName
	}
	if cred.Platform != "" {
		p := api.Platform(cred.Platform)
		body.Platform = &p
	}
	r, err := c.raw.SignInWithResponse(ctx, nil, body)
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return c.signedIn(r.JSON200)
}

// CompleteMFA sends the authenticator code of a sign-in (completeMfa).
func (c *Client) CompleteMFA(ctx context.Context, challengeToken, code string) (*api.SignInResult, error) {
	r, err := c.raw.CompleteMfaWithResponse(ctx, nil, api.CompleteMfaJSONRequestBody{ChallengeToken: challengeToken, Code: code})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return c.signedIn(r.JSON200)
}

// SetupSignInAuthenticator offers a new authenticator seed during a
// sign-in that needs one (setupSignInTotp).
func (c *Client) SetupSignInAuthenticator(ctx context.Context, challengeToken string) (*api.SignInTotpSetup, error) {
	return decode[api.SignInTotpSetup](c.raw.SetupSignInTotp(ctx, nil, api.SetupSignInTotpJSONRequestBody{ChallengeToken: challengeToken}))
}

// ActivateSignInAuthenticator enables the seed of SetupSignInAuthenticator
// with its first code and completes the sign-in (activateSignInTotp).
func (c *Client) ActivateSignInAuthenticator(ctx context.Context, challengeToken, code string) (*api.SignInResult, error) {
	r, err := c.raw.ActivateSignInTotpWithResponse(ctx, nil, api.ActivateSignInTotpJSONRequestBody{ChallengeToken: challengeToken, Code: code})
	if err != nil {
		return nil, err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return nil, err
	}
	return c.signedIn(r.JSON200)
}

// signedIn keeps the device and, when the sign-in completed, the token.
func (c *Client) signedIn(res *api.SignInResult) (*api.SignInResult, error) {
	if res == nil {
		return nil, errors.New("strongroom: sign-in answered no result")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if res.DeviceId != nil {
		c.deviceID = res.DeviceId.String()
	}
	if res.Status == api.SignInStatusAuthenticated && res.Token != nil {
		c.token = *res.Token
	}
	return res, nil
}

// SignOut ends the client's session and forgets its token.
func (c *Client) SignOut(ctx context.Context) error {
	r, err := c.raw.SignOutWithResponse(ctx, nil)
	if err != nil {
		return err
	}
	if err := ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return err
	}
	c.SetToken("")
	return nil
}

// Me is the signed-in person, their memberships and session (getMe).
func (c *Client) Me(ctx context.Context) (*api.Me, error) {
	return decode[api.Me](c.raw.GetMe(ctx, nil))
}

func parseUUID(what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, &InvalidIDError{What: what, Value: s}
	}
	return id, nil
}

// InvalidIDError is an id argument that is not a UUID: the client refuses
// it before sending anything (a caller's mistake, not the server's answer).
type InvalidIDError struct {
	// What names the argument ("approval id"); Value is what was given.
	What, Value string
}

func (e *InvalidIDError) Error() string {
	return fmt.Sprintf("strongroom: %s %q is not a UUID", e.What, e.Value)
}

// SetupAuthenticator starts setting up an authenticator app for the
// signed-in person (setupTotp): show the answer's Uri or SecretEncoded, then
// activate it with [Client.ActivateAuthenticator] and the app's first code.
func (c *Client) SetupAuthenticator(ctx context.Context) (*api.AuthenticatedTotpSetup, error) {
	return decode[api.AuthenticatedTotpSetup](c.raw.SetupTotp(ctx, nil, api.EmptyObject{}))
}

// ActivateAuthenticator enables the authenticator app of
// [Client.SetupAuthenticator] with its first code (activateTotp). A wrong
// code is an [*Error] of type invalid_code.
func (c *Client) ActivateAuthenticator(ctx context.Context, activation api.TotpActivation) (*api.AuthenticatedTotpSetup, error) {
	return decode[api.AuthenticatedTotpSetup](c.raw.ActivateTotp(ctx, nil, activation))
}

// Passkeys iterates over the signed-in person's passkeys, every page of
// them. filters (may be nil) are sent with every page; its Cursor is
// ignored.
func (c *Client) Passkeys(ctx context.Context, filters *api.ListPasskeysParams) iter.Seq2[api.Passkey, error] {
	var params api.ListPasskeysParams
	if filters != nil {
		params = *filters
	}
	return list[api.Passkey](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		p := params
		p.Cursor = cursor
		return c.raw.ListPasskeys(ctx, &p)
	})
}

// BeginPasskeyRegistration asks for the WebAuthn creation options of a new
// passkey (beginPasskeyRegistration): hand them to the authenticator (a
// browser's navigator.credentials.create) and send its answer with
// [Client.RegisterPasskey].
func (c *Client) BeginPasskeyRegistration(ctx context.Context) (*api.PasskeyRegistrationOptions, error) {
	return decode[api.PasskeyRegistrationOptions](c.raw.BeginPasskeyRegistration(ctx, nil, api.EmptyObject{}))
}

// RegisterPasskey stores the passkey an authenticator created from
// [Client.BeginPasskeyRegistration]'s options (registerPasskey).
func (c *Client) RegisterPasskey(ctx context.Context, registration api.PasskeyRegistration) (*api.Passkey, error) {
	return decode[api.Passkey](c.raw.RegisterPasskey(ctx, nil, registration))
}

// RemovePasskey removes one of the person's passkeys (removePasskey).
func (c *Client) RemovePasskey(ctx context.Context, passkeyID string) (*api.Passkey, error) {
	id, err := parseUUID("passkey id", passkeyID)
	if err != nil {
		return nil, err
	}
	return decode[api.Passkey](c.raw.RemovePasskey(ctx, id, nil))
}
