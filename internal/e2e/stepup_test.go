package e2e_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// person is one staff member with a web session and an app session, as a
// person at a desk with their phone.
type person struct {
	email, secret, userID string
	web, app              string
	appDevice             string
	key                   ed25519.PrivateKey
}

// signInAgain opens new web and app sessions (after the old ones ended),
// the app on the same device so its approval credential still applies.
func (p *person) signInAgain(t *testing.T, s *apitest.Server) {
	t.Helper()
	p.web = signInFully(t, s, p.email, p.secret)
	step1 := signIn(t, s, map[string]any{"email": p.email, "password": password, "platform": "ios", "device_id": p.appDevice})
	p.app = *mfa(t, s, *step1.ChallengeToken, code(t, s, p.secret)).Token
	advance(t, s, 30*time.Second)
}

// newPerson creates an organization whose owner is signed in on the web and
// in the app, with the app's approval credential registered.
func newPerson(t *testing.T, s *apitest.Server, email string) *person {
	t.Helper()
	org := createOrg(t, s, email)
	p := &person{email: email, secret: *org.Owner.TotpSecret, userID: org.Owner.UserId.String()}
	p.web = signInFully(t, s, email, p.secret)
	step1 := signIn(t, s, map[string]any{"email": email, "password": password, "platform": "ios", "device_name": "iPhone"})
	p.app, p.appDevice = *mfa(t, s, *step1.ChallengeToken, code(t, s, p.secret)).Token, step1.DeviceId.String()
	advance(t, s, 30*time.Second)
	pub, key := newAppKey()
	p.key = key
	registerAppKey(t, s, p.app, p.secret, pub)
	return p
}

// newAppKey is an approving app's key pair: the public half as base64url.
func newAppKey() (string, ed25519.PrivateKey) {
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	return base64.RawURLEncoding.EncodeToString(pub), key
}

// gated calls the gated operation (replacing the authenticator) with token.
func gated(t *testing.T, s *apitest.Server, token string) *apitest.Response {
	t.Helper()
	return s.Post(t, "/api/v1/auth/totp/setup", token, nil)
}

func expectStepUp(t *testing.T, r *apitest.Response) api.StepUpChallenge {
	t.Helper()
	e := r.ExpectError(t, http.StatusForbidden, "step_up_required")
	var env api.StepUpRequiredError
	r.Decode(t, &env)
	if e.Error.StepUp == nil || env.Error.StepUp == nil {
		t.Fatal("no error.step_up")
	}
	return *env.Error.StepUp
}

// inbox is the first page of challenges waiting in the app of token.
func inbox(t *testing.T, s *apitest.Server, token string) []api.Challenge {
	t.Helper()
	return ok[*api.ListChallengesResponse](t, 200)(s.Client(t, token).API().ListChallengesWithResponse(t.Context(), nil)).JSON200.Data
}

func (p *person) sign(t *testing.T, c api.Challenge) string {
	t.Helper()
	payload, err := base64.RawURLEncoding.DecodeString(c.SigningPayload)
	if err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(ed25519.Sign(p.key, payload))
}

func approve(t *testing.T, s *apitest.Server, p *person, c api.Challenge, matchCode string) *apitest.Response {
	t.Helper()
	body := map[string]any{"signature": p.sign(t, c)}
	if matchCode != "" {
		body["match_code"] = matchCode
	}
	return s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/approve", p.app, body)
}

// pollStepUp reads the step-up's status as the web session of token.
func pollStepUp(t *testing.T, s *apitest.Server, token, id string) api.StepUpStatus {
	t.Helper()
	st, err := s.Client(t, token).StepUpStatus(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return *st
}

func wrongDigits(code string) string {
	b := []byte(code)
	b[0] = '0' + (b[0]-'0'+1)%10
	return string(b)
}

func TestStepUpApprovedInTheAppOpensATenMinuteWindow(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")

	start := now(t, s)
	up := expectStepUp(t, gated(t, s, p.web))
	if up.MatchCode == nil || !regexp.MustCompile(`^[0-9]{3}$`).MatchString(*up.MatchCode) {
		t.Fatalf("match_code = %v, want three digits", up.MatchCode)
	}
	if up.Id == up.StepUpAuthenticationId || up.ExpiresAt == nil || !up.ExpiresAt.Equal(start.Add(5*time.Minute)) {
		t.Fatalf("step_up = %+v", up)
	}
	if len(up.Methods) != 3 || up.Methods[0] != "app" || up.Methods[1] != "totp" || up.Methods[2] != "email" || up.Webauthn != nil {
		t.Fatalf("methods = %v webauthn = %v, want [app totp email] and no passkey options", up.Methods, up.Webauthn)
	}
	// Each gated call mints a fresh challenge.
	if again := expectStepUp(t, gated(t, s, p.web)); again.Id == up.Id {
		t.Fatal("a second gated call reused the sudo session")
	}
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "pending" || st.Active || st.ExpiresAt != nil {
		t.Fatalf("status before approval = %+v", st)
	}

	var c api.Challenge
	for _, x := range inbox(t, s, p.app) {
		if x.StepUpAuthenticationId != nil && *x.StepUpAuthenticationId == up.StepUpAuthenticationId {
			c = x
		}
	}
	if c.Id == uuid.Nil || c.OriginRail != "web" || c.Binding != "none" || c.Kind != "step_up" || c.ApprovalId != nil || c.ActionSummary != nil {
		t.Fatalf("challenge in the app inbox = %+v", c)
	}
	approve(t, s, p, c, wrongDigits(*up.MatchCode)).ExpectError(t, 422, "match_code_mismatch")
	approve(t, s, p, c, "").ExpectError(t, 400, "invalid_request")
	var done api.Challenge
	approve(t, s, p, c, *up.MatchCode).ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "satisfied" {
		t.Fatalf("approved challenge status %q", done.Status)
	}
	approve(t, s, p, c, *up.MatchCode).ExpectError(t, 409, "conflict")

	st := pollStepUp(t, s, p.web, up.Id.String())
	if st.Status != "active" || !st.Active || st.ExpiresAt == nil || !st.ExpiresAt.Equal(now(t, s).Add(10*time.Minute)) {
		t.Fatalf("status after approval = %+v", st)
	}
	gated(t, s, p.web).ExpectStatus(t, 200)
	gated(t, s, p.web).ExpectStatus(t, 200) // the window serves every gated call of the session
	// It serves only the session that asked.
	expectStepUp(t, gated(t, s, p.app))

	advance(t, s, 10*time.Minute)
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "expired" || st.Active {
		t.Fatalf("status after 10 minutes = %+v", st)
	}
	expectStepUp(t, gated(t, s, p.web))
}

func TestDeclinedStepUpCannotBeCompleted(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	c := inbox(t, s, p.app)[0]
	var declined api.Challenge
	s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/decline", p.app, nil).ExpectStatus(t, 200).Decode(t, &declined)
	if declined.Status != "declined" {
		t.Fatalf("declined challenge status %q", declined.Status)
	}
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "declined" || st.Active {
		t.Fatalf("status after decline = %+v", st)
	}
	approve(t, s, p, c, *up.MatchCode).ExpectError(t, 409, "conflict")
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "totp", "code": code(t, s, p.secret)}).
		ExpectError(t, 422, "invalid_code")
	s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/decline", p.app, nil).ExpectError(t, 409, "conflict")
	if len(inbox(t, s, p.app)) != 0 {
		t.Fatal("a declined challenge stays in the inbox")
	}
	expectStepUp(t, gated(t, s, p.web))
}

func TestStepUpChallengeExpiresAfterFiveMinutes(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	c := inbox(t, s, p.app)[0]
	advance(t, s, 5*time.Minute)
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "expired" {
		t.Fatalf("status after 5 minutes = %+v", st)
	}
	if len(inbox(t, s, p.app)) != 0 {
		t.Fatal("an expired challenge stays in the inbox")
	}
	approve(t, s, p, c, *up.MatchCode).ExpectError(t, 409, "conflict")
}

func TestExitStepUpEndsTheWindow(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	approve(t, s, p, inbox(t, s, p.app)[0], *up.MatchCode).ExpectStatus(t, 200)
	var exited api.ExpiredSudoSession
	s.Post(t, "/api/v1/auth/step-up/exit", p.web, map[string]any{"id": up.Id.String()}).ExpectStatus(t, 200).Decode(t, &exited)
	if exited.Active || exited.Id != up.Id || !exited.ExpiresAt.Equal(now(t, s)) {
		t.Fatalf("exit = %+v", exited)
	}
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "expired" || st.Active {
		t.Fatalf("status after exit = %+v", st)
	}
	expectStepUp(t, gated(t, s, p.web))
	s.Post(t, "/api/v1/auth/step-up/exit", p.app, map[string]any{"id": up.Id.String()}).ExpectError(t, 404, "not_found")
}

func TestAnotherSessionsSudoSessionIsNotFound(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	s.Get(t, "/api/v1/auth/step-up/"+up.Id.String(), p.app).ExpectError(t, 404, "not_found")
	eve := newPerson(t, s, "eve@evil.test")
	s.Get(t, "/api/v1/auth/step-up/"+up.Id.String(), eve.web).ExpectError(t, 404, "not_found")
	s.Post(t, "/api/v1/auth/step-up/complete", eve.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "totp", "code": "123456"}).
		ExpectError(t, 404, "not_found")
	s.Get(t, "/api/v1/auth/step-up/not-a-uuid", p.web).ExpectError(t, 404, "not_found")
	// Nor can another person answer the challenge.
	c := inbox(t, s, p.app)[0]
	s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/decline", eve.app, nil).ExpectError(t, 404, "not_found")
}

func TestStepUpCompletedWithAnAuthenticatorCode(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	complete := func(method, c string) *apitest.Response {
		return s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": method, "code": c})
	}
	good := code(t, s, p.secret)
	complete("totp", wrongDigits(good)).ExpectError(t, 422, "invalid_code")
	var st api.StepUpStatus
	complete("totp", good).ExpectStatus(t, 200).Decode(t, &st)
	if st.Status != "active" || !st.Active {
		t.Fatalf("completion = %+v", st)
	}
	gated(t, s, p.web).ExpectStatus(t, 200)
	if len(inbox(t, s, p.app)) != 0 {
		t.Fatal("the answered challenge stays in the app inbox")
	}

	// The same code (same step) cannot complete another step-up, and five wrong codes end one.
	second := expectStepUp(t, s.Post(t, "/api/v1/auth/totp/setup", p.app, nil))
	s.Post(t, "/api/v1/auth/step-up/complete", p.app, map[string]any{"sudo_session_id": second.Id.String(), "method": "totp", "code": good}).
		ExpectError(t, 422, "invalid_code")
	for range 4 {
		s.Post(t, "/api/v1/auth/step-up/complete", p.app, map[string]any{"sudo_session_id": second.Id.String(), "method": "totp", "code": "000000"}).
			ExpectError(t, 422, "invalid_code")
	}
	if st := pollStepUp(t, s, p.app, second.Id.String()); st.Status != "expired" {
		t.Fatalf("after five wrong codes: %+v", st)
	}
	advance(t, s, 30*time.Second)
	s.Post(t, "/api/v1/auth/step-up/complete", p.app, map[string]any{"sudo_session_id": second.Id.String(), "method": "totp", "code": code(t, s, p.secret)}).
		ExpectError(t, 422, "invalid_code")
}

func TestStepUpCompletedWithAnEmailedCode(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "email", "code": "123456"}).
		ExpectError(t, 422, "invalid_code") // no code was sent yet
	var fb api.StepUpFallback
	s.Post(t, "/api/v1/auth/step-up/fallback", p.web, map[string]any{"step_up_authentication_id": up.StepUpAuthenticationId, "method": "email"}).
		ExpectStatus(t, 200).Decode(t, &fb)
	if fb.Delivery != "email" || !fb.ExpiresAt.After(now(t, s)) {
		t.Fatalf("fallback = %+v", fb)
	}
	s.Post(t, "/api/v1/auth/step-up/fallback", p.web, map[string]any{"step_up_authentication_id": up.Id.String(), "method": "email"}).
		ExpectError(t, 404, "not_found") // the sudo id is not the step-up authentication id
	var msgs api.OutboxMessagePage
	s.Get(t, "/api/v1/sandbox/outbox?kind=step_up_email_code&user_id="+p.userID, sbx).ExpectStatus(t, 200).Decode(t, &msgs)
	if len(msgs.Data) != 1 || msgs.Data[0].Code == nil {
		t.Fatalf("emailed codes = %+v", msgs.Data)
	}
	emailed := *msgs.Data[0].Code
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "email", "code": wrongDigits(emailed)}).
		ExpectError(t, 422, "invalid_code")
	var st api.StepUpStatus
	s.Post(t, "/api/v1/auth/step-up/complete", p.web, map[string]any{"sudo_session_id": up.Id.String(), "method": "email", "code": emailed}).
		ExpectStatus(t, 200).Decode(t, &st)
	if !st.Active {
		t.Fatalf("email completion = %+v", st)
	}
	gated(t, s, p.web).ExpectStatus(t, 200)
	assertNoSecrets(t, s, emailed, p.web, p.app)
}

func TestThreeWrongMatchCodesDecline(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	c := inbox(t, s, p.app)[0]
	for range 3 {
		approve(t, s, p, c, wrongDigits(*up.MatchCode)).ExpectError(t, 422, "match_code_mismatch")
	}
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "declined" {
		t.Fatalf("after three wrong match codes: %+v", st)
	}
	approve(t, s, p, c, *up.MatchCode).ExpectError(t, 409, "conflict")
}

func TestApprovalNeedsTheDevicesCredentialAndSignature(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	c := inbox(t, s, p.app)[0]
	// A forged signature.
	forged := map[string]any{"match_code": *up.MatchCode, "signature": base64.RawURLEncoding.EncodeToString(make([]byte, 64))}
	s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/approve", p.app, forged).ExpectError(t, 422, "invalid_signature")
	// A second phone without a credential cannot approve.
	step1 := signIn(t, s, map[string]any{"email": p.email, "password": password, "platform": "android"})
	other := *mfa(t, s, *step1.ChallengeToken, code(t, s, p.secret)).Token
	s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/approve", other, map[string]any{"match_code": *up.MatchCode, "signature": p.sign(t, c)}).
		ExpectError(t, 422, "approval_credential_required")
	// The web session cannot register a credential: only the apps can.
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	s.Post(t, "/api/v1/me/approval-credential", p.web, map[string]any{"public_key": base64.RawURLEncoding.EncodeToString(pub), "label": "Server"}).
		ExpectError(t, 403, "forbidden")
	s.Post(t, "/api/v1/me/approval-credential", p.app, map[string]any{"public_key": "short", "label": "x"}).
		ExpectError(t, 400, "invalid_request")
	approve(t, s, p, c, *up.MatchCode).ExpectStatus(t, 200)
}

func TestChallengeFromTheAppNeedsNoMatchCode(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	expectStepUp(t, gated(t, s, p.app))
	c := inbox(t, s, p.app)[0]
	if c.OriginRail != "native_app" {
		t.Fatalf("origin_rail %q, want native_app", c.OriginRail)
	}
	approve(t, s, p, c, "").ExpectStatus(t, 200)
	gated(t, s, p.app).ExpectStatus(t, 200)
}

func TestThreeDeclinesInADaySendASecurityAlert(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	var orgs api.Me
	s.Get(t, "/api/v1/me", p.web).ExpectStatus(t, 200).Decode(t, &orgs)
	coOwner, _ := addUser(t, s, orgs.Memberships[0].OrganizationId.String(), "grace@acme.test", "owner", true)
	// Alerts about declines, leaving out the one about registering the app.
	alerts := func(userID string) int {
		var page api.OutboxMessagePage
		s.Get(t, "/api/v1/sandbox/outbox?kind=security_alert&user_id="+userID, sbx).ExpectStatus(t, 200).Decode(t, &page)
		n := 0
		for _, m := range page.Data {
			if strings.Contains(m.Subject, "declined") {
				n++
			}
		}
		return n
	}
	decline := func() {
		expectStepUp(t, gated(t, s, p.web))
		s.Post(t, "/api/v1/me/challenges/"+inbox(t, s, p.app)[0].Id.String()+"/decline", p.app, nil).ExpectStatus(t, 200)
	}
	decline()
	decline()
	if alerts(p.userID) != 0 {
		t.Fatal("alert after two declines")
	}
	decline()
	if alerts(p.userID) != 1 || alerts(coOwner) != 1 {
		t.Fatalf("after three declines: %d alerts to the person, %d to the co-owner; want one each", alerts(p.userID), alerts(coOwner))
	}
	decline()
	if alerts(p.userID) != 1 {
		t.Fatal("a fourth decline within the day sent another alert")
	}
}

func TestConcurrentAnswersSettleToOneOutcome(t *testing.T) {
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	p := newPerson(t, s, "ada@acme.test")
	up := expectStepUp(t, gated(t, s, p.web))
	c := inbox(t, s, p.app)[0]
	body := map[string]any{"match_code": *up.MatchCode, "signature": p.sign(t, c)}
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for i := range 24 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var r *apitest.Response
			if i%2 == 0 {
				r = s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/approve", p.app, body)
			} else {
				r = s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/decline", p.app, nil)
			}
			key := "conflict"
			if r.Status == 200 {
				var ch api.Challenge
				r.Decode(t, &ch)
				key = string(ch.Status)
			} else if r.Status != 409 {
				t.Errorf("unexpected answer %d %s", r.Status, r.Body)
			}
			mu.Lock()
			outcomes[key]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if outcomes["satisfied"]+outcomes["declined"] != 1 || outcomes["conflict"] != 23 {
		t.Fatalf("outcomes = %v, want exactly one success", outcomes)
	}
	st := pollStepUp(t, s, p.web, up.Id.String())
	if (outcomes["satisfied"] == 1) != (st.Status == "active") || (outcomes["declined"] == 1) != (st.Status == "declined") {
		t.Fatalf("recorded outcome %v disagrees with the step-up status %q", outcomes, st.Status)
	}
}

func TestStepUpOffersPasskeyOptionsWhenThePersonHasPasskeys(t *testing.T) {
	s := apitest.Start(t)
	p := newPerson(t, s, "ada@acme.test")
	key := apitest.NewSoftPasskey()
	registerPasskey(t, s, p.web, key, "Laptop").ExpectStatus(t, 201)
	up := expectStepUp(t, gated(t, s, p.web))
	if up.Webauthn == nil || len(up.Webauthn.AllowCredentials) != 1 ||
		up.Webauthn.AllowCredentials[0].Id != base64.RawURLEncoding.EncodeToString(key.ID) {
		t.Fatalf("webauthn = %+v, want options naming the passkey", up.Webauthn)
	}
}

func TestStepUpMethodsFollowWhatThePersonHas(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	web := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	// An authenticator but no approving app yet: no app method.
	if up := expectStepUp(t, gated(t, s, web)); len(up.Methods) != 2 || up.Methods[0] != "totp" || up.Methods[1] != "email" || up.Delivery != "totp" {
		t.Fatalf("methods = %v (delivery %q), want [totp email]", up.Methods, up.Delivery)
	}
}
