package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/app"
)

func TestServerAnswersHealthReadinessAndMetrics(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	s.Get(t, "/healthz", "").ExpectStatus(t, http.StatusOK)
	if body := s.Get(t, "/readyz", "").ExpectStatus(t, http.StatusOK).JSON(t); body["status"] != "ready" {
		t.Fatalf("readyz body %v", body)
	}
	s.Get(t, "/nowhere", "")
	metrics := string(s.Get(t, "/metrics", "").ExpectStatus(t, http.StatusOK).Body)
	for _, want := range []string{
		`strongroom_http_requests_total{route="GET /readyz",status="200"} 1`,
		`strongroom_http_requests_total{route="unmatched",status="404"} 1`,
		`strongroom_http_request_duration_seconds_bucket{route="GET /healthz",status="200"`,
		`strongroom_db_pool_open_connections{pool=`,
		`strongroom_db_pool_max_open_connections{pool=`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestUnknownRoutesAndMethodsGetTheEnvelope(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	s.Get(t, "/api/v1/does-not-exist", "").ExpectError(t, http.StatusNotFound, "not_found")
	r := s.Do(t, apitest.Request{Method: "DELETE", Path: "/readyz"})
	r.ExpectError(t, http.StatusMethodNotAllowed, "method_not_allowed")
	if allow := r.Header.Get("Allow"); !strings.Contains(allow, "GET") {
		t.Errorf("Allow = %q, want GET listed", allow)
	}
	// A path the mux would redirect to its cleaned form is not found either,
	// with none of the redirect's or the plain text's headers.
	r = s.Get(t, "/api/v1/../readyz", "")
	r.ExpectError(t, http.StatusNotFound, "not_found")
	for _, h := range []string{"Location", "Allow", "X-Content-Type-Options"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("%s: %q on a 404", h, v)
		}
	}
}

func TestRequestIDIsKeptOrMinted(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	r := s.Do(t, apitest.Request{Method: "GET", Path: "/nope", Header: map[string]string{"X-Request-Id": "client-trace.42_A"}})
	if e := r.ExpectError(t, 404, "not_found"); e.Error.RequestID != "client-trace.42_A" {
		t.Fatalf("request id %q, want the client's", e.Error.RequestID)
	}
	for _, bad := range []string{strings.Repeat("a", 65), "has space", "semi;colon"} {
		r := s.Do(t, apitest.Request{Method: "GET", Path: "/nope", Header: map[string]string{"X-Request-Id": bad}})
		if e := r.ExpectError(t, 404, "not_found"); e.Error.RequestID == bad || e.Error.RequestID == "" {
			t.Fatalf("request id %q kept; want a minted one", bad)
		}
	}
	a, b := s.Get(t, "/healthz", ""), s.Get(t, "/healthz", "")
	if a.Header.Get("X-Request-Id") == b.Header.Get("X-Request-Id") {
		t.Fatal("two requests share a minted request id")
	}
}

func TestStrictJSONDecoding(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	path := "/api/v1/sandbox/organizations"
	owner := map[string]any{"email": "o@example.com", "password": "long enough password"}
	countMessages := func() int {
		var page api.OutboxMessagePage
		s.Get(t, "/api/v1/sandbox/outbox", sbx).ExpectStatus(t, 200).Decode(t, &page)
		return len(page.Data)
	}
	before := countMessages()
	cases := []struct {
		name  string
		body  any
		field string
	}{
		{"malformed JSON", `{"name": "Acme",`, ""},
		{"not an object", `[1, 2]`, ""},
		{"trailing data", `{"name": "Acme", "owner": {"email": "o@example.com", "password": "long enough password"}} {}`, ""},
		{"unknown field", map[string]any{"name": "Acme", "owner": owner, "colour": "red"}, "colour"},
		{"unknown nested field", map[string]any{"name": "Acme", "owner": map[string]any{"email": "o@example.com", "password": "long enough password", "age": 3}}, "age"},
		{"wrong type", map[string]any{"name": 42, "owner": owner}, "name"},
		{"wrong nested type", map[string]any{"name": "Acme", "owner": map[string]any{"email": "o@example.com", "password": "long enough password", "totp": "yes"}}, "owner.totp"},
		{"missing required field", map[string]any{"owner": owner}, "name"},
		{"missing nested field", map[string]any{"name": "Acme", "owner": map[string]any{"password": "long enough password"}}, "owner.email"},
		{"out-of-range enum", map[string]any{"name": "Acme", "owner": owner, "entity_status": "maybe"}, "entity_status"},
		{"empty body", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := s.Post(t, path, sbx, c.body).ExpectError(t, http.StatusBadRequest, "invalid_request")
			if len(e.Error.Details) == 0 {
				t.Fatal("no details")
			}
			if c.field != "" && !slices.ContainsFunc(e.Error.Details, func(d struct {
				Field   string `json:"field"`
				Message string `json:"message"`
			}) bool {
				return d.Field == c.field
			}) {
				t.Fatalf("details %+v do not name %q", e.Error.Details, c.field)
			}
		})
	}
	// Nothing was created by any of the refused requests.
	if after := countMessages(); after != before {
		t.Fatalf("refused requests left %d messages behind", after-before)
	}
	s.Do(t, apitest.Request{Method: "POST", Path: path, Bearer: sbx, Body: `{"name":"x"}`,
		Header: map[string]string{"Content-Type": "text/plain"}}).ExpectError(t, 400, "invalid_request")
}

func TestOversizeBodyIsRefused(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	big := `{"name": "` + strings.Repeat("x", 1<<20) + `"}`
	s.Post(t, "/api/v1/sandbox/organizations", sbx, big).ExpectError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
}

func TestPaginationLimitsAndCursors(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "owner@acme.test")
	for i := range 4 {
		s.Post(t, "/api/v1/sandbox/organizations/"+org.Organization.Id.String()+"/users", sbx, map[string]any{
			"email": fmt.Sprintf("member%d@acme.test", i), "password": "correct horse battery", "role": "member", "totp": false,
		}).ExpectStatus(t, http.StatusCreated)
	}
	// Walk all six membership notices (five here and the demo owner's) two at a time, newest first.
	var seen []string
	var firstCursor string
	path := "/api/v1/sandbox/outbox?kind=notification&limit=2"
	for pages := 0; ; pages++ {
		var p api.OutboxMessagePage
		s.Get(t, path, sbx).ExpectStatus(t, 200).Decode(t, &p)
		for _, m := range p.Data {
			seen = append(seen, m.Id.String())
		}
		if !p.HasMore {
			if p.NextCursor != nil {
				t.Fatal("last page has a next_cursor")
			}
			break
		}
		if pages > 5 {
			t.Fatal("too many pages")
		}
		if firstCursor == "" {
			firstCursor = *p.NextCursor
		}
		path = "/api/v1/sandbox/outbox?kind=notification&limit=2&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if len(seen) != 6 {
		t.Fatalf("walked %d messages, want 6", len(seen))
	}
	if !slices.IsSortedFunc(seen, func(a, b string) int { return strings.Compare(b, a) }) || len(slices.Compact(slices.Clone(seen))) != 6 {
		t.Fatalf("messages not newest first without repeats: %v", seen)
	}

	for _, limit := range []string{"0", "101", "-1", "ten"} {
		e := s.Get(t, "/api/v1/sandbox/outbox?limit="+limit, sbx).ExpectError(t, 400, "invalid_request")
		if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "limit" {
			t.Fatalf("limit=%s: details %+v", limit, e.Error.Details)
		}
	}
	altered := []byte(firstCursor)
	altered[3] ^= 1
	s.Get(t, "/api/v1/sandbox/outbox?kind=notification&limit=2&cursor="+url.QueryEscape(string(altered)), sbx).
		ExpectError(t, 400, "invalid_cursor")
	s.Get(t, "/api/v1/sandbox/outbox?kind=security_alert&limit=2&cursor="+url.QueryEscape(firstCursor), sbx).
		ExpectError(t, 400, "invalid_cursor")
	s.Get(t, "/api/v1/sandbox/outbox?cursor=not-a-cursor", sbx).ExpectError(t, 400, "invalid_cursor")
}

func TestSandboxHelpers(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "Owner@Acme.test")
	if org.Owner.TotpSecret == nil || len(*org.Owner.TotpSecret) < 16 {
		t.Fatalf("owner totp_secret = %v, want a base32 seed", org.Owner.TotpSecret)
	}
	orgPath := "/api/v1/sandbox/organizations/" + org.Organization.Id.String()

	// An email that exists, in any letter case, adds a membership to that user.
	var again api.SandboxCreatedUser
	other := createOrg(t, s, "other-owner@acme.test")
	s.Post(t, "/api/v1/sandbox/organizations/"+other.Organization.Id.String()+"/users", sbx, map[string]any{
		"email": "OWNER@acme.test", "password": "ignored password", "role": "admin",
	}).ExpectStatus(t, 201).Decode(t, &again)
	if again.UserId != org.Owner.UserId || again.TotpSecret != nil {
		t.Fatalf("existing email: got %+v, want user %s and a null totp_secret", again, org.Owner.UserId.String())
	}
	s.Post(t, orgPath+"/users", sbx, map[string]any{"email": "owner@acme.test", "password": "whatever123", "role": "member"}).
		ExpectError(t, 409, "conflict")
	s.Post(t, orgPath+"/users", sbx, map[string]any{"email": "new@acme.test", "password": "whatever123", "role": "king"}).
		ExpectError(t, 400, "invalid_request")
	s.Post(t, "/api/v1/sandbox/organizations/6a1c7e2e-0000-4000-8000-000000000000/users", sbx,
		map[string]any{"email": "new@acme.test", "password": "whatever123", "role": "member"}).ExpectError(t, 404, "not_found")

	var status map[string]any
	s.Post(t, orgPath+"/status", sbx, map[string]any{"status": "paused"}).ExpectStatus(t, 200).Decode(t, &status)
	if status["status"] != "paused" || status["id"] != org.Organization.Id.String() {
		t.Fatalf("status = %v", status)
	}
	s.Post(t, orgPath+"/status", sbx, map[string]any{"status": "gone"}).ExpectError(t, 400, "invalid_request")
	var entity map[string]any
	s.Post(t, orgPath+"/entity", sbx, map[string]any{"status": "rejected"}).ExpectStatus(t, 200).Decode(t, &entity)
	if entity["entity_status"] != "rejected" {
		t.Fatalf("entity = %v", entity)
	}

	// The manual clock stands still until advanced.
	var t0, t1 api.SandboxClock
	s.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": 0}).ExpectStatus(t, 200).Decode(t, &t0)
	s.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": 1800}).ExpectStatus(t, 200).Decode(t, &t1)
	if got := t1.Now.Sub(t0.Now); got != 30*time.Minute {
		t.Fatalf("advanced %v, want 30m", got)
	}
	if t0.Now.Nanosecond() != 0 {
		t.Fatalf("manual clock starts truncated to the second; got %v", t0.Now)
	}
	s.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": -5}).ExpectError(t, 400, "invalid_request")

	// Messages can be filtered by person.
	var msgs api.OutboxMessagePage
	s.Get(t, "/api/v1/sandbox/outbox?user_id="+org.Owner.UserId.String(), sbx).ExpectStatus(t, 200).Decode(t, &msgs)
	if len(msgs.Data) != 2 || msgs.Data[0].UserId == nil || *msgs.Data[0].UserId != org.Owner.UserId || msgs.Data[0].Kind != "notification" {
		t.Fatalf("owner's messages = %+v, want two membership notices", msgs.Data)
	}
}

func TestSandboxIsHiddenWithoutItsTokenAndInLive(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	body := map[string]any{"name": "Acme", "owner": map[string]any{"email": "a@acme.test", "password": "long enough"}}
	s.Post(t, "/api/v1/sandbox/organizations", "", body).ExpectError(t, 404, "not_found")
	s.Post(t, "/api/v1/sandbox/organizations", "sbx_wrong", body).ExpectError(t, 404, "not_found")

	system := apitest.Start(t, "STRONGROOM_CLOCK=system")
	system.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": 1}).ExpectError(t, 409, "conflict")

	live := apitest.Start(t, "STRONGROOM_ENV=live", "STRONGROOM_SANDBOX_TOKEN=", "STRONGROOM_CLOCK=system",
		"STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	live.Post(t, "/api/v1/sandbox/organizations", sbx, body).ExpectError(t, 404, "not_found")
	if out := live.Stdout.String(); strings.Contains(out, "password") {
		t.Fatalf("live seeded a demo organization:\n%s", out)
	}
}

func TestLiveRefusesToStartWithoutSecret(t *testing.T) {
	t.Parallel()
	env := map[string]string{"STRONGROOM_ENV": "live", "STRONGROOM_ADDR": "127.0.0.1:0", "STRONGROOM_DATABASE": "sqlite:" + t.TempDir() + "/x.db"}
	err := app.Run(context.Background(), []string{"server"}, func(k string) string { return env[k] }, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "STRONGROOM_SECRET is required") {
		t.Fatalf("Run = %v, want a refusal naming STRONGROOM_SECRET", err)
	}
}

func TestDemoIsSeededOnceOnAnEmptyDatabase(t *testing.T) {
	t.Parallel()
	dsn := "sqlite:" + t.TempDir() + "/demo.db"
	first := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_SANDBOX_TOKEN=")
	out := first.Stdout.String()
	for _, want := range []string{"owner@demo.strongroom.test", "password:", "otpauth://totp/", "sandbox token: sbx_"} {
		if !strings.Contains(out, want) {
			t.Fatalf("first start printed no %q:\n%s", want, out)
		}
	}
	token := strings.Fields(out[strings.Index(out, "sandbox token: ")+len("sandbox token: "):])[0]
	if strings.Contains(first.Logs.String(), token) {
		t.Fatal("the sandbox token went into the log stream")
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}
	second := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_SANDBOX_TOKEN=")
	if out := second.Stdout.String(); strings.Contains(out, "password") || strings.Contains(out, token) || strings.Contains(out, "otpauth") {
		t.Fatalf("second start printed credentials again:\n%s", out)
	}
	// The generated token was kept and still opens the sandbox.
	second.Post(t, "/api/v1/sandbox/clock/advance", token, map[string]any{"seconds": 0}).ExpectStatus(t, 200)
}

func TestAccessLogLinesAndNoSecrets(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "logs@acme.test")
	s.Get(t, "/api/v1/sandbox/outbox?user_id="+org.Owner.UserId.String(), sbx).ExpectStatus(t, 200)
	var found bool
	sc := bufio.NewScanner(strings.NewReader(s.Logs.String()))
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil || line["msg"] != "request" {
			continue
		}
		for _, k := range []string{"request_id", "method", "route", "status", "duration_ms"} {
			if _, ok := line[k]; !ok {
				t.Errorf("access line lacks %s: %s", k, sc.Text())
			}
		}
		if line["route"] == "POST /api/v1/sandbox/organizations" && line["organization_id"] == org.Organization.Id.String() {
			found = true
		}
	}
	if !found {
		t.Error("no access line names the organization created")
	}
	assertNoSecrets(t, s, sbx, "correct horse battery", *org.Owner.TotpSecret)
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	s.Get(t, "/api/v1/openapi.json", "").ExpectStatus(t, 200).Decode(t, &doc)
	if !strings.HasPrefix(doc.OpenAPI, "3.1") || doc.Paths["/api/v1/sandbox/organizations"] == nil {
		t.Fatalf("served document: openapi %q with %d paths", doc.OpenAPI, len(doc.Paths))
	}
}

func TestGracefulStopFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	u, _ := url.Parse(s.URL)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"name":"Slow Ltd","owner":{"email":"slow@acme.test","password":"correct horse battery"}}`
	// Send the headers and half the body, then stop the server mid-request.
	fmt.Fprintf(conn, "POST /api/v1/sandbox/organizations HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		u.Host, sbx, len(body), body[:20])
	time.Sleep(100 * time.Millisecond)
	stopped := make(chan error, 1)
	start := time.Now()
	go func() { stopped <- s.Stop() }()
	time.Sleep(200 * time.Millisecond)
	if _, err := io.WriteString(conn, body[20:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("in-flight request got no response: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("in-flight request answered %d, want 201", resp.StatusCode)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("stop: %v", err)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Fatalf("stop took %v", elapsed)
	}
}
