package e2e_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

const partnerSecret = "partner-webhook-secret-for-tests"

func startWithPartner(t *testing.T) *apitest.Server {
	return apitest.Start(t, "STRONGROOM_PARTNER_SECRET="+partnerSecret)
}

// accounts lists the organization's currency accounts through the client.
func accounts(t *testing.T, s *apitest.Server, token, org string) map[string]api.CurrencyAccount {
	t.Helper()
	list, err := s.Client(t, token).CurrencyAccounts(t.Context(), org)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]api.CurrencyAccount{}
	for _, a := range list {
		out[a.Currency] = a
	}
	return out
}

func request(t *testing.T, s *apitest.Server, token, org string, currencies ...string) api.CurrencyAccountRequestResult {
	t.Helper()
	var res api.CurrencyAccountRequestResult
	s.Post(t, accountsPath(org), token, map[string]any{"currencies": currencies}).ExpectStatus(t, 200).Decode(t, &res)
	return res
}

func outcomes(r api.CurrencyAccountRequestResult) map[string]string {
	out := map[string]string{}
	for _, o := range r.Outcomes {
		out[o.Currency] = string(o.Result)
	}
	return out
}

func partner(t *testing.T, s *apitest.Server, settings map[string]any) {
	t.Helper()
	s.Post(t, "/api/v1/sandbox/partner", sbx, settings).ExpectStatus(t, 200)
}

// eventually polls check until it holds (background jobs run on their own time).
func eventually(t *testing.T, what string, check func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if check() {
			return
		}
	}
	t.Fatalf("timed out waiting until %s", what)
}

func TestCurrencyAccountListHasEveryConfiguredCurrency(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	var res api.CurrencyAccountList
	s.Get(t, accountsPath(orgOf(t, s, p)), p.web).ExpectStatus(t, 200).Decode(t, &res)
	want := []string{"AUD", "CAD", "CHF", "EUR", "GBP", "HKD", "JPY", "MXN", "SGD", "USD"}
	if len(res.Data) != len(want) {
		t.Fatalf("%d entries, want %d", len(res.Data), len(want))
	}
	for i, a := range res.Data {
		if a.Currency != want[i] || a.State != "available" || a.FirstRequestedAt != nil || a.FailureNote != nil || !a.RequestsEnabled {
			t.Fatalf("entry %d = %+v", i, a)
		}
	}
	other := newPerson(t, s, "eve@evil.test")
	s.Get(t, accountsPath(orgOf(t, s, p)), other.web).ExpectError(t, 404, "not_found")
}

func TestRequestingCurrenciesFromThePartner(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	res := request(t, s, p.web, org, "USD", "JPY", "EUR", "XTS", "EUR")
	if len(res.Outcomes) != 4 || res.Outcomes[0].Currency != "EUR" || res.Outcomes[1].Currency != "JPY" || res.Outcomes[2].Currency != "USD" || res.Outcomes[3].Currency != "XTS" {
		t.Fatalf("outcomes %+v, want one per currency in alphabetical order", res.Outcomes)
	}
	o := outcomes(res)
	if o["EUR"] != "requested" || o["USD"] != "requested" || o["JPY"] != "failed" || o["XTS"] != "failed" {
		t.Fatalf("outcomes = %v", o)
	}
	a := accounts(t, s, p.web, org)
	if a["EUR"].State != "processing" || a["USD"].State != "processing" || a["JPY"].State != "failed" || a["GBP"].State != "available" {
		t.Fatalf("states = %+v", a)
	}
	if a["EUR"].FirstRequestedAt == nil || !a["EUR"].FirstRequestedAt.Equal(now(t, s)) {
		t.Fatalf("first_requested_at = %v", a["EUR"].FirstRequestedAt)
	}
	// Asking again reports what is under way.
	o = outcomes(request(t, s, p.web, org, "EUR"))
	if o["EUR"] != "already_processing" {
		t.Fatalf("again: %v", o)
	}
	// The partner opens EUR; from then on an offered currency attaches at once.
	s.Post(t, "/api/v1/sandbox/partner/webhook", sbx, map[string]any{"organization_id": org, "currency": "EUR", "event": "account.activated"}).ExpectStatus(t, 204)
	res = request(t, s, p.web, org, "GBP", "EUR")
	if o := outcomes(res); o["GBP"] != "requested" || o["EUR"] != "already_active" {
		t.Fatalf("after activation: %v", o)
	}
	a = accounts(t, s, p.web, org)
	if a["GBP"].State != "active" || a["EUR"].State != "active" {
		t.Fatalf("states after activation = %+v", a)
	}
	// A later webhook turns a failed currency active.
	s.Post(t, "/api/v1/sandbox/partner/webhook", sbx, map[string]any{"organization_id": org, "currency": "JPY", "event": "account.activated"}).ExpectStatus(t, 204)
	if a := accounts(t, s, p.web, org); a["JPY"].State != "active" {
		t.Fatalf("JPY after webhook = %+v", a["JPY"])
	}
}

func TestSelectionsWaitForTheEntity(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/entity", sbx, map[string]any{"status": "pending"}).ExpectStatus(t, 200)
	// The partner is not even asked: its eligibility read would fail.
	partner(t, s, map[string]any{"eligibility_error": true})
	res := request(t, s, p.web, org, "EUR", "JPY")
	if o := outcomes(res); o["EUR"] != "requested" || o["JPY"] != "requested" {
		t.Fatalf("outcomes while pending = %v", o)
	}
	if a := accounts(t, s, p.web, org); a["EUR"].State != "processing" || a["JPY"].State != "processing" {
		t.Fatalf("states while pending = %+v", a)
	}
	partner(t, s, map[string]any{"eligibility_error": false})
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/entity", sbx, map[string]any{"status": "ready"}).ExpectStatus(t, 200)
	eventually(t, "the saved selections are submitted", func() bool {
		a := accounts(t, s, p.web, org)
		return a["JPY"].State == "failed"
	})
	if a := accounts(t, s, p.web, org); a["EUR"].State != "processing" {
		t.Fatalf("EUR after submission = %+v", a["EUR"])
	}
}

func TestRejectedEntityRefusesTheWholeRequest(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/entity", sbx, map[string]any{"status": "rejected"}).ExpectStatus(t, 200)
	s.Post(t, accountsPath(org), p.web, map[string]any{"currencies": []string{"EUR"}}).ExpectError(t, 422, "entity_rejected")
	if a := accounts(t, s, p.web, org); a["EUR"].State != "available" {
		t.Fatal("a refused request changed a state")
	}
}

func TestPartnerEligibilityFailureChangesNothing(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	partner(t, s, map[string]any{"eligibility_error": true})
	s.Post(t, accountsPath(org), p.web, map[string]any{"currencies": []string{"EUR", "USD"}}).ExpectError(t, 502, "partner_error")
	for c, a := range accounts(t, s, p.web, org) {
		if a.State != "available" || a.FirstRequestedAt != nil {
			t.Fatalf("%s changed: %+v", c, a)
		}
	}
}

func TestUnavailablePartnerIsRetried(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	request(t, s, p.web, org, "EUR")
	s.Post(t, "/api/v1/sandbox/partner/webhook", sbx, map[string]any{"organization_id": org, "currency": "EUR", "event": "account.activated"}).ExpectStatus(t, 204)
	partner(t, s, map[string]any{"unavailable": true})
	if o := outcomes(request(t, s, p.web, org, "USD")); o["USD"] != "provider_unavailable" {
		t.Fatalf("outcome = %v", o)
	}
	if a := accounts(t, s, p.web, org); a["USD"].State != "processing" {
		t.Fatalf("USD while the partner is away = %+v", a["USD"])
	}
	partner(t, s, map[string]any{"unavailable": false})
	// Retries back off on the manual clock: move it on until the retry lands
	// (attached to the active EUR account, so USD becomes active at once).
	eventually(t, "the retry reaches the partner", func() bool {
		advance(t, s, 30*time.Second)
		return accounts(t, s, p.web, org)["USD"].State == "active"
	})
}

func TestRequestsAreDisabledForInactiveOrganizations(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/status", sbx, map[string]any{"status": "paused"}).ExpectStatus(t, 200)
	res := request(t, s, p.web, org, "EUR")
	if o := outcomes(res); o["EUR"] != "failed" {
		t.Fatalf("outcome = %v", o)
	}
	for _, a := range res.Data {
		if a.RequestsEnabled || a.State != "available" {
			t.Fatalf("entry = %+v, want available with requests disabled", a)
		}
	}
}

func TestOnlyOwnersAndAdminsRequestCurrencies(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	addUser(t, s, org, "member@acme.test", "member", false)
	member := *signIn(t, s, map[string]any{"email": "member@acme.test", "password": password}).Token
	accounts(t, s, member, org) // members read
	s.Post(t, accountsPath(org), member, map[string]any{"currencies": []string{"EUR"}}).ExpectError(t, 403, "forbidden")
	s.Post(t, accountsPath(org), p.web, map[string]any{"currencies": []string{"eur"}}).ExpectError(t, 400, "invalid_request")
	s.Post(t, accountsPath(org), p.web, map[string]any{"currencies": []string{}}).ExpectError(t, 400, "invalid_request")
}

func TestPartnerWebhookNeedsItsSignature(t *testing.T) {
	s := startWithPartner(t)
	p := newPerson(t, s, "ada@acme.test")
	org := orgOf(t, s, p)
	request(t, s, p.web, org, "EUR")
	body, _ := json.Marshal(map[string]any{"organization_id": org, "currency": "EUR", "event": "account.activated"})
	send := func(signature string) *apitest.Response {
		return s.Do(t, apitest.Request{Method: "POST", Path: "/api/v1/partner/webhooks", Body: body, Header: map[string]string{"X-Partner-Signature": signature}})
	}
	send("").ExpectError(t, 401, "not_authenticated")
	send("sha256="+hex.EncodeToString(make([]byte, 32))).ExpectError(t, 401, "not_authenticated")
	if a := accounts(t, s, p.web, org); a["EUR"].State != "processing" {
		t.Fatal("a webhook with a bad signature changed the state")
	}
	m := hmac.New(sha256.New, []byte(partnerSecret))
	m.Write(body)
	send("sha256="+hex.EncodeToString(m.Sum(nil))).ExpectStatus(t, 204)
	if a := accounts(t, s, p.web, org); a["EUR"].State != "active" {
		t.Fatalf("EUR after a signed webhook = %+v", a["EUR"])
	}
}
