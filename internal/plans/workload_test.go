package plans_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/apitest"
)

const (
	sbx      = apitest.SandboxToken
	password = "plan test password"
)

// owner is a sandbox organization's owner, signed in on the web and in the
// approving app.
type owner struct {
	s          *apitest.Server
	org, email string
	secret     string
	web, app   string
	key        ed25519.PrivateKey
	contact    string
}

func (o *owner) path(p string) string { return "/api/v1/organizations/" + o.org + p }

// code moves the manual clock to the next 30-second step (a code works once
// per step) and returns the authenticator's code for it.
func (o *owner) code(t *testing.T) string {
	t.Helper()
	var clk struct {
		Now time.Time `json:"now"`
	}
	o.s.Post(t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": 30}).ExpectStatus(t, 200).Decode(t, &clk)
	c, err := totp.GenerateCode(o.secret, clk.Now)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func (o *owner) signIn(t *testing.T, platform string) string {
	t.Helper()
	var step1 struct {
		Status         string `json:"status"`
		ChallengeToken string `json:"challenge_token"`
	}
	o.s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": o.email, "password": password, "platform": platform}).
		ExpectStatus(t, 200).Decode(t, &step1)
	var step2 struct {
		Status string `json:"status"`
		Token  string `json:"token"`
	}
	o.s.Post(t, "/api/v1/auth/mfa", "", map[string]any{"challenge_token": step1.ChallengeToken, "code": o.code(t)}).
		ExpectStatus(t, 200).Decode(t, &step2)
	if step2.Status != "authenticated" {
		t.Fatalf("mfa: %s", step2.Status)
	}
	return step2.Token
}

type stepUpError struct {
	Error struct {
		StepUp struct {
			ID        string  `json:"id"`
			MatchCode *string `json:"match_code"`
		} `json:"step_up"`
	} `json:"error"`
}

func expectStepUp(t *testing.T, r *apitest.Response) stepUpError {
	t.Helper()
	r.ExpectStatus(t, http.StatusForbidden)
	var e stepUpError
	r.Decode(t, &e)
	if e.Error.StepUp.ID == "" {
		t.Fatalf("want a step-up, got %s", r.Body)
	}
	return e
}

// gated makes a step-up-gated POST: the step-up is answered with the
// authenticator code, then the call is made again.
func (o *owner) gated(t *testing.T, token, path string, body any) *apitest.Response {
	t.Helper()
	up := expectStepUp(t, o.s.Post(t, path, token, body))
	var st struct {
		Status string `json:"status"`
	}
	o.s.Get(t, "/api/v1/auth/step-up/"+up.Error.StepUp.ID, token).ExpectStatus(t, 200).Decode(t, &st)
	o.s.Post(t, "/api/v1/auth/step-up/complete", token, map[string]any{
		"sudo_session_id": up.Error.StepUp.ID, "method": "totp", "code": o.code(t)}).ExpectStatus(t, 200)
	return o.s.Post(t, path, token, body)
}

// newOwner makes an organization with money, signs its owner in on the web
// and in the app, and registers the app's approval credential.
func newOwner(t *testing.T, s *apitest.Server, email string) *owner {
	t.Helper()
	var org struct {
		Organization struct{ ID string } `json:"organization"`
		Owner        struct {
			TOTPSecret string `json:"totp_secret"`
		} `json:"owner"`
	}
	s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Plan Ltd", "owner": map[string]any{"email": email, "password": password, "first_name": "Ada"},
	}).ExpectStatus(t, 201).Decode(t, &org)
	o := &owner{s: s, org: org.Organization.ID, email: email, secret: org.Owner.TOTPSecret}
	for _, cur := range []string{"EUR", "USD"} {
		s.Post(t, "/api/v1/sandbox/organizations/"+o.org+"/deposits", sbx, map[string]any{"currency": cur, "amount": "100000.00"}).ExpectStatus(t, 201)
	}
	o.web = o.signIn(t, "web")
	o.app = o.signIn(t, "ios")
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	o.key = key
	o.gated(t, o.app, "/api/v1/me/approval-credential", map[string]any{
		"public_key": base64.RawURLEncoding.EncodeToString(pub), "label": "iPhone"}).ExpectStatus(t, 201)
	return o
}

// approveInApp asks to approve approvalID on the web (a step-up bound to
// the approval) and answers it from the app inbox with a signature.
func (o *owner) approveInApp(t *testing.T, approvalID string) {
	t.Helper()
	up := expectStepUp(t, o.s.Post(t, "/api/v1/approvals/"+approvalID+"/approve", o.web, nil))
	var inbox struct {
		Data []struct {
			ID             string  `json:"id"`
			Status         string  `json:"status"`
			ApprovalID     *string `json:"approval_id"`
			SigningPayload string  `json:"signing_payload"`
		} `json:"data"`
	}
	o.s.Get(t, "/api/v1/me/challenges?limit=100", o.app).ExpectStatus(t, 200).Decode(t, &inbox)
	for _, c := range inbox.Data {
		if c.ApprovalID == nil || *c.ApprovalID != approvalID || c.Status != "pending" {
			continue
		}
		payload, err := base64.RawURLEncoding.DecodeString(c.SigningPayload)
		if err != nil {
			t.Fatal(err)
		}
		body := map[string]any{"signature": base64.RawURLEncoding.EncodeToString(ed25519.Sign(o.key, payload))}
		if up.Error.StepUp.MatchCode != nil {
			body["match_code"] = *up.Error.StepUp.MatchCode
		}
		o.s.Post(t, "/api/v1/me/challenges/"+c.ID+"/approve", o.app, body).ExpectStatus(t, 200)
		return
	}
	t.Fatalf("the approval's challenge is not in the app inbox")
}

func (o *owner) quote(t *testing.T, amount string) string {
	t.Helper()
	var q struct{ ID string }
	o.s.Post(t, "/api/v1/payments/preflight", o.web, map[string]any{"organization_id": o.org, "rail": "fiat",
		"payment_contact_id": o.contact, "source_currency": "EUR", "amount": amount, "amount_side": "send"}).ExpectStatus(t, 201).Decode(t, &q)
	return q.ID
}

func executeBody(quoteID string) map[string]any {
	return map[string]any{"quote_id": quoteID, "payout_reason": "PYR002", "statement_description": "Plan test"}
}

func get(t *testing.T, s *apitest.Server, path, bearer string) {
	t.Helper()
	s.Get(t, path, bearer).ExpectStatus(t, 200)
}

// workload drives the hot paths of the API once or twice each, so that
// every query they run is seen (a second pass reaches the queries a first
// row does not, such as a next page or an already-known device).
func workload(t *testing.T, s *apitest.Server) {
	o := newOwner(t, s, "ada@plan.test")
	other := newOwner(t, s, "bob@plan.test")
	_ = other

	// API key: created behind a step-up, then used for the currency-account list.
	var key struct {
		ID     string `json:"id"`
		Secret string `json:"secret"`
	}
	o.gated(t, o.web, o.path("/api-keys"), map[string]any{"name": "plan", "role": "member", "scopes": []string{"balances:read"}}).
		ExpectStatus(t, 201).Decode(t, &key)
	for range 2 {
		get(t, s, o.path("/multi-currency-accounts"), key.Secret)
	}
	get(t, s, o.path("/api-keys"), o.web)

	// Payment contacts.
	var contact struct{ ID string }
	s.Post(t, o.path("/payment-contacts"), o.web, map[string]any{
		"name": "Müller Maschinenbau GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201).Decode(t, &contact)
	o.contact = contact.ID
	get(t, s, o.path("/payment-contacts"), o.web)
	get(t, s, "/api/v1/payment-contacts/"+contact.ID, o.web)
	get(t, s, o.path("/payments/config"), o.web)

	// The realtime channel tails the domain events while the money moves.
	stream := s.Events(t, o.path("/realtime"), o.web, nil)
	defer stream.Close()

	// Payments: quote, execute, approve (a step-up answered in the app).
	for i := range 3 {
		var pay struct {
			ID                string `json:"id"`
			ApprovalRequestID string `json:"approval_request_id"`
		}
		s.Do(t, apitest.Request{Method: "POST", Path: "/api/v1/payments/execute", Bearer: o.web, Body: executeBody(o.quote(t, "10.00")),
			Header: map[string]string{"Idempotency-Key": "plan-" + string(rune('a'+i))}}).ExpectStatus(t, 201).Decode(t, &pay)
		o.approveInApp(t, pay.ApprovalRequestID)
		get(t, s, "/api/v1/payments/"+pay.ID, o.web)
		if i == 0 {
			s.Post(t, "/api/v1/sandbox/payments/"+pay.ID+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)
		}
	}
	// A payment cancelled, and one rejected.
	var cancelled struct{ ID string }
	s.Post(t, "/api/v1/payments/execute", o.web, executeBody(o.quote(t, "1.00"))).ExpectStatus(t, 201).Decode(t, &cancelled)
	s.Post(t, "/api/v1/payments/"+cancelled.ID+"/cancel", o.web, nil)
	var rejected struct {
		ApprovalRequestID string `json:"approval_request_id"`
	}
	s.Post(t, "/api/v1/payments/execute", o.web, executeBody(o.quote(t, "1.00"))).ExpectStatus(t, 201).Decode(t, &rejected)
	s.Post(t, "/api/v1/approvals/"+rejected.ApprovalRequestID+"/reject", o.web, map[string]any{"reason": "no"})

	// A batch of two payments, approved once.
	var batch struct {
		ID                string `json:"id"`
		ApprovalRequestID string `json:"approval_request_id"`
	}
	s.Post(t, "/api/v1/payment-batches", o.web, map[string]any{"organization_id": o.org,
		"payments": []any{executeBody(o.quote(t, "2.00")), executeBody(o.quote(t, "3.00"))}}).ExpectStatus(t, 201).Decode(t, &batch)
	o.approveInApp(t, batch.ApprovalRequestID)
	get(t, s, "/api/v1/payment-batches/"+batch.ID, o.web)
	get(t, s, o.path("/approvals"), o.web)
	// The payments list: a page, a second page, and filtered by status.
	var payments struct {
		NextCursor *string `json:"next_cursor"`
	}
	s.Get(t, o.path("/payments?limit=2"), o.web).ExpectStatus(t, 200).Decode(t, &payments)
	if payments.NextCursor != nil {
		get(t, s, o.path("/payments?limit=2&cursor="+*payments.NextCursor), o.web)
	}
	get(t, s, o.path("/payments?status=completed"), o.web)
	var processing struct {
		NextCursor *string `json:"next_cursor"`
	}
	s.Get(t, o.path("/payments?status=processing&limit=1"), o.web).ExpectStatus(t, 200).Decode(t, &processing)
	if processing.NextCursor != nil {
		get(t, s, o.path("/payments?status=processing&limit=1&cursor="+*processing.NextCursor), o.web)
	}

	// The channel saw the changes; a reconnection resumes after the last one seen.
	first := stream.Next(t, 10*time.Second)
	stream.Close()
	again := s.Events(t, o.path("/realtime"), o.web, map[string]string{"Last-Event-ID": first.EventID})
	again.Next(t, 10*time.Second)
	again.Close()

	// Cards: issued through the sandbox, authorizations through the sandbox.
	var card struct{ ID string }
	s.Post(t, "/api/v1/sandbox/organizations/"+o.org+"/cards", sbx, map[string]any{"monthly_limit": 100000}).ExpectStatus(t, 201).Decode(t, &card)
	for range 3 {
		s.Post(t, "/api/v1/sandbox/cards/"+card.ID+"/authorizations", sbx, map[string]any{
			"amount": "1.50", "currency": "USD", "merchant": "Plan Shop", "channel": "online"}).ExpectStatus(t, 200)
	}
	get(t, s, o.path("/cards"), o.web)
	get(t, s, "/api/v1/cards/"+card.ID, o.web)

	// The feed, balances and insights, with a second page.
	var feed struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	s.Get(t, o.path("/transactions?limit=2"), o.web).ExpectStatus(t, 200).Decode(t, &feed)
	if feed.NextCursor != nil {
		get(t, s, o.path("/transactions?limit=2&cursor="+*feed.NextCursor), o.web)
	}
	if len(feed.Data) > 0 {
		get(t, s, o.path("/transactions/"+feed.Data[0].ID), o.web)
	}
	get(t, s, o.path("/transactions?currency=EUR"), o.web)
	get(t, s, o.path("/balances"), o.web)
	get(t, s, o.path("/insights"), o.web)
	// Statements: a year up to today (its rows), and a year without rows.
	today := time.Now().UTC()
	get(t, s, o.path("/statements?currency=EUR&format=csv&from="+today.AddDate(0, 0, -365).Format(time.DateOnly)+"&to="+today.Format(time.DateOnly)), o.web)
	get(t, s, o.path("/statements?currency=EUR&from=2020-01-01&to=2020-12-31"), o.web)

	// The events: a page, filtered pages, a second page and one event.
	var events struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
		NextCursor *string `json:"next_cursor"`
	}
	s.Get(t, o.path("/events?limit=2"), o.web).ExpectStatus(t, 200).Decode(t, &events)
	if events.NextCursor != nil {
		get(t, s, o.path("/events?limit=2&cursor="+*events.NextCursor), o.web)
	}
	if len(events.Data) > 0 {
		get(t, s, o.path("/events/"+events.Data[0].ID), o.web)
	}
	get(t, s, o.path("/events?type=payment.*&type=transaction.created&occurred_from=2000-01-01T00:00:00Z&occurred_to=2100-01-01T00:00:00Z"), o.web)

	// Bills, expenses and invoices.
	get(t, s, o.path("/bills"), o.web)
	var expense struct{ ID string }
	s.Post(t, o.path("/expenses"), o.web, map[string]any{}).ExpectStatus(t, 201).Decode(t, &expense)
	get(t, s, "/api/v1/expenses/"+expense.ID, o.web)
	get(t, s, o.path("/expenses"), o.web)
	var billing struct{ ID string }
	s.Post(t, o.path("/billing-contacts"), o.web, map[string]any{"company_name": "Customer SA", "emails": []string{"billing@customer.example"}}).
		ExpectStatus(t, 201).Decode(t, &billing)
	s.Post(t, o.path("/invoices"), o.web, map[string]any{"billing_contact_id": billing.ID, "currency": "EUR", "issue_date": "2026-01-10",
		"due_date": "2026-02-10", "line_items": []any{map[string]any{"description": "Work", "price": "100.00", "quantity": "1", "tax_percentage": "20"}}}).
		ExpectStatus(t, 201)
	get(t, s, o.path("/invoices"), o.web)
	get(t, s, o.path("/billing-contacts"), o.web)

	// Who am I, devices, the step-up exit, sign-out.
	get(t, s, "/api/v1/me", o.web)
	get(t, s, "/api/v1/devices", o.web)
	get(t, s, "/api/v1/me/challenges", o.app)
	var outbox json.RawMessage
	s.Get(t, "/api/v1/sandbox/outbox", sbx).ExpectStatus(t, 200).Decode(t, &outbox)
	s.Post(t, "/api/v1/auth/sign-out", o.web, nil)
}
