package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/field"
)

type billRecord struct {
	ID               uuid.UUID      `json:"id"`
	OrganizationID   uuid.UUID      `json:"organization_id"`
	CreatedByID      uuid.UUID      `json:"created_by_id"`
	FileID           *uuid.UUID     `json:"file_id"`
	Status           string         `json:"status"`
	DocumentType     string         `json:"document_type"`
	PaymentMeans     *string        `json:"payment_means"`
	Extraction       billExtraction `json:"extraction"`
	Amount           *string        `json:"amount"`
	Currency         *string        `json:"currency"`
	BillNumber       *string        `json:"bill_number"`
	IssueDate        *string        `json:"issue_date"`
	DueDate          *string        `json:"due_date"`
	SupplierName     *string        `json:"supplier_name"`
	SupplierTaxID    *string        `json:"supplier_tax_id"`
	PaymentReference *string        `json:"payment_reference"`
	PaymentContactID *uuid.UUID     `json:"payment_contact_id"`
	bankdetails.Account
	ApprovalRequestID  *uuid.UUID `json:"approval_request_id"`
	FiatOutgoingID     *uuid.UUID `json:"fiat_outgoing_id"`
	ExtractionFailedAt *time.Time `json:"extraction_failed_at"`
	InsertedAt         time.Time  `json:"inserted_at"`
	UpdatedAt          time.Time  `json:"updated_at"`
}

// billExtraction is how the bill's file was read: the structured format or
// pdf_text, and the fields text rules filled, for a person to check.
type billExtraction struct {
	Format   *string  `json:"format"`
	FromText []string `json:"from_text"`
}

func newBillRecord(b bill.Bill) billRecord {
	out := billRecord{ID: b.ID, OrganizationID: b.OrganizationID, CreatedByID: b.CreatedByID, FileID: b.FileID, Status: string(b.Status),
		DocumentType: string(b.DocumentType), Currency: b.Currency, BillNumber: b.BillNumber, IssueDate: b.IssueDate, DueDate: b.DueDate, SupplierName: b.SupplierName,
		SupplierTaxID: b.SupplierTaxID, PaymentReference: b.PaymentReference, PaymentContactID: b.PaymentContactID,
		Account: b.Bank, ApprovalRequestID: b.ApprovalRequestID, FiatOutgoingID: b.FiatOutgoingID,
		ExtractionFailedAt: b.ExtractionFailedAt, InsertedAt: b.InsertedAt, UpdatedAt: b.UpdatedAt}
	if b.Amount != nil {
		s := b.Amount.String()
		out.Amount = &s
	}
	if b.PaymentMeans != nil {
		m := string(*b.PaymentMeans)
		out.PaymentMeans = &m
	}
	out.Extraction = billExtraction{Format: b.Extraction.Format, FromText: b.Extraction.FromText}
	if out.Extraction.FromText == nil {
		out.Extraction.FromText = []string{}
	}
	return out
}

func (b billRecord) organization() uuid.UUID { return b.OrganizationID }

// bills is the bill feature's resource: the bill in the path, answered as
// its record.
var bills = resource[bill.Bill, billRecord]{at: param{"bill_id", "Bill"}, record: newBillRecord, pages: "bills", key: bill.PageKey}

// uploadBill is written out: it takes the invoice as the multipart field
// "file" and streams it to the file store, never holding the body whole in
// memory.
func (s *server) uploadBill(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	// The file may be 20 MiB; the multipart framing gets a little more.
	r.Body = http.MaxBytesReader(w, r.Body, file.MaxSize+64<<10)
	parts, err := r.MultipartReader()
	if err != nil {
		return apierr.InvalidField("", "The body must be multipart/form-data holding the invoice in the field \"file\".")
	}
	part, err := parts.NextPart()
	if errors.Is(err, io.EOF) {
		return apierr.InvalidField("file", "is required: the invoice (PDF, PNG, JPEG or XML e-invoice).")
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return apierr.New(apierr.PayloadTooLarge, "A file may be at most 20 MiB.")
		}
		return apierr.InvalidField("", "The multipart body could not be read.")
	}
	if part.FormName() != "file" {
		// The name is raw bytes from the body: named back as UTF-8.
		return apierr.InvalidField(strings.ToValidUTF8(part.FormName(), "\uFFFD"), "is not a field of this upload; send only the invoice, as the field \"file\".")
	}
	name := part.FileName()
	if name == "" {
		name = "invoice"
	}
	b, err := s.Bills.Upload(r.Context(), actorOf(r), org, name, part.Header.Get("Content-Type"), part)
	return bills.answer(w, r, http.StatusCreated, b, err)
}

// billFilter reads the list's filters: status, due dates and a search.
var billFilter = &filter[bill.ListFilter]{read: readBillFilter, params: []string{"status", "due_date_from", "due_date_to", "search"}}

func readBillFilter(r *http.Request) (bill.ListFilter, error) {
	q := r.URL.Query()
	var f bill.ListFilter
	var problems apierr.Fields
	if v := q.Get("status"); v != "" {
		st := bill.Status(v)
		problems.Check(slices.Contains(bill.Statuses, st), "status", "must be extracting, extracted, payment_requested or cancelled.")
		f.Status = &st
	}
	for name, dst := range map[string]**string{"due_date_from": &f.DueDateFrom, "due_date_to": &f.DueDateTo} {
		if v := q.Get(name); v != "" {
			problems.Check(field.IsDate(v), name, "must be a date as YYYY-MM-DD.")
			*dst = &v
		}
	}
	if v := q.Get("search"); v != "" {
		problems.Check(len([]rune(v)) <= 100, "search", "must be at most 100 characters.")
		f.Search = &v
	}
	return f, problems.Err()
}

// billEventRecord is the data of bill.event_appended: what happened to the
// bill, and the bill as of delivery.
type billEventRecord struct {
	BillID uuid.UUID  `json:"bill_id"`
	Event  string     `json:"event"`
	Bill   billRecord `json:"bill"`
}

// renderBillEvent renders a bill.event_appended message (realtimeRenderer).
func (s *server) renderBillEvent(ctx context.Context, a actor.Actor, data json.RawMessage) (any, error) {
	var e struct {
		BillID uuid.UUID `json:"bill_id"`
		Event  string    `json:"event"`
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("realtime: bill event data: %w", err)
	}
	b, err := s.Bills.Get(ctx, a, e.BillID)
	if err != nil {
		return nil, err
	}
	return billEventRecord{BillID: e.BillID, Event: e.Event, Bill: newBillRecord(b)}, nil
}
