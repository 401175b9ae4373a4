package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Issue 9, items 5 to 7: codes at rest, sign-in lockout that cannot be
// aimed at a victim, and the WWW-Authenticate challenge of every 401.

// sandboxMessages are the messages of kind the sandbox outbox holds for the user.
func sandboxMessages(t *testing.T, s *apitest.Server, kind, userID string) []api.OutboxMessage {
	t.Helper()
	return ok[*api.SandboxListOutboxResponse](t, 200)(sandboxClient(t, s).API().SandboxListOutboxWithResponse(t.Context(),
		&api.SandboxListOutboxParams{Kind: ptr(api.OutboxMessageKind(kind)), UserId: ptr(uuidOf(t, userID))})).JSON200.Data
}

// storedRows reads every row of table as column name → text (NULL as nil).
func storedRows(t *testing.T, d *db.DB, table, where string, args ...any) []map[string]*string {
	t.Helper()
	rows, err := d.Reader().QueryContext(context.Background(), "SELECT * FROM "+table+" "+where, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]*string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]*string{}
		for i, v := range vals {
			if v == nil {
				row[cols[i]] = nil
				continue
			}
			if b, ok := v.([]byte); ok {
				v = string(b)
			}
			text := fmt.Sprint(v)
			row[cols[i]] = &text
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// assertNotStored fails t when any column of outbox_messages or jobs holds one of codes.
func assertNotStored(t *testing.T, d *db.DB, codes ...string) {
	t.Helper()
	for _, table := range []string{"outbox_messages", "jobs"} {
		for _, row := range storedRows(t, d, table, "") {
			for col, v := range row {
				for _, c := range codes {
					if v != nil && strings.Contains(*v, c) {
						t.Errorf("%s.%s holds a code in plaintext: %q", table, col, *v)
					}
				}
			}
		}
	}
}

func TestCodesAreSealedAtRestAndShownInTheSandbox(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)

	// A messaging-app code: authenticator setup of a signed-in person.
	org := createOrg(t, s, "owner@acme.test")
	plainID, _ := addUser(t, s, org.Organization.Id.String(), "plain@acme.test", "member", false)
	plain := *signIn(t, s, map[string]any{"email": "plain@acme.test", "password": password}).Token
	var setup api.AuthenticatedTotpSetup
	s.Post(t, "/api/v1/auth/totp/setup", plain, nil).ExpectStatus(t, 200).Decode(t, &setup)

	// An emailed code: the step-up fallback.
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	s.Post(t, "/api/v1/auth/step-up/fallback", p.web, map[string]any{"step_up_authentication_id": up.StepUpAuthenticationId, "method": "email"}).
		ExpectStatus(t, 200)

	// The sandbox outbox still shows both codes, in the code and in the body.
	var codes []string
	for _, m := range append(sandboxMessages(t, s, "totp_activation_code", plainID), sandboxMessages(t, s, "step_up_email_code", p.userID)...) {
		if m.Code == nil || len(*m.Code) != 6 || !strings.Contains(m.Body, *m.Code) {
			t.Fatalf("sandbox message %+v: want its code, also in the body", m)
		}
		codes = append(codes, *m.Code)
	}
	if len(codes) != 2 {
		t.Fatalf("got %d code messages, want 2", len(codes))
	}

	// At rest neither the code column nor the body (nor the delivery job) holds them.
	d := apitest.OpenDatabase(t, dsn)
	assertNotStored(t, d, codes...)

	// The codes still work: verification (keyed hashes) is unchanged.
	advance(t, s, 30*time.Second)
	var active api.AuthenticatedTotpSetup
	s.Post(t, "/api/v1/auth/totp/activate", plain, map[string]any{"code": code(t, s, setup.SecretEncoded), "messaging_code": codes[0]}).
		ExpectStatus(t, 200).Decode(t, &active)
	if !active.Enabled {
		t.Fatal("the messaging-app code did not activate the authenticator")
	}
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "email", "code": codes[1]}).
		ExpectStatus(t, 200)

	// The delivery job handed the messages to the sender; the log names them, never their codes.
	eventually(t, "the code messages are delivered", func() bool {
		return strings.Count(s.Logs.String(), `"kind":"totp_activation_code"`) >= 1 && strings.Count(s.Logs.String(), `"kind":"step_up_email_code"`) >= 1
	})
	assertNoSecrets(t, s, codes...)
}

var sixDigits = regexp.MustCompile(`[0-9]{6}`)

func TestLiveStoresNoCodes(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	// The person is created through the sandbox of a test server on the same
	// database and root secret; live has no sandbox.
	seed := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	org := createOrg(t, seed, "owner@acme.test")
	addUser(t, seed, org.Organization.Id.String(), "plain@acme.test", "member", false)
	if err := seed.Stop(); err != nil {
		t.Fatal(err)
	}

	live := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_ENV=live", "STRONGROOM_SANDBOX_TOKEN=", "STRONGROOM_CLOCK=system",
		"STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	res := signIn(t, live, map[string]any{"email": "plain@acme.test", "password": password})
	if res.Token == nil {
		t.Fatalf("sign-in = %+v", res)
	}
	live.Post(t, "/api/v1/auth/totp/setup", *res.Token, nil).ExpectStatus(t, 200)

	d := apitest.OpenDatabase(t, dsn)
	rows := storedRows(t, d, "outbox_messages", "WHERE kind = $1", "totp_activation_code")
	if len(rows) != 1 {
		t.Fatalf("%d messaging-app code messages stored, want 1", len(rows))
	}
	row := rows[0]
	for col, v := range row {
		if strings.Contains(col, "code") && v != nil {
			t.Errorf("live stored %s = %q, want no code at all", col, *v)
		}
	}
	if body := row["body"]; body == nil || sixDigits.MatchString(*body) || !strings.Contains(*body, "[code withheld]") {
		t.Errorf("live stored body %q, want the code withheld", deref(body))
	}
	// The code reached the sender in-process, right after the commit.
	if row["delivered_at"] == nil {
		t.Error("the message was not handed to the sender")
	}
	id := *row["id"]
	if !strings.Contains(live.Logs.String(), `"message_id":"`+id+`"`) {
		t.Errorf("no delivery of message %s in the log", id)
	}
	for _, job := range storedRows(t, d, "jobs", "") {
		for _, v := range job {
			if v != nil && strings.Contains(*v, id) {
				t.Errorf("a job was queued for the live code message: %s", deref(job["kind"]))
			}
		}
	}
}

func deref[T any](s *T) string { return str(s) }

// clientFrom returns an HTTP client whose connections leave from ip (any
// 127.0.0.0/8 address is the loopback on Linux), so the server sees
// another client address.
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	c := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

// signInFrom posts a sign-in through c and returns the status and Retry-After.
func signInFrom(t *testing.T, c *http.Client, s *apitest.Server, body map[string]any) (int, string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	resp, err := c.Post(s.URL+"/api/v1/auth/sign-in", "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Skipf("cannot reach the server from another loopback address: %v", err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After")
}

func TestWrongPasswordsOfAStrangerDoNotLockThePersonOut(t *testing.T) {
	// The old per-email bucket (STRONGROOM_RATE_LIMIT_SIGN_IN_EMAIL, no longer
	// read) is set as tight as the new one, so this test fails where it applies.
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=3/1h", "STRONGROOM_RATE_LIMIT_SIGN_IN_EMAIL=3/1h",
		"STRONGROOM_SLOW_SIGN_IN_AFTER=5/1h", "STRONGROOM_SLOW_SIGN_IN_DELAY=1ms", "STRONGROOM_RATE_LIMIT_SIGN_IN=off")
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret

	// The person signs in once from 127.0.0.1: that device is now known.
	first := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	mfa(t, s, *first.ChallengeToken, code(t, s, secret))
	advance(t, s, 30*time.Second)
	device := first.DeviceId.String()

	// A stranger at 127.0.0.2 hammers the person's email with wrong passwords:
	// only the stranger's own (email, address) bucket runs out.
	stranger := clientFrom(t, "127.0.0.2")
	for i := range 3 {
		if status, _ := signInFrom(t, stranger, s, map[string]any{"email": "ada@acme.test", "password": fmt.Sprintf("guess %d", i)}); status != 401 {
			t.Fatalf("wrong password %d from the stranger: %d, want 401", i+1, status)
		}
	}
	for range 5 {
		status, retry := signInFrom(t, stranger, s, map[string]any{"email": "ADA@acme.test", "password": "guess"})
		if secs, err := strconv.Atoi(retry); status != 429 || err != nil || secs < 1 || secs > 3600 {
			t.Fatalf("stranger past the budget: %d Retry-After %q, want 429 within the hour", status, retry)
		}
	}
	// Even the right password is not tried from an exhausted (email, address).
	if status, _ := signInFrom(t, stranger, s, map[string]any{"email": "ada@acme.test", "password": password}); status != 429 {
		t.Fatalf("right password from the exhausted address: %d, want 429", status)
	}

	// The person, from another address, signs in as usual (slowed at most).
	step1 := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	if step2 := mfa(t, s, *step1.ChallengeToken, code(t, s, secret)); step2.Status != "authenticated" {
		t.Fatalf("the person after the stranger's guesses: %+v", step2)
	}
	advance(t, s, 30*time.Second)

	// Someone on the person's own address (shared network) exhausts it too:
	// a new device is refused there, the person's known device never is.
	for range 3 {
		s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "wrong"}).ExpectError(t, 401, "invalid_credentials")
	}
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": password}).ExpectError(t, 429, "rate_limited")
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "wrong", "device_id": device}).
		ExpectError(t, 401, "invalid_credentials") // a known device id does not make a wrong password right
	known := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "device_id": device})
	if known.DeviceId == nil || known.DeviceId.String() != device {
		t.Fatalf("known device sign-in = %+v, want the same device", known)
	}
	if done := mfa(t, s, *known.ChallengeToken, code(t, s, secret)); done.Status != "authenticated" {
		t.Fatalf("the known device after the address ran out: %+v", done)
	}
	// Another person's email from the same address is untouched.
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "other@acme.test", "password": "wrong"}).ExpectError(t, 401, "invalid_credentials")
}

func TestConcurrentWrongPasswordsStayWithinTheBudget(t *testing.T) {
	const budget, tries = 3, 12
	s := apitest.Start(t, fmt.Sprintf("STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=%d/1h", budget), "STRONGROOM_RATE_LIMIT_SIGN_IN=off")
	createOrg(t, s, "ada@acme.test")
	stranger := clientFrom(t, "127.0.0.4")
	if status, _ := signInFrom(t, stranger, s, map[string]any{"email": "bob@acme.test", "password": "probe"}); status != 401 {
		t.Fatalf("probe from another loopback address: %d, want 401", status)
	}
	// All at once: each guess is counted before any password is checked,
	// so no more than the budget are ever checked.
	statuses := make(chan int, tries)
	var wg sync.WaitGroup
	for i := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, _ := json.Marshal(map[string]any{"email": "ada@acme.test", "password": fmt.Sprintf("guess %d", i)})
			resp, err := stranger.Post(s.URL+"/api/v1/auth/sign-in", "application/json", bytes.NewReader(raw))
			if err != nil {
				statuses <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			statuses <- resp.StatusCode
		}()
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[401] > budget || count[401]+count[429] != tries {
		t.Fatalf("answers %v: want at most %d wrong passwords checked (401), the rest 429", count, budget)
	}
	// The budget is spent now, whatever the interleaving was.
	if status, _ := signInFrom(t, stranger, s, map[string]any{"email": "ada@acme.test", "password": password}); status != 429 && count[401] == budget {
		t.Fatalf("after the budget: %d, want 429", status)
	}
}

func TestManyWrongPasswordsForAnEmailSlowItsSignInsButNeverRefuse(t *testing.T) {
	const delay = 300 * time.Millisecond
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=100/1h", "STRONGROOM_SLOW_SIGN_IN_AFTER=2/1h",
		"STRONGROOM_SLOW_SIGN_IN_DELAY="+delay.String(), "STRONGROOM_RATE_LIMIT_SIGN_IN=off")
	org := createOrg(t, s, "ada@acme.test")
	createOrg(t, s, "bob@acme.test")
	stranger := clientFrom(t, "127.0.0.3")
	for range 2 {
		if status, _ := signInFrom(t, stranger, s, map[string]any{"email": "ada@acme.test", "password": "guess"}); status != 401 {
			t.Fatalf("wrong password: %d, want 401", status)
		}
	}
	start := time.Now()
	res := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	if took := time.Since(start); took < delay {
		t.Fatalf("sign-in past the per-email budget took %v, want at least %v", took, delay)
	}
	if done := mfa(t, s, *res.ChallengeToken, code(t, s, *org.Owner.TotpSecret)); done.Status != "authenticated" {
		t.Fatalf("slowed sign-in = %+v, want authenticated", done)
	}
	// Wrong answers are slowed the same way, so the wait tells nothing.
	start = time.Now()
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "wrong"}).ExpectError(t, 401, "invalid_credentials")
	if took := time.Since(start); took < delay {
		t.Fatalf("a wrong password past the budget took %v, want at least %v", took, delay)
	}
	// Other emails are not slowed (argon2 alone is well under the delay).
	start = time.Now()
	signIn(t, s, map[string]any{"email": "bob@acme.test", "password": password})
	if took := time.Since(start); took >= delay {
		t.Logf("note: an unslowed sign-in took %v", took)
	}
}

func TestEvery401CarriesWWWAuthenticate(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	org := createOrg(t, s, "ada@acme.test")
	const plain, invalid = `Bearer realm="strongroom"`, `Bearer realm="strongroom", error="invalid_token"`
	forgedKey := "sr_test_abcdefgh_" + strings.Repeat("A", 43)
	for _, tc := range []struct {
		name      string
		req       apitest.Request
		typ, want string
	}{
		{"no bearer", apitest.Request{Method: "GET", Path: "/api/v1/me"}, "not_authenticated", plain},
		{"unknown session token", apitest.Request{Method: "GET", Path: "/api/v1/me", Bearer: "srs_forged"}, "not_authenticated", invalid},
		{"not a session token", apitest.Request{Method: "GET", Path: "/api/v1/me", Bearer: "something"}, "not_authenticated", invalid},
		{"unknown API key", apitest.Request{Method: "GET", Path: accountsPath(org.Organization.Id.String()), Bearer: forgedKey}, "invalid_api_key", invalid},
		{"API key at sign-in", apitest.Request{Method: "POST", Path: "/api/v1/auth/sign-in", Bearer: forgedKey,
			Body: map[string]any{"email": "ada@acme.test", "password": password}}, "invalid_api_key", invalid},
		{"wrong password", apitest.Request{Method: "POST", Path: "/api/v1/auth/sign-in",
			Body: map[string]any{"email": "ada@acme.test", "password": "wrong"}}, "invalid_credentials", plain},
		{"dead challenge token", apitest.Request{Method: "POST", Path: "/api/v1/auth/sign-in/totp/setup",
			Body: map[string]any{"challenge_token": "src_unknown"}}, "not_authenticated", plain},
		{"partner webhook signature", apitest.Request{Method: "POST", Path: "/api/v1/partner/webhooks",
			Body:   map[string]any{"organization_id": org.Organization.Id.String(), "currency": "EUR", "event": "account.activated"},
			Header: map[string]string{"X-Partner-Signature": "sha256=00"}}, "not_authenticated", plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := s.Do(t, tc.req)
			r.ExpectError(t, 401, tc.typ)
			if got := r.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.want {
				t.Fatalf("WWW-Authenticate = %q, want %q", got, tc.want)
			}
		})
	}
	// Other errors carry no challenge.
	if r := s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test"}); r.Header.Get("WWW-Authenticate") != "" {
		t.Fatal("a 400 carries WWW-Authenticate")
	}
}
