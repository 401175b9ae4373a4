package e2e_test

import (
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

const origin = "http://localhost:8080"

func registerPasskey(t *testing.T, s *apitest.Server, token string, key *apitest.SoftPasskey, label string) *apitest.Response {
	t.Helper()
	var opts struct {
		CeremonyID string         `json:"ceremony_id"`
		PublicKey  map[string]any `json:"public_key"`
	}
	s.Post(t, "/api/v1/auth/passkeys/registration", token, nil).ExpectStatus(t, 200).Decode(t, &opts)
	return s.Post(t, "/api/v1/auth/passkeys", token, map[string]any{
		"ceremony_id": opts.CeremonyID, "label": label, "credential": key.Register(origin, opts.PublicKey),
	})
}

func TestPasskeysRegisterListAndRemove(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)

	var created api.Passkey
	registerPasskey(t, s, token, apitest.NewSoftPasskey(), "Laptop").ExpectStatus(t, 201).Decode(t, &created)
	if created.Label == nil || *created.Label != "Laptop" || len(created.Transports) == 0 {
		t.Fatalf("passkey = %+v", created)
	}
	registerPasskey(t, s, token, apitest.NewSoftPasskey(), "Phone").ExpectStatus(t, 201)

	var list api.PasskeyPage
	s.Get(t, "/api/v1/auth/passkeys", token).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 2 || *list.Data[0].Label != "Phone" {
		t.Fatalf("passkeys = %+v, want Phone then Laptop", list.Data)
	}

	// Another person cannot see or remove them.
	other := createOrg(t, s, "eve@evil.test")
	eve := signInFully(t, s, "eve@evil.test", *other.Owner.TotpSecret)
	s.Do(t, apitest.Request{Method: "DELETE", Path: "/api/v1/auth/passkeys/" + created.Id.String(), Bearer: eve}).ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/auth/passkeys", eve).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("eve sees %d passkeys", len(list.Data))
	}

	s.Do(t, apitest.Request{Method: "DELETE", Path: "/api/v1/auth/passkeys/" + created.Id.String(), Bearer: token}).ExpectStatus(t, 200)
	s.Do(t, apitest.Request{Method: "DELETE", Path: "/api/v1/auth/passkeys/" + created.Id.String(), Bearer: token}).ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/auth/passkeys", token).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("after removal %d passkeys, want 1", len(list.Data))
	}
}

func TestPasskeyRegistrationRefusesBadCeremonies(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	key := apitest.NewSoftPasskey()

	var opts struct {
		CeremonyID string         `json:"ceremony_id"`
		PublicKey  map[string]any `json:"public_key"`
	}
	// Answered from another origin: refused.
	s.Post(t, "/api/v1/auth/passkeys/registration", token, nil).ExpectStatus(t, 200).Decode(t, &opts)
	s.Post(t, "/api/v1/auth/passkeys", token, map[string]any{"ceremony_id": opts.CeremonyID, "credential": key.Register("https://evil.test", opts.PublicKey)}).
		ExpectError(t, 422, "unprocessable_entity")
	// Too late: the ceremony lasts five minutes.
	s.Post(t, "/api/v1/auth/passkeys/registration", token, nil).ExpectStatus(t, 200).Decode(t, &opts)
	advance(t, s, 5*time.Minute)
	s.Post(t, "/api/v1/auth/passkeys", token, map[string]any{"ceremony_id": opts.CeremonyID, "credential": key.Register(origin, opts.PublicKey)}).
		ExpectError(t, 422, "unprocessable_entity")
	// A ceremony works once.
	s.Post(t, "/api/v1/auth/passkeys/registration", token, nil).ExpectStatus(t, 200).Decode(t, &opts)
	body := map[string]any{"ceremony_id": opts.CeremonyID, "credential": key.Register(origin, opts.PublicKey)}
	s.Post(t, "/api/v1/auth/passkeys", token, body).ExpectStatus(t, 201)
	s.Post(t, "/api/v1/auth/passkeys", token, body).ExpectError(t, 422, "unprocessable_entity")
	s.Post(t, "/api/v1/auth/passkeys", token, map[string]any{"ceremony_id": "nope"}).ExpectError(t, 400, "invalid_request")
}

func TestSignInWithOnlyAPasskeyAsksForAnAuthenticator(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "owner@acme.test")
	addUser(t, s, org.Organization.Id.String(), "pk@acme.test", "member", false)
	token := *signIn(t, s, map[string]any{"email": "pk@acme.test", "password": password}).Token
	registerPasskey(t, s, token, apitest.NewSoftPasskey(), "Laptop").ExpectStatus(t, 201)

	res := signIn(t, s, map[string]any{"email": "pk@acme.test", "password": password})
	if res.Status != "webauthn_required" || res.Token != nil || res.ChallengeToken == nil {
		t.Fatalf("sign-in = %+v, want webauthn_required", res)
	}
	// The way on is to add an authenticator app with the challenge token.
	var setup api.SignInTotpSetup
	s.Post(t, "/api/v1/auth/sign-in/totp/setup", "", map[string]any{"challenge_token": *res.ChallengeToken}).ExpectStatus(t, 200).Decode(t, &setup)
	var done api.SignInResult
	s.Post(t, "/api/v1/auth/sign-in/totp/activate", "", map[string]any{"challenge_token": *res.ChallengeToken, "code": code(t, s, setup.SecretEncoded)}).
		ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "authenticated" {
		t.Fatalf("activation = %q", done.Status)
	}
	// With an authenticator, sign-in always asks for its code.
	advance(t, s, 30*time.Second)
	if again := signIn(t, s, map[string]any{"email": "pk@acme.test", "password": password}); again.Status != "mfa_required" {
		t.Fatalf("after setup: %q, want mfa_required", again.Status)
	}
}
