// Package bill turns supplier invoices into bills: a bill is created from a
// stored file, read by an extraction job (package extract) into its fields,
// corrected by people, given a payment contact, and paid through one
// payment at a time (docs/api.md, Bills).
package bill

import (
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Status is where a bill stands: extracting, extracted, payment_requested
// or cancelled.
type Status string

// The statuses of a bill.
const (
	Extracting       Status = "extracting"
	Extracted        Status = "extracted"
	PaymentRequested Status = "payment_requested"
	Cancelled        Status = "cancelled"
)

// Statuses lists every status, for the list filter.
var Statuses = []Status{Extracting, Extracted, PaymentRequested, Cancelled}

// DocumentType is what a bill's document is.
type DocumentType string

// The document types of a bill.
const (
	// Invoice asks to be paid.
	Invoice DocumentType = "invoice"
	// CreditNote is money the supplier owes back: a UBL CreditNote, a CII or
	// Factur-X credit-note type code, or a document whose amount due is
	// negative. Its amount is kept positive and it is never paid, so it can
	// never become a payment of the opposite sign.
	CreditNote DocumentType = "credit_note"
)

// PaymentMeans is how a bill's document says it is paid.
type PaymentMeans string

// The payment means a document can state (UNTDID 4461 codes or the page's
// wording). On a direct debit the supplier collects the amount, so
// extraction takes no payee bank details from it.
const (
	CreditTransfer PaymentMeans = "credit_transfer"
	DirectDebit    PaymentMeans = "direct_debit"
	Card           PaymentMeans = "card"
	OtherMeans     PaymentMeans = "other"
)

// Extraction is how a bill's file was read: Format is the structured format
// (ubl, cii, facturx, zugferd1) or pdf_text, nil before or without a
// reading; FromText names the bill's fields that text rules filled, which
// a person should check. A field a person changes leaves FromText.
type Extraction struct {
	Format   *string
	FromText []string
}

// Bill is one supplier invoice of an organization.
type Bill struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	CreatedByID    uuid.UUID
	FileID         *uuid.UUID
	Status         Status
	// DocumentType is set by extraction: a credit note is never payable.
	DocumentType DocumentType
	// PaymentMeans is set by extraction; nil when the document does not say.
	PaymentMeans *PaymentMeans
	Extraction   Extraction
	// Amount is the total payable; nil until known. Currency may be known
	// without it.
	Amount           *money.Amount
	Currency         *string
	BillNumber       *string
	IssueDate        *string // YYYY-MM-DD
	DueDate          *string // YYYY-MM-DD
	SupplierName     *string
	SupplierTaxID    *string
	PaymentReference *string
	PaymentContactID *uuid.UUID
	Bank             bankdetails.Account
	// ApprovalRequestID and FiatOutgoingID name the payment requested for
	// the bill while it is payment_requested.
	ApprovalRequestID  *uuid.UUID
	FiatOutgoingID     *uuid.UUID
	ExtractionFailedAt *time.Time
	InsertedAt         time.Time
	UpdatedAt          time.Time
}

// editable reports whether people may change the bill's fields.
func (b Bill) editable() bool { return b.Status != PaymentRequested && b.Status != Cancelled }

// PatchRequest is the body of a bill's PATCH: any field from amount to
// sort_code, and payment_contact_id. A field sent as null is cleared.
type PatchRequest struct {
	Amount           field.Optional[string] `json:"amount"`
	Currency         field.Optional[string] `json:"currency"`
	BillNumber       field.Optional[string] `json:"bill_number"`
	IssueDate        field.Optional[string] `json:"issue_date"`
	DueDate          field.Optional[string] `json:"due_date"`
	SupplierName     field.Optional[string] `json:"supplier_name"`
	SupplierTaxID    field.Optional[string] `json:"supplier_tax_id"`
	PaymentReference field.Optional[string] `json:"payment_reference"`
	PaymentContactID field.Optional[string] `json:"payment_contact_id"`

	AccountHolderName field.Optional[string] `json:"account_holder_name"`
	AccountNumber     field.Optional[string] `json:"account_number"`
	IBAN              field.Optional[string] `json:"iban"`
	SwiftCode         field.Optional[string] `json:"swift_code"`
	ABACode           field.Optional[string] `json:"aba_code"`
	BankCode          field.Optional[string] `json:"bank_code"`
	BankName          field.Optional[string] `json:"bank_name"`
	BankCountryAlpha2 field.Optional[string] `json:"bank_country_alpha2"`
	BranchCode        field.Optional[string] `json:"branch_code"`
	BSBCode           field.Optional[string] `json:"bsb_code"`
	CNAPS             field.Optional[string] `json:"cnaps"`
	IFSCCode          field.Optional[string] `json:"ifsc_code"`
	SortCode          field.Optional[string] `json:"sort_code"`
}

// bank is the bank fields the request sets, for their checks.
func (r PatchRequest) bank() bankdetails.Account {
	return bankdetails.Account{AccountHolderName: r.AccountHolderName.Value, AccountNumber: r.AccountNumber.Value, IBAN: r.IBAN.Value,
		SwiftCode: r.SwiftCode.Value, ABACode: r.ABACode.Value, BankCode: r.BankCode.Value, BankName: r.BankName.Value,
		BankCountryAlpha2: r.BankCountryAlpha2.Value, BranchCode: r.BranchCode.Value, BSBCode: r.BSBCode.Value, CNAPS: r.CNAPS.Value,
		IFSCCode: r.IFSCCode.Value, SortCode: r.SortCode.Value}
}

// Validate checks each field sent: text lengths, dates, the currency (the
// amount is checked against the bill's currency when applied), the payment contact id and the bank fields as for payment
// contacts (check digits of IBAN, BIC and ABA numbers).
func (r *PatchRequest) Validate() error {
	var f apierr.Fields
	if r.Currency.Value != nil {
		f.Check(money.IsCurrency(*r.Currency.Value), "currency", "must be an ISO 4217 currency code in capitals.")
	}
	for name, v := range map[string]*string{"bill_number": r.BillNumber.Value, "supplier_name": r.SupplierName.Value,
		"supplier_tax_id": r.SupplierTaxID.Value, "payment_reference": r.PaymentReference.Value} {
		checkText(&f, name, v)
	}
	for name, v := range map[string]*string{"issue_date": r.IssueDate.Value, "due_date": r.DueDate.Value} {
		if v != nil {
			f.Check(field.IsDate(*v), name, "must be a date as YYYY-MM-DD.")
		}
	}
	if r.PaymentContactID.Value != nil {
		_, err := uuid.Parse(*r.PaymentContactID.Value)
		f.Check(err == nil, "payment_contact_id", "must be the id of a payment contact.")
	}
	b := r.bank()
	b.Check(&f)
	r.IBAN.Value = b.IBAN // normalized
	return f.Err()
}

// checkText accepts 1 to 140 characters without control characters or
// leading and trailing spaces.
func checkText(f *apierr.Fields, field string, v *string) {
	if v == nil {
		return
	}
	s := *v
	f.Check(s != "" && utf8.RuneCountInString(s) <= 140 && s == strings.TrimSpace(s) && strings.IndexFunc(s, unicode.IsControl) < 0,
		field, "must be 1 to 140 characters, without control characters or leading or trailing spaces.")
}

// ListFilter narrows the bill list; due dates are inclusive.
type ListFilter struct {
	Status      *Status
	DueDateFrom *string
	DueDateTo   *string
	// Search matches supplier name and bill number, ignoring letter case.
	Search *string
}
