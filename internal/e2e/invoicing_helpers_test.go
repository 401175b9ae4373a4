package e2e_test

import (
	"net/http"
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
)

// Billing invoices (CONTRACT §8b): helpers shared by the invoicing tests.

type billingContactRecord struct {
	ID          string   `json:"id"`
	CompanyName string   `json:"company_name"`
	Emails      []string `json:"emails"`
	DeletedAt   *string  `json:"deleted_at"`
}

type invoicePersonRecord struct {
	ID        string  `json:"id"`
	FirstName *string `json:"first_name"`
}

type invoiceRecord struct {
	ID                string               `json:"id"`
	State             string               `json:"state"`
	NextValidStates   []string             `json:"next_valid_states"`
	Currency          string               `json:"currency"`
	AcceptedAmount    *string              `json:"accepted_amount"`
	DueAmount         string               `json:"due_amount"`
	DueDate           string               `json:"due_date"`
	IssueDate         string               `json:"issue_date"`
	IsOverdue         bool                 `json:"is_overdue"`
	ApprovalRequestID *string              `json:"approval_request_id"`
	ApprovalRequester *invoicePersonRecord `json:"approval_requester"`
	BillingContact    billingContactRecord `json:"billing_contact"`
	CompletedAt       *string              `json:"completed_at"`
	CreatedByID       *string              `json:"created_by_id"`
	CreatedBy         *invoicePersonRecord `json:"created_by"`
	LineItems         []struct {
		Price string `json:"price"`
		Total string `json:"total"`
	} `json:"line_items"`
}

type cryptoIncomingRecord struct {
	ID          string `json:"id"`
	Amount      string `json:"amount"`
	Unallocated string `json:"unallocated"`
	Coin        struct {
		Symbol string `json:"symbol"`
	} `json:"coin"`
	TxRef *string `json:"tx_ref"`
}

type allocationRecord struct {
	ID                   string  `json:"id"`
	BillingContactID     string  `json:"billing_contact_id"`
	BillingInvoiceID     string  `json:"billing_invoice_id"`
	Credit               string  `json:"credit"`
	CryptoIncomingID     string  `json:"crypto_incoming_id"`
	UserID               string  `json:"user_id"`
	ReversesAllocationID *string `json:"reverses_allocation_id"`
	CryptoIncoming       struct {
		ID     string `json:"id"`
		Amount string `json:"amount"`
	} `json:"crypto_incoming"`
}

type pageOf[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

func orgPath(org, rest string) string { return "/api/v1/organizations/" + org + rest }

func createBillingContact(t *testing.T, s *apitest.Server, token, org, name string) billingContactRecord {
	t.Helper()
	var c billingContactRecord
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

func createInvoice(t *testing.T, s *apitest.Server, token, org string, body map[string]any) invoiceRecord {
	t.Helper()
	var inv invoiceRecord
	s.Post(t, orgPath(org, "/invoices"), token, body).ExpectStatus(t, http.StatusCreated).Decode(t, &inv)
	return inv
}

// simpleInvoice is a USD draft of amount (no tax) issued and due on date.
func simpleInvoice(t *testing.T, s *apitest.Server, token, org, contact, currency, amount, date string) invoiceRecord {
	t.Helper()
	return createInvoice(t, s, token, org, invoiceBody(contact, currency, date, date, line("Work", amount, "1", "0")))
}

func invoiceMove(t *testing.T, s *apitest.Server, token, org, id, move string) *apitest.Response {
	t.Helper()
	return s.Post(t, orgPath(org, "/invoices/"+id+"/"+move), token, nil)
}

func movedInvoice(t *testing.T, s *apitest.Server, token, org, id, move, wantState string) invoiceRecord {
	t.Helper()
	var inv invoiceRecord
	invoiceMove(t, s, token, org, id, move).ExpectStatus(t, http.StatusOK).Decode(t, &inv)
	if inv.State != wantState {
		t.Fatalf("%s: state %s, want %s", move, inv.State, wantState)
	}
	return inv
}

func getInvoice(t *testing.T, s *apitest.Server, token, org, id string) invoiceRecord {
	t.Helper()
	var inv invoiceRecord
	s.Get(t, orgPath(org, "/invoices/"+id), token).ExpectStatus(t, http.StatusOK).Decode(t, &inv)
	return inv
}

func cryptoDeposit(t *testing.T, s *apitest.Server, org, coin, amount string) cryptoIncomingRecord {
	t.Helper()
	var d cryptoIncomingRecord
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/crypto-deposits", sbx, map[string]any{"coin": coin, "amount": amount}).
		ExpectStatus(t, http.StatusCreated).Decode(t, &d)
	return d
}

func allocate(t *testing.T, s *apitest.Server, token, org, invoice, deposit, credit string) *apitest.Response {
	t.Helper()
	return s.Post(t, orgPath(org, "/invoices/"+invoice+"/allocations"), token, map[string]any{"crypto_incoming_id": deposit, "credit": credit})
}
