package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// badText is a string no field accepts: a NUL (sent as the escape \u0000,
// which JSON allows and PostgreSQL refuses in text) or bytes that are not
// UTF-8 (which encoding/json would silently turn into U+FFFD).
type badText struct {
	name string
	raw  string // what replaces the marker in the encoded JSON body
}

var badTexts = []badText{{"NUL", `Ada \u0000`}, {"invalid UTF-8", "Ada \xff\xfe"}}

// textMarker stands for the bad string while a body is encoded.
const textMarker = "\u2603marker\u2603"

// withBadText encodes body and puts bad where the marker is: raw bytes,
// since encoding/json cannot write invalid UTF-8.
func withBadText(t *testing.T, body any, bad badText) []byte {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), textMarker) {
		t.Fatalf("no marker in %s", raw)
	}
	return []byte(strings.ReplaceAll(string(raw), textMarker, bad.raw))
}

// expectInvalidField fails t unless r is 400 invalid_request naming field.
func expectInvalidField(t *testing.T, r *apitest.Response, field string) {
	t.Helper()
	e := r.ExpectError(t, http.StatusBadRequest, "invalid_request")
	for _, d := range e.Error.Details {
		if d.Field == field {
			return
		}
	}
	t.Fatalf("details %+v do not name %q", e.Error.Details, field)
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

// TestBadTextNeverReachesTheDatabase sends a NUL and invalid UTF-8 in each
// string field where PostgreSQL answered 500 (the text reached an INSERT or
// a lookup), in an otherwise valid request: each is 400 invalid_request
// naming the field, on both engines.
func TestBadTextNeverReachesTheDatabase(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	// The web session passes step-up once, so the gated createApiKey reaches its insert.
	keyBody := map[string]any{"name": "Treasury sync", "role": "member", "scopes": []string{"balances:read"}}
	stepUpByCode(t, s, p.web, p.secret, s.Post(t, "/api/v1/organizations/"+p.org+"/api-keys", p.web, keyBody))
	// A second phone session, past step-up, to register an approval credential on.
	phone := signIn(t, s, map[string]any{"email": p.email, "password": password, "platform": "android", "device_name": "Pixel"})
	phoneToken := *mfa(t, s, *phone.ChallengeToken, code(t, s, p.secret)).Token
	advance(t, s, 30*time.Second)
	pub, _ := newAppKey()
	stepUpByCode(t, s, phoneToken, p.secret, s.Post(t, "/api/v1/me/approval-credential", phoneToken, map[string]any{"public_key": pub, "label": "Pixel"}))
	pending := p.pay(t, s, "10.00")

	people := 0
	email := func(name string) string { // a new address each time, so no case meets an earlier one's user
		people++
		return fmt.Sprintf("%s%d@acme.test", name, people)
	}
	for _, tc := range []struct {
		field, path, bearer string
		body                func() any // holds textMarker where the bad text goes
	}{
		{"email", "/api/v1/auth/sign-in", "", func() any { return map[string]any{"email": "ada" + textMarker + "@acme.test", "password": password} }},
		{"device_name", "/api/v1/auth/sign-in", "", func() any {
			return map[string]any{"email": p.email, "password": password, "device_name": textMarker}
		}},
		{"name", "/api/v1/organizations/" + p.org + "/payment-contacts", p.web, func() any {
			return map[string]any{"name": textMarker, "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000"}
		}},
		{"account_holder_name", "/api/v1/organizations/" + p.org + "/payment-contacts", p.web, func() any {
			return map[string]any{"name": "Müller", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000", "account_holder_name": textMarker}
		}},
		{"name", "/api/v1/organizations/" + p.org + "/api-keys", p.web, func() any {
			return map[string]any{"name": textMarker, "role": "member", "scopes": []string{"balances:read"}}
		}},
		{"label", "/api/v1/me/approval-credential", phoneToken, func() any { return map[string]any{"public_key": pub, "label": textMarker} }},
		{"statement_description", "/api/v1/payments/execute", p.web, func() any {
			return map[string]any{"quote_id": p.quote(t, s, "5.00").Id.String(), "payout_reason": "PYR002", "statement_description": textMarker}
		}},
		{"internal_notes", "/api/v1/payments/execute", p.web, func() any {
			b := executeBody(p.quote(t, s, "5.00").Id.String())
			b["internal_notes"] = textMarker
			return b
		}},
		{"tag", "/api/v1/payments/execute", p.web, func() any {
			b := executeBody(p.quote(t, s, "5.00").Id.String())
			b["tag"] = textMarker
			return b
		}},
		{"payments[0].internal_notes", "/api/v1/payment-batches", p.web, func() any {
			b := executeBody(p.quote(t, s, "5.00").Id.String())
			b["internal_notes"] = textMarker
			return map[string]any{"organization_id": p.org, "payments": []any{b}}
		}},
		{"reason", "/api/v1/approvals/" + pending.ApprovalRequestId.String() + "/reject", p.web, func() any { return map[string]any{"reason": textMarker} }},
		{"name", "/api/v1/sandbox/organizations", sbx, func() any {
			return map[string]any{"name": textMarker, "owner": map[string]any{"email": email("grace"), "password": password}}
		}},
		{"owner.email", "/api/v1/sandbox/organizations", sbx, func() any {
			return map[string]any{"name": "Acme", "owner": map[string]any{"email": textMarker + email("grace"), "password": password}}
		}},
		{"owner.first_name", "/api/v1/sandbox/organizations", sbx, func() any {
			return map[string]any{"name": "Acme", "owner": map[string]any{"email": email("grace"), "password": password, "first_name": textMarker}}
		}},
		{"owner.last_name", "/api/v1/sandbox/organizations", sbx, func() any {
			return map[string]any{"name": "Acme", "owner": map[string]any{"email": email("grace"), "password": password, "last_name": textMarker}}
		}},
		{"email", "/api/v1/sandbox/organizations/" + p.org + "/users", sbx, func() any {
			return map[string]any{"email": textMarker + email("bob"), "password": password, "role": "member"}
		}},
		{"first_name", "/api/v1/sandbox/organizations/" + p.org + "/users", sbx, func() any {
			return map[string]any{"email": email("bob"), "password": password, "role": "member", "first_name": textMarker}
		}},
	} {
		for _, bad := range badTexts {
			t.Run(tc.field+" "+bad.name+" "+tc.path, func(t *testing.T) {
				r := s.Do(t, apitest.Request{Method: "POST", Path: tc.path, Bearer: tc.bearer, Body: withBadText(t, tc.body(), bad)})
				expectInvalidField(t, r, tc.field)
			})
		}
	}
	// The pending payment is untouched: its approval was never rejected.
	if got := getPayment(t, s, p.web, pending.Id.String()); got.Status != "awaiting_approval" {
		t.Fatalf("payment %+v", got)
	}
}

// TestBadTextInPathAndQuery: a path value or query parameter holding a NUL
// or invalid UTF-8 is 400 invalid_request naming it, on any operation; an
// API key bearer with bytes that are not UTF-8 is simply not a valid key.
func TestBadTextInPathAndQuery(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	for _, tc := range []struct{ path, field string }{
		{"/api/v1/payments/a%00b", "payment_id"},
		{"/api/v1/payment-contacts/%FF%FE", "payment_contact_id"},
		{"/api/v1/organizations/" + p.org + "/balances?x=%00", "x"},
		{"/api/v1/organizations/" + p.org + "/transactions?cursor=%FF", "cursor"},
		{"/api/v1/organizations/" + p.org + "/approvals?status=pending%00", "status"},
		{"/api/v1/me?a=%C3%28", "a"},
	} {
		expectInvalidField(t, s.Get(t, tc.path, p.web), tc.field)
	}
	// Text that is merely unusual is fine.
	s.Get(t, "/api/v1/organizations/"+p.org+"/balances?note=M%C3%BCller", p.web).ExpectStatus(t, http.StatusOK)
	// The key's lookup used to reach the database as it came (PostgreSQL: 500).
	badKey := "sr_test_\xff\xfeabcdef_" + strings.Repeat("a", 43)
	s.Get(t, accountsPath(p.org), badKey).ExpectError(t, http.StatusUnauthorized, "invalid_api_key")
	s.Post(t, "/api/v1/auth/sign-in", badKey, map[string]any{"email": p.email, "password": password}).
		ExpectError(t, http.StatusUnauthorized, "invalid_api_key")
}

// TestAmountsHaveAtMostFifteenIntegerDigits: larger amounts are refused
// where they enter (preflight, deposits), so an amount near 2^63 never
// becomes a 500 at execute, a wrong funds answer or an overflowed balance.
func TestAmountsHaveAtMostFifteenIntegerDigits(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	deposit := func(currency, amount string) *apitest.Response {
		return s.Post(t, "/api/v1/sandbox/organizations/"+p.org+"/deposits", sbx, map[string]any{"currency": currency, "amount": amount})
	}
	preflight := func(amount, side, source string) *apitest.Response {
		return s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat",
			"payment_contact_id": p.contact, "source_currency": source, "amount": amount, "amount_side": side})
	}
	// Near 2^63 minor units: it used to be quoted, then execute overflowed (500).
	e := preflight("92233720368547758.07", "send", "EUR").ExpectError(t, 400, "invalid_request")
	if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "amount" || !strings.Contains(e.Error.Details[0].Message, "15 digits") {
		t.Fatalf("details %+v", e.Error.Details)
	}
	expectInvalidField(t, preflight("1000000000000000", "send", "EUR"), "amount")
	expectInvalidField(t, deposit("CHF", "92233720368547758.07"), "amount")
	expectInvalidField(t, deposit("KWD", "1000000000000000.000"), "amount")
	// The largest amount is fine; its conversion must be one too: 10^15 EUR
	// received costs more than 15 digits of JPY.
	preflight("999999999999999.99", "send", "EUR").ExpectStatus(t, 201)
	expectInvalidField(t, preflight("999999999999999.99", "receive", "JPY"), "amount")
	deposit("CHF", "999999999999999.99").ExpectStatus(t, 201)
	deposit("CHF", "0.01").ExpectStatus(t, 201)
	if av, _ := balance(t, s, p.web, p.org, "CHF"); av != "1000000000000000.00" {
		t.Fatalf("CHF balance %s", av)
	}
}

// TestBatchTotalsFitTheLedger: ten payments of the largest KWD amount take
// more than int64 minor units in all; the batch is refused when created,
// where the funds check used to overflow and answer as if funds covered it.
func TestBatchTotalsFitTheLedger(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	var kwd api.PaymentContact
	s.Post(t, "/api/v1/organizations/"+p.org+"/payment-contacts", p.web, map[string]any{
		"name": "Gulf Trading", "currency": "KWD", "rail": "fiat", "iban": "KW81CBKU0000000000001234560101",
	}).ExpectStatus(t, 201).Decode(t, &kwd)
	var payments []any
	for range 10 {
		var q api.Quote
		s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": kwd.Id.String(),
			"source_currency": "KWD", "amount": "999999999999999.999", "amount_side": "send"}).ExpectStatus(t, 201).Decode(t, &q)
		payments = append(payments, executeBody(q.Id.String()))
	}
	expectInvalidField(t, s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": p.org, "payments": payments}), "payments")
	// Nine fit: created, and approving them finds the empty KWD balance short.
	var b api.PaymentBatch
	s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": p.org, "payments": payments[1:]}).ExpectStatus(t, 201).Decode(t, &b)
	s.Post(t, "/api/v1/approvals/"+b.ApprovalRequestId.String()+"/approve", p.web, nil).ExpectError(t, 422, "insufficient_funds")
}

// TestLedgerBalancesCannotOverflow: the platform's account that deposits
// come from holds at most int64 minor units in all; the deposit that would
// overflow it is refused (422), instead of a 500 on PostgreSQL or a float
// stored by SQLite that poisons every later deposit in the currency.
func TestLedgerBalancesCannotOverflow(t *testing.T) {
	s := apitest.Start(t)
	created := createOrg(t, s, "ada@acme.test")
	org := created.Organization.Id.String()
	deposit := func(amount string) *apitest.Response {
		return s.Post(t, "/api/v1/sandbox/organizations/"+org+"/deposits", sbx, map[string]any{"currency": "KWD", "amount": amount})
	}
	// 9 × 999999999999999.999 KWD fit in int64 minor units; a tenth does not.
	for range 9 {
		deposit("999999999999999.999").ExpectStatus(t, 201)
	}
	deposit("999999999999999.999").ExpectError(t, 422, "unprocessable_entity")
	// Smaller deposits still fit and are counted exactly.
	deposit("1.000").ExpectStatus(t, 201)
	web := signInFully(t, s, "ada@acme.test", *created.Owner.TotpSecret)
	if av, _ := balance(t, s, web, org, "KWD"); av != "9000000000000000.991" {
		t.Fatalf("KWD balance %s", av)
	}
}
