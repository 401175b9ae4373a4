package httpapi

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

type billingContactRecord struct {
	ID          uuid.UUID  `json:"id"`
	CompanyName string     `json:"company_name"`
	Address     *string    `json:"address"`
	Emails      []string   `json:"emails"`
	PhoneNumber *string    `json:"phone_number"`
	TaxID       *string    `json:"tax_id"`
	DeletedAt   *time.Time `json:"deleted_at"`
	InsertedAt  time.Time  `json:"inserted_at"`
	UpdatedAt   time.Time  `json:"updated_at"`
}

func newBillingContactRecord(c invoicing.Contact) billingContactRecord {
	return billingContactRecord{ID: c.ID, CompanyName: c.CompanyName, Address: c.Address, Emails: c.Emails, PhoneNumber: c.PhoneNumber,
		TaxID: c.TaxID, DeletedAt: c.DeletedAt, InsertedAt: c.InsertedAt, UpdatedAt: c.UpdatedAt}
}

type invoicePersonRecord struct {
	Avatar    *string   `json:"avatar"`
	FirstName *string   `json:"first_name"`
	LastName  *string   `json:"last_name"`
	ID        uuid.UUID `json:"id"`
}

func newInvoicePersonRecord(p *invoicing.Person) *invoicePersonRecord {
	if p == nil {
		return nil
	}
	return &invoicePersonRecord{FirstName: p.FirstName, LastName: p.LastName, ID: p.ID}
}

type lineItemRecord struct {
	Description   string `json:"description"`
	Price         string `json:"price"`
	Quantity      string `json:"quantity"`
	TaxPercentage string `json:"tax_percentage"`
	Total         string `json:"total"`
}

type invoiceRecord struct {
	ID                      uuid.UUID            `json:"id"`
	State                   string               `json:"state"`
	NextValidStates         []string             `json:"next_valid_states"`
	Currency                string               `json:"currency"`
	AcceptedAmount          *string              `json:"accepted_amount"`
	DueAmount               string               `json:"due_amount"`
	DueDate                 string               `json:"due_date"`
	IssueDate               string               `json:"issue_date"`
	IsOverdue               bool                 `json:"is_overdue"`
	ApprovalRequestID       *uuid.UUID           `json:"approval_request_id"`
	ApprovalRequester       *invoicePersonRecord `json:"approval_requester"`
	BillingContact          billingContactRecord `json:"billing_contact"`
	Comments                *string              `json:"comments"`
	InternalDescription     *string              `json:"internal_description"`
	InternalReferenceNumber *string              `json:"internal_reference_number"`
	CompletedAt             *time.Time           `json:"completed_at"`
	CreatedBy               *invoicePersonRecord `json:"created_by"`
	CreatedByID             *uuid.UUID           `json:"created_by_id"`
	LineItems               []lineItemRecord     `json:"line_items"`
	InsertedAt              time.Time            `json:"inserted_at"`
	UpdatedAt               time.Time            `json:"updated_at"`
}

func newInvoiceRecord(inv invoicing.Invoice) invoiceRecord {
	amount := func(minor int64) string { return money.Amount{Minor: minor, Currency: inv.Currency}.String() }
	out := invoiceRecord{ID: inv.ID, State: inv.State, NextValidStates: inv.NextValidStates, Currency: inv.Currency,
		DueAmount: amount(inv.DueAmount), DueDate: inv.DueDate, IssueDate: inv.IssueDate, IsOverdue: inv.IsOverdue,
		ApprovalRequestID: inv.ApprovalRequestID, ApprovalRequester: newInvoicePersonRecord(inv.ApprovalRequester),
		BillingContact: newBillingContactRecord(inv.Contact), Comments: inv.Comments, InternalDescription: inv.InternalDescription,
		InternalReferenceNumber: inv.InternalReferenceNumber, CompletedAt: inv.CompletedAt, CreatedBy: newInvoicePersonRecord(inv.CreatedBy),
		CreatedByID: inv.CreatedByID, LineItems: make([]lineItemRecord, len(inv.LineItems)), InsertedAt: inv.InsertedAt, UpdatedAt: inv.UpdatedAt}
	if inv.AcceptedAmount != nil {
		a := amount(*inv.AcceptedAmount)
		out.AcceptedAmount = &a
	}
	for i, it := range inv.LineItems {
		out.LineItems[i] = lineItemRecord{Description: it.Description, Price: it.Price.String(), Quantity: it.Quantity,
			TaxPercentage: it.TaxPercentage, Total: amount(it.Total)}
	}
	return out
}

type coinSymbolRecord struct {
	Symbol string `json:"symbol"`
}

// cryptoRefRecord is a deposit as an allocation embeds it.
type cryptoRefRecord struct {
	ID             uuid.UUID        `json:"id"`
	Amount         string           `json:"amount"`
	Coin           coinSymbolRecord `json:"coin"`
	DepositAddress coinSymbolRecord `json:"deposit_address"`
	TxRef          *string          `json:"tx_ref"`
}

func newCryptoRefRecord(d invoicing.CryptoIncoming) cryptoRefRecord {
	return cryptoRefRecord{ID: d.ID, Amount: money.Amount{Minor: d.Amount, Currency: d.Coin}.String(),
		Coin: coinSymbolRecord{d.Coin}, DepositAddress: coinSymbolRecord{d.Coin}, TxRef: d.TxRef}
}

type cryptoIncomingRecord struct {
	cryptoRefRecord
	Unallocated string    `json:"unallocated"`
	InsertedAt  time.Time `json:"inserted_at"`
}

func newCryptoIncomingRecord(d invoicing.CryptoIncoming) cryptoIncomingRecord {
	return cryptoIncomingRecord{cryptoRefRecord: newCryptoRefRecord(d),
		Unallocated: money.Amount{Minor: d.Unallocated, Currency: d.Coin}.String(), InsertedAt: d.InsertedAt}
}

type allocationRecord struct {
	ID                   uuid.UUID       `json:"id"`
	BillingContactID     uuid.UUID       `json:"billing_contact_id"`
	BillingInvoiceID     uuid.UUID       `json:"billing_invoice_id"`
	Credit               string          `json:"credit"`
	CryptoIncomingID     uuid.UUID       `json:"crypto_incoming_id"`
	CryptoIncoming       cryptoRefRecord `json:"crypto_incoming"`
	Notes                string          `json:"notes"`
	UserID               uuid.UUID       `json:"user_id"`
	ReversesAllocationID *uuid.UUID      `json:"reverses_allocation_id"`
	InsertedAt           time.Time       `json:"inserted_at"`
}

func newAllocationRecord(a invoicing.Allocation) allocationRecord {
	return allocationRecord{ID: a.ID, BillingContactID: a.ContactID, BillingInvoiceID: a.InvoiceID,
		Credit: money.Amount{Minor: a.Credit, Currency: a.Currency}.String(), CryptoIncomingID: a.Deposit.ID,
		CryptoIncoming: newCryptoRefRecord(a.Deposit), Notes: a.Notes, UserID: a.UserID, ReversesAllocationID: a.Reverses, InsertedAt: a.CreatedAt}
}

// inOrganization is the handler of an operation on the object of the
// organization in the path whose id is the path value name (kind names it
// in not_found): op runs as the request's actor.
func inOrganization[T, R any](name, kind string, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (T, error), record func(T) R) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		org, id, err := orgAndID(r, name, kind)
		if err != nil {
			return err
		}
		if r.Method == http.MethodPost || r.Method == http.MethodDelete {
			if err := noBody(r); err != nil {
				return err
			}
		}
		v, err := op(r.Context(), actorOf(r), org, id)
		return render(w, http.StatusOK, record, v, err)
	}
}

// changeInOrganization is inOrganization for an operation with a JSON body.
func changeInOrganization[Req, T, R any](name, kind string, status int, op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID, Req) (T, error), record func(T) R) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		org, id, err := orgAndID(r, name, kind)
		if err != nil {
			return err
		}
		var req Req
		if err := decode(r, &req); err != nil {
			return err
		}
		v, err := op(r.Context(), actorOf(r), org, id, req)
		return render(w, status, record, v, err)
	}
}

// createInOrganization answers a person's create in the organization of the path (201).
func createInOrganization[Req, T, R any](op func(context.Context, actor.Actor, uuid.UUID, Req) (T, error), record func(T) R) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		org, err := orgID(r)
		if err != nil {
			return err
		}
		var req Req
		if err := decode(r, &req); err != nil {
			return err
		}
		v, err := op(r.Context(), actorOf(r), org, req)
		return render(w, http.StatusCreated, record, v, err)
	}
}

// listInOrganization answers a list of the organization in the path without filters.
func listInOrganization[T, R any](s *server, list string, op func(context.Context, actor.Actor, uuid.UUID, page.Request) ([]T, error), key func(T) page.Key, record func(T) R) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		org, err := orgID(r)
		if err != nil {
			return err
		}
		pages := s.pages(list)
		req, err := pages.Parse(r.URL.Query())
		if err != nil {
			return err
		}
		rows, err := op(r.Context(), actorOf(r), org, req)
		return renderPage(w, pages, req, key, record, rows, err)
	}
}

func invoiceMove(op func(context.Context, actor.Actor, uuid.UUID, uuid.UUID) (invoicing.Invoice, error)) handlerFunc {
	return inOrganization("billing_invoice_id", "Invoice", op, newInvoiceRecord)
}

func (s *server) listInvoices(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var f invoicing.InvoiceFilter
	var problems apierr.Fields
	for _, v := range q["state"] {
		problems.Check(slices.Contains(invoicing.States, v), "state", "must be draft, awaiting_approval, sent, finalized or paid.")
		f.States = append(f.States, v)
	}
	if v := q.Get("billing_contact_id"); v != "" {
		id, err := uuid.Parse(v)
		problems.Check(err == nil, "billing_contact_id", "must be the id of a billing contact.")
		f.ContactID = &id
	}
	if v := q.Get("overdue"); v != "" {
		problems.Check(v == "true" || v == "false", "overdue", "must be true or false.")
		overdue := v == "true"
		f.Overdue = &overdue
	}
	if err := problems.Err(); err != nil {
		return err
	}
	pages := s.pages("invoices")
	req, err := pages.Parse(q, "state", "billing_contact_id", "overdue")
	if err != nil {
		return err
	}
	rows, err := s.Invoices.List(r.Context(), actorOf(r), org, f, req)
	return renderPage(w, pages, req, invoicing.InvoicePageKey, newInvoiceRecord, rows, err)
}

// orgAndID reads the organization of the path and the id of its object in
// path value name (kind names it in not_found).
func orgAndID(r *http.Request, name, kind string) (uuid.UUID, uuid.UUID, error) {
	org, err := orgID(r)
	if err != nil {
		return org, uuid.Nil, err
	}
	id, err := pathID(r, name, kind)
	return org, id, err
}

func (s *server) listAllocations(w http.ResponseWriter, r *http.Request) error {
	org, id, err := orgAndID(r, "billing_contact_id", "Billing contact")
	if err != nil {
		return err
	}
	pages := s.pages("billing-allocations")
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	rows, err := s.Invoices.ListAllocations(r.Context(), actorOf(r), org, id, req)
	return renderPage(w, pages, req, invoicing.AllocationPageKey, newAllocationRecord, rows, err)
}

func (s *server) sandboxCryptoDeposit(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "organization_id", "Organization", http.StatusCreated, s.Invoices.Deposit, newCryptoIncomingRecord)
}
