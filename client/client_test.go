package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

const (
	sbx      = apitest.SandboxToken
	password = "correct horse battery"
)

// --- the sandbox, through apitest (validated against api/openapi.yaml) ---

type org struct {
	id, userID, email, secret string
}

// newOrg creates an organization whose owner has an authenticator app.
func newOrg(t *testing.T, s *apitest.Server, email string) org {
	t.Helper()
	var out struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
		Owner struct {
			UserID     string  `json:"user_id"`
			TOTPSecret *string `json:"totp_secret"`
		} `json:"owner"`
	}
	s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Acme Ltd", "owner": map[string]any{"email": email, "password": password, "first_name": "Ada"},
	}).ExpectStatus(t, http.StatusCreated).Decode(t, &out)
	return org{id: out.Organization.ID, userID: out.Owner.UserID, email: email, secret: *out.Owner.TOTPSecret}
}

// serverNow is the server's manual clock; advance moves it.
func serverNow(t *testing.T, s *apitest.Server) time.Time { return advance(t, s, 0) }

func advance(t *testing.T, s *apitest.Server, d time.Duration) time.Time {
	t.Helper()
	var out struct {
		Now time.Time `json:"now"`
	}
	s.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": int(d.Seconds())}).ExpectStatus(t, 200).Decode(t, &out)
	return out.Now
}

// codeFor is the authenticator app of secret, at the server's time.
func codeFor(t *testing.T, s *apitest.Server, secret string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return totp.GenerateCode(secret, serverNow(t, s)) }
}

// --- a transport that records what the client sends ---

type exchange struct {
	method, path, query string
	idempotencyKey      string
	status              int
	replayed            bool
}

type recorder struct {
	mu   sync.Mutex
	seen []exchange
	// loseNext, when set, makes the next request to a path ending so reach
	// the server but lose its answer, as a connection that breaks after
	// the server answered.
	loseNext string
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.seen = append(rec.seen, exchange{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Idempotency-Key"), resp.StatusCode,
		resp.Header.Get("Idempotent-Replayed") == "true"})
	if rec.loseNext != "" && strings.HasSuffix(r.URL.Path, rec.loseNext) {
		rec.loseNext = ""
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil, errors.New("connection reset by peer (test)")
	}
	return resp, nil
}

// calls are the exchanges whose path ends with suffix.
func (rec *recorder) calls(method, suffix string) []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []exchange
	for _, e := range rec.seen {
		if e.method == method && strings.HasSuffix(e.path, suffix) {
			out = append(out, e)
		}
	}
	return out
}

func newClient(t *testing.T, s *apitest.Server, opts ...client.Option) (*client.Client, *recorder) {
	t.Helper()
	rec := &recorder{}
	opts = append([]client.Option{client.WithHTTP(&http.Client{Transport: rec, Timeout: 30 * time.Second}),
		client.WithStepUpPollInterval(20 * time.Millisecond)}, opts...)
	c, err := client.New(s.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

// login signs the owner of o in with a new client and moves the clock to
// the next code step, so a later code is not the one just used.
func login(t *testing.T, s *apitest.Server, o org, opts ...client.Option) (*client.Client, *recorder) {
	t.Helper()
	c, rec := newClient(t, s, opts...)
	if _, err := c.Login(t.Context(), client.Credentials{Email: o.email, Password: password, Code: codeFor(t, s, o.secret)}); err != nil {
		t.Fatal(err)
	}
	advance(t, s, 30*time.Second)
	return c, rec
}

func asError(t *testing.T, err error) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *client.Error", err, err)
	}
	return e
}

// --- sign-in ---

func TestLoginWithPasswordAndAuthenticatorCode(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	ctx := t.Context()

	c, _ := newClient(t, s)
	res, err := c.Login(ctx, client.Credentials{Email: o.email, Password: password, Code: codeFor(t, s, o.secret), DeviceName: "Treasury bot", Platform: "cli"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != api.SignInStatusAuthenticated || c.Token() == "" || !strings.HasPrefix(c.Token(), "srs_") || c.DeviceID() == "" {
		t.Fatalf("login = %+v, token %q, device %q", res, c.Token(), c.DeviceID())
	}
	me, err := c.Me(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if me.User.Email != o.email || len(me.Memberships) != 1 || me.Memberships[0].OrganizationId.String() != o.id {
		t.Fatalf("me = %+v", me)
	}

	// A wrong password is a typed error; a wrong code a SignInError.
	bad, _ := newClient(t, s)
	_, err = bad.Login(ctx, client.Credentials{Email: o.email, Password: "wrong password", Code: codeFor(t, s, o.secret)})
	if e := asError(t, err); e.StatusCode != 401 || e.Type != "invalid_credentials" || e.Message == "" || e.RequestID == "" {
		t.Fatalf("wrong password: %+v", e)
	}
	advance(t, s, 30*time.Second)
	_, err = bad.Login(ctx, client.Credentials{Email: o.email, Password: password, Code: func(context.Context) (string, error) { return "000000", nil }})
	var se *client.SignInError
	if !errors.As(err, &se) || se.Status != api.SignInStatusMfaFailed || bad.Token() != "" {
		t.Fatalf("wrong code: %v, token %q", err, bad.Token())
	}
	// Without a code callback the sign-in stops at mfa_required.
	if _, err := bad.Login(ctx, client.Credentials{Email: o.email, Password: password}); !errors.As(err, &se) || se.Status != api.SignInStatusMfaRequired {
		t.Fatalf("no code: %v", err)
	}

	if err := c.SignOut(ctx); err != nil || c.Token() != "" {
		t.Fatalf("sign-out: %v, token %q", err, c.Token())
	}
}

func TestLoginSetsUpAnAuthenticator(t *testing.T) {
	s := apitest.Start(t)
	var created struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
	}
	s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Strict Ltd", "requires_totp": true, "owner": map[string]any{"email": "boss@strict.test", "password": password},
	}).ExpectStatus(t, 201).Decode(t, &created)
	s.Post(t, "/api/v1/sandbox/organizations/"+created.Organization.ID+"/users", sbx, map[string]any{
		"email": "new@strict.test", "password": password, "role": "member", "totp": false,
	}).ExpectStatus(t, 201)

	c, _ := newClient(t, s)
	var secret string
	res, err := c.Login(t.Context(), client.Credentials{
		Email: "new@strict.test", Password: password,
		SetupAuthenticator: func(_ context.Context, setup *api.SignInTotpSetup) error {
			if !strings.HasPrefix(setup.Uri, "otpauth://totp/") || !strings.Contains(setup.Uri, setup.SecretEncoded) {
				return fmt.Errorf("setup = %+v", setup)
			}
			secret = setup.SecretEncoded // the person adds it to their app
			return nil
		},
		Code: func(context.Context) (string, error) { return totp.GenerateCode(secret, serverNow(t, s)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != api.SignInStatusAuthenticated || res.User == nil || secret == "" {
		t.Fatalf("login = %+v", res)
	}
	me, err := c.Me(t.Context())
	if err != nil || !me.User.TotpEnabled {
		t.Fatalf("me = %+v, %v", me, err)
	}
	// From now on the code is asked for.
	advance(t, s, 30*time.Second)
	again, _ := newClient(t, s)
	if _, err := again.Login(t.Context(), client.Credentials{Email: "new@strict.test", Password: password, Code: codeFor(t, s, secret)}); err != nil {
		t.Fatal(err)
	}
	// Without a setup callback the sign-in stops where setup is needed.
	var se *client.SignInError
	s.Post(t, "/api/v1/sandbox/organizations/"+created.Organization.ID+"/users", sbx, map[string]any{
		"email": "other@strict.test", "password": password, "role": "member", "totp": false,
	}).ExpectStatus(t, 201)
	if _, err := again.Login(t.Context(), client.Credentials{Email: "other@strict.test", Password: password}); !errors.As(err, &se) || se.Status != api.SignInStatusTotpSetupRequired {
		t.Fatalf("no setup callback: %v", err)
	}
}

func TestLoginReusesTheDevice(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	ctx := t.Context()

	first, _ := login(t, s, o)
	deviceID := first.DeviceID()
	second, _ := newClient(t, s)
	if _, err := second.Login(ctx, client.Credentials{Email: o.email, Password: password, DeviceID: deviceID, Code: codeFor(t, s, o.secret)}); err != nil {
		t.Fatal(err)
	}
	if second.DeviceID() != deviceID || second.Token() == first.Token() {
		t.Fatalf("device %q, want %q", second.DeviceID(), deviceID)
	}
	var devices []api.Device
	for d, err := range second.Devices(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		devices = append(devices, d)
	}
	if len(devices) != 1 || devices[0].Id.String() != deviceID || !devices[0].ThisDevice {
		t.Fatalf("devices = %+v, want the one device reused", devices)
	}
	// Without the id a new device is recorded.
	advance(t, s, 30*time.Second)
	third, _ := newClient(t, s)
	if _, err := third.Login(ctx, client.Credentials{Email: o.email, Password: password, Code: codeFor(t, s, o.secret)}); err != nil {
		t.Fatal(err)
	}
	if third.DeviceID() == deviceID {
		t.Fatal("a sign-in without device_id reused the device")
	}
	if _, err := third.Login(ctx, client.Credentials{Email: o.email, Password: password, DeviceID: "not-a-uuid"}); err == nil {
		t.Fatal("a malformed device id was sent")
	}
}

// --- step-up ---

// byAuthenticator answers every step-up with a code of the authenticator
// app of o, and counts the challenges.
func byAuthenticator(t *testing.T, s *apitest.Server, o org, calls *int) client.StepUpFunc {
	return func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		*calls++
		if !slices.Contains(ch.Methods, api.StepUpMethod(client.StepUpTOTP)) {
			return client.StepUpAnswer{}, fmt.Errorf("methods %v lack totp", ch.Methods)
		}
		code, err := codeFor(t, s, o.secret)(ctx)
		return client.StepUpAnswer{Method: client.StepUpTOTP, Code: code}, err
	}
}

func memberKey() api.ApiKeyCreation {
	return api.ApiKeyCreation{Name: "Treasury dashboard", Role: api.ApiKeyRequestedRoleMember, Scopes: []api.ApiKeyScope{api.ApiKeyScopeBalancesRead}}
}

func TestStepUpByAuthenticatorCodeRetriesTheGatedCallOnce(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	calls := 0
	c, rec := login(t, s, o, client.WithStepUp(byAuthenticator(t, s, o, &calls)))

	key, err := c.CreateAPIKey(t.Context(), o.id, memberKey())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(key.Secret, "sr_test_") || calls != 1 {
		t.Fatalf("key %+v after %d step-ups", key, calls)
	}
	gated := rec.calls("POST", "/api-keys")
	if len(gated) != 2 || gated[0].status != 403 || gated[1].status != 201 || len(rec.calls("POST", "/auth/step-up/complete")) != 1 {
		t.Fatalf("gated calls %+v, want 403 then one retry answered 201", gated)
	}
	// The sudo window serves the next gated call without a step-up.
	if _, err := c.CreateAPIKey(t.Context(), o.id, memberKey()); err != nil || calls != 1 {
		t.Fatalf("second key: %v after %d step-ups", err, calls)
	}

	// A wrong code fails the call with invalid_code and no retry.
	other := newOrg(t, s, "grace@other.test")
	wrong, rec := login(t, s, other, client.WithStepUp(func(context.Context, *api.StepUpChallenge) (client.StepUpAnswer, error) {
		return client.StepUpAnswer{Method: client.StepUpTOTP, Code: "000000"}, nil
	}))
	_, err = wrong.CreateAPIKey(t.Context(), other.id, memberKey())
	if e := asError(t, err); e.StatusCode != 422 || e.Type != "invalid_code" {
		t.Fatalf("wrong code: %+v", e)
	}
	if n := len(rec.calls("POST", "/api-keys")); n != 1 {
		t.Fatalf("%d gated calls after a wrong code, want 1", n)
	}
	// A callback's error stops the call with that error.
	refusal := errors.New("the person walked away")
	gone, _ := login(t, s, other, client.WithStepUp(func(context.Context, *api.StepUpChallenge) (client.StepUpAnswer, error) {
		return client.StepUpAnswer{}, refusal
	}))
	if _, err := gone.CreateAPIKey(t.Context(), other.id, memberKey()); !errors.Is(err, refusal) {
		t.Fatalf("callback error: %v", err)
	}
}

func TestStepUpByTheSandboxApprovingApp(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)

	var c *client.Client
	approved := make(chan error, 1)
	calls := 0
	stepUp := func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		calls++
		if ch.MatchCode == nil || len(*ch.MatchCode) != 3 || !slices.Contains(ch.Methods, api.StepUpMethod(client.StepUpApp)) {
			return client.StepUpAnswer{}, fmt.Errorf("challenge %+v", ch)
		}
		// The person sees the match code and approves on their phone, a
		// moment later: here the sandbox approving app does.
		challengeID, err := challengeOf(ctx, c, ch)
		if err != nil {
			return client.StepUpAnswer{}, err
		}
		go func() {
			time.Sleep(100 * time.Millisecond)
			approved <- sandboxApprove(s.URL, challengeID.String(), *ch.MatchCode)
		}()
		return client.StepUpAnswer{Method: client.StepUpApp}, nil
	}
	c, rec := login(t, s, o, client.WithStepUp(stepUp))

	key, err := c.CreateAPIKey(t.Context(), o.id, memberKey())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-approved; err != nil {
		t.Fatal(err)
	}
	if key.Secret == "" || calls != 1 {
		t.Fatalf("key %+v after %d step-ups", key, calls)
	}
	polls := rec.calls("GET", "") // the status polls: pending while the app had not answered yet, then active
	var statusPolls int
	for _, p := range polls {
		if strings.Contains(p.path, "/auth/step-up/") {
			statusPolls++
		}
	}
	gated := rec.calls("POST", "/api-keys")
	if statusPolls < 2 || len(gated) != 2 || gated[1].status != 201 {
		t.Fatalf("%d status polls, gated calls %+v", statusPolls, gated)
	}
}

// challengeOf finds the assurance challenge of a step-up in the person's
// inbox, as their app would.
func challengeOf(ctx context.Context, c *client.Client, ch *api.StepUpChallenge) (uuid.UUID, error) {
	r, err := c.API().ListChallengesWithResponse(ctx, nil)
	if err != nil {
		return uuid.Nil, err
	}
	if err := client.ErrorFromResponse(r.HTTPResponse, r.Body); err != nil {
		return uuid.Nil, err
	}
	for _, x := range r.JSON200.Data {
		if x.StepUpAuthenticationId != nil && *x.StepUpAuthenticationId == ch.StepUpAuthenticationId {
			return x.Id, nil
		}
	}
	return uuid.Nil, fmt.Errorf("no challenge for %s in %s", ch.StepUpAuthenticationId, r.Body)
}

func TestStepUpDeclinedInTheAppOrAnsweredByEmail(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)

	// The person declines: the call fails with a StepUpError wrapping the
	// step_up_required error, and is not retried.
	var c *client.Client
	c, rec := login(t, s, o, client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		id, err := challengeOf(ctx, c, ch)
		if err != nil {
			return client.StepUpAnswer{}, err
		}
		r, err := c.API().DeclineChallengeWithResponse(ctx, id, nil, api.EmptyObject{})
		if err != nil {
			return client.StepUpAnswer{}, err
		}
		return client.StepUpAnswer{Method: client.StepUpApp}, client.ErrorFromResponse(r.HTTPResponse, r.Body)
	}))
	_, err := c.CreateAPIKey(t.Context(), o.id, memberKey())
	var se *client.StepUpError
	if !errors.As(err, &se) || se.Status != "declined" || asError(t, err).Type != client.TypeStepUpRequired {
		t.Fatalf("declined step-up: %v", err)
	}
	if n := len(rec.calls("POST", "/api-keys")); n != 1 {
		t.Fatalf("%d gated calls after a decline, want 1", n)
	}

	// An emailed code.
	var mail *client.Client
	mail, rec = login(t, s, o, client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		if err := mail.RequestStepUpEmail(ctx, ch); err != nil {
			return client.StepUpAnswer{}, err
		}
		var outbox struct {
			Data []struct {
				Code *string `json:"code"`
			} `json:"data"`
		}
		s.Get(t, "/api/v1/sandbox/outbox?kind=step_up_email_code&user_id="+o.userID, sbx).ExpectStatus(t, 200).Decode(t, &outbox)
		if len(outbox.Data) == 0 || outbox.Data[0].Code == nil {
			return client.StepUpAnswer{}, errors.New("no emailed code")
		}
		return client.StepUpAnswer{Method: client.StepUpEmail, Code: *outbox.Data[0].Code}, nil
	}))
	if _, err := mail.CreateAPIKey(t.Context(), o.id, memberKey()); err != nil {
		t.Fatal(err)
	}
	if gated := rec.calls("POST", "/api-keys"); len(gated) != 2 || gated[1].status != 201 {
		t.Fatalf("gated calls %+v", gated)
	}
}

// sandboxApprove answers a challenge with the sandbox approving app.
func sandboxApprove(base, challengeID, matchCode string) error {
	body, _ := json.Marshal(map[string]any{"match_code": matchCode})
	req, err := http.NewRequest("POST", base+"/api/v1/sandbox/challenges/"+challengeID+"/approve", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+sbx)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("sandbox approve: %d %s", resp.StatusCode, raw)
	}
	return nil
}

// --- errors ---

func TestErrorsAreTyped(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	c, _ := login(t, s, o) // no step-up callback
	ctx := t.Context()

	// The step-up challenge of a gated call, when nobody answers it.
	_, err := c.CreateAPIKey(ctx, o.id, memberKey())
	e := asError(t, err)
	if e.StatusCode != 403 || e.Type != client.TypeStepUpRequired || e.Message == "" || e.RequestID == "" || e.StepUp == nil ||
		e.StepUp.MatchCode == nil || e.StepUp.Id == e.StepUp.StepUpAuthenticationId || !strings.Contains(e.Error(), "step_up_required") {
		t.Fatalf("step-up error = %+v", e)
	}

	// Details of an invalid request, and the request id the caller sent.
	requestID := "client-test-0001"
	org := uuid.MustParse(o.id)
	bad := memberKey()
	bad.Scopes = []api.ApiKeyScope{api.ApiKeyScopeBalancesRead, "no:such_scope"}
	r, err := c.API().CreateApiKeyWithResponse(ctx, org, &api.CreateApiKeyParams{XRequestId: &requestID}, bad)
	if err != nil {
		t.Fatal(err)
	}
	e = asError(t, client.ErrorFromResponse(r.HTTPResponse, r.Body))
	if e.StatusCode != 400 || e.Type != "invalid_request" || e.RequestID != requestID || len(e.Details) != 1 || e.Details[0].Field != "scopes" || e.Details[0].Message == "" {
		t.Fatalf("invalid request = %+v", e)
	}
	if e.StepUp != nil {
		t.Fatal("step_up on an invalid_request")
	}

	// Not found, and not authenticated.
	_, err = c.CurrencyAccounts(ctx, "0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f")
	if e := asError(t, err); e.StatusCode != 404 || e.Type != "not_found" {
		t.Fatalf("not found = %+v", e)
	}
	anonymous, _ := newClient(t, s)
	if _, err := anonymous.Me(ctx); asError(t, err).Type != "not_authenticated" {
		t.Fatalf("anonymous: %v", err)
	}
	if _, err := c.CurrencyAccounts(ctx, "nope"); err == nil {
		t.Fatal("a malformed organization id was sent")
	}
}

// --- API keys ---

func TestAPIKeyListsTheCurrencyAccounts(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	calls := 0
	owner, _ := login(t, s, o, client.WithStepUp(byAuthenticator(t, s, o, &calls)))
	key, err := owner.CreateAPIKey(t.Context(), o.id, memberKey())
	if err != nil {
		t.Fatal(err)
	}

	program, rec := newClient(t, s, client.WithAPIKey(key.Secret))
	accounts, err := program.CurrencyAccounts(t.Context(), o.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 10 || accounts[0].Currency != "AUD" {
		t.Fatalf("accounts = %+v", accounts)
	}
	if got := rec.calls("GET", "/multi-currency-accounts"); len(got) != 1 || got[0].status != 200 {
		t.Fatalf("calls = %+v", got)
	}
	// Elsewhere a key is refused, with a typed error.
	_, err = program.Me(t.Context())
	if e := asError(t, err); e.StatusCode != 403 || e.Type != "api_key_not_permitted" {
		t.Fatalf("key on getMe = %+v", e)
	}
	// A wrong secret.
	wrong, _ := newClient(t, s, client.WithAPIKey(key.Secret[:len(key.Secret)-1]+"x"))
	if _, err := wrong.CurrencyAccounts(t.Context(), o.id); asError(t, err).Type != "invalid_api_key" {
		t.Fatalf("wrong key: %v", err)
	}
}

// --- pages ---

func TestTransactionsIteratorWalksEveryPage(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	for i := range 7 {
		s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": fmt.Sprintf("%d.00", 100+i)}).
			ExpectStatus(t, 201)
		advance(t, s, time.Second)
	}
	c, rec := login(t, s, o)

	limit := 3
	types := []api.TransactionType{api.TransactionTypeDeposit}
	var amounts []string
	seen := map[string]bool{}
	for tx, err := range c.Transactions(t.Context(), o.id, &api.ListTransactionsParams{Limit: &limit, Type: &types}) {
		if err != nil {
			t.Fatal(err)
		}
		if seen[tx.Id.String()] {
			t.Fatalf("transaction %s twice", tx.Id)
		}
		seen[tx.Id.String()] = true
		amounts = append(amounts, tx.Effect.Total)
	}
	want := []string{"106.00", "105.00", "104.00", "103.00", "102.00", "101.00", "100.00"}
	if !slices.Equal(amounts, want) {
		t.Fatalf("amounts = %v, want %v (newest first)", amounts, want)
	}
	pages := rec.calls("GET", "/transactions")
	if len(pages) != 3 || strings.Contains(pages[0].query, "cursor=") {
		t.Fatalf("pages = %+v, want 3, the first without a cursor", pages)
	}
	for _, p := range pages {
		if !strings.Contains(p.query, "limit=3") || !strings.Contains(p.query, "type=deposit") {
			t.Fatalf("page request %q lost the parameters", p.query)
		}
	}
	for _, p := range pages[1:] {
		if !strings.Contains(p.query, "cursor=") {
			t.Fatalf("page request %q has no cursor", p.query)
		}
	}

	// Breaking off stops fetching.
	n := 0
	for _, err := range c.Transactions(t.Context(), o.id, &api.ListTransactionsParams{Limit: &limit}) {
		if err != nil {
			t.Fatal(err)
		}
		if n++; n == 4 {
			break
		}
	}
	if got := len(rec.calls("GET", "/transactions")); got != 5 {
		t.Fatalf("%d page requests in all, want 3 + 2", got)
	}
	// An error ends the range as its last value.
	var last error
	for _, err := range c.Transactions(t.Context(), "0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f", nil) {
		last = err
	}
	if asError(t, last).Type != "not_found" {
		t.Fatalf("last = %v", last)
	}
}

// --- 429 ---

func TestRateLimitedCallsWaitAndRetry(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=3/2s")
	o := newOrg(t, s, "ada@acme.test")
	c, rec := login(t, s, o)
	ctx := t.Context()

	start := time.Now()
	for i := range 6 {
		if _, err := c.Me(ctx); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	limited := 0
	for _, e := range rec.calls("GET", "/api/v1/me") {
		if e.status == 429 {
			limited++
		}
	}
	if limited == 0 || time.Since(start) < 900*time.Millisecond {
		t.Fatalf("%d answers 429 in %v: the limit was not reached or not waited for", limited, time.Since(start))
	}

	// Without retries the 429 is a typed error with its Retry-After.
	hasty, _ := newClient(t, s, client.WithToken(c.Token()), client.WithMaxRetries(0))
	var e *client.Error
	for range 5 {
		if _, err := hasty.Me(ctx); err != nil {
			e = asError(t, err)
			break
		}
	}
	if e == nil || e.StatusCode != 429 || e.Type != client.TypeRateLimited || e.RetryAfter < time.Second {
		t.Fatalf("429 = %+v", e)
	}
	// A Retry-After beyond the cap is not waited for.
	capped, _ := newClient(t, s, client.WithToken(c.Token()), client.WithMaxRetryWait(100*time.Millisecond))
	e = nil
	for range 5 {
		if _, err := capped.Me(ctx); err != nil {
			e = asError(t, err)
			break
		}
	}
	if e == nil || e.Type != client.TypeRateLimited {
		t.Fatalf("capped: %+v", e)
	}
	// The wait ends with the context.
	for i := 0; ; i++ {
		if i == 50 {
			t.Fatal("never rate-limited")
		}
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		began := time.Now()
		_, err := c.Me(short)
		cancel()
		if err == nil {
			continue
		}
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(began) > 500*time.Millisecond {
			t.Fatalf("cancelled wait: %v after %v", err, time.Since(began))
		}
		break
	}
}

// --- idempotency ---

func TestExecuteAttachesAnIdempotencyKeyAndReplaysIt(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": "1000.00"}).ExpectStatus(t, 201)
	c, rec := login(t, s, o)
	var contact struct {
		ID string `json:"id"`
	}
	s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", c.Token(), map[string]any{
		"name": "Müller Maschinenbau GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201).Decode(t, &contact)
	quote := func(amount string) api.PaymentExecution {
		var q struct {
			ID string `json:"id"`
		}
		s.Post(t, "/api/v1/payments/preflight", c.Token(), map[string]any{"organization_id": o.id, "rail": "fiat", "payment_contact_id": contact.ID,
			"source_currency": "EUR", "amount": amount, "amount_side": "send"}).ExpectStatus(t, 201).Decode(t, &q)
		id := uuid.MustParse(q.ID)
		reason, description := "PYR002", "Invoice 2026-118"
		return api.PaymentExecution{QuoteId: id, PayoutReason: &reason, StatementDescription: &description}
	}

	// The answer of the first execute is lost; the client sends it again
	// with the same key and the server replays the payment it made.
	rec.mu.Lock()
	rec.loseNext = "/payments/execute"
	rec.mu.Unlock()
	pay, err := c.ExecutePayment(t.Context(), quote("100.00"), nil)
	if err != nil {
		t.Fatal(err)
	}
	sent := rec.calls("POST", "/payments/execute")
	if len(sent) != 2 || sent[0].idempotencyKey == "" || sent[1].idempotencyKey != sent[0].idempotencyKey ||
		sent[0].status != 201 || sent[0].replayed || !sent[1].replayed {
		t.Fatalf("execute requests = %+v, want one sent again with the same key and replayed", sent)
	}
	if pay.Status != "awaiting_approval" {
		t.Fatalf("payment = %+v", pay)
	}
	var approvals struct {
		Data []map[string]any `json:"data"`
	}
	s.Get(t, "/api/v1/organizations/"+o.id+"/approvals?status=pending", c.Token()).ExpectStatus(t, 200).Decode(t, &approvals)
	if len(approvals.Data) != 1 {
		t.Fatalf("%d pending approvals, want the one payment", len(approvals.Data))
	}

	// The caller's own key is sent as given, and replays.
	q := quote("50.00")
	a, err := c.ExecutePayment(t.Context(), q, &client.ExecuteOptions{IdempotencyKey: "invoice-2026-118"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.ExecutePayment(t.Context(), q, &client.ExecuteOptions{IdempotencyKey: "invoice-2026-118"})
	if err != nil || b.Id != a.Id {
		t.Fatalf("replay = %+v, %v; first %s", b, err, a.Id)
	}
	sent = rec.calls("POST", "/payments/execute")
	if sent[2].idempotencyKey != "invoice-2026-118" || !sent[3].replayed {
		t.Fatalf("requests = %+v", sent[2:])
	}
	// A low-level execute without a key gets one too.
	r, err := c.API().ExecutePaymentWithResponse(t.Context(), nil, quote("10.00"))
	if err != nil || client.ErrorFromResponse(r.HTTPResponse, r.Body) != nil {
		t.Fatalf("low-level execute: %v %s", err, r.Body)
	}
	sent = rec.calls("POST", "/payments/execute")
	if last := sent[len(sent)-1]; last.idempotencyKey == "" || last.idempotencyKey == sent[0].idempotencyKey {
		t.Fatalf("low-level execute key %q", last.idempotencyKey)
	}
}
