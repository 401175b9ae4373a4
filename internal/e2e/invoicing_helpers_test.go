package e2e_test

import (
	"net/http"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Billing invoices (docs/api.md, Invoicing): helpers shared by the invoicing tests.

func orgPath(org, rest string) string { return "/api/v1/organizations/" + org + rest }

func createBillingContact(t *testing.T, s *apitest.Server, token, org, name string) api.BillingContact {
	t.Helper()
	var c api.BillingContact
	s.Post(t, orgPath(org, "/billing-contacts"), token, map[string]any{"company_name": name, "emails": []string{"billing@" + "customer.example"}}).
		ExpectStatus(t, http.StatusCreated).Decode(t, &c)
	return c
}

func line(description, price, quantity, tax string) map[string]any {
	return map[string]any{"description": description, "price": price, "quantity": quantity, "tax_percentage": tax}
}

func invoiceBody(contact, currency, issue, due string, lines ...map[string]any) map[string]any {
	return map[string]any{"billing_contact_id": contact, "currency": currency, "issue_date": issue, "due_date": due, "line_items": lines}
}

func createInvoice(t *testing.T, s *apitest.Server, token, org string, body map[string]any) api.BillingInvoice {
	t.Helper()
	var inv api.BillingInvoice
	s.Post(t, orgPath(org, "/invoices"), token, body).ExpectStatus(t, http.StatusCreated).Decode(t, &inv)
	return inv
}

// simpleInvoice is a USD draft of amount (no tax) issued and due on date.
func simpleInvoice(t *testing.T, s *apitest.Server, token, org, contact, currency, amount, date string) api.BillingInvoice {
	t.Helper()
	return createInvoice(t, s, token, org, invoiceBody(contact, currency, date, date, line("Work", amount, "1", "0")))
}

func invoiceMove(t *testing.T, s *apitest.Server, token, org, id, move string) *apitest.Response {
	t.Helper()
	return s.Post(t, orgPath(org, "/invoices/"+id+"/"+move), token, nil)
}

func movedInvoice(t *testing.T, s *apitest.Server, token, org, id, move, wantState string) api.BillingInvoice {
	t.Helper()
	var inv api.BillingInvoice
	invoiceMove(t, s, token, org, id, move).ExpectStatus(t, http.StatusOK).Decode(t, &inv)
	if string(inv.State) != wantState {
		t.Fatalf("%s: state %s, want %s", move, inv.State, wantState)
	}
	return inv
}

func getInvoice(t *testing.T, s *apitest.Server, token, org, id string) api.BillingInvoice {
	t.Helper()
	var inv api.BillingInvoice
	s.Get(t, orgPath(org, "/invoices/"+id), token).ExpectStatus(t, http.StatusOK).Decode(t, &inv)
	return inv
}

func cryptoDeposit(t *testing.T, s *apitest.Server, org, coin, amount string) api.CryptoIncoming {
	t.Helper()
	r := ok[*api.SandboxCryptoDepositResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxCryptoDepositWithResponse(t.Context(),
		uuidOf(t, org), nil, api.SandboxCryptoDeposit{Coin: api.Coin(coin), Amount: amount}))
	return *r.JSON201
}

func allocate(t *testing.T, s *apitest.Server, token, org, invoice, deposit, credit string) *apitest.Response {
	t.Helper()
	return s.Post(t, orgPath(org, "/invoices/"+invoice+"/allocations"), token, map[string]any{"crypto_incoming_id": deposit, "credit": credit})
}

// states are the invoice's next_valid_states as strings.
func states(inv api.BillingInvoice) []string {
	out := []string{}
	for _, x := range inv.NextValidStates {
		out = append(out, string(x))
	}
	return out
}
