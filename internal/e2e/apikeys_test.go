package e2e_test

import (
	"context"
	"crypto/ed25519"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/httpapi"
)

// webClient is p's web session as a client whose step-ups p approves in
// the app, as a person at a desk with their phone.
func (p *person) webClient(t *testing.T, s *apitest.Server) *client.Client {
	return s.Client(t, p.web, client.WithStepUp(func(_ context.Context, up *api.StepUpChallenge) (client.StepUpAnswer, error) {
		if up.MatchCode == nil {
			t.Fatalf("step-up without a match code: %+v", up)
		}
		approveStepUpInApp(t, s, p, up.StepUpAuthenticationId.String(), *up.MatchCode)
		return client.StepUpAnswer{Method: client.StepUpApp}, nil
	}))
}

// gatedCall makes a step-up gated call from p's web session, approving the
// step-up in the app when asked.
func gatedCall(t *testing.T, s *apitest.Server, p *person, req apitest.Request) *apitest.Response {
	t.Helper()
	req.Bearer = p.web
	r := s.Do(t, req)
	if r.Status == http.StatusForbidden && strings.Contains(string(r.Body), `"step_up_required"`) {
		stepUp(t, s, p, r)
		r = s.Do(t, req)
	}
	return r
}

// createKey creates an API key from p's web session, approving its
// step-up in the app.
func createKey(t *testing.T, s *apitest.Server, p *person, orgID string, key api.ApiKeyCreation) api.ApiKeyWithSecret {
	t.Helper()
	k, err := p.webClient(t, s).CreateAPIKey(t.Context(), orgID, key)
	if err != nil {
		t.Fatal(err)
	}
	return *k
}

// keyOf is the creation of a key.
func keyOf(name, role string, scopes ...string) api.ApiKeyCreation {
	sc := make([]api.ApiKeyScope, len(scopes))
	for i, x := range scopes {
		sc[i] = api.ApiKeyScope(x)
	}
	return api.ApiKeyCreation{Name: name, Role: api.ApiKeyRequestedRole(role), Scopes: sc}
}

func balancesKey(t *testing.T, s *apitest.Server, p *person, orgID string) api.ApiKeyWithSecret {
	t.Helper()
	return createKey(t, s, p, orgID, keyOf("Treasury sync", "member", "balances:read"))
}

func accountsPath(orgID string) string {
	return "/api/v1/organizations/" + orgID + "/multi-currency-accounts"
}

func keyPath(orgID, keyID, action string) string {
	p := "/api/v1/organizations/" + orgID + "/api-keys/" + keyID
	if action != "" {
		p += "/" + action
	}
	return p
}

var keyFormat = regexp.MustCompile(`^sr_test_([a-z0-9]{8})_[0-9A-Za-z]{43}$`)

func TestAPIKeyCreationNeedsStepUpAndShowsTheSecretOnce(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	body := keyOf("Treasury sync", "member", "balances:read")
	expectStepUp(t, s.Post(t, "/api/v1/organizations/"+org+"/api-keys", p.web, body))
	k := createKey(t, s, p, org, body)
	m := keyFormat.FindStringSubmatch(k.Secret)
	if m == nil || m[1] != k.ApiKey.Lookup || k.ApiKey.Environment != "test" || k.ApiKey.CreatedById.String() != p.userID || k.ApiKey.OrganizationId.String() != org {
		t.Fatalf("key = %+v (secret format ok: %v)", k.ApiKey, m != nil)
	}
	// The key reads the currency accounts, and its use is recorded.
	accounts, err := s.Client(t, k.Secret).CurrencyAccounts(t.Context(), org)
	if err != nil {
		t.Fatal(err)
	}
	if len(accounts) != 10 {
		t.Fatalf("%d currencies, want the 10 configured", len(accounts))
	}
	var list api.ApiKeyPage
	s.Get(t, "/api/v1/organizations/"+org+"/api-keys", p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].LastUsedAt == nil || strings.Contains(string(s.Get(t, "/api/v1/organizations/"+org+"/api-keys", p.web).Body), k.Secret) {
		t.Fatalf("list = %+v, want one key with last_used_at and no secret", list.Data)
	}
	// A retry creates a second key: the secret is not kept for idempotency.
	second := createKey(t, s, p, org, body)
	if second.ApiKey.Id == k.ApiKey.Id || second.Secret == k.Secret {
		t.Fatal("a retry returned the same key")
	}
	// Nothing secret reached the logs; the key's lookup did.
	assertNoSecrets(t, s, k.Secret, second.Secret, k.Secret[len(k.Secret)-43:])
	if !strings.Contains(s.Logs.String(), `"api_key":"`+k.ApiKey.Lookup+`"`) {
		t.Fatal("the access log does not name the key by its lookup")
	}
}

func TestAPIKeyAuthenticationFailures(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := balancesKey(t, s, p, org)
	secret := k.Secret[len(k.Secret)-43:]
	for name, bearer := range map[string]string{
		"malformed":         "sr_test_abc",
		"unknown lookup":    "sr_test_zzzzzzzz_" + secret,
		"wrong secret":      "sr_test_" + k.ApiKey.Lookup + "_" + strings.Repeat("A", 43),
		"other environment": "sr_live_" + k.ApiKey.Lookup + "_" + secret,
	} {
		t.Run(name, func(t *testing.T) {
			s.Get(t, accountsPath(org), bearer).ExpectError(t, 401, "invalid_api_key")
		})
	}
	// Another organization's accounts are not found with this key.
	other := newPerson(t, s, "grace@other.test")
	s.Get(t, accountsPath(orgOf(t, s, other)), k.Secret).ExpectError(t, 404, "not_found")
	// A key without balances:read lacks the scope.
	events := createKey(t, s, p, org, keyOf("Events", "member", "events:read"))
	s.Get(t, accountsPath(org), events.Secret).ExpectError(t, 403, "api_scope_missing")
}

func TestAPIKeyRoleAndScopeRules(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	// An admin (not an owner) manages keys but cannot mint one above their role.
	adminID, adminSecret := addUser(t, s, org, "admin@acme.test", "admin", true)
	admin := &person{email: "admin@acme.test", secret: adminSecret, userID: adminID}
	admin.web = signInFully(t, s, admin.email, admin.secret)
	admin.app, admin.key = appSession(t, s, admin.email, admin.secret)
	createKey(t, s, admin, org, keyOf("Admin key", "admin", "webhooks:manage"))
	gatedCall(t, s, admin, apitest.Request{Method: "POST", Path: "/api/v1/organizations/" + org + "/api-keys",
		Body: map[string]any{"name": "Owner key", "role": "owner", "scopes": []string{}}}).ExpectError(t, 403, "role_exceeds_creator")
	// An owner still cannot make an owner key.
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: "/api/v1/organizations/" + org + "/api-keys",
		Body: map[string]any{"name": "Owner key", "role": "owner", "scopes": []string{}}}).ExpectError(t, 400, "invalid_request")
	// Scopes above the key's role, and unknown scopes.
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: "/api/v1/organizations/" + org + "/api-keys",
		Body: map[string]any{"name": "x", "role": "member", "scopes": []string{"refunds:write"}}}).ExpectError(t, 403, "forbidden")
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: "/api/v1/organizations/" + org + "/api-keys",
		Body: map[string]any{"name": "x", "role": "member", "scopes": []string{"everything"}}}).ExpectError(t, 400, "invalid_request")
	// Update is gated and follows the same rules.
	k := balancesKey(t, s, p, org)
	var updated api.ApiKey
	gatedCall(t, s, p, apitest.Request{Method: "PATCH", Path: keyPath(org, k.ApiKey.Id.String(), ""),
		Body: map[string]any{"role": "admin", "scopes": []string{"balances:read", "refunds:write"}}}).ExpectStatus(t, 200).Decode(t, &updated)
	if updated.Role != "admin" || len(updated.Scopes) != 2 {
		t.Fatalf("updated = %+v", updated)
	}
	gatedCall(t, s, p, apitest.Request{Method: "PATCH", Path: keyPath(org, k.ApiKey.Id.String(), ""), Body: map[string]any{"role": "member"}}).
		ExpectError(t, 403, "forbidden") // refunds:write needs admin
	gatedCall(t, s, p, apitest.Request{Method: "PATCH", Path: keyPath(org, k.ApiKey.Id.String(), ""), Body: map[string]any{}}).
		ExpectError(t, 400, "invalid_request")
}

// appSession signs email in from the iOS app and registers its approval credential.
func appSession(t *testing.T, s *apitest.Server, email, secret string) (string, ed25519.PrivateKey) {
	t.Helper()
	app, _ := appSignIn(t, s, email, secret, "", "")
	pub, key := newAppKey()
	registerAppKey(t, s, app, secret, pub)
	return app, key
}

func TestAPIKeyRotationKeepsTheOldSecretForADay(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	first := balancesKey(t, s, p, org)
	var second api.ApiKeyWithSecret
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: keyPath(org, first.ApiKey.Id.String(), "rotate")}).ExpectStatus(t, 200).Decode(t, &second)
	if second.ApiKey.Lookup != first.ApiKey.Lookup || second.Secret == first.Secret || second.ApiKey.RotatedAt == nil ||
		second.ApiKey.PreviousSecretExpiresAt == nil || !second.ApiKey.PreviousSecretExpiresAt.Equal(now(t, s).Add(24*time.Hour)) {
		t.Fatalf("rotated = %+v", second.ApiKey)
	}
	s.Get(t, accountsPath(org), first.Secret).ExpectStatus(t, 200)
	s.Get(t, accountsPath(org), second.Secret).ExpectStatus(t, 200)
	advance(t, s, 24*time.Hour-time.Second)
	s.Get(t, accountsPath(org), first.Secret).ExpectStatus(t, 200)
	advance(t, s, time.Second)
	s.Get(t, accountsPath(org), first.Secret).ExpectError(t, 401, "invalid_api_key")
	s.Get(t, accountsPath(org), second.Secret).ExpectStatus(t, 200)

	// Rotating twice within a day: only the two latest secrets work.
	p.signInAgain(t, s) // a day has passed: the sessions ended
	var third, fourth api.ApiKeyWithSecret
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: keyPath(org, first.ApiKey.Id.String(), "rotate")}).ExpectStatus(t, 200).Decode(t, &third)
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: keyPath(org, first.ApiKey.Id.String(), "rotate")}).ExpectStatus(t, 200).Decode(t, &fourth)
	s.Get(t, accountsPath(org), second.Secret).ExpectError(t, 401, "invalid_api_key")
	s.Get(t, accountsPath(org), third.Secret).ExpectStatus(t, 200)
	s.Get(t, accountsPath(org), fourth.Secret).ExpectStatus(t, 200)
}

func TestRevokedKeysStopAtOnceAndCannotChange(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := balancesKey(t, s, p, org)
	s.Get(t, accountsPath(org), k.Secret).ExpectStatus(t, 200)
	var revoked api.ApiKey
	s.Post(t, keyPath(org, k.ApiKey.Id.String(), "revoke"), p.web, nil).ExpectStatus(t, 200).Decode(t, &revoked)
	if revoked.RevokedAt == nil {
		t.Fatal("revoked_at not set")
	}
	s.Get(t, accountsPath(org), k.Secret).ExpectError(t, 401, "invalid_api_key")
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: keyPath(org, k.ApiKey.Id.String(), "rotate")}).ExpectError(t, 409, "api_key_revoked")
	gatedCall(t, s, p, apitest.Request{Method: "PATCH", Path: keyPath(org, k.ApiKey.Id.String(), ""), Body: map[string]any{"name": "again"}}).
		ExpectError(t, 409, "api_key_revoked")
	s.Post(t, keyPath(org, k.ApiKey.Id.String(), "revoke"), p.web, nil).ExpectStatus(t, 200)
}

func TestBanRevokesEveryKeyForGood(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := balancesKey(t, s, p, org)
	setStatus := func(status string) {
		s.Post(t, "/api/v1/sandbox/organizations/"+org+"/status", sbx, map[string]any{"status": status}).ExpectStatus(t, 200)
	}
	setStatus("paused")
	s.Get(t, accountsPath(org), k.Secret).ExpectError(t, 403, "organization_unavailable")
	setStatus("active")
	s.Get(t, accountsPath(org), k.Secret).ExpectStatus(t, 200)
	setStatus("deleted")
	s.Get(t, accountsPath(org), k.Secret).ExpectError(t, 403, "organization_unavailable")
	setStatus("banned")
	s.Get(t, accountsPath(org), k.Secret).ExpectError(t, 401, "invalid_api_key")
	setStatus("active")
	s.Get(t, accountsPath(org), k.Secret).ExpectError(t, 401, "invalid_api_key")
	var list api.ApiKeyPage
	s.Get(t, "/api/v1/organizations/"+org+"/api-keys", p.web).ExpectStatus(t, 200).Decode(t, &list)
	if list.Data[0].RevokedAt == nil {
		t.Fatal("the ban did not record the revocation")
	}
}

func TestOnlyOwnersAndAdminsSeeKeys(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := balancesKey(t, s, p, org)
	addUser(t, s, org, "member@acme.test", "member", false)
	member := *signIn(t, s, map[string]any{"email": "member@acme.test", "password": password}).Token
	s.Get(t, "/api/v1/organizations/"+org+"/api-keys", member).ExpectError(t, 403, "forbidden")
	s.Post(t, "/api/v1/organizations/"+org+"/api-keys", member, map[string]any{"name": "x", "role": "member", "scopes": []string{}}).
		ExpectError(t, 403, "forbidden")
	s.Post(t, keyPath(org, k.ApiKey.Id.String(), "revoke"), member, nil).ExpectError(t, 404, "not_found")
	s.Do(t, apitest.Request{Method: "PATCH", Path: keyPath(org, k.ApiKey.Id.String(), ""), Bearer: member, Body: map[string]any{"name": "x"}}).
		ExpectError(t, 404, "not_found")
	outsider := newPerson(t, s, "eve@evil.test")
	s.Get(t, "/api/v1/organizations/"+org+"/api-keys", outsider.web).ExpectError(t, 404, "not_found")
	s.Post(t, keyPath(org, k.ApiKey.Id.String(), "revoke"), outsider.web, nil).ExpectError(t, 404, "not_found")
	// Another organization's key id under one's own organization is not found either.
	s.Post(t, keyPath(orgOf(t, s, outsider), k.ApiKey.Id.String(), "revoke"), outsider.web, nil).ExpectError(t, 404, "not_found")
	s.Get(t, accountsPath(org), k.Secret).ExpectStatus(t, 200)
}

func TestFiftyActiveKeysAtMost(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	var last api.ApiKeyWithSecret
	for range 50 {
		last = balancesKey(t, s, p, org)
	}
	body := keyOf("one too many", "member", "balances:read")
	gatedCall(t, s, p, apitest.Request{Method: "POST", Path: "/api/v1/organizations/" + org + "/api-keys", Body: body}).
		ExpectError(t, 422, "api_key_limit_reached")
	s.Post(t, keyPath(org, last.ApiKey.Id.String(), "revoke"), p.web, nil).ExpectStatus(t, 200)
	createKey(t, s, p, org, body)
}

// keyOperations are the operations that accept an API key, each with the
// status a key holding every scope gets from the walk below (random ids in
// the path, an empty body, no realtime protocol asked for).
var keyOperations = map[string]int{
	"GET /api/v1/organizations/{organization_id}/multi-currency-accounts":                                                 200,
	"GET /api/v1/organizations/{organization_id}/events":                                                                  200,
	"GET /api/v1/organizations/{organization_id}/events/{event_id}":                                                       404,
	"GET /api/v1/organizations/{organization_id}/realtime":                                                                400,
	"POST /api/v1/organizations/{organization_id}/payment-requests":                                                       400,
	"GET /api/v1/organizations/{organization_id}/payment-requests":                                                        200,
	"GET /api/v1/organizations/{organization_id}/payment-requests/{payment_request_id}":                                   404,
	"POST /api/v1/organizations/{organization_id}/payment-requests/{payment_request_id}/cancel":                           404,
	"POST /api/v1/organizations/{organization_id}/webhook-endpoints":                                                      400,
	"GET /api/v1/organizations/{organization_id}/webhook-endpoints":                                                       200,
	"GET /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}":                                 404,
	"PATCH /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}":                               400,
	"DELETE /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}":                              404,
	"POST /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}/rotate-secret":                  404,
	"GET /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}/deliveries":                      404,
	"POST /api/v1/organizations/{organization_id}/webhook-endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry": 404,
	"GET /api/v1/organizations/{organization_id}/statements":                                                              400,
}

// TestOnlyOperationsForProgramsAcceptAnAPIKey walks every route in
// routes.go with a valid key.
func TestOnlyOperationsForProgramsAcceptAnAPIKey(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := createKey(t, s, p, org, keyOf("All scopes", "admin",
		"balances:read", "events:read", "events:subscribe", "payment_requests:read", "payment_requests:write",
		"payments:read", "transactions:read", "refunds:write", "webhooks:manage"))
	param := regexp.MustCompile(`\{([a-z_]+)\}`)
	accepted := 0
	for _, op := range httpapi.Operations() {
		method, path, _ := strings.Cut(op, " ")
		if !strings.HasPrefix(path, "/api/v1/") {
			continue // operational endpoints are not API operations
		}
		url := param.ReplaceAllStringFunc(path, func(m string) string {
			if m == "{organization_id}" {
				return org
			}
			return uuid.NewString()
		})
		req := apitest.Request{Method: method, Path: url, Bearer: k.Secret}
		if method != "GET" && method != "DELETE" {
			req.Body = map[string]any{}
		}
		r := s.Do(t, req)
		status, forKeys := keyOperations[op]
		switch {
		case forKeys:
			r.ExpectStatus(t, status)
			accepted++
		case strings.HasPrefix(path, "/api/v1/sandbox/"):
			r.ExpectError(t, 404, "not_found") // the sandbox takes its own token only
		default:
			if r.Status != 403 || !strings.Contains(string(r.Body), `"api_key_not_permitted"`) {
				t.Errorf("%s with an API key: %d %s, want 403 api_key_not_permitted", op, r.Status, r.Body)
			}
		}
	}
	if accepted != len(keyOperations) {
		t.Fatalf("%d operations accepted the key, want %d", accepted, len(keyOperations))
	}
}

func TestAPIKeyCannotManageKeysOrRequestAccounts(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	k := balancesKey(t, s, p, org)
	s.Post(t, "/api/v1/organizations/"+org+"/api-keys", k.Secret, map[string]any{"name": "x", "role": "member", "scopes": []string{}}).
		ExpectError(t, 403, "api_key_not_permitted")
	// The client with the key as its bearer gets the same answer as an error.
	_, err := s.Client(t, k.Secret).CreateAPIKey(t.Context(), org, keyOf("x", "member"))
	apitest.ExpectClientError(t, err, 403, "api_key_not_permitted")
	s.Post(t, accountsPath(org), k.Secret, map[string]any{"currencies": []string{"EUR"}}).ExpectError(t, 403, "api_key_not_permitted")
	s.Post(t, "/api/v1/auth/step-up/complete", k.Secret, map[string]any{"sudo_session_id": uuid.NewString(), "method": "totp", "code": "1"}).
		ExpectError(t, 403, "api_key_not_permitted")
	s.Post(t, "/api/v1/auth/sign-in", k.Secret, map[string]any{"email": p.email, "password": password}).ExpectError(t, 403, "api_key_not_permitted")
}
