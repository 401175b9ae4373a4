package e2e_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
)

// observeLogLine is the access-log line of the request whose X-Request-Id
// was id, as decoded JSON.
func observeLogLine(t *testing.T, s *apitest.Server, id string) map[string]any {
	t.Helper()
	var found map[string]any
	// The line is written once the handler is done, after the client may
	// have read the answer.
	eventually(t, "the access log line of "+id, func() bool {
		sc := bufio.NewScanner(strings.NewReader(s.Logs.String()))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "request" && line["request_id"] == id {
				found = line
				return true
			}
		}
		return false
	})
	return found
}

// observeExpectLog checks the fields of the access-log line of id: each of
// want has the value given ("" for absent).
func observeExpectLog(t *testing.T, s *apitest.Server, id string, want map[string]string) {
	t.Helper()
	line := observeLogLine(t, s, id)
	for k, v := range want {
		got, ok := line[k]
		switch {
		case v == "" && ok:
			t.Errorf("%s: %s = %v, want it absent (line %v)", id, k, got, line)
		case v != "" && (!ok || got != v):
			t.Errorf("%s: %s = %v, want %q (line %v)", id, k, got, v, line)
		}
	}
}

// The access log names what went wrong (error.type), who asked (a person,
// an API key by its lookup, or the sandbox helpers), the organization and
// the client's address, and never a token, key secret or password.
func TestObserveRequestLogFields(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@observe.test")
	org := orgOf(t, s, p)
	other := createOrg(t, s, "bob@elsewhere.test").Organization.Id.String()
	key := createKey(t, s, p, org, keyOf("Ledger sync", "member", "balances:read"))
	send := func(id, method, path, bearer string, body any) *apitest.Response {
		return s.Do(t, apitest.Request{Method: method, Path: path, Bearer: bearer, Body: body, Header: map[string]string{"X-Request-Id": id}})
	}
	typeOf := func(r *apitest.Response) string { return r.JSON(t)["error"].(map[string]any)["type"].(string) }

	// 401: no bearer. A forwarded address is not believed.
	r := s.Do(t, apitest.Request{Method: "GET", Path: "/api/v1/me", Header: map[string]string{"X-Request-Id": "observe-401", "X-Forwarded-For": "198.51.100.9"}})
	r.ExpectStatus(t, http.StatusUnauthorized)
	observeExpectLog(t, s, "observe-401", map[string]string{"error_type": typeOf(r), "client_address": "127.0.0.1",
		"user_id": "", "api_key": "", "actor": "", "route": "GET /api/v1/me"})
	if line := observeLogLine(t, s, "observe-401"); line["status"] != float64(401) {
		t.Errorf("status %v, want 401", line["status"])
	}

	// 404: another organization's object, asked by a person.
	r = send("observe-404", "GET", orgPath(other, "/payments"), p.web, nil)
	r.ExpectError(t, http.StatusNotFound, "not_found")
	observeExpectLog(t, s, "observe-404", map[string]string{"error_type": "not_found", "user_id": p.userID, "organization_id": other,
		"client_address": "127.0.0.1", "api_key": ""})

	// 400 invalid_request with a session.
	r = send("observe-400", "POST", "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": org, "rail": "fiat"})
	r.ExpectError(t, http.StatusBadRequest, "invalid_request")
	observeExpectLog(t, s, "observe-400", map[string]string{"error_type": "invalid_request", "user_id": p.userID, "api_key": ""})

	// An API key's request: the key by its lookup, no person, no error.
	send("observe-key", "GET", orgPath(org, "/multi-currency-accounts"), key.Secret, nil).ExpectStatus(t, http.StatusOK)
	observeExpectLog(t, s, "observe-key", map[string]string{"api_key": key.ApiKey.Lookup, "user_id": "", "error_type": "",
		"organization_id": org, "client_address": "127.0.0.1"})

	// The sandbox helpers' token is named as such, never shown.
	send("observe-sandbox", "GET", "/api/v1/sandbox/outbox?user_id="+p.userID, sbx, nil).ExpectStatus(t, http.StatusOK)
	observeExpectLog(t, s, "observe-sandbox", map[string]string{"actor": "sandbox", "user_id": "", "api_key": ""})

	// A refused API key is named by its lookup too, its secret never.
	forged := key.Secret[:len(key.Secret)-4] + "AAAA"
	if forged == key.Secret {
		forged = key.Secret[:len(key.Secret)-4] + "BBBB"
	}
	send("observe-forged", "GET", orgPath(org, "/multi-currency-accounts"), forged, nil).ExpectStatus(t, http.StatusUnauthorized)
	observeExpectLog(t, s, "observe-forged", map[string]string{"user_id": "", "client_address": "127.0.0.1"})

	assertNoSecrets(t, s, password, p.secret, p.web, p.app, key.Secret, key.Secret[len(key.Secret)-43:],
		forged, forged[len(forged)-43:], apitest.SandboxToken)
}

// observeScrape reads /metrics as series → value ("name{labels}" as
// printed, without the value).
func observeScrape(t *testing.T, s *apitest.Server) map[string]float64 {
	t.Helper()
	body := string(s.Get(t, "/metrics", "").ExpectStatus(t, http.StatusOK).Body)
	out := map[string]float64{}
	for _, line := range strings.Split(body, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		out[line[:i]] = v
	}
	return out
}

// observeHelp fails t unless every strongroom_ family in body has help text.
func observeHelp(t *testing.T, s *apitest.Server) {
	t.Helper()
	body := string(s.Get(t, "/metrics", "").ExpectStatus(t, http.StatusOK).Body)
	help := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, "# HELP "); ok {
			name, text, _ := strings.Cut(rest, " ")
			help[name] = text != ""
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "strongroom_") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
		if !help[name] && !help[base] {
			t.Errorf("%s has no help text", name)
		}
	}
}

// A payment approved in the app, a step-up, a webhook delivery and a bill
// extraction show in /metrics: the event counters grow (they are the
// process's, which other tests share, so by at least what this test did),
// and the gauges read from this server's own database count exactly.
func TestObserveMetricsAfterTheWork(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	before := observeScrape(t, s)

	p := newPayer(t, s, "ada@metrics.test", "1000.00")
	pay := p.pay(t, s, "100.00")
	if pay.ApprovalRequestId == nil {
		t.Fatalf("payment %+v awaits no approval", pay)
	}
	p.approveInApp(t, s, pay.ApprovalRequestId.String())

	recv := newHookReceiver(t, 200)
	ep := createHook(t, s, p.person, p.org, map[string]any{"url": recv.url(), "event_types": []string{"*"}})
	recv.setSecret(ep.Secret)
	ping(t, s, ep.WebhookEndpoint.Id.String())
	recv.waitDeliveries(t, 1)
	// A failing endpoint's delivery waits for its retry: a scheduled job.
	failing := newHookReceiver(t, 500)
	ep = createHook(t, s, p.person, p.org, map[string]any{"url": failing.url(), "event_types": []string{"*"}})
	failing.setSecret(ep.Secret)
	ping(t, s, ep.WebhookEndpoint.Id.String())
	failing.waitDeliveries(t, 1)

	bill := uploadCorpus(t, s, p.web, p.org, "cii-de-xrechnung.xml")
	if b := extracted(t, s, p.web, bill.Id.String()); b.ExtractionFailedAt != nil {
		t.Fatalf("extraction failed: %+v", b)
	}

	grew := func(after map[string]float64, series string, by float64) bool {
		return after[series]-before[series] >= by
	}
	var after map[string]float64
	eventually(t, "the metrics to show the work", func() bool {
		after = observeScrape(t, s)
		var payments float64
		for series, v := range after {
			if strings.HasPrefix(series, "strongroom_payments{") {
				payments += v
			}
		}
		scheduled := false
		for series, v := range after {
			scheduled = scheduled || strings.HasPrefix(series, "strongroom_jobs{kind=") && strings.HasSuffix(series, `state="scheduled"}`) && v >= 1
		}
		return payments == 1 && after[`strongroom_approvals{status="approved"}`] == 1 && scheduled &&
			grew(after, `strongroom_webhook_deliveries_total{outcome="delivered"}`, 1) &&
			grew(after, `strongroom_webhook_deliveries_total{outcome="failed"}`, 1) &&
			grew(after, `strongroom_bill_extractions_total{outcome="completed"}`, 1)
	})
	for series, by := range map[string]float64{
		`strongroom_step_ups_total{outcome="started"}`:                           3, // the key, the app's key, the approval
		`strongroom_step_ups_total{outcome="completed"}`:                         3,
		`strongroom_webhook_deliveries_total{outcome="delivered"}`:               1,
		`strongroom_bill_extractions_total{outcome="completed"}`:                 1,
		`strongroom_bill_extraction_duration_seconds_count{outcome="completed"}`: 1,
	} {
		if !grew(after, series, by) {
			t.Errorf("%s: %v before, %v after, want at least %v more", series, before[series], after[series], by)
		}
	}
	if after[`strongroom_bill_extraction_duration_seconds_sum{outcome="completed"}`] <= before[`strongroom_bill_extraction_duration_seconds_sum{outcome="completed"}`] {
		t.Error("the extraction took no time")
	}
	for _, series := range []string{
		`strongroom_payments{status="awaiting_approval"}`, `strongroom_approvals{status="pending"}`,
		`strongroom_jobs_oldest_due_seconds`, `strongroom_metrics_read_failures_total{gauge="strongroom_payments"}`,
		`strongroom_webhook_deliveries_total{outcome="gone"}`, `strongroom_step_ups_total{outcome="wrong_code"}`,
	} {
		if _, ok := after[series]; !ok {
			t.Errorf("%s is not exported", series)
		}
	}
	if after[`strongroom_payments{status="awaiting_approval"}`] != 0 || after[`strongroom_approvals{status="pending"}`] != 0 {
		t.Errorf("the approved payment still counts as awaiting approval: %v", after)
	}
	for _, g := range []string{"strongroom_payments", "strongroom_approvals", "strongroom_jobs", "strongroom_jobs_oldest_due_seconds"} {
		if v, ok := after[`strongroom_metrics_read_failures_total{gauge="`+g+`"}`]; !ok || v != 0 {
			t.Errorf("reading %s failed (%v, exported %v)", g, v, ok)
		}
	}
	pools := 0
	for series, v := range after {
		if strings.HasPrefix(series, "strongroom_db_pool_open_connections{pool=") {
			pools++
			if v < 1 {
				t.Errorf("%s = %v, want at least one connection open", series, v)
			}
		}
	}
	if pools == 0 {
		t.Error("no connection pool series")
	}
	observeHelp(t, s)
}

// observeRateLimit parses a RateLimit header into policy → (r, t).
func observeRateLimit(t *testing.T, h http.Header) map[string][2]int {
	t.Helper()
	out := map[string][2]int{}
	v := h.Get("RateLimit")
	if v == "" {
		return out
	}
	for _, item := range strings.Split(v, ", ") {
		parts := strings.Split(item, ";")
		name, err := strconv.Unquote(parts[0])
		if err != nil || len(parts) != 3 || !strings.HasPrefix(parts[1], "r=") || !strings.HasPrefix(parts[2], "t=") {
			t.Fatalf("RateLimit %q is not a list of \"name\";r=N;t=N", v)
		}
		r, err1 := strconv.Atoi(parts[1][2:])
		tt, err2 := strconv.Atoi(parts[2][2:])
		if err1 != nil || err2 != nil {
			t.Fatalf("RateLimit %q", v)
		}
		out[name] = [2]int{r, tt}
	}
	return out
}

// A limited route's answers carry RateLimit-Policy and RateLimit, counting
// down request by request; the 429 carries them with r=0 and t equal to
// Retry-After; a route no limit applies to carries neither.
func TestObserveRateLimitHeaders(t *testing.T) {
	t.Parallel()
	// Slow refills (a sign-in token every 20 minutes, an address token a
	// minute), so that the count down does not depend on how fast the
	// requests follow one another.
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_SIGN_IN=3/1h", "STRONGROOM_RATE_LIMIT_ADDRESS=6000/100h")
	signIn := func() *apitest.Response {
		return s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "nobody@observe.test", "password": "not the password"})
	}
	const policy = `"address";q=6000;w=360000, "sign-in";q=3;w=3600`
	last := -1
	for i := range 3 {
		r := signIn()
		if r.Status == http.StatusTooManyRequests {
			t.Fatalf("sign-in %d refused", i)
		}
		if got := r.Header.Get("RateLimit-Policy"); got != policy {
			t.Fatalf("RateLimit-Policy %q, want %q", got, policy)
		}
		rl := observeRateLimit(t, r.Header)
		if rl["sign-in"][0] != 2-i || rl["sign-in"][1] < 1 || rl["sign-in"][1] > 1200 {
			t.Fatalf("sign-in %d: RateLimit %q, want sign-in r=%d and t within the 20 minutes a token takes", i, r.Header.Get("RateLimit"), 2-i)
		}
		if a := rl["address"][0]; a <= 0 || last >= 0 && a >= last {
			t.Fatalf("sign-in %d: address r=%d after %d: not counting down", i, a, last)
		}
		last = rl["address"][0]
	}
	r := signIn()
	r.ExpectError(t, http.StatusTooManyRequests, "rate_limited")
	rl := observeRateLimit(t, r.Header)
	if retry := r.Header.Get("Retry-After"); rl["sign-in"][0] != 0 || strconv.Itoa(rl["sign-in"][1]) != retry || r.Header.Get("RateLimit-Policy") != policy {
		t.Fatalf("429: RateLimit %q, Retry-After %q, RateLimit-Policy %q; want sign-in r=0 and t = Retry-After",
			r.Header.Get("RateLimit"), retry, r.Header.Get("RateLimit-Policy"))
	}

	// A person's requests count against their session too (on a server
	// whose sign-in limit this test has not spent).
	other := apitest.Start(t)
	p := newPerson(t, other, "ada@limits.test")
	r = other.Get(t, "/api/v1/me", p.web).ExpectStatus(t, http.StatusOK)
	if rl := observeRateLimit(t, r.Header); rl["credential"][0] <= 0 || !strings.Contains(r.Header.Get("RateLimit-Policy"), `"credential";q=3000;w=60`) {
		t.Fatalf("a session's request: RateLimit %q, RateLimit-Policy %q", r.Header.Get("RateLimit"), r.Header.Get("RateLimit-Policy"))
	}

	// No limit applies: a path no route serves, and every route once the
	// operator switches the limits off.
	for _, r := range []*apitest.Response{s.Get(t, "/api/v1/no-such-thing", "")} {
		if r.Header.Get("RateLimit") != "" || r.Header.Get("RateLimit-Policy") != "" {
			t.Errorf("unrouted 404 carries RateLimit %q", r.Header.Get("RateLimit"))
		}
	}
	off := apitest.Start(t, "STRONGROOM_RATE_LIMIT_ADDRESS=off", "STRONGROOM_RATE_LIMIT_SIGN_IN=off", "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	for _, path := range []string{"/healthz", "/api/v1/me"} {
		r := off.Get(t, path, "")
		if r.Header.Get("RateLimit") != "" || r.Header.Get("RateLimit-Policy") != "" {
			t.Errorf("%s with the limits off carries RateLimit %q, RateLimit-Policy %q", path, r.Header.Get("RateLimit"), r.Header.Get("RateLimit-Policy"))
		}
	}
}
