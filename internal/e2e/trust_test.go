package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// registerAppKey registers pub as the approval credential of the app
// session, as the app does: the first call asks for a step-up by code (never
// the app), the person answers it with their authenticator, the app calls
// again, and the registration spends the step-up, so later gated calls ask again.
func registerAppKey(t *testing.T, s *apitest.Server, app, secret, pub string) {
	t.Helper()
	body := map[string]any{"public_key": pub, "label": "iPhone"}
	up := expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, body))
	if slices.Contains(up.Methods, "app") {
		t.Fatalf("registering an approval credential offers methods %v; the app must not confirm its own key", up.Methods)
	}
	completeStepUp(t, s, app, up.Id.String(), "totp", code(t, s, secret)).ExpectStatus(t, 200)
	s.Post(t, "/api/v1/me/approval-credential", app, body).ExpectStatus(t, http.StatusCreated)
	// The code's time step is spent.
	advance(t, s, 30*time.Second)
}

func completeStepUp(t *testing.T, s *apitest.Server, token, sudoID, method, c string) *apitest.Response {
	t.Helper()
	return s.Post(t, "/api/v1/auth/step-up/complete", token, map[string]any{"sudo_session_id": sudoID, "method": method, "code": c})
}

// outboxOf is the first hundred messages of kind the sandbox outbox holds for the user.
func outboxOf(t *testing.T, s *apitest.Server, userID, kind string) []api.OutboxMessage {
	t.Helper()
	return ok[*api.SandboxListOutboxResponse](t, 200)(sandboxClient(t, s).API().SandboxListOutboxWithResponse(t.Context(),
		&api.SandboxListOutboxParams{Limit: ptr(100), Kind: ptr(api.OutboxMessageKind(kind)), UserId: ptr(uuidOf(t, userID))})).JSON200.Data
}

// appSignIn signs the person in from an iOS app named deviceName.
func appSignIn(t *testing.T, s *apitest.Server, email, secret, deviceName string) string {
	t.Helper()
	step1 := signIn(t, s, map[string]any{"email": email, "password": password, "platform": "ios", "device_name": deviceName})
	token := *mfa(t, s, *step1.ChallengeToken, code(t, s, secret)).Token
	advance(t, s, 30*time.Second)
	return token
}

func TestRegisteringTheApprovingAppNeedsAStepUpByCode(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret, userID := *org.Owner.TotpSecret, org.Owner.UserId.String()
	web := signInFully(t, s, "ada@acme.test", secret)
	app := appSignIn(t, s, "ada@acme.test", secret, "Ada's iPhone")
	pub, _ := newAppKey()
	body := map[string]any{"public_key": pub, "label": "iPhone"}

	// Only the apps register, before any step-up is started.
	s.Post(t, "/api/v1/me/approval-credential", web, body).ExpectError(t, 403, "forbidden")
	// A stolen app token alone cannot plant a key, the first one included.
	up := expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, body))
	if len(up.Methods) != 2 || up.Methods[0] != "totp" || up.Methods[1] != "email" || up.Delivery != "totp" {
		t.Fatalf("methods = %v (delivery %q), want [totp email]", up.Methods, up.Delivery)
	}
	if len(inbox(t, s, app)) != 0 {
		t.Fatal("a step-up the app may not answer is in the app's inbox")
	}
	if n := len(outboxOf(t, s, userID, "security_alert")); n != 0 {
		t.Fatalf("%d security alerts before anything was registered", n)
	}
	expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, body)) // still pending: asks again
	completeStepUp(t, s, app, up.Id.String(), "totp", code(t, s, secret)).ExpectStatus(t, 200)
	var cred api.ApprovalCredential
	s.Post(t, "/api/v1/me/approval-credential", app, body).ExpectStatus(t, 201).Decode(t, &cred)
	if cred.Id == uuid.Nil || cred.Label != "iPhone" {
		t.Fatalf("credential = %+v", cred)
	}
	alerts := outboxOf(t, s, userID, "security_alert")
	if len(alerts) != 1 || !strings.Contains(alerts[0].Body, "Ada's iPhone (ios)") {
		t.Fatalf("security alerts = %+v, want one naming Ada's iPhone (ios)", alerts)
	}
	// The registration spent its step-up: within what was its window, a
	// second registration asks again, and so does any other gated call.
	var spent api.StepUpStatus
	s.Get(t, "/api/v1/auth/step-up/"+up.Id.String(), app).ExpectStatus(t, 200).Decode(t, &spent)
	if spent.Status != "expired" || spent.Active {
		t.Fatalf("the step-up after registering = %+v, want expired", spent)
	}
	other, _ := newAppKey()
	expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, map[string]any{"public_key": other, "label": "Second"}))
	advance(t, s, 30*time.Second)

	// The app now answers ordinary step-ups, but a window the app opened
	// does not let the app replace its own key.
	appUp := expectStepUp(t, gated(t, s, app))
	if !slices.Contains(appUp.Methods, "app") {
		t.Fatalf("methods = %v, want the app offered once registered", appUp.Methods)
	}
	key := inbox(t, s, app)
	if len(key) != 1 {
		t.Fatalf("inbox = %+v", key)
	}
	p := &person{app: app, secret: secret}
	_, p.key = newAppKey() // the wrong key: the signature must be by the registered one
	approve(t, s, p, key[0], "").ExpectError(t, 422, "invalid_signature")

	// Replace the key: again a step-up by code, whatever the app did.
	pub2, key2 := newAppKey()
	p.key = key2
	replace := expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, map[string]any{"public_key": pub2, "label": "New key"}))
	if slices.Contains(replace.Methods, "app") || len(inbox(t, s, app)) != 1 {
		t.Fatalf("replacing offers %v; want no app method and no new inbox challenge", replace.Methods)
	}
	s.Post(t, "/api/v1/auth/step-up/fallback", app, map[string]any{"step_up_authentication_id": replace.StepUpAuthenticationId, "method": "email"}).
		ExpectStatus(t, 200)
	emailed := outboxOf(t, s, userID, "step_up_email_code")
	completeStepUp(t, s, app, replace.Id.String(), "email", *emailed[0].Code).ExpectStatus(t, 200)
	s.Post(t, "/api/v1/me/approval-credential", app, map[string]any{"public_key": pub2, "label": "New key"}).ExpectStatus(t, 201)
	if n := len(outboxOf(t, s, userID, "security_alert")); n != 2 {
		t.Fatalf("%d security alerts, want one per registration", n)
	}
	// The new key answers; the app-approved window then does not serve a key change.
	for _, c := range inbox(t, s, app) {
		approve(t, s, p, c, "").ExpectStatus(t, 200)
	}
	s.Post(t, "/api/v1/auth/step-up/exit", app, map[string]any{"id": replace.Id.String()}).ExpectStatus(t, 200)
	if st := pollStepUp(t, s, app, appUp.Id.String()); st.Status != "active" {
		t.Fatalf("app-approved step-up = %+v", st)
	}
	gated(t, s, app).ExpectStatus(t, 200) // the window serves ordinary gated calls
	again := expectStepUp(t, s.Post(t, "/api/v1/me/approval-credential", app, body))
	if slices.Contains(again.Methods, "app") {
		t.Fatalf("methods = %v", again.Methods)
	}
}

func TestTenWrongStepUpCodesLockStepUpForFifteenMinutes(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	pay := p.pay(t, s, "10.00")
	wrong := func(up api.StepUpChallenge, method string, n int) {
		t.Helper()
		good := code(t, s, p.secret)
		if method == "email" {
			s.Post(t, "/api/v1/auth/step-up/fallback", p.web, map[string]any{"step_up_authentication_id": up.StepUpAuthenticationId, "method": "email"}).
				ExpectStatus(t, 200)
			good = *outboxOf(t, s, p.userID, "step_up_email_code")[0].Code
		}
		for range n {
			completeStepUp(t, s, p.web, up.Id.String(), method, wrongDigits(good)).ExpectError(t, 422, "invalid_code")
		}
	}
	// Four wrong codes, then the right one: the window opens, the count stays.
	first := expectStepUp(t, gated(t, s, p.web))
	wrong(first, "totp", 4)
	completeStepUp(t, s, p.web, first.Id.String(), "totp", code(t, s, p.secret)).ExpectStatus(t, 200)
	s.Post(t, "/api/v1/auth/step-up/exit", p.web, map[string]any{"id": first.Id.String()}).ExpectStatus(t, 200)
	advance(t, s, 30*time.Second)
	// Four emailed codes wrong on a second step-up, from the app session too.
	second := expectStepUp(t, gated(t, s, p.app))
	s.Post(t, "/api/v1/auth/step-up/fallback", p.app, map[string]any{"step_up_authentication_id": second.StepUpAuthenticationId, "method": "email"}).
		ExpectStatus(t, 200)
	emailed := *outboxOf(t, s, p.userID, "step_up_email_code")[0].Code
	for range 4 {
		completeStepUp(t, s, p.app, second.Id.String(), "email", wrongDigits(emailed)).ExpectError(t, 422, "invalid_code")
	}
	// Two more on a third: ten in all.
	third := expectStepUp(t, gated(t, s, p.web))
	wrong(third, "totp", 1)
	if alerts := lockAlerts(t, s, p.userID); alerts != 0 {
		t.Fatalf("%d lockout alerts after nine wrong codes", alerts)
	}
	wrong(third, "totp", 1)

	expectLocked := func(r *apitest.Response) {
		t.Helper()
		r.ExpectError(t, 429, "rate_limited")
		if got := r.Header.Get("Retry-After"); got != "900" {
			t.Fatalf("Retry-After = %q, want 900 (15 minutes on the manual clock)", got)
		}
	}
	// Completion is locked, even with the right code.
	expectLocked(completeStepUp(t, s, p.web, third.Id.String(), "totp", code(t, s, p.secret)))
	expectLocked(completeStepUp(t, s, p.app, second.Id.String(), "email", emailed))
	// No emailed code is sent that could not be entered.
	sent := len(outboxOf(t, s, p.userID, "step_up_email_code"))
	expectLocked(s.Post(t, "/api/v1/auth/step-up/fallback", p.web, map[string]any{"step_up_authentication_id": third.StepUpAuthenticationId, "method": "email"}))
	if now := len(outboxOf(t, s, p.userID, "step_up_email_code")); now != sent {
		t.Fatalf("a locked fallback sent a code (%d → %d messages)", sent, now)
	}
	// So is minting: a gated call, a key registration, a payment approval.
	expectLocked(gated(t, s, p.web))
	pub, _ := newAppKey()
	expectLocked(s.Post(t, "/api/v1/me/approval-credential", p.app, map[string]any{"public_key": pub, "label": "x"}))
	before := len(inbox(t, s, p.app))
	expectLocked(s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
	if after := len(inbox(t, s, p.app)); after != before {
		t.Fatalf("a locked approve minted a challenge (%d → %d)", before, after)
	}
	if alerts := lockAlerts(t, s, p.userID); alerts != 1 {
		t.Fatalf("%d lockout alerts, want one", alerts)
	}
	advance(t, s, 10*time.Minute)
	r := gated(t, s, p.web)
	r.ExpectError(t, 429, "rate_limited")
	if got := r.Header.Get("Retry-After"); got != "300" {
		t.Fatalf("Retry-After after 10 minutes = %q, want 300", got)
	}

	// After 15 minutes it works again.
	advance(t, s, 5*time.Minute)
	up := expectStepUp(t, gated(t, s, p.web))
	completeStepUp(t, s, p.web, up.Id.String(), "totp", code(t, s, p.secret)).ExpectStatus(t, 200)
	gated(t, s, p.web).ExpectStatus(t, 200)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	if lockAlerts(t, s, p.userID) != 1 {
		t.Fatal("another lockout alert")
	}
}

func lockAlerts(t *testing.T, s *apitest.Server, userID string) int {
	t.Helper()
	n := 0
	for _, m := range outboxOf(t, s, userID, "security_alert") {
		if strings.Contains(m.Subject, "locked") {
			n++
		}
	}
	return n
}

// newPayerWithoutApp is an owner with a funded balance and a supplier, signed
// in on the web only: no approving app.
func newPayerWithoutApp(t *testing.T, s *apitest.Server, email, deposit string) *payer {
	t.Helper()
	org := createOrg(t, s, email)
	p := &payer{person: &person{email: email, secret: *org.Owner.TotpSecret, userID: org.Owner.UserId.String()}, org: org.Organization.Id.String()}
	p.web = signInFully(t, s, email, p.secret)
	s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": deposit}).ExpectStatus(t, 201)
	var c api.PaymentContact
	s.Post(t, "/api/v1/organizations/"+p.org+"/payment-contacts", p.web, map[string]any{
		"name": "Müller Maschinenbau GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201).Decode(t, &c)
	p.contact = c.Id.String()
	return p
}

func TestApproveWithoutAnApprovalCredentialMintsNoChallenge(t *testing.T) {
	s := apitest.Start(t)
	p := newPayerWithoutApp(t, s, "ada@acme.test", "1000.00")
	pay := p.pay(t, s, "100.00")
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "approval_credential_required")
	if c := inbox(t, s, p.web); len(c) != 0 {
		t.Fatalf("challenges = %+v, want none", c)
	}
	// An app session without a credential yet changes nothing.
	p.app = appSignIn(t, s, p.email, p.secret, "iPhone")
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "approval_credential_required")
	if c := inbox(t, s, p.app); len(c) != 0 {
		t.Fatalf("challenges = %+v, want none", c)
	}
	if got := getPayment(t, s, p.web, pay.Id.String()).Status; got != "awaiting_approval" {
		t.Fatalf("payment is %s", got)
	}
	// Once the app is registered, approve asks for it.
	pub, key := newAppKey()
	p.key = key
	registerAppKey(t, s, p.app, p.secret, pub)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
}

func TestPaymentApprovalIsConsumedOrDeclinedForFunds(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "100.00")
	a, b := p.pay(t, s, "60.00"), p.pay(t, s, "50.00") // 61.00 and 51.00 with fees: not both
	upA := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+a.ApprovalRequestId.String()+"/approve", p.web, nil))
	upB := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+b.ApprovalRequestId.String()+"/approve", p.web, nil))
	byApproval := map[string]api.Challenge{}
	for _, c := range inbox(t, s, p.app) {
		byApproval[c.ApprovalId.String()] = c
	}
	var done api.Challenge
	approve(t, s, p.person, byApproval[a.ApprovalRequestId.String()], *upA.MatchCode).ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "consumed" || done.ApprovalId == nil || *done.ApprovalId != *a.ApprovalRequestId {
		t.Fatalf("approved payment challenge = %+v, want consumed", done)
	}
	if pollStepUp(t, s, p.web, upA.Id.String()).Status != "active" {
		t.Fatal("the consumed approval's step-up is not active")
	}

	// b no longer fits: refused, nothing recorded, the challenge declined.
	approve(t, s, p.person, byApproval[b.ApprovalRequestId.String()], *upB.MatchCode).ExpectError(t, 422, "insufficient_funds")
	if st := getPayment(t, s, p.web, b.Id.String()).Status; st != "awaiting_approval" {
		t.Fatalf("payment b is %s", st)
	}
	if st := pollStepUp(t, s, p.web, upB.Id.String()); st.Status != "declined" || st.Active {
		t.Fatalf("step-up of b = %+v, want declined", st)
	}
	if len(inbox(t, s, p.app)) != 0 {
		t.Fatal("the declined challenge stays in the inbox")
	}
	approve(t, s, p.person, byApproval[b.ApprovalRequestId.String()], *upB.MatchCode).ExpectError(t, 409, "conflict")
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "39.00" || pe != "60.00" {
		t.Fatalf("available %s pending %s, want 39.00 and 60.00", av, pe)
	}
	// A decline for funds is not the person declining: no security alert.
	for _, m := range outboxOf(t, s, p.userID, "security_alert") {
		if strings.Contains(m.Subject, "declined") {
			t.Fatalf("decline alert %q after a refusal for funds", m.Subject)
		}
	}

	// Funded, a later approve starts again and goes through.
	s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": "20.00"}).ExpectStatus(t, 201)
	p.approveInApp(t, s, b.ApprovalRequestId.String())
	var x api.Approval
	s.Post(t, "/api/v1/approvals/"+b.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectStatus(t, 200).Decode(t, &x)
	if x.Status != "approved" {
		t.Fatalf("approval b = %+v", x)
	}
}

func TestSandboxApprovingAppCompletesAPayment(t *testing.T) {
	s := apitest.Start(t)
	p := newPayerWithoutApp(t, s, "ada@acme.test", "1000.00")
	pay := p.pay(t, s, "100.00")
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "approval_credential_required")

	// Only the sandbox bearer reaches the helpers.
	s.Post(t, "/api/v1/sandbox/users/"+p.userID+"/approving-app", p.web, nil).ExpectError(t, 404, "not_found")
	s.Post(t, "/api/v1/sandbox/users/0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f/approving-app", sbx, nil).ExpectError(t, 404, "not_found")
	var app api.SandboxApprovingApp
	s.Post(t, "/api/v1/sandbox/users/"+p.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201).Decode(t, &app)
	if app.DeviceId == uuid.Nil || app.CredentialId == uuid.Nil {
		t.Fatalf("approving app = %+v", app)
	}
	var devices api.DevicePage
	s.Get(t, "/api/v1/devices", p.web).ExpectStatus(t, 200).Decode(t, &devices)
	found := false
	for _, d := range devices.Data {
		found = found || d.Id == app.DeviceId && d.Platform == "ios" && deref(d.Name) == "Sandbox approving app"
	}
	if !found {
		t.Fatalf("devices = %+v, want the sandbox app's", devices.Data)
	}
	if alerts := outboxOf(t, s, p.userID, "security_alert"); len(alerts) != 1 || !strings.Contains(alerts[0].Body, "Sandbox approving app") {
		t.Fatalf("security alerts = %+v", alerts)
	}

	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
	if len(up.Methods) != 1 || up.Methods[0] != "app" {
		t.Fatalf("methods = %v", up.Methods)
	}
	cs := inbox(t, s, p.web)
	if len(cs) != 1 || cs[0].Kind != "payment_approval" {
		t.Fatalf("inbox = %+v", cs)
	}
	path := "/api/v1/sandbox/challenges/" + cs[0].Id.String() + "/approve"
	s.Post(t, path, p.web, map[string]any{"match_code": *up.MatchCode}).ExpectError(t, 404, "not_found")
	s.Post(t, path, sbx, nil).ExpectError(t, 400, "invalid_request") // the match code is needed from the web
	s.Post(t, path, sbx, map[string]any{"match_code": wrongDigits(*up.MatchCode)}).ExpectError(t, 422, "match_code_mismatch")
	s.Post(t, path, sbx, map[string]any{"match_code": "12"}).ExpectError(t, 400, "invalid_request")
	var done api.Challenge
	s.Post(t, path, sbx, map[string]any{"match_code": *up.MatchCode}).ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "consumed" {
		t.Fatalf("challenge = %+v, want consumed", done)
	}
	s.Post(t, path, sbx, map[string]any{"match_code": *up.MatchCode}).ExpectError(t, 409, "conflict")
	s.Post(t, "/api/v1/sandbox/challenges/0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f/approve", sbx, nil).ExpectError(t, 404, "not_found")
	var x api.Approval
	s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectStatus(t, 200).Decode(t, &x)
	if x.Status != "approved" {
		t.Fatalf("approval = %+v", x)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "899.00" || pe != "100.00" {
		t.Fatalf("available %s pending %s", av, pe)
	}

	// It answers ordinary step-ups too, and a payment it cannot cover is refused.
	gatedUp := expectStepUp(t, gated(t, s, p.web))
	s.Post(t, "/api/v1/sandbox/challenges/"+inbox(t, s, p.web)[0].Id.String()+"/approve", sbx, map[string]any{"match_code": *gatedUp.MatchCode}).
		ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "satisfied" {
		t.Fatalf("step-up challenge = %+v", done)
	}
	gated(t, s, p.web).ExpectStatus(t, 200)
	big, small := p.pay(t, s, "800.00"), p.pay(t, s, "98.00")
	upBig := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+big.ApprovalRequestId.String()+"/approve", p.web, nil))
	p.approveWithSandbox(t, s, small.ApprovalRequestId.String())
	s.Post(t, "/api/v1/sandbox/challenges/"+inbox(t, s, p.web)[0].Id.String()+"/approve", sbx, map[string]any{"match_code": *upBig.MatchCode}).
		ExpectError(t, 422, "insufficient_funds")
	if st := pollStepUp(t, s, p.web, upBig.Id.String()); st.Status != "declined" {
		t.Fatalf("step-up = %+v", st)
	}

	// A second call replaces the key on the same device.
	var again api.SandboxApprovingApp
	s.Post(t, "/api/v1/sandbox/users/"+p.userID+"/approving-app", sbx, map[string]any{}).ExpectStatus(t, 201).Decode(t, &again)
	if again.DeviceId != app.DeviceId || again.CredentialId == app.CredentialId {
		t.Fatalf("replacement = %+v, first = %+v", again, app)
	}
	p.approveWithSandbox(t, s, p.pay(t, s, "1.00").ApprovalRequestId.String())

	// A person whose only app is a phone has no sandbox app to answer with.
	other := newPerson(t, s, "grace@other.test")
	otherUp := expectStepUp(t, gated(t, s, other.web))
	s.Post(t, "/api/v1/sandbox/challenges/"+inbox(t, s, other.app)[0].Id.String()+"/approve", sbx, map[string]any{"match_code": *otherUp.MatchCode}).
		ExpectError(t, 422, "approval_credential_required")
}

// approveWithSandbox asks to approve and answers the bound challenge with
// the sandbox approving app.
func (p *payer) approveWithSandbox(t *testing.T, s *apitest.Server, approvalID string) {
	t.Helper()
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+approvalID+"/approve", p.web, nil))
	for _, c := range inbox(t, s, p.web) {
		if c.ApprovalId != nil && c.ApprovalId.String() == approvalID {
			var done api.Challenge
			s.Post(t, "/api/v1/sandbox/challenges/"+c.Id.String()+"/approve", sbx, map[string]any{"match_code": *up.MatchCode}).
				ExpectStatus(t, 200).Decode(t, &done)
			if done.Status != "consumed" {
				t.Fatalf("challenge = %+v, want consumed", done)
			}
			return
		}
	}
	t.Fatal("no payment-approval challenge in the inbox")
}

func TestSandboxApprovingAppIsAbsentInLive(t *testing.T) {
	live := apitest.Start(t, "STRONGROOM_ENV=live", "STRONGROOM_SANDBOX_TOKEN=", "STRONGROOM_CLOCK=system",
		"STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	live.Post(t, "/api/v1/sandbox/users/0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f/approving-app", sbx, nil).ExpectError(t, 404, "not_found")
	live.Post(t, "/api/v1/sandbox/challenges/0190f5c2-8a70-7c11-8d2e-5a6b7c8d9e0f/approve", sbx, map[string]any{"match_code": "123"}).
		ExpectError(t, 404, "not_found")
}

// An approver who loses the role (or the membership) between approve and the
// phone's answer records nothing: the answer is forbidden, the challenge and
// its step-up end declined, and the payment keeps waiting with its money.
func TestAnApproverWhoLostTheRoleRecordsNothing(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	p := newPayer(t, s, "ada@acme.test", "100.00")
	pay := p.pay(t, s, "60.00")
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+pay.ApprovalRequestId.String()+"/approve", p.web, nil))
	pending := inbox(t, s, p.app)
	if len(pending) != 1 {
		t.Fatalf("challenges = %+v, want one", pending)
	}

	d := apitest.OpenDatabase(t, dsn)
	err := d.Tx(context.Background(), func(tx *db.Tx) error {
		_, err := tx.ExecContext(context.Background(), `UPDATE memberships SET role = 'member' WHERE user_id = $1`, p.userID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	approve(t, s, p.person, pending[0], *up.MatchCode).ExpectError(t, 403, "forbidden")
	if st := pollStepUp(t, s, p.web, up.Id.String()); st.Status != "declined" || st.Active {
		t.Fatalf("step-up = %+v, want declined", st)
	}
	if st := getPayment(t, s, p.web, pay.Id.String()).Status; st != "awaiting_approval" {
		t.Fatalf("payment is %s", st)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "100.00" || pe != "0.00" {
		t.Fatalf("available %s pending %s, want 100.00 and 0.00", av, pe)
	}
}
