package httpapi

import (
	"context"
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// render writes v as its record with status, unless the operation that
// produced v failed (err), which the caller's error mapping answers.
func render[T, R any](w http.ResponseWriter, status int, record func(T) R, v T, err error) error {
	if err != nil {
		return err
	}
	return writeJSON(w, status, record(v))
}

// acting answers a person's operation that takes a JSON body: the body is
// decoded into a Req, op runs as the request's actor, and its result is
// written as its record with status.
func acting[Req, T, R any](w http.ResponseWriter, r *http.Request, status int, op func(context.Context, actor.Actor, Req) (T, error), record func(T) R) error {
	return decoding(w, r, status, func(ctx context.Context, req Req) (T, error) { return op(ctx, actorOf(r), req) }, record)
}

// decoding is acting for an operation that needs no actor (sign-in).
func decoding[Req, T, R any](w http.ResponseWriter, r *http.Request, status int, op func(context.Context, Req) (T, error), record func(T) R) error {
	var req Req
	if err := decode(r, &req); err != nil {
		return err
	}
	v, err := op(r.Context(), req)
	return render(w, status, record, v, err)
}

// onPath answers an operation with a JSON body on the object whose id is
// the path value name (kind names it in not_found).
func onPath[Req, T, R any](w http.ResponseWriter, r *http.Request, name, kind string, status int, op func(context.Context, uuid.UUID, Req) (T, error), record func(T) R) error {
	id, err := pathID(r, name, kind)
	if err != nil {
		return err
	}
	if name == "organization_id" {
		setOrganization(r, id.String())
	}
	var req Req
	if err := decode(r, &req); err != nil {
		return err
	}
	v, err := op(r.Context(), id, req)
	return render(w, status, record, v, err)
}

// listing answers a person's list without filters: the page request is read
// from the query, list runs as the actor, and the rows are written as records.
func listing[T, R any](w http.ResponseWriter, r *http.Request, pages *page.Signer, list func(context.Context, actor.Actor, page.Request) ([]T, error), key func(T) page.Key, record func(T) R) error {
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	rows, err := list(r.Context(), actorOf(r), req)
	return renderPage(w, pages, req, key, record, rows, err)
}

// renderPage writes a page of rows, fetched for req, as records, unless
// fetching them failed (err).
func renderPage[T, R any](w http.ResponseWriter, pages *page.Signer, req page.Request, key func(T) page.Key, record func(T) R, rows []T, err error) error {
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, mapPage(page.Build(pages, req, rows, key), record))
}

func (s *server) paymentsConfig(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	cfg, err := s.Payments.GetConfig(r.Context(), actorOf(r), org)
	return render(w, http.StatusOK, newConfigRecord, cfg, err)
}

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

func newContactRecord(c payment.Contact) contactRecord {
	return contactRecord{ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, Currency: c.Currency, Rail: c.Rail, Account: c.Bank,
		CryptoAddress: c.CryptoAddress, Network: c.Network, CreatedByID: c.CreatedByID, InsertedAt: c.InsertedAt}
}

func (s *server) createContact(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "organization_id", "Organization", http.StatusCreated, func(ctx context.Context, org uuid.UUID, req payment.ContactRequest) (payment.Contact, error) {
		return s.Payments.CreateContact(ctx, actorOf(r), org, req)
	}, newContactRecord)
}

func (s *server) listContacts(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	pages := s.pages("payment-contacts")
	req, err := pages.Parse(r.URL.Query())
	if err != nil {
		return err
	}
	cs, err := s.Payments.ListContacts(r.Context(), actorOf(r), org, req)
	return renderPage(w, pages, req, payment.ContactPageKey, newContactRecord, cs, err)
}

func (s *server) getContact(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "payment_contact_id", "Payment contact")
	if err != nil {
		return err
	}
	c, err := s.Payments.GetContact(r.Context(), actorOf(r), id)
	if err == nil {
		setOrganization(r, c.OrganizationID.String())
	}
	return render(w, http.StatusOK, newContactRecord, c, err)
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

func (s *server) preflight(w http.ResponseWriter, r *http.Request) error {
	var req payment.PreflightRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	setOrganization(r, req.OrganizationID)
	q, err := s.Payments.Preflight(r.Context(), actorOf(r), req)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, quoteRecord{ID: q.ID, ExpiresAt: q.ExpiresAt, Rail: q.Rail, Source: q.Source, Destination: q.Destination, Fee: q.Fee, Rate: q.Rate})
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
	return render(w, http.StatusCreated, newPaymentRecord, out.Payment, err)
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

func newPaymentRecord(p payment.Record) paymentRecord {
	return paymentRecord{ID: p.ID, OrganizationID: p.OrganizationID, Rail: p.Rail, Status: p.Status, Tag: p.Tag, QuoteID: p.QuoteID, BillID: p.BillID,
		PaymentContactID: p.PaymentContactID, PaymentBatchID: p.PaymentBatchID, ApprovalRequestID: p.ApprovalRequestID,
		TransactionID: p.TransactionID, Cancellable: p.Cancellable, Debited: p.Debited, Delivered: p.Delivered, Fee: p.Fee,
		DomainEvent: newDomainEventRecord(p.DomainEvent), RailState: p.RailState, PayoutReason: p.PayoutReason,
		StatementDescription: p.StatementDescription, InternalNotes: p.InternalNotes, CreatedByID: p.CreatedByID,
		InsertedAt: p.InsertedAt, UpdatedAt: p.UpdatedAt}
}

func (s *server) getPayment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "payment_id", "Payment")
	if err != nil {
		return err
	}
	p, err := s.Payments.GetPayment(r.Context(), actorOf(r), id)
	if err == nil {
		setOrganization(r, p.OrganizationID.String())
	}
	return render(w, http.StatusOK, newPaymentRecord, p, err)
}

func (s *server) cancelPayment(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "payment_id", "Payment")
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	p, err := s.BillPay.Cancel(r.Context(), actorOf(r), id)
	return render(w, http.StatusOK, newPaymentRecord, p, err)
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

func newApprovalRecord(x payment.Approval) approvalRecord {
	return approvalRecord{ID: x.ID, OrganizationID: x.OrganizationID, Status: x.Status, Kind: x.Kind, TargetID: x.TargetID,
		RequestedByID: x.RequestedByID, DecidedByID: x.DecidedByID, DecidedAt: x.DecidedAt, InsertedAt: x.InsertedAt}
}

// approvalsPage is a page of approvals with how many are pending in all.
type approvalsPage struct {
	page.Page[approvalRecord]
	PendingCount int `json:"pending_count"`
}

func (s *server) listApprovals(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
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

func (s *server) approveApproval(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "approval_id", "Approval")
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	x, err := s.Approving.Challenge(r.Context(), actorOf(r), id)
	return render(w, http.StatusOK, newApprovalRecord, x, err)
}

func (s *server) rejectApproval(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "approval_id", "Approval")
	if err != nil {
		return err
	}
	var req payment.RejectRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	x, err := s.BillPay.Reject(r.Context(), actorOf(r), id, req)
	return render(w, http.StatusOK, newApprovalRecord, x, err)
}

func (s *server) createBatch(w http.ResponseWriter, r *http.Request) error {
	var req payment.BatchRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	setOrganization(r, req.OrganizationID)
	b, err := s.Payments.CreateBatch(r.Context(), actorOf(r), req)
	return render(w, http.StatusCreated, newBatchRecord, b, err)
}

func (s *server) getBatch(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "batch_id", "Payment batch")
	if err != nil {
		return err
	}
	b, err := s.Payments.GetBatch(r.Context(), actorOf(r), id)
	return render(w, http.StatusOK, newBatchRecord, b, err)
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

func newBatchRecord(b payment.Batch) batchRecord {
	out := batchRecord{ID: b.ID, OrganizationID: b.OrganizationID, Status: b.Status, ApprovalRequestID: b.ApprovalRequestID,
		CreatedByID: b.CreatedByID, Payments: make([]paymentRecord, len(b.Payments)), InsertedAt: b.InsertedAt}
	for i, p := range b.Payments {
		out.Payments[i] = newPaymentRecord(p)
	}
	return out
}

type effectRecord struct {
	Direction string `json:"direction"`
	Total     string `json:"total"`
	Currency  string `json:"currency"`
}

type transactionRecord struct {
	ID             uuid.UUID     `json:"id"`
	OrganizationID uuid.UUID     `json:"organization_id"`
	Type           string        `json:"type"`
	RecordedAt     time.Time     `json:"recorded_at"`
	Effect         *effectRecord `json:"effect"`
	Description    string        `json:"description"`
	PaymentID      *uuid.UUID    `json:"payment_id"`
}

func newTransactionRecord(t ledger.Transaction) transactionRecord {
	return transactionRecord{ID: t.ID, OrganizationID: t.OrganizationID, Type: t.Type, RecordedAt: t.RecordedAt, Description: t.Description, PaymentID: t.PaymentID,
		Effect: &effectRecord{Direction: t.Direction, Total: money.Amount{Minor: t.Amount, Currency: t.Currency}.String(), Currency: t.Currency}}
}

// feedFilter reads the feed's query filters: inclusive UTC calendar dates and types.
func feedFilter(r *http.Request) (ledger.FeedFilter, error) {
	q := r.URL.Query()
	var f ledger.FeedFilter
	var errs apierr.Fields
	for name, target := range map[string]**time.Time{"date_start": &f.From, "date_end": &f.To} {
		v := q.Get(name)
		if v == "" {
			continue
		}
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			errs.Add(name, "must be a calendar date YYYY-MM-DD.")
			continue
		}
		if name == "date_end" {
			d = d.AddDate(0, 0, 1) // inclusive: up to the start of the next day
		}
		*target = &d
	}
	for _, t := range q["type"] {
		if !slices.Contains(ledger.TransactionTypes, t) {
			errs.Add("type", "must be one of deposit, fiat_outgoing, crypto_outgoing, crypto_incoming, card_transaction, internal_transfer, fee, reversal.")
			break
		}
		f.Types = append(f.Types, t)
	}
	if f.From != nil && f.To != nil && !f.From.Before(*f.To) {
		errs.Add("date_end", "must not be before date_start.")
	}
	return f, errs.Err()
}

func (s *server) listTransactions(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	filter, err := feedFilter(r)
	if err != nil {
		return err
	}
	pages := s.pages("transactions")
	req, err := pages.Parse(r.URL.Query(), "date_start", "date_end", "type")
	if err != nil {
		return err
	}
	ts, err := s.Ledger.Feed(r.Context(), actorOf(r), org, filter, req)
	return renderPage(w, pages, req, ledger.FeedPageKey, newTransactionRecord, ts, err)
}

func (s *server) getTransaction(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	id, err := pathID(r, "transaction_id", "Transaction")
	if err != nil {
		return err
	}
	t, err := s.Ledger.FeedItem(r.Context(), actorOf(r), org, id)
	return render(w, http.StatusOK, newTransactionRecord, t, err)
}

type balanceRecord struct {
	Currency  string `json:"currency"`
	Available string `json:"available"`
	Pending   string `json:"pending"`
}

func (s *server) balances(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	bs, err := s.Ledger.OrganizationBalances(r.Context(), actorOf(r), org)
	if err != nil {
		return err
	}
	out := make([]balanceRecord, len(bs))
	for i, b := range bs {
		out[i] = balanceRecord{Currency: b.Currency, Available: money.Amount{Minor: b.Available, Currency: b.Currency}.String(),
			Pending: money.Amount{Minor: b.Pending, Currency: b.Currency}.String()}
	}
	return writeJSON(w, http.StatusOK, list[balanceRecord]{out})
}

func (s *server) sandboxDeposit(w http.ResponseWriter, r *http.Request) error {
	return onPath(w, r, "organization_id", "Organization", http.StatusCreated, s.Sandbox.Deposit, newTransactionRecord)
}

type settleRequest struct {
	Outcome string `json:"outcome"`
}

func (s settleRequest) Validate() error {
	if s.Outcome != payment.Completed && s.Outcome != payment.Failed {
		return apierr.InvalidField("outcome", "must be completed or failed.")
	}
	return nil
}

func (s *server) sandboxSettle(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "payment_id", "Payment")
	if err != nil {
		return err
	}
	var req settleRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	p, err := s.BillPay.Settle(r.Context(), id, req.Outcome)
	return render(w, http.StatusOK, newPaymentRecord, p, err)
}
