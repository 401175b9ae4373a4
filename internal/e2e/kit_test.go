package e2e_test

// The test kit: what tests of every area share (starting the parallel run,
// the clock, people and their sessions, organizations, deposits and
// payments, step-ups and approvals, lists and common assertions), one
// function per need. Each area's own vocabulary (bills, cards, expenses,
// invoices, files) lives beside its tests, in bills_common_test.go,
// cards_test.go, expenses_test.go, invoicing_helpers_test.go and files_test.go.

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// e2eParallel is how many tests run at once unless -parallel says otherwise.
// Each test runs its own server on its own database and spends most of its
// time waiting on the database, the network or a child process, so more
// tests than cores keep the cores busy. On PostgreSQL each server holds up
// to about twenty connections, well within the test cluster's limit.
const e2eParallel = "8"

func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		_ = flag.Set("test.parallel", e2eParallel)
	}
	os.Exit(m.Run())
}

// The server, its clock and the generated client.

const sbx = apitest.SandboxToken

const password = "correct horse battery"

// answer is an answer of the generated client: its status, and the
// HTTPResponse and Body fields every one of them has.
type answer interface{ StatusCode() int }

// ok fails t unless the generated call r, err answered status, and returns r.
func ok[R answer](t testing.TB, status int) func(r R, err error) R {
	return func(r R, err error) R {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != status {
			v := reflect.ValueOf(r).Elem()
			resp, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
			body, _ := v.FieldByName("Body").Interface().([]byte)
			t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, r.StatusCode(), status, body)
		}
		return r
	}
}

// uuidOf parses the UUID of an identifier kept as a string.
func uuidOf(t testing.TB, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("%q is not a UUID", s)
	}
	return u
}

// sandboxClient is a client with the sandbox token.
func sandboxClient(t testing.TB, s *apitest.Server) *client.Client {
	return s.Client(t, sbx)
}

func ptr[T any](v T) *T { return &v }

// str shows an optional value: a string, a UUID or a date.
func str[T any](s *T) string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprint(*s)
}

// decodeMessage decodes the whole realtime message m (its envelope and
// data) into v, one of the client's messages such as
// client.BillEventAppendedMessage.
func decodeMessage(t testing.TB, m apitest.Message, v any) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("decode %s message: %v\n%s", m.Type, err, m.Data)
	}
}

// now reads the server's manual clock.
func now(t *testing.T, s *apitest.Server) time.Time {
	t.Helper()
	return advance(t, s, 0)
}

func advance(t *testing.T, s *apitest.Server, d time.Duration) time.Time {
	t.Helper()
	r := ok[*api.SandboxAdvanceClockResponse](t, 200)(sandboxClient(t, s).API().SandboxAdvanceClockWithResponse(t.Context(), nil,
		api.SandboxClockAdvance{Seconds: int(d.Seconds())}))
	return r.JSON200.Now
}

// advanceTo moves the manual clock forward to at.
func advanceTo(t *testing.T, s *apitest.Server, at time.Time) time.Time {
	t.Helper()
	n := now(t, s)
	if at.Before(n) {
		t.Fatalf("cannot move the clock back from %v to %v", n, at)
	}
	return advance(t, s, at.Sub(n))
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

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

// People: organizations, sign-in, sessions.

// createOrg creates an organization (Acme Ltd) in the sandbox whose owner,
// Ada, has email, the test password and an authenticator app.
func createOrg(t *testing.T, s *apitest.Server, email string) api.SandboxCreatedOrganization {
	t.Helper()
	r := ok[*api.SandboxCreateOrganizationResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxCreateOrganizationWithResponse(t.Context(), nil,
		api.SandboxNewOrganization{Name: "Acme Ltd", Owner: api.SandboxPerson{Email: email, Password: ptr(password), FirstName: ptr("Ada")}}))
	return *r.JSON201
}

// addUser adds a person with the test password to the organization in the
// sandbox and returns their id and authenticator secret ("" without one).
func addUser(t *testing.T, s *apitest.Server, orgID, email, role string, withTOTP bool) (string, string) {
	t.Helper()
	r := ok[*api.SandboxAddOrganizationUserResponse](t, 201)(sandboxClient(t, s).API().SandboxAddOrganizationUserWithResponse(t.Context(), uuidOf(t, orgID), nil,
		api.SandboxNewMember{Email: email, Password: ptr(password), Role: api.Role(role), Totp: &withTOTP}))
	if r.JSON201.TotpSecret == nil {
		return r.JSON201.UserId.String(), ""
	}
	return r.JSON201.UserId.String(), *r.JSON201.TotpSecret
}

// code is the authenticator app's code for secret at the server's current time.
func code(t *testing.T, s *apitest.Server, secret string) string {
	t.Helper()
	c, err := totp.GenerateCode(secret, now(t, s))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func signIn(t *testing.T, s *apitest.Server, body map[string]any) api.SignInResult {
	t.Helper()
	var out api.SignInResult
	s.Post(t, "/api/v1/auth/sign-in", "", body).ExpectStatus(t, 200).Decode(t, &out)
	return out
}

func mfa(t *testing.T, s *apitest.Server, challenge, code string) api.SignInResult {
	t.Helper()
	var out api.SignInResult
	s.Post(t, "/api/v1/auth/mfa", "", map[string]any{"challenge_token": challenge, "code": code}).ExpectStatus(t, 200).Decode(t, &out)
	return out
}

// signInFully signs email in with password and code through the client
// and returns the session token.
func signInFully(t *testing.T, s *apitest.Server, email, secret string) string {
	t.Helper()
	c := s.Client(t, "")
	step1, err := c.SignIn(t.Context(), client.Credentials{Email: email, Password: password})
	if err != nil {
		t.Fatal(err)
	}
	if step1.Status != api.SignInStatusMfaRequired {
		t.Fatalf("sign-in status %q, want mfa_required", step1.Status)
	}
	step2, err := c.CompleteMFA(t.Context(), *step1.ChallengeToken, code(t, s, secret))
	if err != nil {
		t.Fatal(err)
	}
	if step2.Status != api.SignInStatusAuthenticated || step2.Token == nil || c.Token() != *step2.Token {
		t.Fatalf("mfa status %q, want authenticated", step2.Status)
	}
	// The next code must come from a later time step: each code works once.
	advance(t, s, 30*time.Second)
	return *step2.Token
}

// appSignIn signs email in from the iOS app (password, then the
// authenticator's code) and returns the session and its device. deviceField
// ("device_name" or "device_id", or "" for neither) names the device.
func appSignIn(t *testing.T, s *apitest.Server, email, secret, deviceField, device string) (token, deviceID string) {
	t.Helper()
	body := map[string]any{"email": email, "password": password, "platform": "ios"}
	if deviceField != "" {
		body[deviceField] = device
	}
	step1 := signIn(t, s, body)
	token = *mfa(t, s, *step1.ChallengeToken, code(t, s, secret)).Token
	advance(t, s, 30*time.Second) // the code's time step is spent
	return token, step1.DeviceId.String()
}

// person is one staff member with a web session and an app session, as a
// person at a desk with their phone.
type person struct {
	email, secret, userID string
	web, app              string
	appDevice             string
	key                   ed25519.PrivateKey
}

// newPerson creates an organization whose owner is signed in on the web and
// in the app, with the app's approval credential registered.
func newPerson(t *testing.T, s *apitest.Server, email string) *person {
	t.Helper()
	org := createOrg(t, s, email)
	p := &person{email: email, secret: *org.Owner.TotpSecret, userID: org.Owner.UserId.String()}
	p.web = signInFully(t, s, email, p.secret)
	p.app, p.appDevice = appSignIn(t, s, email, p.secret, "device_name", "iPhone")
	pub, key := newAppKey()
	p.key = key
	registerAppKey(t, s, p.app, p.secret, pub)
	return p
}

// signInAgain opens new web and app sessions (after the old ones ended),
// the app on the same device so its approval credential still applies.
func (p *person) signInAgain(t *testing.T, s *apitest.Server) {
	t.Helper()
	p.web = signInFully(t, s, p.email, p.secret)
	p.app, _ = appSignIn(t, s, p.email, p.secret, "device_id", p.appDevice)
}

// client is p's web session as a client (its step-ups fail with the challenge).
func (p *person) client(t *testing.T, s *apitest.Server) *client.Client { return s.Client(t, p.web) }

// newAppKey is an approving app's key pair: the public half as base64url.
func newAppKey() (string, ed25519.PrivateKey) {
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	return base64.RawURLEncoding.EncodeToString(pub), key
}

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

// orgOf returns the id of the (first) organization p belongs to.
func orgOf(t *testing.T, s *apitest.Server, p *person) string {
	t.Helper()
	me, err := p.client(t, s).Me(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return me.Memberships[0].OrganizationId.String()
}

// cardUser is a signed-in staff member of a card test's organization.
type cardUser struct {
	id, email, secret, token string
}

// cardOrg is an organization with an owner, an admin and two members, each
// signed in with an authenticator. Alice has a first and a last name; Bob has none.
type cardOrg struct {
	id                       string
	owner, admin, alice, bob cardUser
}

func newCardOrg(t *testing.T, s *apitest.Server, domain string) *cardOrg {
	t.Helper()
	o := newCardOwner(t, s, domain)
	o.admin = addCardUser(t, s, o.id, "admin@"+domain, "admin", "", "")
	o.alice = addCardUser(t, s, o.id, "alice@"+domain, "member", "Alice", "Liddell")
	o.bob = addCardUser(t, s, o.id, "bob@"+domain, "member", "", "")
	return o
}

// newCardOwner is an organization whose owner alone is signed in.
func newCardOwner(t *testing.T, s *apitest.Server, domain string) *cardOrg {
	t.Helper()
	org := createOrg(t, s, "owner@"+domain)
	o := &cardOrg{id: org.Organization.Id.String()}
	o.owner = cardUser{id: org.Owner.UserId.String(), email: "owner@" + domain, secret: *org.Owner.TotpSecret}
	o.owner.token = signInFully(t, s, o.owner.email, o.owner.secret)
	return o
}

// addCardUser adds a staff member with an authenticator and signs them in.
func addCardUser(t *testing.T, s *apitest.Server, org, email, role, first, last string) cardUser {
	t.Helper()
	member := api.SandboxNewMember{Email: email, Password: ptr(password), Role: api.Role(role), Totp: ptr(true)}
	if first != "" {
		member.FirstName, member.LastName = &first, &last
	}
	r := ok[*api.SandboxAddOrganizationUserResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxAddOrganizationUserWithResponse(t.Context(),
		uuidOf(t, org), nil, member))
	u := cardUser{id: r.JSON201.UserId.String(), email: email, secret: *r.JSON201.TotpSecret}
	u.token = signInFully(t, s, email, u.secret)
	return u
}

// signInAgain opens a new session for u (after the old one idled out).
func (u *cardUser) signInAgain(t *testing.T, s *apitest.Server) {
	t.Helper()
	u.token = signInFully(t, s, u.email, u.secret)
}

// Money: deposits, balances, payments.

// deposit funds org with amt of currency in the sandbox.
func deposit(t *testing.T, s *apitest.Server, org, currency, amt string) {
	t.Helper()
	ok[*api.SandboxDepositResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxDepositWithResponse(t.Context(), uuidOf(t, org), nil,
		api.SandboxDeposit{Currency: currency, Amount: amt}))
}

// balance is the available and pending balance of org in currency.
func balance(t *testing.T, s *apitest.Server, token, org, currency string) (string, string) {
	t.Helper()
	r := ok[*api.GetBalancesResponse](t, 200)(s.Client(t, token).API().GetBalancesWithResponse(t.Context(), uuidOf(t, org), nil))
	for _, x := range r.JSON200.Data {
		if x.Currency == currency {
			return x.Available, x.Pending
		}
	}
	return "", ""
}

// moneyOf is an amount in a currency, as the API writes it.
func moneyOf(amount, currency string) api.Money {
	return api.Money{Amount: amount, Currency: currency}
}

// payer is an owner with a funded balance and a supplier to pay.
type payer struct {
	*person
	org, contact string
}

// newPayer is an owner signed in on the web and in the approving app, with
// deposit EUR ("" for none) and a supplier to pay.
func newPayer(t *testing.T, s *apitest.Server, email, amount string) *payer {
	t.Helper()
	p := &payer{person: newPerson(t, s, email)}
	p.org = orgOf(t, s, p.person)
	p.fund(t, s, amount)
	return p
}

// newPayerWithoutApp is an owner with a funded balance and a supplier, signed
// in on the web only: no approving app.
func newPayerWithoutApp(t *testing.T, s *apitest.Server, email, amount string) *payer {
	t.Helper()
	org := createOrg(t, s, email)
	p := &payer{person: &person{email: email, secret: *org.Owner.TotpSecret, userID: org.Owner.UserId.String()}, org: org.Organization.Id.String()}
	p.web = signInFully(t, s, email, p.secret)
	p.fund(t, s, amount)
	return p
}

// quote asks for a quote of amt EUR sent to p's supplier.
func (p *payer) quote(t *testing.T, s *apitest.Server, amt string) api.Quote {
	t.Helper()
	r := ok[*api.CreatePaymentQuoteResponse](t, 201)(p.client(t, s).API().CreatePaymentQuoteWithResponse(t.Context(), nil, api.PaymentQuoteRequest{
		OrganizationId: uuidOf(t, p.org), Rail: api.RailFiat, PaymentContactId: uuidOf(t, p.contact),
		SourceCurrency: "EUR", Amount: amt, AmountSide: api.PaymentQuoteRequestAmountSideSend}))
	return *r.JSON201
}

func executeBody(quoteID string) map[string]any {
	return map[string]any{"quote_id": quoteID, "payout_reason": "PYR002", "statement_description": "Invoice 2026-118"}
}

// pay executes a payment of amt EUR to p's supplier; it awaits approval.
func (p *payer) pay(t *testing.T, s *apitest.Server, amt string) api.Payment {
	t.Helper()
	pay, err := p.client(t, s).ExecutePayment(t.Context(), api.PaymentExecution{QuoteId: p.quote(t, s, amt).Id,
		PayoutReason: ptr("PYR002"), StatementDescription: ptr("Invoice 2026-118")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return *pay
}

// approveInApp asks to approve and answers the bound challenge in the app;
// it returns the challenge the app satisfied.
func (p *payer) approveInApp(t *testing.T, s *apitest.Server, approvalID string) api.Challenge {
	t.Helper()
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+approvalID+"/approve", p.web, nil))
	for _, c := range inbox(t, s, p.app) {
		if c.ApprovalId != nil && c.ApprovalId.String() == approvalID && c.Status == "pending" {
			approve(t, s, p.person, c, *up.MatchCode).ExpectStatus(t, 200)
			return c
		}
	}
	t.Fatal("no payment-approval challenge in the app inbox")
	return api.Challenge{}
}

func getPayment(t *testing.T, s *apitest.Server, token, id string) api.Payment {
	t.Helper()
	return *ok[*api.GetPaymentResponse](t, 200)(s.Client(t, token).API().GetPaymentWithResponse(t.Context(), uuidOf(t, id), nil)).JSON200
}

// outcome names an answer: the status and, for an error, its type.
func outcome(t *testing.T, r *apitest.Response) string {
	t.Helper()
	if r.Status < 300 {
		return fmt.Sprint(r.Status)
	}
	var e apitest.ErrorBody
	r.Decode(t, &e)
	return fmt.Sprintf("%d %s", r.Status, e.Error.Type)
}

// Step-up and approvals.

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

// stepUp answers the step-up challenge of a 403 in p's app, so p's web
// session can retry the gated call within the window.
func stepUp(t *testing.T, s *apitest.Server, p *person, r *apitest.Response) {
	t.Helper()
	up := expectStepUp(t, r)
	approveStepUpInApp(t, s, p, up.StepUpAuthenticationId.String(), *up.MatchCode)
}

// approveStepUpInApp approves, in p's app, the challenge of the step-up
// authentication id with the match code the web session showed.
func approveStepUpInApp(t *testing.T, s *apitest.Server, p *person, id, matchCode string) {
	t.Helper()
	for _, c := range inbox(t, s, p.app) {
		if c.StepUpAuthenticationId != nil && c.StepUpAuthenticationId.String() == id {
			approve(t, s, p, c, matchCode).ExpectStatus(t, 200)
			return
		}
	}
	t.Fatal("the step-up challenge is not in the app inbox")
}

// stepUpByCode answers the step-up a gated call asked for with an
// authenticator code on the same session, so the session can make gated
// calls; a call that went through needs none.
func stepUpByCode(t *testing.T, s *apitest.Server, token, secret string, r *apitest.Response) {
	t.Helper()
	if r.Status != http.StatusForbidden {
		r.ExpectStatus(t, http.StatusCreated)
		return
	}
	up := expectStepUp(t, r)
	s.Post(t, "/api/v1/auth/step-up/complete", token, map[string]any{"sudo_session_id": up.Id.String(), "method": "totp", "code": code(t, s, secret)}).
		ExpectStatus(t, http.StatusOK)
	advance(t, s, 30*time.Second) // the code's time step is spent
}

func completeStepUp(t *testing.T, s *apitest.Server, token, sudoID, method, c string) *apitest.Response {
	t.Helper()
	return s.Post(t, "/api/v1/auth/step-up/complete", token, map[string]any{"sudo_session_id": sudoID, "method": method, "code": c})
}

// inbox is the first page of challenges waiting in the app of token.
func inbox(t *testing.T, s *apitest.Server, token string) []api.Challenge {
	t.Helper()
	return ok[*api.ListChallengesResponse](t, 200)(s.Client(t, token).API().ListChallengesWithResponse(t.Context(), nil)).JSON200.Data
}

func approve(t *testing.T, s *apitest.Server, p *person, c api.Challenge, matchCode string) *apitest.Response {
	t.Helper()
	body := map[string]any{"signature": p.sign(t, c)}
	if matchCode != "" {
		body["match_code"] = matchCode
	}
	return s.Post(t, "/api/v1/me/challenges/"+c.Id.String()+"/approve", p.app, body)
}

// otherDigits is as many digits as code, each of them different.
func otherDigits(code string) string {
	b := []byte(code)
	for i := range b {
		b[i] = '0' + (b[i]-'0'+1)%10
	}
	return string(b)
}

// The sandbox outbox and stored rows.

// outboxOf is the first hundred messages of kind the sandbox outbox holds for the user.
func outboxOf(t *testing.T, s *apitest.Server, userID, kind string) []api.OutboxMessage {
	t.Helper()
	return ok[*api.SandboxListOutboxResponse](t, 200)(sandboxClient(t, s).API().SandboxListOutboxWithResponse(t.Context(),
		&api.SandboxListOutboxParams{Limit: ptr(100), Kind: ptr(api.OutboxMessageKind(kind)), UserId: ptr(uuidOf(t, userID))})).JSON200.Data
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

// assertNoSecrets fails t if any of secrets appears anywhere in s's logs.
func assertNoSecrets(t *testing.T, s *apitest.Server, secrets ...string) {
	t.Helper()
	logs := s.Logs.String()
	for _, secret := range secrets {
		if secret != "" && strings.Contains(logs, secret) {
			t.Errorf("the logs contain a secret (%d characters)", len(secret))
		}
	}
}

// Paths, lists and pages.

func orgPath(org, rest string) string { return "/api/v1/organizations/" + org + rest }

// idsOf lists the ids of xs, in order.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

// walk reads every page of a list, fetching each with its query (query,
// then the next cursor added), and returns the ids in order.
func walk(t *testing.T, query string, fetch func(q string) (ids []string, hasMore bool, next *string)) []string {
	t.Helper()
	var all []string
	q := query
	for pages := 0; ; pages++ {
		ids, more, next := fetch(q)
		all = append(all, ids...)
		if !more {
			if next != nil {
				t.Fatalf("last page (%s) carries a next_cursor", q)
			}
			return all
		}
		if next == nil || len(ids) == 0 || pages > 60 {
			t.Fatalf("page %d of %s: has_more with %d items and cursor %v", pages, query, len(ids), next)
		}
		q = query + "&cursor=" + url.QueryEscape(*next)
	}
}

func expectIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got == nil {
		got = []string{}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %v, want %v", what, got, want)
	}
}

// feedRows reads the whole transactions feed of org (one page is enough here).
func feedRows(t *testing.T, s *apitest.Server, token, org string) []api.Transaction {
	t.Helper()
	feed := ok[*api.ListTransactionsResponse](t, 200)(s.Client(t, token).API().ListTransactionsWithResponse(t.Context(), uuidOf(t, org),
		&api.ListTransactionsParams{Limit: ptr(100)})).JSON200
	if feed.HasMore {
		t.Fatal("the feed has more than one page")
	}
	return feed.Data
}

// Assertions on answers.

// expectInvalidField fails t unless r is 400 invalid_request naming field,
// or one of the fields given.
func expectInvalidField(t *testing.T, r *apitest.Response, field string, or ...string) {
	t.Helper()
	e := r.ExpectError(t, http.StatusBadRequest, "invalid_request")
	for _, d := range e.Error.Details {
		if d.Field == field || slices.Contains(or, d.Field) {
			return
		}
	}
	t.Fatalf("details %+v do not name %q", e.Error.Details, field)
}

// expectInvalidFields fails unless r is 400 invalid_request whose details
// name exactly fields (in any order).
func expectInvalidFields(t *testing.T, r *apitest.Response, fields ...string) {
	t.Helper()
	e := r.ExpectError(t, 400, "invalid_request")
	var got []string
	for _, d := range e.Error.Details {
		got = append(got, d.Field)
	}
	slices.Sort(got)
	want := slices.Clone(fields)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("details name %v, want %v; body %s", got, want, r.Body)
	}
}

func expectUnavailable(t *testing.T, r *apitest.Response) {
	t.Helper()
	r.ExpectError(t, http.StatusForbidden, "organization_unavailable")
}

// answersAtOnce sends n requests at the same moment, each on a connection
// of its own, and counts the answers by what key makes of them.
func answersAtOnce(t *testing.T, s *apitest.Server, n int, req func(i int) apitest.Request, key func(i int, r *apitest.Response) string) map[string]int {
	t.Helper()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out = map[string]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq := req(i)
			rq.Header = oneShot
			k := key(i, s.Do(t, rq))
			mu.Lock()
			out[k]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// byStatus keys an answer by its status code.
func byStatus(_ int, r *apitest.Response) string { return fmt.Sprint(r.Status) }
