package e2e_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// Onboarding (docs/api.md, Onboarding): questionnaire options, the
// subscription acknowledgement, and identity checks with the sandbox
// provider's token, page and helper.

func init() {
	// The sandbox identity-check page answers HTML; let the response
	// validation read it as text, so its status and headers are checked
	// against the document too.
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
}

// onboardingOrg is an organization whose people sign in with a password
// alone (no authenticator), so tests need not move the clock to sign in.
type onboardingOrg struct {
	id                     string
	owner, admin, member   string // session tokens
	ownerID, adminID, memb string // user ids
}

func newOnboardingOrg(t *testing.T, s *apitest.Server, domain string, body map[string]any) onboardingOrg {
	t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	body["name"] = "Acme Ltd"
	body["owner"] = map[string]any{"email": "owner@" + domain, "password": password, "totp": false}
	var created api.SandboxCreatedOrganization
	s.Post(t, "/api/v1/sandbox/organizations", sbx, body).ExpectStatus(t, http.StatusCreated).Decode(t, &created)
	o := onboardingOrg{id: created.Organization.Id.String(), ownerID: created.Owner.UserId.String()}
	o.owner = passwordSignIn(t, s, "owner@"+domain)
	o.adminID, _ = addUser(t, s, o.id, "admin@"+domain, "admin", false)
	o.admin = passwordSignIn(t, s, "admin@"+domain)
	o.memb, _ = addUser(t, s, o.id, "member@"+domain, "member", false)
	o.member = passwordSignIn(t, s, "member@"+domain)
	return o
}

func passwordSignIn(t *testing.T, s *apitest.Server, email string) string {
	t.Helper()
	res := signIn(t, s, map[string]any{"email": email, "password": password})
	if res.Status != "authenticated" || res.Token == nil {
		t.Fatalf("sign-in of %s = %+v", email, res)
	}
	return *res.Token
}

func TestQuestionnaireOptionIDsAreStableAcrossServers(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	first := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	o := newOnboardingOrg(t, first, "options.test", nil)
	const path = "/api/v1/onboarding/questionnaire-options/personal"
	before := first.Get(t, path, o.member).ExpectStatus(t, http.StatusOK)
	var opts api.PersonalQuestionnaireOptions
	before.Decode(t, &opts)
	for list, options := range map[string]api.QuestionnaireOptions{"monthly_volumes": opts.MonthlyVolumes, "occupations": opts.Occupations,
		"purposes": opts.Purposes, "source_of_funds": opts.SourceOfFunds} {
		if len(options) == 0 {
			t.Errorf("%s is empty", list)
		}
		for _, opt := range options {
			if opt.Id.Version() != 5 {
				t.Errorf("%s/%s id %q is not a derived (v5) UUID", list, opt.Value, opt.Id)
			}
		}
	}
	if err := first.Stop(); err != nil {
		t.Fatal(err)
	}

	// Another instance, started afresh on the same database, answers the same ids.
	second := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	after := second.Get(t, path, passwordSignIn(t, second, "member@options.test")).ExpectStatus(t, http.StatusOK)
	if !bytes.Equal(before.Body, after.Body) {
		t.Errorf("options differ between servers:\n%s\n%s", before.Body, after.Body)
	}
	second.Get(t, path, "").ExpectError(t, http.StatusUnauthorized, "not_authenticated")
}

func ackPath(org string) string {
	return "/api/v1/organizations/" + org + "/onboarding/subscription-acknowledgement"
}

func TestSubscriptionAcknowledgementRules(t *testing.T) {
	s := apitest.Start(t)
	o := newOnboardingOrg(t, s, "ack.test", nil)
	other := newOnboardingOrg(t, s, "other.test", map[string]any{"requires_subscription_acknowledgement": false})

	var a api.SubscriptionAcknowledgement
	s.Get(t, ackPath(o.id), o.owner).ExpectStatus(t, http.StatusOK).Decode(t, &a)
	if a.OrganizationId.String() != o.id || !a.RequiresSubscriptionAcknowledgement || a.SubscriptionAcknowledgedAt != nil {
		t.Fatalf("new organization: %+v", a)
	}
	s.Get(t, ackPath(other.id), other.admin).ExpectStatus(t, http.StatusOK).Decode(t, &a)
	if a.RequiresSubscriptionAcknowledgement {
		t.Errorf("created with requires_subscription_acknowledgement false: %+v", a)
	}

	// A member may neither read nor acknowledge; outsiders learn nothing.
	s.Get(t, ackPath(o.id), o.member).ExpectError(t, http.StatusForbidden, "forbidden")
	s.Post(t, ackPath(o.id), o.member, nil).ExpectError(t, http.StatusForbidden, "forbidden")
	s.Post(t, ackPath(o.id), other.owner, nil).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, ackPath(o.id), other.owner).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, ackPath(uuid.NewString()), o.owner, nil).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, ackPath(o.id), o.owner, map[string]any{"plan": "pro"}).ExpectError(t, http.StatusBadRequest, "invalid_request")

	at := now(t, s)
	s.Post(t, ackPath(o.id), o.admin, nil).ExpectStatus(t, http.StatusOK).Decode(t, &a)
	if a.SubscriptionAcknowledgedAt == nil || !a.SubscriptionAcknowledgedAt.Equal(at) {
		t.Fatalf("first acknowledgement: %+v, want at %s", a, at)
	}
	// The first acknowledgement wins.
	advance(t, s, 20*time.Minute) // within the sessions' idle time
	s.Post(t, ackPath(o.id), o.owner, nil).ExpectStatus(t, http.StatusOK).Decode(t, &a)
	if !a.SubscriptionAcknowledgedAt.Equal(at) {
		t.Errorf("second acknowledgement moved the time to %s", a.SubscriptionAcknowledgedAt)
	}
	s.Get(t, ackPath(o.id), o.admin).ExpectStatus(t, http.StatusOK).Decode(t, &a)
	if !a.SubscriptionAcknowledgedAt.Equal(at) || !a.RequiresSubscriptionAcknowledgement {
		t.Errorf("read back: %+v", a)
	}

	// A paused organization records nothing, but can be read.
	s.Post(t, "/api/v1/sandbox/organizations/"+other.id+"/status", sbx, map[string]any{"status": "paused"}).ExpectStatus(t, http.StatusOK)
	s.Post(t, ackPath(other.id), other.owner, nil).ExpectError(t, http.StatusForbidden, "organization_unavailable")
	s.Get(t, ackPath(other.id), other.owner).ExpectStatus(t, http.StatusOK)
}

func TestConcurrentAcknowledgementsKeepOneTime(t *testing.T) {
	s := apitest.Start(t)
	o := newOnboardingOrg(t, s, "race.test", nil)
	const n = 8
	answers := make([]*apitest.Response, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if i%2 == 1 {
				advance(t, s, time.Second) // the acknowledgements need not read one time
			}
			bearer := o.owner
			if i%2 == 0 {
				bearer = o.admin
			}
			answers[i] = s.Post(t, ackPath(o.id), bearer, nil)
		})
	}
	wg.Wait()
	var first *time.Time
	for _, r := range answers {
		var a api.SubscriptionAcknowledgement
		r.ExpectStatus(t, http.StatusOK).Decode(t, &a)
		if a.SubscriptionAcknowledgedAt == nil {
			t.Fatalf("no time in %s", r.Body)
		}
		if first == nil {
			first = a.SubscriptionAcknowledgedAt
		} else if !first.Equal(*a.SubscriptionAcknowledgedAt) {
			t.Errorf("acknowledged at %s and at %s, want one time", first, a.SubscriptionAcknowledgedAt)
		}
	}
}

func meCheck(t *testing.T, s *apitest.Server, token string) api.IdentityCheck {
	t.Helper()
	me, err := s.Client(t, token).Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return me.IdentityCheck
}

func kycToken(t *testing.T, s *apitest.Server, bearer string, body any) api.IdentityCheckToken {
	t.Helper()
	var tok api.IdentityCheckToken
	s.Post(t, "/api/v1/kyc/access-token", bearer, body).ExpectStatus(t, http.StatusOK).Decode(t, &tok)
	if tok.WebsdkLink != "/sandbox/kyc?token="+url.QueryEscape(tok.AccessToken) {
		t.Fatalf("websdk_link %q does not open the sandbox page with the token", tok.WebsdkLink)
	}
	return tok
}

// tokenClaims verifies a sandbox token with the key the test server derives
// from its root secret, and returns its claims.
func tokenClaims(t *testing.T, token string) (jwt.Claims, map[string]any) {
	t.Helper()
	keys, err := keyring.New([]byte("end-to-end-test-root-secret-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil {
		t.Fatalf("token is not a signed JWT: %v", err)
	}
	var std jwt.Claims
	all := map[string]any{}
	if err := parsed.Claims(keys.Key("kyc/sandbox-token"), &std, &all); err != nil {
		t.Fatalf("token signature: %v", err)
	}
	return std, all
}

func TestIdentityCheckToken(t *testing.T) {
	s := apitest.Start(t)
	o := newOnboardingOrg(t, s, "kyc.test", nil)
	stranger := newOnboardingOrg(t, s, "stranger.test", nil)

	if c := meCheck(t, s, o.member); c.Status != "not_started" || c.UpdatedAt != nil {
		t.Fatalf("before: %+v", c)
	}
	at := now(t, s)
	tok := kycToken(t, s, o.member, map[string]any{"organization_id": o.id})
	std, all := tokenClaims(t, tok.AccessToken)
	if std.Subject != o.memb || all["org"] != o.id || !std.Audience.Contains("strongroom-sandbox-kyc") || std.Issuer != "strongroom" {
		t.Errorf("claims %+v %v", std, all)
	}
	if std.Expiry == nil || !std.Expiry.Time().Equal(at.Add(10*time.Minute)) || !std.IssuedAt.Time().Equal(at) {
		t.Errorf("token times: issued %v, expires %v; want %s + 10 minutes", std.IssuedAt, std.Expiry, at)
	}
	if err := std.ValidateWithLeeway(jwt.Expected{Time: at.Add(9 * time.Minute)}, 0); err != nil {
		t.Errorf("token not valid 9 minutes on: %v", err)
	}
	if c := meCheck(t, s, o.member); c.Status != "pending" || c.UpdatedAt == nil || !c.UpdatedAt.Equal(at) {
		t.Errorf("after a token: %+v, want pending at %s", c, at)
	}

	// Without a body (or an empty one) the token names no organization.
	advance(t, s, time.Minute)
	bare := kycToken(t, s, o.owner, nil)
	if _, all := tokenClaims(t, bare.AccessToken); all["org"] != nil || all["sub"] != o.ownerID {
		t.Errorf("without an organization: %v", all)
	}
	kycToken(t, s, o.owner, map[string]any{})

	// Only an organization the caller belongs to.
	s.Post(t, "/api/v1/kyc/access-token", o.member, map[string]any{"organization_id": stranger.id}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, "/api/v1/kyc/access-token", o.member, map[string]any{"organization_id": uuid.NewString()}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, "/api/v1/kyc/access-token", o.member, map[string]any{"organization_id": "acme"}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, "/api/v1/kyc/access-token", o.member, map[string]any{"user_id": o.ownerID}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, "/api/v1/kyc/access-token", "", nil).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	if c := meCheck(t, s, stranger.owner); c.Status != "not_started" {
		t.Errorf("a refused call started a check: %+v", c)
	}
	if strings.Contains(s.Logs.String(), tok.AccessToken) || strings.Contains(s.Logs.String(), bare.AccessToken) {
		t.Error("a token reached the log")
	}
}

// page opens the sandbox page (GET) or posts its form (POST).
func page(t *testing.T, s *apitest.Server, method, token, status string) *apitest.Response {
	t.Helper()
	if method == http.MethodGet {
		return s.Get(t, "/sandbox/kyc?token="+url.QueryEscape(token), "")
	}
	form := url.Values{"token": {token}, "status": {status}}
	return s.Do(t, apitest.Request{Method: http.MethodPost, Path: "/sandbox/kyc", Body: form.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}})
}

func expectPage(t *testing.T, r *apitest.Response, status int, contains ...string) {
	t.Helper()
	r.ExpectStatus(t, status)
	if ct := r.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	csp := r.Header.Get("Content-Security-Policy")
	if !strings.HasPrefix(csp, "default-src 'none'") || strings.Contains(csp, "script") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	// The one inline style is the one the policy admits by its hash.
	body := string(r.Body)
	_, style, _ := strings.Cut(body, "<style>")
	style, _, _ = strings.Cut(style, "</style>")
	sum := sha256.Sum256([]byte(style))
	if style == "" || !strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Errorf("the page's style %q is not the one %q admits", style, csp)
	}
	if r.Header.Get("Referrer-Policy") != "no-referrer" || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", r.Header)
	}
	for _, want := range contains {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q:\n%s", want, body)
		}
	}
	for _, never := range []string{"<script", "http://", "https://", "src="} {
		if strings.Contains(body, never) {
			t.Errorf("page holds %q", never)
		}
	}
}

func TestSandboxIdentityCheckPage(t *testing.T) {
	s := apitest.Start(t)
	o := newOnboardingOrg(t, s, "page.test", nil)

	tok := kycToken(t, s, o.member, map[string]any{"organization_id": o.id})
	expectPage(t, page(t, s, http.MethodGet, tok.AccessToken, ""), http.StatusOK, o.memb, o.id, ">pending<", `value="approved"`, `value="rejected"`)
	at := advance(t, s, time.Minute)
	expectPage(t, page(t, s, http.MethodPost, tok.AccessToken, "approved"), http.StatusOK, "The check is now approved.")
	if c := meCheck(t, s, o.member); c.Status != "approved" || !c.UpdatedAt.Equal(at) {
		t.Errorf("after approve: %+v", c)
	}
	// The link has decided: it cannot decide again, and the page offers no more choices.
	advance(t, s, time.Minute)
	for _, again := range []string{"rejected", "approved"} {
		expectPage(t, page(t, s, http.MethodPost, tok.AccessToken, again), http.StatusConflict, "already decided the check")
	}
	if c := meCheck(t, s, o.member); c.Status != "approved" || !c.UpdatedAt.Equal(at) {
		t.Errorf("a spent link changed the check: %+v", c)
	}
	spent := page(t, s, http.MethodGet, tok.AccessToken, "")
	expectPage(t, spent, http.StatusOK, ">approved<", "cannot decide again")
	if strings.Contains(string(spent.Body), "<form") {
		t.Error("the page of a spent link still offers a decision")
	}

	// Rejected on the page with a token asked later; the check is not reopened by it.
	advance(t, s, time.Minute)
	second := kycToken(t, s, o.member, nil)
	if c := meCheck(t, s, o.member); c.Status != "approved" {
		t.Errorf("a new token reopened the check: %+v", c)
	}
	expectPage(t, page(t, s, http.MethodPost, second.AccessToken, "rejected"), http.StatusOK, "The check is now rejected.")
	if c := meCheck(t, s, o.member); c.Status != "rejected" {
		t.Errorf("after reject: %+v", c)
	}

	// Altered, missing, unknown status: refused, nothing changes.
	// forged keeps the signature and changes the claims (another subject).
	parts := strings.Split(second.AccessToken, ".")
	_, all := tokenClaims(t, second.AccessToken)
	forged := parts[0] + "." + b64(t, map[string]any{"sub": o.ownerID, "aud": "strongroom-sandbox-kyc", "iss": "strongroom",
		"exp": all["exp"], "iat": all["iat"], "nbf": all["nbf"]}) + "." + parts[2]
	for _, bad := range []string{forged, second.AccessToken + "x", parts[0] + "." + parts[1] + ".", "not-a-token"} {
		expectPage(t, page(t, s, http.MethodGet, bad, ""), http.StatusForbidden, "not valid or has expired")
		expectPage(t, page(t, s, http.MethodPost, bad, "approved"), http.StatusForbidden, "not valid or has expired")
	}
	expectPage(t, s.Get(t, "/sandbox/kyc", ""), http.StatusBadRequest, "not valid")
	expectPage(t, page(t, s, http.MethodPost, second.AccessToken, "pending"), http.StatusBadRequest, "Choose approve or reject.")
	if c := meCheck(t, s, o.member); c.Status != "rejected" {
		t.Errorf("a refused form changed the check: %+v", c)
	}
	if c := meCheck(t, s, o.owner); c.Status != "not_started" {
		t.Errorf("a forged token reached the owner's check: %+v", c)
	}

	// Expiry by the server's clock: valid until 10 minutes after issue.
	fresh := kycToken(t, s, o.admin, nil)
	advance(t, s, 10*time.Minute-time.Second)
	expectPage(t, page(t, s, http.MethodGet, fresh.AccessToken, ""), http.StatusOK, o.adminID)
	advance(t, s, time.Second)
	expectPage(t, page(t, s, http.MethodGet, fresh.AccessToken, ""), http.StatusForbidden, "not valid or has expired")
	expectPage(t, page(t, s, http.MethodPost, fresh.AccessToken, "approved"), http.StatusForbidden, "not valid or has expired")
	if c := meCheck(t, s, o.admin); c.Status != "pending" {
		t.Errorf("an expired token decided the check: %+v", c)
	}
}

// b64 encodes claims as a JWT segment.
func b64(t *testing.T, claims map[string]any) string {
	t.Helper()
	sig, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: bytes.Repeat([]byte("f"), 32)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := jwt.Signed(sig).Claims(claims).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(forged, ".")[1]
}

func TestSandboxIdentityCheckHelper(t *testing.T) {
	s := apitest.Start(t)
	o := newOnboardingOrg(t, s, "helper.test", nil)
	at := now(t, s)
	var c api.IdentityCheck
	s.Post(t, "/api/v1/sandbox/kyc/"+o.memb, sbx, map[string]any{"status": "rejected"}).ExpectStatus(t, http.StatusOK).Decode(t, &c)
	if c.Status != "rejected" || c.UpdatedAt == nil || !c.UpdatedAt.Equal(at) {
		t.Errorf("helper answered %+v", c)
	}
	advance(t, s, time.Minute)
	s.Post(t, "/api/v1/sandbox/kyc/"+o.memb, sbx, map[string]any{"status": "approved"}).ExpectStatus(t, http.StatusOK)
	if got := meCheck(t, s, o.member); got.Status != "approved" || !got.UpdatedAt.Equal(at.Add(time.Minute)) {
		t.Errorf("/me shows %+v", got)
	}
	s.Post(t, "/api/v1/sandbox/kyc/"+o.memb, sbx, map[string]any{"status": "pending"}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, "/api/v1/sandbox/kyc/"+o.memb, sbx, map[string]any{}).ExpectError(t, http.StatusBadRequest, "invalid_request")
	s.Post(t, "/api/v1/sandbox/kyc/"+uuid.NewString(), sbx, map[string]any{"status": "approved"}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, "/api/v1/sandbox/kyc/"+o.memb, o.owner, map[string]any{"status": "approved"}).ExpectError(t, http.StatusNotFound, "not_found")
}

func TestIdentityCheckInLive(t *testing.T) {
	dsn := apitest.NewDatabase(t)
	// People are made through the sandbox of a test server on the same
	// database and root secret; live has no sandbox.
	seed := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
	o := newOnboardingOrg(t, seed, "live.test", nil)
	tok := kycToken(t, seed, o.owner, nil)
	if err := seed.Stop(); err != nil {
		t.Fatal(err)
	}

	live := apitest.Start(t, "STRONGROOM_DATABASE="+dsn, "STRONGROOM_ENV=live", "STRONGROOM_SANDBOX_TOKEN=", "STRONGROOM_CLOCK=system",
		"STRONGROOM_PARTNER_SECRET=partner-secret-for-tests")
	member := passwordSignIn(t, live, "member@live.test")
	live.Post(t, "/api/v1/kyc/access-token", member, nil).ExpectError(t, http.StatusServiceUnavailable, "service_unavailable")
	live.Post(t, "/api/v1/kyc/access-token", member, map[string]any{"organization_id": o.id}).ExpectError(t, http.StatusServiceUnavailable, "service_unavailable")
	if c := meCheck(t, live, member); c.Status != "not_started" {
		t.Errorf("live /me: %+v", c)
	}
	// The sandbox page and helper do not exist, even for a token the sandbox signed.
	live.Get(t, "/sandbox/kyc?token="+url.QueryEscape(tok.AccessToken), "").ExpectError(t, http.StatusNotFound, "not_found")
	live.Do(t, apitest.Request{Method: http.MethodPost, Path: "/sandbox/kyc", Body: url.Values{"token": {tok.AccessToken}, "status": {"approved"}}.Encode(),
		Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}).ExpectError(t, http.StatusNotFound, "not_found")
	live.Post(t, "/api/v1/sandbox/kyc/"+o.memb, sbx, map[string]any{"status": "approved"}).ExpectError(t, http.StatusNotFound, "not_found")
	// The rest of onboarding works in live.
	live.Get(t, "/api/v1/onboarding/questionnaire-options/personal", member).ExpectStatus(t, http.StatusOK)
	live.Post(t, ackPath(o.id), passwordSignIn(t, live, "owner@live.test"), nil).ExpectStatus(t, http.StatusOK)
}
