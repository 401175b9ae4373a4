package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// hookReceiver is a program receiving webhooks: it verifies every
// delivery's signature with the Standard Webhooks library and answers from
// its script (the last answer repeats).
type hookReceiver struct {
	t       *testing.T
	srv     *httptest.Server
	mu      sync.Mutex
	path    string
	secret  string
	answers []int
	got     []hookDelivery
	delay   time.Duration
}

type hookDelivery struct {
	id, timestamp string
	signatures    int
	event         hookEvent
	raw           map[string]any
}

// hookEvent is the Event JSON a delivery carries.
type hookEvent struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	OrganizationID string          `json:"organization_id"`
	OccurredAt     time.Time       `json:"occurred_at"`
	Data           json.RawMessage `json:"data"`
}

func newHookReceiver(t *testing.T, answers ...int) *hookReceiver {
	r := &hookReceiver{t: t, answers: answers, path: "/hook/" + uuid.NewString()}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// url is the receiver's own: a path no other test's endpoint names, so a
// delivery another test's server still sends after that test's receiver
// closed, to a port this receiver was given since, is told apart.
func (r *hookReceiver) url() string { return r.srv.URL + r.path }

func (r *hookReceiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *hookReceiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != r.path {
		http.NotFound(w, req) // another test's delivery: not this receiver's to check
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	secret, delay := r.secret, r.delay
	r.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(secret)
	if err == nil {
		err = wh.Verify(body, req.Header)
	}
	if err != nil {
		r.t.Errorf("delivery %s: the signature does not verify: %v", req.Header.Get("webhook-id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	time.Sleep(delay)
	d := hookDelivery{id: req.Header.Get("webhook-id"), timestamp: req.Header.Get("webhook-timestamp"),
		signatures: len(strings.Fields(req.Header.Get("webhook-signature")))}
	if err := json.Unmarshal(body, &d.raw); err != nil {
		r.t.Errorf("delivery body: %v", err)
	}
	_ = json.Unmarshal(body, &d.event)
	r.mu.Lock()
	r.got = append(r.got, d)
	status := 200
	if len(r.answers) > 0 {
		status = r.answers[0]
		if len(r.answers) > 1 {
			r.answers = r.answers[1:]
		}
	}
	r.mu.Unlock()
	w.WriteHeader(status)
	_, _ = w.Write([]byte(`{"received":true}`))
}

func (r *hookReceiver) deliveries() []hookDelivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]hookDelivery(nil), r.got...)
}

// waitDeliveries waits until the receiver got n deliveries.
func (r *hookReceiver) waitDeliveries(t *testing.T, n int) []hookDelivery {
	t.Helper()
	eventually(t, "the receiver to get its deliveries", func() bool { return len(r.deliveries()) >= n })
	return r.deliveries()
}

func hooksPath(org, rest string) string { return orgPath(org, "/webhook-endpoints"+rest) }

// createHook creates an endpoint from p's web session (step-up in the app)
// and returns it with its secret.
func createHook(t *testing.T, s *apitest.Server, p *person, org string, body map[string]any) api.WebhookEndpointWithSecret {
	t.Helper()
	var out api.WebhookEndpointWithSecret
	gatedCall(t, s, p, apitest.Request{Method: http.MethodPost, Path: hooksPath(org, ""), Body: body}).
		ExpectStatus(t, http.StatusCreated).Decode(t, &out)
	return out
}

func hookPatch(t *testing.T, s *apitest.Server, path, bearer string, body any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: http.MethodPatch, Path: path, Bearer: bearer, Body: body})
}

func hookDelete(t *testing.T, s *apitest.Server, path, bearer string) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: http.MethodDelete, Path: path, Bearer: bearer})
}

func hookDeliveries(t *testing.T, s *apitest.Server, token, org, id string) []api.WebhookDelivery {
	t.Helper()
	var page api.WebhookDeliveryPage
	s.Get(t, hooksPath(org, "/"+id+"/deliveries?limit=100"), token).ExpectStatus(t, http.StatusOK).Decode(t, &page)
	return page.Data
}

func ping(t *testing.T, s *apitest.Server, id string) string {
	t.Helper()
	var out api.SandboxWebhookPing
	s.Post(t, "/api/v1/sandbox/webhook-endpoints/"+id+"/ping", sbx, nil).ExpectStatus(t, http.StatusAccepted).Decode(t, &out)
	return out.EventId.String()
}

// A receiver that answers 500 twice then 200 gets the event three times
// with the same webhook-id, on the schedule of the manual clock, each
// signed; events of the organization fan out to endpoints that list them.
func TestWebhookDeliveriesAreSignedAndRetriedOnTheSchedule(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@hooks.test")
	org := orgOf(t, s, p)
	recv := newHookReceiver(t, 500, 500, 200)
	ep := createHook(t, s, p, org, map[string]any{"url": recv.url(), "event_types": []string{"*"}, "description": "ERP"})
	recv.setSecret(ep.Secret)
	id := ep.WebhookEndpoint.Id.String()
	if !strings.HasPrefix(ep.Secret, "whsec_") || ep.WebhookEndpoint.Disabled {
		t.Fatalf("created: %+v", ep)
	}
	// Every owner and admin is told, with the URL and who added it.
	alerts := outboxOf(t, s, p.userID, "security_alert")
	if len(alerts) == 0 || !strings.Contains(alerts[0].Body, recv.url()) || !strings.Contains(alerts[0].Body, p.email) {
		t.Errorf("security alert on creation: %+v", alerts)
	}

	eventID := ping(t, s, id)
	recv.waitDeliveries(t, 1)
	var ds []api.WebhookDelivery
	eventually(t, "the first attempt to be recorded", func() bool {
		ds = hookDeliveries(t, s, p.web, org, id)
		return len(ds) == 1 && ds[0].Attempt == 1
	})
	start := now(t, s)
	if len(ds) != 1 || ds[0].Status != "pending" || ds[0].Attempt != 1 || str(ds[0].ResponseStatus) != "500" ||
		ds[0].NextAttemptAt == nil || ds[0].NextAttemptAt.Sub(start) > 5*time.Second {
		t.Fatalf("after the first attempt: %+v", ds)
	}
	advance(t, s, 5*time.Second)
	recv.waitDeliveries(t, 2)
	// The receiver answers before the attempt's outcome commits, and the
	// next attempt is scheduled from the clock then: advance only after it.
	eventually(t, "the second attempt to be recorded", func() bool {
		ds = hookDeliveries(t, s, p.web, org, id)
		return len(ds) == 1 && ds[0].Attempt == 2 && ds[0].NextAttemptAt != nil
	})
	// The third attempt is due five minutes after the second: not before.
	advance(t, s, 4*time.Minute)
	time.Sleep(300 * time.Millisecond)
	if n := len(recv.deliveries()); n != 2 {
		t.Fatalf("%d attempts before the third was due", n)
	}
	advance(t, s, time.Minute)
	got := recv.waitDeliveries(t, 3)
	for _, d := range got {
		if d.id != eventID || d.event.Type != "webhook.ping" || d.event.ID != eventID || d.signatures != 1 {
			t.Errorf("delivery id %s type %s, want the ping %s every time", d.id, d.event.Type, eventID)
		}
	}
	eventually(t, "the delivery to succeed", func() bool {
		ds = hookDeliveries(t, s, p.web, org, id)
		return len(ds) == 1 && ds[0].Status == "succeeded"
	})
	if ds[0].Attempt != 3 || ds[0].NextAttemptAt != nil || str(ds[0].ResponseBody) != `{"received":true}` {
		t.Errorf("the delivery: %+v", ds[0])
	}

	// A manual retry makes a new attempt now, with the same id.
	var retried api.WebhookDelivery
	s.Post(t, hooksPath(org, "/"+id+"/deliveries/"+ds[0].Id.String()+"/retry"), p.web, nil).ExpectStatus(t, http.StatusAccepted).Decode(t, &retried)
	if got := recv.waitDeliveries(t, 4); got[3].id != eventID {
		t.Errorf("the retry's webhook-id %s, want %s", got[3].id, eventID)
	}

	// An event of the organization (a card frozen) reaches the endpoint.
	card := issueCard(t, s, org, map[string]any{"user_id": p.userID, "monthly_limit": 100})
	s.Post(t, "/api/v1/cards/"+card.Id.String()+"/freeze", p.web, nil).ExpectStatus(t, http.StatusOK)
	eventually(t, "the card.updated event to arrive", func() bool {
		for _, d := range recv.deliveries() {
			if d.event.Type == "card.updated" && d.event.OrganizationID == org {
				return true
			}
		}
		return false
	})

	// After a rotation both secrets sign.
	var rotated api.WebhookEndpointWithSecret
	gatedCall(t, s, p, apitest.Request{Method: http.MethodPost, Path: hooksPath(org, "/"+id+"/rotate-secret")}).
		ExpectStatus(t, http.StatusOK).Decode(t, &rotated)
	recv.setSecret(rotated.Secret)
	n := len(recv.deliveries())
	ping(t, s, id)
	if got := recv.waitDeliveries(t, n+1); got[n].signatures != 2 {
		t.Errorf("after a rotation %d signatures, want 2", got[n].signatures)
	}
}

// 410 disables the endpoint at once, and its owners are told.
func TestWebhookGoneDisablesTheEndpoint(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@gone.test")
	org := orgOf(t, s, p)
	recv := newHookReceiver(t, 410)
	ep := createHook(t, s, p, org, map[string]any{"url": recv.url(), "event_types": []string{"*"}})
	recv.setSecret(ep.Secret)
	id := ep.WebhookEndpoint.Id.String()
	ping(t, s, id)
	recv.waitDeliveries(t, 1)
	var got api.WebhookEndpoint
	eventually(t, "the endpoint to be disabled", func() bool {
		s.Get(t, hooksPath(org, "/"+id), p.web).ExpectStatus(t, http.StatusOK).Decode(t, &got)
		return got.Disabled
	})
	if got.DisabledReason == nil || !strings.Contains(*got.DisabledReason, "410") {
		t.Errorf("disabled_reason %s", str(got.DisabledReason))
	}
	if ds := hookDeliveries(t, s, p.web, org, id); ds[0].Status != "failed" || ds[0].NextAttemptAt != nil {
		t.Errorf("the delivery answered 410: %+v", ds[0])
	}
	// Nothing more is sent; a retry is refused while it is disabled.
	ping(t, s, id)
	advance(t, s, 5*time.Minute+5*time.Second)
	time.Sleep(300 * time.Millisecond)
	if n := len(recv.deliveries()); n != 1 {
		t.Errorf("%d deliveries to a disabled endpoint", n)
	}
	ds := hookDeliveries(t, s, p.web, org, id)
	s.Post(t, hooksPath(org, "/"+id+"/deliveries/"+ds[0].Id.String()+"/retry"), p.web, nil).ExpectError(t, http.StatusConflict, "conflict")
	found := false
	for _, m := range outboxOf(t, s, p.userID, "security_alert") {
		found = found || strings.Contains(m.Body, "410")
	}
	if !found {
		t.Error("the owner was not told the endpoint was disabled")
	}
	// Enabling it again needs no step-up and clears the reason.
	hookPatch(t, s, hooksPath(org, "/"+id), p.web, map[string]any{"disabled": false}).ExpectStatus(t, http.StatusOK).Decode(t, &got)
	if got.Disabled || got.DisabledReason != nil {
		t.Errorf("enabled again: %+v", got)
	}
}

// A key needs webhooks:manage (and then no step-up); another
// organization's endpoint is not found; a member may not manage them.
func TestWebhookEndpointAccess(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@access.test")
	org := orgOf(t, s, p)
	body := map[string]any{"url": "http://127.0.0.1:9/hook", "event_types": []string{"payment.updated"}}

	plain := createKey(t, s, p, org, keyOf("Reporting", "admin", "balances:read"))
	s.Post(t, hooksPath(org, ""), plain.Secret, body).ExpectError(t, http.StatusForbidden, "api_scope_missing")
	s.Get(t, hooksPath(org, ""), plain.Secret).ExpectError(t, http.StatusForbidden, "api_scope_missing")

	manager := createKey(t, s, p, org, keyOf("ERP", "admin", "webhooks:manage"))
	var ep api.WebhookEndpointWithSecret
	s.Post(t, hooksPath(org, ""), manager.Secret, body).ExpectStatus(t, http.StatusCreated).Decode(t, &ep)
	id := ep.WebhookEndpoint.Id.String()
	// A key changes the URL without a step-up; the owners are told who did it.
	hookPatch(t, s, hooksPath(org, "/"+id), manager.Secret, map[string]any{"url": "http://127.0.0.1:10/hook"}).ExpectStatus(t, http.StatusOK)
	alerts := outboxOf(t, s, p.userID, "security_alert")
	if len(alerts) == 0 || !strings.Contains(alerts[0].Body, "http://127.0.0.1:10/hook") || !strings.Contains(alerts[0].Body, manager.ApiKey.Lookup) {
		t.Errorf("the URL change's alert: %+v", alerts)
	}
	// A person changing the URL is asked for a step-up (once the window the
	// keys' creation opened has closed); changing the rest is not.
	advance(t, s, 11*time.Minute)
	expectStepUp(t, hookPatch(t, s, hooksPath(org, "/"+id), p.web, map[string]any{"url": "http://127.0.0.1:11/hook"}))
	hookPatch(t, s, hooksPath(org, "/"+id), p.web, map[string]any{"description": "ERP sync"}).ExpectStatus(t, http.StatusOK)
	expectInvalidField(t, s.Post(t, hooksPath(org, ""), manager.Secret, map[string]any{"url": "ftp://example.com/", "event_types": []string{"*"}}), "url")
	expectInvalidField(t, s.Post(t, hooksPath(org, ""), manager.Secret, map[string]any{"url": "http://127.0.0.1/", "event_types": []string{}}), "event_types")

	// Another organization's owner and key see nothing of it.
	other := newPerson(t, s, "eve@other.test")
	otherOrg := orgOf(t, s, other)
	s.Get(t, hooksPath(org, "/"+id), other.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, hooksPath(otherOrg, "/"+id), other.web).ExpectError(t, http.StatusNotFound, "not_found")
	hookDelete(t, s, hooksPath(otherOrg, "/"+id), other.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, hooksPath(otherOrg, "/"+id+"/deliveries"), other.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, hooksPath(org, "/"+id), manager.Secret).ExpectStatus(t, http.StatusOK)

	// A member may not manage webhooks.
	_, secret := addUser(t, s, org, "bob@access.test", "member", true)
	bob := signInFully(t, s, "bob@access.test", secret)
	s.Get(t, hooksPath(org, ""), bob).ExpectError(t, http.StatusForbidden, "forbidden")
	s.Get(t, hooksPath(org, "/"+id), bob).ExpectError(t, http.StatusNotFound, "not_found")

	var deleted api.WebhookEndpoint
	hookDelete(t, s, hooksPath(org, "/"+id), manager.Secret).ExpectStatus(t, http.StatusOK).Decode(t, &deleted)
	s.Get(t, hooksPath(org, "/"+id), manager.Secret).ExpectError(t, http.StatusNotFound, "not_found")
}

// switchingResolver is a resolver whose names a test can point elsewhere.
type switchingResolver struct {
	mu    sync.Mutex
	hosts map[string]netip.Addr
}

func (r *switchingResolver) set(host, addr string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hosts[host] = netip.MustParseAddr(addr)
}

func (r *switchingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a, ok := r.hosts[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// In live, creation refuses URLs that are not https to a public address,
// and delivery refuses an address that turned private after creation.
func TestWebhookURLsInLive(t *testing.T) {
	t.Parallel()
	dsn := apitest.NewDatabase(t)
	// People and a card are made through the sandbox of a test server on
	// the same database and root secret; live has no sandbox.
	seed := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	o := createOrg(t, seed, "ada@live-hooks.test")
	org := o.Organization.Id.String()
	card := issueCard(t, seed, org, map[string]any{"user_id": o.Owner.UserId.String(), "monthly_limit": 100})
	if err := seed.Stop(); err != nil {
		t.Fatal(err)
	}

	resolver := &switchingResolver{hosts: map[string]netip.Addr{}}
	resolver.set("loopback.example.com", "127.0.0.1")
	resolver.set("hooks.example.com", "93.184.216.34")
	live := apitest.StartWithResolver(t, resolver, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_ENV=live", "STRONGROOM_SANDBOX_TOKEN=",
		"STRONGROOM_CLOCK=system", "STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	secret := *o.Owner.TotpSecret
	token, signedInWith := liveSignIn(t, live, "ada@live-hooks.test", secret)
	for _, url := range []string{"http://127.0.0.1/hook", "https://127.0.0.1/hook", "https://10.0.0.1/hook", "https://[::1]/hook",
		"http://[::1]/hook", "https://loopback.example.com/hook", "http://hooks.example.com/hook"} {
		expectInvalidField(t, live.Post(t, hooksPath(org, ""), token, map[string]any{"url": url, "event_types": []string{"*"}}), "url")
	}
	// A public https URL passes the checks; the person confirms with a code.
	body := map[string]any{"url": "https://hooks.example.com/hook", "event_types": []string{"card.updated"}}
	up := expectStepUp(t, live.Post(t, hooksPath(org, ""), token, body))
	completeStepUp(t, live, token, up.Id.String(), "totp", nextLiveCode(t, secret, signedInWith)).ExpectStatus(t, http.StatusOK)
	var ep api.WebhookEndpointWithSecret
	live.Post(t, hooksPath(org, ""), token, body).ExpectStatus(t, http.StatusCreated).Decode(t, &ep)

	// The name now resolves to a private address: the delivery does not connect.
	resolver.set("hooks.example.com", "10.0.0.7")
	live.Post(t, "/api/v1/cards/"+card.Id.String()+"/freeze", token, nil).ExpectStatus(t, http.StatusOK)
	var ds []api.WebhookDelivery
	eventually(t, "the delivery's first attempt", func() bool {
		ds = hookDeliveries(t, live, token, org, ep.WebhookEndpoint.Id.String())
		return len(ds) == 1 && ds[0].Attempt == 1
	})
	if ds[0].ResponseStatus != nil || ds[0].Error == nil || !strings.Contains(*ds[0].Error, "not public") {
		t.Errorf("a delivery to an address turned private: %+v (error %s)", ds[0], str(ds[0].Error))
	}
}

// liveSignIn signs in on a server of the system clock and returns the
// session with the code it used.
func liveSignIn(t *testing.T, s *apitest.Server, email, secret string) (string, string) {
	t.Helper()
	r := signIn(t, s, map[string]any{"email": email, "password": password})
	c := nextLiveCode(t, secret, "")
	out := mfa(t, s, *r.ChallengeToken, c)
	if out.Token == nil {
		t.Fatalf("sign-in: %+v", out)
	}
	return *out.Token, c
}

// nextLiveCode is the authenticator's code at the real time, once it is
// another than used (each time step's code works once).
func nextLiveCode(t *testing.T, secret, used string) string {
	t.Helper()
	for {
		c, err := totp.GenerateCode(secret, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if c != used {
			return c
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Two instances on one PostgreSQL database, one killed (SIGKILL) during a
// burst of 500 events: every committed event reaches the receiver.
func TestWebhookDeliveriesSurviveAKilledInstance(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills the server binary")
	}
	if os.Getenv(apitest.E2EDatabaseEnv) != "postgres" {
		t.Skip("several instances share a PostgreSQL database")
	}
	first := apitest.StartProcess(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off", "STRONGROOM_LOG_LEVEL=warn")
	second := apitest.StartProcess(t, "STRONGROOM_DATABASE="+first.DSN, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off", "STRONGROOM_LOG_LEVEL=warn")
	p := newPerson(t, first.Server, "ada@burst.test")
	org := orgOf(t, first.Server, p)
	recv := newHookReceiver(t, 200)
	recv.delay = 5 * time.Millisecond
	ep := createHook(t, first.Server, p, org, map[string]any{"url": recv.url(), "event_types": []string{"*"}})
	recv.setSecret(ep.Secret)
	id := ep.WebhookEndpoint.Id.String()
	card := issueCard(t, first.Server, org, map[string]any{"user_id": p.userID, "monthly_limit": 100})

	// 500 events: pings through both instances, and card changes that fan
	// out; the first instance is killed half way through.
	hc := &http.Client{Timeout: 5 * time.Second}
	post := func(s *apitest.Server, path, bearer string) {
		req, _ := http.NewRequest(http.MethodPost, s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+bearer)
		if resp, err := hc.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				s := first.Server
				if (i+w)%2 == 1 {
					s = second.Server
				}
				post(s, "/api/v1/sandbox/webhook-endpoints/"+id+"/ping", sbx)
			}
		})
	}
	wg.Go(func() {
		for i := range 100 {
			action := "/freeze"
			if i%2 == 1 {
				action = "/unfreeze"
			}
			post(second.Server, "/api/v1/cards/"+card.Id.String()+action, p.web)
		}
	})
	// Kill once deliveries flow (a busy machine delivers slowly: wait up to
	// a minute for the first few rather than a fixed share of the burst).
	for deadline := time.Now().Add(time.Minute); len(recv.deliveries()) < 20; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("only %d deliveries a minute into the burst", len(recv.deliveries()))
		}
	}
	first.Kill()
	wg.Wait()
	// The killed instance's leases (5 minutes) expire on the survivor's
	// clock. Each instance's manual clock is its own, and the first one's
	// ran ahead while the person signed in and confirmed: move well past.
	advance(t, second.Server, 20*time.Minute)

	d, err := db.Open(context.Background(), first.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows := storedRows(t, d, "domain_events", "WHERE organization_id = $1 AND type IN ('webhook.ping', 'card.updated')", uuidOf(t, org))
	if len(rows) < 250 {
		t.Fatalf("only %d events were committed", len(rows))
	}
	missing := func() []string {
		got := map[string]bool{}
		for _, d := range recv.deliveries() {
			got[d.id] = true
		}
		var out []string
		for _, r := range rows {
			if !got[*r["id"]] {
				out = append(out, *r["id"])
			}
		}
		return out
	}
	deadline := time.Now().Add(90 * time.Second)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if m := missing(); len(m) > 0 {
		t.Fatalf("%d of %d committed events never reached the receiver (e.g. %s)", len(m), len(rows), m[0])
	}
	t.Logf("%d events committed, %d deliveries received", len(rows), len(recv.deliveries()))
}
