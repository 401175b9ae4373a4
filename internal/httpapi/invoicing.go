package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
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

// The invoicing feature's resources: what each operation's path names first,
// and the record of its answer. Billing contacts, invoices and crypto
// deposits are named under their organization.
var (
	billingContacts = resource[invoicing.Contact, billingContactRecord]{at: organizationID, record: newBillingContactRecord,
		pages: "billing-contacts", key: invoicing.ContactPageKey}
	invoices = resource[invoicing.Invoice, invoiceRecord]{at: organizationID, record: newInvoiceRecord,
		pages: "invoices", key: invoicing.InvoicePageKey}
	allocations = resource[invoicing.Allocation, allocationRecord]{at: organizationID, record: newAllocationRecord,
		pages: "billing-allocations", key: invoicing.AllocationPageKey}
	cryptoDeposits = resource[invoicing.CryptoIncoming, cryptoIncomingRecord]{at: organizationID, record: newCryptoIncomingRecord,
		pages: "crypto-incoming", key: invoicing.DepositPageKey}

	billingContactID = param{"billing_contact_id", "Billing contact"}
	invoiceID        = param{"billing_invoice_id", "Invoice"}
)

// invoiceFilter reads the list's filters: states, contact and overdue.
var invoiceFilter = &filter[invoicing.InvoiceFilter]{read: readInvoiceFilter, params: []string{"state", "billing_contact_id", "overdue"}}

func readInvoiceFilter(r *http.Request) (invoicing.InvoiceFilter, error) {
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
	return f, problems.Err()
}

// allocationsOf reads the billing contact in the path whose allocations
// are listed.
var allocationsOf = &filter[uuid.UUID]{read: billingContactID.id}
