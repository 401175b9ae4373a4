package e2e_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func setOrgStatus(t *testing.T, s *apitest.Server, org, status string) {
	t.Helper()
	out := ok[*api.SandboxSetOrganizationStatusResponse](t, 200)(sandboxClient(t, s).API().SandboxSetOrganizationStatusWithResponse(t.Context(),
		uuidOf(t, org), nil, api.SandboxStatusChange{Status: api.OrganizationStatus(status)})).JSON200
	if out.Id.String() != org || string(out.Status) != status {
		t.Fatalf("status helper answered %+v", out)
	}
}

func expectUnavailable(t *testing.T, r *apitest.Response) {
	t.Helper()
	r.ExpectError(t, http.StatusForbidden, "organization_unavailable")
}

// TestOrganizationStatusGovernsSessions walks an organization through its
// statuses (docs/api.md, Authentication): banned and deleted refuse every
// organization-scoped operation of its staff's sessions, paused refuses what writes and serves
// reads, and personal operations keep working throughout; active again,
// everything works.
func TestOrganizationStatusGovernsSessions(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	org := p.org
	key := balancesKey(t, s, p.person, org)
	waiting := p.pay(t, s, "10.00")
	var batch api.PaymentBatch
	s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": org, "payments": []any{executeBody(p.quote(t, s, "3.00").Id.String())}}).
		ExpectStatus(t, 201).Decode(t, &batch)
	var feed api.TransactionPage
	s.Get(t, "/api/v1/organizations/"+org+"/transactions", p.web).ExpectStatus(t, 200).Decode(t, &feed)
	q := p.quote(t, s, "5.00") // executed only once the organization is active again
	orgPath := "/api/v1/organizations/" + org

	reads := map[string]func() *apitest.Response{
		"list transactions":      func() *apitest.Response { return s.Get(t, orgPath+"/transactions", p.web) },
		"get transaction":        func() *apitest.Response { return s.Get(t, orgPath+"/transactions/"+feed.Data[0].Id.String(), p.web) },
		"balances":               func() *apitest.Response { return s.Get(t, orgPath+"/balances", p.web) },
		"currency accounts":      func() *apitest.Response { return s.Get(t, accountsPath(org), p.web) },
		"list api keys":          func() *apitest.Response { return s.Get(t, orgPath+"/api-keys", p.web) },
		"payments config":        func() *apitest.Response { return s.Get(t, orgPath+"/payments/config", p.web) },
		"list contacts":          func() *apitest.Response { return s.Get(t, orgPath+"/payment-contacts", p.web) },
		"get contact":            func() *apitest.Response { return s.Get(t, "/api/v1/payment-contacts/"+p.contact, p.web) },
		"get payment":            func() *apitest.Response { return s.Get(t, "/api/v1/payments/"+waiting.Id.String(), p.web) },
		"get batch":              func() *apitest.Response { return s.Get(t, "/api/v1/payment-batches/"+batch.Id.String(), p.web) },
		"list approvals":         func() *apitest.Response { return s.Get(t, orgPath+"/approvals", p.web) },
		"list pending approvals": func() *apitest.Response { return s.Get(t, orgPath+"/approvals?status=pending", p.web) },
	}
	writes := map[string]func() *apitest.Response{
		"execute": func() *apitest.Response {
			return s.Post(t, "/api/v1/payments/execute", p.web, executeBody(q.Id.String()))
		},
		"approve": func() *apitest.Response {
			return s.Post(t, "/api/v1/approvals/"+waiting.ApprovalRequestId.String()+"/approve", p.web, nil)
		},
		"reject": func() *apitest.Response {
			return s.Post(t, "/api/v1/approvals/"+waiting.ApprovalRequestId.String()+"/reject", p.web, map[string]any{})
		},
		"cancel": func() *apitest.Response {
			return s.Post(t, "/api/v1/payments/"+waiting.Id.String()+"/cancel", p.web, nil)
		},
		"preflight": func() *apitest.Response {
			return s.Post(t, "/api/v1/payments/preflight", p.web, preflightBody(p, "1.00"))
		},
		"create contact": func() *apitest.Response {
			return s.Post(t, orgPath+"/payment-contacts", p.web, map[string]any{"name": "Other GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000"})
		},
		"create batch": func() *apitest.Response {
			return s.Post(t, "/api/v1/payment-batches", p.web, map[string]any{"organization_id": org, "payments": []any{executeBody(q.Id.String())}})
		},
		"create api key": func() *apitest.Response {
			return s.Post(t, orgPath+"/api-keys", p.web, map[string]any{"name": "Another", "role": "member", "scopes": []string{"balances:read"}})
		},
		"update api key": func() *apitest.Response {
			return s.Do(t, apitest.Request{Method: "PATCH", Path: keyPath(org, key.ApiKey.Id.String(), ""), Bearer: p.web, Body: map[string]any{"name": "Renamed"}})
		},
		"rotate api key": func() *apitest.Response { return s.Post(t, keyPath(org, key.ApiKey.Id.String(), "rotate"), p.web, nil) },
	}
	revoke := func() *apitest.Response { return s.Post(t, keyPath(org, key.ApiKey.Id.String(), "revoke"), p.web, nil) }
	personal := func() {
		t.Helper()
		s.Get(t, "/api/v1/me", p.web).ExpectStatus(t, 200)
		s.Get(t, "/api/v1/devices", p.web).ExpectStatus(t, 200)
		s.Get(t, "/api/v1/me/challenges", p.app).ExpectStatus(t, 200)
	}

	setOrgStatus(t, s, org, "paused")
	for name, call := range reads {
		t.Run("paused read "+name, func(t *testing.T) { call().ExpectStatus(t, 200) })
	}
	for name, call := range writes {
		t.Run("paused write "+name, func(t *testing.T) { expectUnavailable(t, call()) })
	}
	personal()
	// Revoking only protects, so a paused organization may still revoke a
	// leaked key: it must not work again when the organization is active.
	var revoked api.ApiKey
	revoke().ExpectStatus(t, 200).Decode(t, &revoked)
	if revoked.RevokedAt == nil {
		t.Fatal("paused: revoke left the key live")
	}
	// Nothing moved while the organization was not active.
	if av, pe := balance(t, s, p.web, org, "EUR"); av != "1000.00" || pe != "0.00" {
		t.Fatalf("paused: available %s pending %s", av, pe)
	}
	if got := getPayment(t, s, p.web, waiting.Id.String()); got.Status != "awaiting_approval" {
		t.Fatalf("payment %+v", got)
	}

	for _, status := range []string{"banned", "deleted"} {
		setOrgStatus(t, s, org, status)
		for name, call := range reads {
			t.Run(status+" read "+name, func(t *testing.T) { expectUnavailable(t, call()) })
		}
		for name, call := range writes {
			t.Run(status+" write "+name, func(t *testing.T) { expectUnavailable(t, call()) })
		}
		expectUnavailable(t, revoke())
		// Requesting currency accounts is refused too (while paused it answers failed outcomes).
		expectUnavailable(t, s.Post(t, accountsPath(org), p.web, map[string]any{"currencies": []string{"EUR"}}))
		personal()
	}

	setOrgStatus(t, s, org, "active")
	for name, call := range reads {
		t.Run("active read "+name, func(t *testing.T) { call().ExpectStatus(t, 200) })
	}
	var pay api.Payment
	s.Post(t, "/api/v1/payments/execute", p.web, executeBody(q.Id.String())).ExpectStatus(t, 201).Decode(t, &pay)
	p.approveInApp(t, s, pay.ApprovalRequestId.String())
	if av, pe := balance(t, s, p.web, org, "EUR"); av != "994.00" || pe != "5.00" {
		t.Fatalf("active again: available %s pending %s, want 994.00 and 5.00", av, pe)
	}
	s.Post(t, orgPath+"/payment-contacts", p.web, map[string]any{"name": "Other GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000"}).
		ExpectStatus(t, 201)
	s.Post(t, "/api/v1/approvals/"+waiting.ApprovalRequestId.String()+"/reject", p.web, map[string]any{}).ExpectStatus(t, 200)
}

func preflightBody(p *payer, amount string) map[string]any {
	return map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": p.contact,
		"source_currency": "EUR", "amount": amount, "amount_side": "send"}
}

// TestAppApprovalMovesNoMoneyOnceTheOrganizationIsBanned: a payment
// approval asked for while the organization was active cannot be completed
// in the app after a ban: nothing is recorded and no money moves. The rail
// is not a staff action: a payment approved before the ban still settles.
func TestAppApprovalMovesNoMoneyOnceTheOrganizationIsBanned(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	approved := p.pay(t, s, "100.00")
	p.approveInApp(t, s, approved.ApprovalRequestId.String())
	waiting := p.pay(t, s, "10.00")
	up := expectStepUp(t, s.Post(t, "/api/v1/approvals/"+waiting.ApprovalRequestId.String()+"/approve", p.web, nil))
	var c api.Challenge
	for _, x := range inbox(t, s, p.app) {
		if x.ApprovalId != nil && *x.ApprovalId == *waiting.ApprovalRequestId && x.Status == "pending" {
			c = x
		}
	}
	if c.Id == uuid.Nil {
		t.Fatal("no payment-approval challenge in the app inbox")
	}

	setOrgStatus(t, s, p.org, "banned")
	expectUnavailable(t, approve(t, s, p.person, c, *up.MatchCode))
	s.Post(t, "/api/v1/sandbox/payments/"+approved.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)

	setOrgStatus(t, s, p.org, "paused")
	expectUnavailable(t, approve(t, s, p.person, c, *up.MatchCode))
	if got := getPayment(t, s, p.web, waiting.Id.String()); got.Status != "awaiting_approval" || got.TransactionId != nil {
		t.Fatalf("payment after a refused approval: %+v", got)
	}
	if got := getPayment(t, s, p.web, approved.Id.String()); got.Status != "completed" {
		t.Fatalf("settled payment: %+v", got)
	}
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "899.00" || pe != "0.00" {
		t.Fatalf("available %s pending %s, want 899.00 and 0.00", av, pe)
	}

	// Active again, the same challenge is answered and the money moves.
	setOrgStatus(t, s, p.org, "active")
	approve(t, s, p.person, c, *up.MatchCode).ExpectStatus(t, 200)
	if av, pe := balance(t, s, p.web, p.org, "EUR"); av != "888.00" || pe != "10.00" {
		t.Fatalf("available %s pending %s, want 888.00 and 10.00", av, pe)
	}
}
