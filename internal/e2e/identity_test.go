package e2e_test

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func TestSignInWrongEmailOrPassword(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	createOrg(t, s, "ada@acme.test")
	wrong := s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "not it"}).
		ExpectError(t, 401, "invalid_credentials")
	unknown := s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "nobody@acme.test", "password": "not it"}).
		ExpectError(t, 401, "invalid_credentials")
	if wrong.Error.Message != unknown.Error.Message {
		t.Fatalf("unknown email and wrong password answer differently: %q vs %q", unknown.Error.Message, wrong.Error.Message)
	}
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test"}).ExpectError(t, 400, "invalid_request")
}

func TestSignInWithAuthenticatorCode(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "Ada@Acme.test")
	step1 := signIn(t, s, map[string]any{"email": "ada@ACME.test", "password": password})
	if step1.Status != "mfa_required" || step1.ChallengeToken == nil || step1.Token != nil || step1.DeviceId == nil {
		t.Fatalf("step 1 = %+v, want mfa_required with a challenge token and a device id", step1)
	}
	step2 := mfa(t, s, *step1.ChallengeToken, code(t, s, *org.Owner.TotpSecret))
	if step2.Status != "authenticated" || step2.Token == nil || step2.User == nil || step2.User.Id != org.Owner.UserId || !step2.User.TotpEnabled {
		t.Fatalf("step 2 = %+v", step2)
	}
	var me api.Me
	s.Get(t, "/api/v1/me", *step2.Token).ExpectStatus(t, 200).Decode(t, &me)
	if len(me.Memberships) != 1 || me.Memberships[0].OrganizationId != org.Organization.Id || me.Memberships[0].Role != "owner" || me.Session.DeviceId != *step1.DeviceId {
		t.Fatalf("me = %+v", me)
	}
}

func TestSignInWithoutAuthenticatorIsPasswordAlone(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "owner@acme.test")
	addUser(t, s, org.Organization.Id.String(), "plain@acme.test", "member", false)
	res := signIn(t, s, map[string]any{"email": "plain@acme.test", "password": password})
	if res.Status != "authenticated" || res.Token == nil || res.User == nil || res.User.TotpEnabled {
		t.Fatalf("sign-in = %+v, want authenticated by password alone", res)
	}
	s.Get(t, "/api/v1/me", *res.Token).ExpectStatus(t, 200)
}

func TestSignInRequiresAuthenticatorSetupWhenTheOrganizationDoes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	var org api.SandboxCreatedOrganization
	s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Strict Ltd", "requires_totp": true,
		"owner": map[string]any{"email": "boss@strict.test", "password": password},
	}).ExpectStatus(t, 201).Decode(t, &org)
	addUser(t, s, org.Organization.Id.String(), "new@strict.test", "member", false)

	res := signIn(t, s, map[string]any{"email": "new@strict.test", "password": password})
	if res.Status != "totp_setup_required" || res.ChallengeToken == nil || res.Token != nil {
		t.Fatalf("sign-in = %+v, want totp_setup_required", res)
	}
	var setup api.SignInTotpSetup
	s.Post(t, "/api/v1/auth/sign-in/totp/setup", "", map[string]any{"challenge_token": *res.ChallengeToken}).ExpectStatus(t, 200).Decode(t, &setup)
	if !strings.HasPrefix(setup.Uri, "otpauth://totp/") || !strings.Contains(setup.Uri, setup.SecretEncoded) {
		t.Fatalf("setup = %+v", setup)
	}
	// The challenge token cannot be used as an MFA challenge.
	if r := mfa(t, s, *res.ChallengeToken, code(t, s, setup.SecretEncoded)); r.Status == "authenticated" {
		t.Fatal("a setup challenge signed in through the MFA call")
	}
	var wrong api.SignInResult
	s.Post(t, "/api/v1/auth/sign-in/totp/activate", "", map[string]any{"challenge_token": *res.ChallengeToken, "code": "000000"}).
		ExpectStatus(t, 200).Decode(t, &wrong)
	if wrong.Status != "mfa_failed" {
		t.Fatalf("wrong activation code: %q, want mfa_failed", wrong.Status)
	}
	var done api.SignInResult
	s.Post(t, "/api/v1/auth/sign-in/totp/activate", "", map[string]any{"challenge_token": *res.ChallengeToken, "code": code(t, s, setup.SecretEncoded)}).
		ExpectStatus(t, 200).Decode(t, &done)
	if done.Status != "authenticated" || done.Token == nil || !done.User.TotpEnabled {
		t.Fatalf("activation = %+v", done)
	}
	// From now on the code is asked for at every sign-in.
	advance(t, s, 30*time.Second)
	signInFully(t, s, "new@strict.test", setup.SecretEncoded)
}

func TestWrongAndReusedCodes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret

	step1 := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	if r := mfa(t, s, *step1.ChallengeToken, "123456"); r.Status != "mfa_failed" && code(t, s, secret) != "123456" {
		t.Fatalf("wrong code: %q, want mfa_failed", r.Status)
	}
	good := code(t, s, secret)
	if r := mfa(t, s, *step1.ChallengeToken, good); r.Status != "authenticated" {
		t.Fatalf("retry with the right code on the same challenge: %q", r.Status)
	}
	// The same code (same time step) cannot sign in again, even on a new challenge.
	again := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	if r := mfa(t, s, *again.ChallengeToken, good); r.Status != "mfa_failed" {
		t.Fatalf("reused code: %q, want mfa_failed", r.Status)
	}
	// A spent challenge token is over.
	advance(t, s, 30*time.Second)
	if r := mfa(t, s, *step1.ChallengeToken, code(t, s, secret)); r.Status != "challenge_expired" {
		t.Fatalf("spent challenge: %q, want challenge_expired", r.Status)
	}
}

func TestFiveWrongCodesLockTheChallenge(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret
	step1 := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	right := code(t, s, secret)
	wrong := fmt.Sprintf("%06d", (mustAtoi(t, right)+1)%1000000)
	for i := range 5 {
		if r := mfa(t, s, *step1.ChallengeToken, wrong); r.Status != "mfa_failed" {
			t.Fatalf("wrong code %d: %q", i+1, r.Status)
		}
	}
	if r := mfa(t, s, *step1.ChallengeToken, right); r.Status != "mfa_failed" {
		t.Fatalf("right code after five wrong ones: %q, want mfa_failed", r.Status)
	}
	// A new sign-in starts afresh.
	fresh := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	if r := mfa(t, s, *fresh.ChallengeToken, right); r.Status != "authenticated" {
		t.Fatalf("new challenge: %q", r.Status)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestChallengeTokenLivesTenMinutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	step1 := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	advance(t, s, 10*time.Minute)
	if r := mfa(t, s, *step1.ChallengeToken, code(t, s, *org.Owner.TotpSecret)); r.Status != "challenge_expired" {
		t.Fatalf("after 10 minutes: %q, want challenge_expired", r.Status)
	}
	if r := mfa(t, s, "src_not-a-real-token", "123456"); r.Status != "challenge_expired" {
		t.Fatalf("unknown challenge token: %q, want challenge_expired", r.Status)
	}
	step1 = signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password})
	advance(t, s, 9*time.Minute+59*time.Second)
	if r := mfa(t, s, *step1.ChallengeToken, code(t, s, *org.Owner.TotpSecret)); r.Status != "authenticated" {
		t.Fatalf("just before 10 minutes: %q, want authenticated", r.Status)
	}
}

func TestSessionEndsAfterThirtyIdleMinutes(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	for range 3 {
		advance(t, s, 29*time.Minute)
		s.Get(t, "/api/v1/me", token).ExpectStatus(t, 200) // each use moves the idle end
	}
	advance(t, s, 30*time.Minute)
	e := s.Get(t, "/api/v1/me", token).ExpectError(t, 401, "not_authenticated")
	if strings.Contains(strings.ToLower(e.Error.Message), "idle") {
		t.Fatalf("the message reveals why: %q", e.Error.Message)
	}
	// Once ended, it stays ended.
	s.Get(t, "/api/v1/devices", token).ExpectError(t, 401, "not_authenticated")
}

func TestSessionEndsThirtyDaysAfterSignInHoweverUsed(t *testing.T) {
	t.Parallel()
	// Thirty days of use every 25 minutes is ~3,500 requests in a few real seconds.
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_ADDRESS=off", "STRONGROOM_RATE_LIMIT_CREDENTIAL=off")
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	var me api.Me
	s.Get(t, "/api/v1/me", token).ExpectStatus(t, 200).Decode(t, &me)
	// Use the session every 25 minutes until just before its absolute end
	// (advance answers the server's new time, so the loop asks for it once).
	for at := now(t, s); at.Add(25 * time.Minute).Before(me.Session.ExpiresAt); {
		at = advance(t, s, 25*time.Minute)
		s.Get(t, "/api/v1/me", token).ExpectStatus(t, 200)
	}
	advance(t, s, me.Session.ExpiresAt.Sub(now(t, s)))
	s.Get(t, "/api/v1/me", token).ExpectError(t, 401, "not_authenticated")
	if got := me.Session.ExpiresAt.Sub(now(t, s)); got != 0 {
		t.Fatalf("clock off by %v", got)
	}
}

func TestSignOut(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	s.Get(t, "/api/v1/me", token).ExpectStatus(t, 200) // the session is read, and kept
	first := s.Post(t, "/api/v1/auth/sign-out", token, nil).ExpectStatus(t, 200).JSON(t)
	s.Get(t, "/api/v1/me", token).ExpectError(t, 401, "not_authenticated")
	again := s.Post(t, "/api/v1/auth/sign-out", token, nil).ExpectStatus(t, 200).JSON(t)
	none := s.Post(t, "/api/v1/auth/sign-out", "", nil).ExpectStatus(t, 200).JSON(t)
	if first["message"] == "" || first["message"] != again["message"] || again["message"] != none["message"] {
		t.Fatalf("sign-out messages differ: %v %v %v", first, again, none)
	}
}

func TestDevicesAndNewDeviceNotices(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret
	first := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "device_name": "Laptop"})
	token := *mfa(t, s, *first.ChallengeToken, code(t, s, secret)).Token
	advance(t, s, 30*time.Second)

	// Reusing the device id records no new device and sends no notice.
	reuse := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "device_id": first.DeviceId.String()})
	if reuse.DeviceId.String() != first.DeviceId.String() {
		t.Fatalf("device_id not reused: %s vs %s", reuse.DeviceId.String(), first.DeviceId.String())
	}
	other := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "cli"})
	if other.DeviceId.String() == first.DeviceId.String() {
		t.Fatal("a sign-in without device_id reused a device")
	}
	var notices api.OutboxMessagePage
	s.Get(t, "/api/v1/sandbox/outbox?kind=new_device&user_id="+org.Owner.UserId.String(), sbx).ExpectStatus(t, 200).Decode(t, &notices)
	if len(notices.Data) != 2 || !strings.Contains(notices.Data[1].Body, "Laptop") {
		t.Fatalf("new-device notices = %+v, want two, the first naming Laptop", notices.Data)
	}

	var devices api.DevicePage
	s.Get(t, "/api/v1/devices", token).ExpectStatus(t, 200).Decode(t, &devices)
	if len(devices.Data) != 2 || devices.HasMore {
		t.Fatalf("devices = %+v", devices)
	}
	var this int
	for _, d := range devices.Data {
		if d.ThisDevice {
			this++
			if d.Id.String() != first.DeviceId.String() || d.Name == nil || *d.Name != "Laptop" || d.Platform != "web" {
				t.Fatalf("this device = %+v", d)
			}
		}
	}
	if this != 1 {
		t.Fatalf("%d devices marked this_device", this)
	}
	s.Get(t, "/api/v1/devices?limit=1", token).ExpectStatus(t, 200)
	s.Get(t, "/api/v1/devices?limit=0", token).ExpectError(t, 400, "invalid_request")
}

func TestDeviceTrustOnlyForTheAppsAndSkipsTheCode(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret
	for _, platform := range []string{"web", "cli", ""} {
		body := map[string]any{"email": "ada@acme.test", "password": password, "remember_me": true}
		if platform != "" {
			body["platform"] = platform
		}
		e := s.Post(t, "/api/v1/auth/sign-in", "", body).ExpectError(t, 400, "invalid_request")
		if e.Error.Details[0].Field != "remember_me" {
			t.Fatalf("details = %+v", e.Error.Details)
		}
	}
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": password, "trust_tokens": []string{"x"}}).
		ExpectError(t, 400, "invalid_request")

	phone := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "ios", "remember_me": true, "trust_transport": "body"})
	done := mfa(t, s, *phone.ChallengeToken, code(t, s, secret))
	if done.Status != "authenticated" || done.TrustToken == nil {
		t.Fatalf("remembered sign-in = %+v, want a trust token", done)
	}
	trusted := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "ios",
		"device_id": phone.DeviceId.String(), "trust_tokens": []string{*done.TrustToken}})
	if trusted.Status != "authenticated" || trusted.Token == nil {
		t.Fatalf("trusted device sign-in = %+v, want authenticated without a code", trusted)
	}
	// The trust token is bound to its device and lasts 30 days.
	elsewhere := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "android",
		"trust_tokens": []string{*done.TrustToken}})
	if elsewhere.Status != "mfa_required" {
		t.Fatalf("trust token on another device: %q", elsewhere.Status)
	}
	advance(t, s, 30*24*time.Hour)
	late := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "ios",
		"device_id": phone.DeviceId.String(), "trust_tokens": []string{*done.TrustToken}})
	if late.Status != "mfa_required" {
		t.Fatalf("trust token after 30 days: %q", late.Status)
	}
}

func TestSignedInAuthenticatorSetup(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "owner@acme.test")
	userID, _ := addUser(t, s, org.Organization.Id.String(), "plain@acme.test", "member", false)
	token := *signIn(t, s, map[string]any{"email": "plain@acme.test", "password": password}).Token

	var setup api.AuthenticatedTotpSetup
	s.Post(t, "/api/v1/auth/totp/setup", token, nil).ExpectStatus(t, 200).Decode(t, &setup)
	if setup.Enabled || setup.SecretEncoded == "" {
		t.Fatalf("setup = %+v", setup)
	}
	var msgs api.OutboxMessagePage
	s.Get(t, "/api/v1/sandbox/outbox?kind=totp_activation_code&user_id="+userID, sbx).ExpectStatus(t, 200).Decode(t, &msgs)
	if len(msgs.Data) != 1 || msgs.Data[0].Code == nil || msgs.Data[0].Channel != "messaging_app" {
		t.Fatalf("messaging code = %+v", msgs.Data)
	}
	messaging := *msgs.Data[0].Code

	s.Post(t, "/api/v1/auth/totp/activate", token, map[string]any{"code": code(t, s, setup.SecretEncoded), "messaging_code": "000000"}).
		ExpectError(t, 422, "invalid_code")
	s.Post(t, "/api/v1/auth/totp/activate", token, map[string]any{"code": "000000", "messaging_code": messaging}).
		ExpectError(t, 422, "invalid_code")
	s.Post(t, "/api/v1/auth/totp/activate", token, map[string]any{"code": code(t, s, setup.SecretEncoded)}).
		ExpectError(t, 400, "invalid_request")
	advance(t, s, 30*time.Second)
	var active api.AuthenticatedTotpSetup
	s.Post(t, "/api/v1/auth/totp/activate", token, map[string]any{"code": code(t, s, setup.SecretEncoded), "messaging_code": messaging}).
		ExpectStatus(t, 200).Decode(t, &active)
	if !active.Enabled {
		t.Fatal("activation did not enable the authenticator")
	}
	advance(t, s, 30*time.Second)
	signInFully(t, s, "plain@acme.test", setup.SecretEncoded)
}

func TestBurstOfBadSignInsIsRateLimited(t *testing.T) {
	t.Parallel()
	// Three an hour: a token comes back every 20 minutes, so a slow run
	// (the race detector on a busy machine) cannot earn one back mid-burst.
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_SIGN_IN=3/1h")
	createOrg(t, s, "ada@acme.test")
	for i := range 3 {
		s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": fmt.Sprintf("guess%d@acme.test", i), "password": "wrong"}).
			ExpectError(t, 401, "invalid_credentials")
	}
	r := s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": password})
	r.ExpectError(t, http.StatusTooManyRequests, "rate_limited")
	if secs, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || secs < 1 || secs > 20*60 {
		t.Fatalf("Retry-After = %q, want whole seconds up to the 20 minutes a token takes", r.Header.Get("Retry-After"))
	}
	// Other routes are not under the sign-in limit.
	s.Get(t, "/healthz", "").ExpectStatus(t, 200)
}

func TestSignInAttemptsPerEmailAreLimited(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=2/1h", "STRONGROOM_RATE_LIMIT_SIGN_IN=off")
	createOrg(t, s, "ada@acme.test")
	for range 2 {
		s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "wrong"}).ExpectError(t, 401, "invalid_credentials")
	}
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ADA@acme.test", "password": password}).ExpectError(t, 429, "rate_limited")
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "other@acme.test", "password": "wrong"}).ExpectError(t, 401, "invalid_credentials")
}

func TestRequestsPerAddressAreLimited(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_ADDRESS=5/1m")
	for range 5 {
		s.Get(t, "/healthz", "").ExpectStatus(t, 200)
	}
	s.Get(t, "/healthz", "").ExpectError(t, 429, "rate_limited")
}

func TestSessionTokenIsRequired(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	s.Get(t, "/api/v1/me", "").ExpectError(t, 401, "not_authenticated")
	s.Get(t, "/api/v1/me", "srs_forged").ExpectError(t, 401, "not_authenticated")
	s.Get(t, "/api/v1/me", sbx).ExpectError(t, 401, "not_authenticated")
}

func TestLogsHoldNoSecretsOfASignInFlow(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	secret := *org.Owner.TotpSecret
	step1 := signIn(t, s, map[string]any{"email": "ada@acme.test", "password": password, "platform": "ios", "remember_me": true})
	c := code(t, s, secret)
	done := mfa(t, s, *step1.ChallengeToken, c)
	s.Get(t, "/api/v1/me", *done.Token).ExpectStatus(t, 200)
	s.Post(t, "/api/v1/auth/sign-out", *done.Token, nil).ExpectStatus(t, 200)
	assertNoSecrets(t, s, password, secret, c, *step1.ChallengeToken, *done.Token, *done.TrustToken, sbx)
}

func TestRequestsPerCredentialAreLimited(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_RATE_LIMIT_CREDENTIAL=3/1m")
	org := createOrg(t, s, "ada@acme.test")
	a := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	b := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	for range 3 {
		s.Get(t, "/api/v1/me", a).ExpectStatus(t, 200)
	}
	r := s.Get(t, "/api/v1/me", a)
	r.ExpectError(t, 429, "rate_limited")
	if r.Header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
	// Another session of the same person has its own bucket.
	s.Get(t, "/api/v1/me", b).ExpectStatus(t, 200)
}

// TestSignOutReachesEveryInstance: a session signed out on one instance
// is refused by another that has just served it (and so keeps it), as soon
// as the sign-out's notification arrives: realtimeEnd here, "at once" in
// the docs.
func TestSignOutReachesEveryInstance(t *testing.T) {
	t.Parallel()
	one, two := twoInstances(t)
	org := createOrg(t, one, "ada@instances.test")
	token := signInFully(t, one, "ada@instances.test", *org.Owner.TotpSecret)
	two.Get(t, "/api/v1/me", token).ExpectStatus(t, http.StatusOK)
	two.Get(t, "/api/v1/me", token).ExpectStatus(t, http.StatusOK)

	one.Post(t, "/api/v1/auth/sign-out", token, nil).ExpectStatus(t, http.StatusOK)
	one.Get(t, "/api/v1/me", token).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	for deadline := time.Now().Add(realtimeEnd); ; time.Sleep(20 * time.Millisecond) {
		r := two.Get(t, "/api/v1/me", token)
		if r.Status == http.StatusUnauthorized {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other instance still serves the signed-out session after %v (status %d)", realtimeEnd, r.Status)
		}
	}
}
