package httpapi

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// The payment feature's resources: what each operation's path names first,
// and the record of its answer.
var (
	paymentConfig = resource[payment.Config, configRecord]{at: organizationID, record: newConfigRecord}
	contacts      = resource[payment.Contact, contactRecord]{at: param{"payment_contact_id", "Payment contact"}, record: newContactRecord,
		pages: "payment-contacts", key: payment.ContactPageKey}
	quotes    = resource[payment.Quote, quoteRecord]{record: newQuoteRecord}
	payments  = resource[payment.Record, paymentRecord]{at: param{"payment_id", "Payment"}, record: newPaymentRecord, pages: "payments", key: payment.PageKey}
	batches   = resource[payment.Batch, batchRecord]{at: param{"batch_id", "Payment batch"}, record: newBatchRecord}
	approvals = resource[payment.Approval, approvalRecord]{at: param{"approval_id", "Approval"}, record: newApprovalRecord}
)

type payoutReasonRecord struct {
	Code  string `json:"code"`
	Label string `json:"label"`
}

type railFeeRecord struct {
	Rail        string `json:"rail"`
	BasisPoints int64  `json:"fee_basis_points"`
}

type configRecord struct {
	PayoutReasons                 []payoutReasonRecord `json:"payout_reasons"`
	Rails                         []railFeeRecord      `json:"rails"`
	StatementDescriptionMaxLength int                  `json:"statement_description_max_length"`
}

func newConfigRecord(c payment.Config) configRecord {
	out := configRecord{PayoutReasons: make([]payoutReasonRecord, len(c.PayoutReasons)), Rails: make([]railFeeRecord, len(c.Rails)),
		StatementDescriptionMaxLength: c.StatementDescriptionMaxLength}
	for i, r := range c.PayoutReasons {
		out.PayoutReasons[i] = payoutReasonRecord{Code: r.Code, Label: r.Label}
	}
	for i, f := range c.Rails {
		out.Rails[i] = railFeeRecord{Rail: f.Rail, BasisPoints: f.BasisPoints}
	}
	return out
}

type contactRecord struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	Name           string    `json:"name"`
	Currency       string    `json:"currency"`
	Rail           string    `json:"rail"`
	bankdetails.Account
	CryptoAddress *string   `json:"crypto_address"`
	Network       *string   `json:"network"`
	CreatedByID   uuid.UUID `json:"created_by_id"`
	InsertedAt    time.Time `json:"inserted_at"`
}

func (c contactRecord) organization() uuid.UUID { return c.OrganizationID }

func newContactRecord(c payment.Contact) contactRecord {
	return contactRecord{ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, Currency: c.Currency, Rail: c.Rail, Account: c.Bank,
		CryptoAddress: c.CryptoAddress, Network: c.Network, CreatedByID: c.CreatedByID, InsertedAt: c.InsertedAt}
}

type quoteRecord struct {
	ID          uuid.UUID    `json:"id"`
	ExpiresAt   time.Time    `json:"expires_at"`
	Rail        string       `json:"rail"`
	Source      money.Amount `json:"source"`
	Destination money.Amount `json:"destination"`
	Fee         money.Amount `json:"fee"`
	Rate        string       `json:"rate"`
}

func newQuoteRecord(q payment.Quote) quoteRecord {
	return quoteRecord{ID: q.ID, ExpiresAt: q.ExpiresAt, Rail: q.Rail, Source: q.Source, Destination: q.Destination, Fee: q.Fee, Rate: q.Rate}
}

// preflight quotes a payment, noting the organization the body names for
// the access log.
func (s *server) preflight(ctx context.Context, a actor.Actor, req payment.PreflightRequest) (payment.Quote, error) {
	noteOrganization(ctx, req.OrganizationID)
	return s.Payments.Preflight(ctx, a, req)
}

// idempotencyKey reads the optional Idempotency-Key header.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 255 || !printable(key) {
		return "", apierr.InvalidField("Idempotency-Key", "must be 1 to 255 printable ASCII characters.")
	}
	return key, nil
}

func printable(s string) bool {
	for _, c := range s {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func (s *server) executePayment(w http.ResponseWriter, r *http.Request) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req payment.ExecuteRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.BillPay.Execute(r.Context(), actorOf(r), req, key)
	if err == nil && out.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	// A replay is rendered from the payment as first created, so its status
	// and body are the original's.
	return payments.answer(w, r, http.StatusCreated, out.Payment, err)
}

// paymentFilter reads listPayments' query strictly: only status, limit and
// cursor, each at most once, and status one of the payment statuses.
var paymentFilter = &filter[string]{read: readPaymentFilter, params: []string{"status"}}

func readPaymentFilter(r *http.Request) (string, error) {
	q := r.URL.Query()
	var errs apierr.Fields
	errs.CheckQuery(q, []string{"status", "limit", "cursor"}, "use status, limit and cursor.")
	status := q.Get("status")
	if len(q["status"]) == 1 { // given twice, CheckQuery named it
		errs.Check(slices.Contains(payment.Statuses, status), "status",
			"must be awaiting_approval, approved, processing, completed, failed, rejected or cancelled.")
	}
	return status, errs.Err()
}

// domainEventRecord names the event that recorded a change.
type domainEventRecord struct {
	EventID     uuid.UUID `json:"event_id"`
	Stream      string    `json:"stream"`
	AggregateID string    `json:"aggregate_id"`
	Type        string    `json:"type"`
}

func newDomainEventRecord(e event.Ref) domainEventRecord {
	return domainEventRecord{EventID: e.EventID, Stream: e.Stream, AggregateID: e.AggregateID, Type: e.Type}
}

type paymentRecord struct {
	ID                   uuid.UUID         `json:"id"`
	OrganizationID       uuid.UUID         `json:"organization_id"`
	Rail                 string            `json:"rail"`
	Status               string            `json:"status"`
	Tag                  *string           `json:"tag,omitempty"`
	QuoteID              *uuid.UUID        `json:"quote_id"`
	BillID               *uuid.UUID        `json:"bill_id"`
	PaymentContactID     uuid.UUID         `json:"payment_contact_id"`
	PaymentBatchID       *uuid.UUID        `json:"payment_batch_id"`
	ApprovalRequestID    *uuid.UUID        `json:"approval_request_id"`
	TransactionID        *uuid.UUID        `json:"transaction_id"`
	Cancellable          bool              `json:"cancellable"`
	Debited              money.Amount      `json:"debited"`
	Delivered            money.Amount      `json:"delivered"`
	Fee                  money.Amount      `json:"fee"`
	DomainEvent          domainEventRecord `json:"domain_event"`
	RailState            *string           `json:"rail_state"`
	PayoutReason         *string           `json:"payout_reason"`
	StatementDescription *string           `json:"statement_description"`
	InternalNotes        *string           `json:"internal_notes"`
	CreatedByID          uuid.UUID         `json:"created_by_id"`
	InsertedAt           time.Time         `json:"inserted_at"`
	UpdatedAt            time.Time         `json:"updated_at"`
}

func (p paymentRecord) organization() uuid.UUID { return p.OrganizationID }

func newPaymentRecord(p payment.Record) paymentRecord {
	return paymentRecord{ID: p.ID, OrganizationID: p.OrganizationID, Rail: p.Rail, Status: p.Status, Tag: p.Tag, QuoteID: p.QuoteID, BillID: p.BillID,
		PaymentContactID: p.PaymentContactID, PaymentBatchID: p.PaymentBatchID, ApprovalRequestID: p.ApprovalRequestID,
		TransactionID: p.TransactionID, Cancellable: p.Cancellable, Debited: p.Debited, Delivered: p.Delivered, Fee: p.Fee,
		DomainEvent: newDomainEventRecord(p.DomainEvent), RailState: p.RailState, PayoutReason: p.PayoutReason,
		StatementDescription: p.StatementDescription, InternalNotes: p.InternalNotes, CreatedByID: p.CreatedByID,
		InsertedAt: p.InsertedAt, UpdatedAt: p.UpdatedAt}
}

type approvalRecord struct {
	ID             uuid.UUID  `json:"id"`
	OrganizationID uuid.UUID  `json:"organization_id"`
	Status         string     `json:"status"`
	Kind           string     `json:"kind"`
	TargetID       uuid.UUID  `json:"target_id"`
	RequestedByID  uuid.UUID  `json:"requested_by_id"`
	DecidedByID    *uuid.UUID `json:"decided_by_id"`
	DecidedAt      *time.Time `json:"decided_at"`
	InsertedAt     time.Time  `json:"inserted_at"`
}

func (x approvalRecord) organization() uuid.UUID { return x.OrganizationID }

func newApprovalRecord(x payment.Approval) approvalRecord {
	return approvalRecord{ID: x.ID, OrganizationID: x.OrganizationID, Status: x.Status, Kind: x.Kind, TargetID: x.TargetID,
		RequestedByID: x.RequestedByID, DecidedByID: x.DecidedByID, DecidedAt: x.DecidedAt, InsertedAt: x.InsertedAt}
}

// approvalsPage is a page of approvals with how many are pending in all.
type approvalsPage struct {
	page.Page[approvalRecord]
	PendingCount int `json:"pending_count"`
}

// listApprovals is written out: its page carries how many are pending.
func (s *server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	status := q.Get("status")
	if status != "" && !slices.Contains(payment.ApprovalStatuses, status) {
		return apierr.InvalidField("status", "must be pending, approved, rejected or cancelled.")
	}
	pages := s.pages("approvals")
	req, err := pages.Parse(q, "status")
	if err != nil {
		return err
	}
	xs, pending, err := s.Payments.ListApprovals(r.Context(), actorOf(r), org, status, req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, approvalsPage{Page: mapPage(page.Build(pages, req, xs, payment.ApprovalPageKey), newApprovalRecord), PendingCount: pending})
}

// createBatch creates a batch of payments, noting the organization the
// body names for the access log.
func (s *server) createBatch(ctx context.Context, a actor.Actor, req payment.BatchRequest) (payment.Batch, error) {
	noteOrganization(ctx, req.OrganizationID)
	return s.Payments.CreateBatch(ctx, a, req)
}

type batchRecord struct {
	ID                uuid.UUID       `json:"id"`
	OrganizationID    uuid.UUID       `json:"organization_id"`
	Status            string          `json:"status"`
	ApprovalRequestID *uuid.UUID      `json:"approval_request_id"`
	CreatedByID       uuid.UUID       `json:"created_by_id"`
	Payments          []paymentRecord `json:"payments"`
	InsertedAt        time.Time       `json:"inserted_at"`
}

func (b batchRecord) organization() uuid.UUID { return b.OrganizationID }

func newBatchRecord(b payment.Batch) batchRecord {
	out := batchRecord{ID: b.ID, OrganizationID: b.OrganizationID, Status: b.Status, ApprovalRequestID: b.ApprovalRequestID,
		CreatedByID: b.CreatedByID, Payments: make([]paymentRecord, len(b.Payments)), InsertedAt: b.InsertedAt}
	for i, p := range b.Payments {
		out.Payments[i] = newPaymentRecord(p)
	}
	return out
}
