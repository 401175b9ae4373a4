package payment

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/idempotency"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Payment statuses (docs/api.md, Payments).
const (
	AwaitingApproval = "awaiting_approval"
	Approved         = "approved"
	Processing       = "processing"
	Completed        = "completed"
	Failed           = "failed"
	Rejected         = "rejected"
	Cancelled        = "cancelled"
)

// Statuses lists the filter values of listPayments: every payment status.
var Statuses = []string{AwaitingApproval, Approved, Processing, Completed, Failed, Rejected, Cancelled}

// Record is a payment as the API shows it.
//
// Record is also the snapshot an execute call's Idempotency-Key replays
// (idempotency.Do): its JSON keys are the field names the snapshots have
// always been stored under, written out so that renaming a field cannot
// change what a stored snapshot replays to.
type Record struct {
	ID                   uuid.UUID    `json:"ID"`
	OrganizationID       uuid.UUID    `json:"OrganizationID"`
	Rail                 string       `json:"Rail"`
	Status               string       `json:"Status"`
	Tag                  *string      `json:"Tag"`
	QuoteID              *uuid.UUID   `json:"QuoteID"`
	BillID               *uuid.UUID   `json:"BillID"`
	PaymentContactID     uuid.UUID    `json:"PaymentContactID"`
	PaymentBatchID       *uuid.UUID   `json:"PaymentBatchID"`
	ApprovalRequestID    *uuid.UUID   `json:"ApprovalRequestID"`
	TransactionID        *uuid.UUID   `json:"TransactionID"`
	Cancellable          bool         `json:"Cancellable"`
	Debited              money.Amount `json:"Debited"`
	Delivered            money.Amount `json:"Delivered"`
	Fee                  money.Amount `json:"Fee"`
	DomainEvent          event.Ref    `json:"DomainEvent"`
	RailState            *string      `json:"RailState"`
	PayoutReason         *string      `json:"PayoutReason"`
	StatementDescription *string      `json:"StatementDescription"`
	InternalNotes        *string      `json:"InternalNotes"`
	CreatedByID          uuid.UUID    `json:"CreatedByID"`
	InsertedAt           time.Time    `json:"InsertedAt"`
	UpdatedAt            time.Time    `json:"UpdatedAt"`
}

// stored is a payment row with what the ledger needs beyond the record.
type stored struct {
	Record
	source                   money.Amount
	debitEntryID, feeEntryID *uuid.UUID
	// contactName is the name of the payment's contact, read with the
	// payments an approval covers (targets) only.
	contactName string
}

const paymentColumns = `id, organization_id, rail, status, tag, quote_id, bill_id, payment_contact_id, payment_batch_id, approval_request_id,
	transaction_id, debited_amount, debited_currency, delivered_amount, delivered_currency, fee_amount, event_id, event_stream, event_type,
	rail_state, payout_reason, statement_description, internal_notes, created_by_id, inserted_at, updated_at, debit_entry_id, fee_entry_id`

// paymentColumnsOf is paymentColumns of the table aliased alias in a join.
func paymentColumnsOf(alias string) string {
	columns := strings.Split(paymentColumns, ",")
	for i, c := range columns {
		columns[i] = alias + "." + strings.TrimSpace(c)
	}
	return strings.Join(columns, ", ")
}

func scanPayment(row db.Scanner) (stored, error) { return scanPaymentWith(row) }

// scanPaymentWith scans paymentColumns, then the columns after them into extra.
func scanPaymentWith(row db.Scanner, extra ...any) (stored, error) {
	var p stored
	r := &p.Record
	err := row.Scan(append([]any{&r.ID, &r.OrganizationID, &r.Rail, &r.Status, &r.Tag, &r.QuoteID, &r.BillID, &r.PaymentContactID, &r.PaymentBatchID,
		&r.ApprovalRequestID, &r.TransactionID, &r.Debited.Minor, &r.Debited.Currency, &r.Delivered.Minor, &r.Delivered.Currency,
		&r.Fee.Minor, &r.DomainEvent.EventID, &r.DomainEvent.Stream, &r.DomainEvent.Type, &r.RailState, &r.PayoutReason,
		&r.StatementDescription, &r.InternalNotes, &r.CreatedByID, &r.InsertedAt, &r.UpdatedAt, &p.debitEntryID, &p.feeEntryID}, extra...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return p, apierr.NotFoundf("Payment")
	}
	r.Fee.Currency = r.Debited.Currency
	r.DomainEvent.AggregateID = r.ID.String()
	r.InsertedAt, r.UpdatedAt = r.InsertedAt.UTC(), r.UpdatedAt.UTC()
	// Crypto withdrawals wait for the custody partner between approval and the rail.
	r.Cancellable = r.Rail == RailCrypto && r.Status == Approved
	p.source = money.Amount{Minor: r.Debited.Minor - r.Fee.Minor, Currency: r.Debited.Currency}
	return p, err
}

func loadPayment(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (stored, error) {
	return scanPayment(q.QueryRowContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE id = $1`+lock, id))
}

// GetPayment returns a payment of an organization the actor belongs to.
func (s *Service) GetPayment(ctx context.Context, a actor.Actor, id uuid.UUID) (Record, error) {
	q := s.DB.Reader()
	p, err := loadPayment(ctx, q, id, "")
	if err != nil {
		return Record{}, err
	}
	if _, err := organization.Check(ctx, q, a, p.OrganizationID, organization.Need{Role: organization.Member}); err != nil {
		return Record{}, organization.Hide(err, apierr.NotFoundf("Payment"))
	}
	return p.Record, nil
}

// ListPayments returns a page of the organization's payments, newest
// first, optionally only those of one status (one of Statuses; "" for
// all). The unfiltered page walks payments_organization_idx and a filtered
// one payments_organization_status_idx, so either reads only the rows it
// returns.
func (s *Service) ListPayments(ctx context.Context, a actor.Actor, orgID uuid.UUID, status string, req page.Request) ([]Record, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member}); err != nil {
		return nil, err
	}
	// The status condition is written only when filtering: "($2 = '' OR
	// status = $2)" would keep SQLite from seeking the status index.
	where, args := `organization_id = $1`, []any{orgID}
	if status != "" {
		args = append(args, status)
		where += ` AND status = $2`
	}
	if after := req.AfterUUID(); after != nil {
		args = append(args, *after)
		where += ` AND id < $` + strconv.Itoa(len(args))
	}
	args = append(args, req.Limit+1)
	rows, err := db.QueryAll(ctx, q, scanPayment, `SELECT `+paymentColumns+` FROM payments WHERE `+where+
		` ORDER BY id DESC LIMIT $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(rows))
	for i, p := range rows {
		out[i] = p.Record
	}
	return out, nil
}

// PageKey positions a page of payments after p.
func PageKey(p Record) page.Key { return page.Key{ID: p.ID.String()} }

// ExecuteRequest is the body of executePayment.
type ExecuteRequest struct {
	QuoteID              string  `json:"quote_id"`
	PayoutReason         *string `json:"payout_reason"`
	StatementDescription *string `json:"statement_description"`
	InternalNotes        *string `json:"internal_notes"`
	Tag                  *string `json:"tag"`
	BillID               *string `json:"bill_id"`
}

// Validate checks the fields that do not depend on the quote's rail.
func (r ExecuteRequest) Validate() error { return r.validate("") }

func (r ExecuteRequest) validate(prefix string) error {
	var f apierr.Fields
	_, err := uuid.Parse(r.QuoteID)
	f.Check(err == nil, prefix+"quote_id", "is required: the id of a quote from the payment preflight.")
	if r.StatementDescription != nil {
		f.Check(*r.StatementDescription != "" && len([]rune(*r.StatementDescription)) <= StatementDescriptionMax,
			prefix+"statement_description", "must be 1 to 35 characters.")
	}
	if r.InternalNotes != nil {
		f.Check(len(*r.InternalNotes) <= 1000, prefix+"internal_notes", "must be at most 1000 characters.")
	}
	if r.Tag != nil {
		f.Check(*r.Tag != "" && len(*r.Tag) <= 64, prefix+"tag", "must be 1 to 64 characters.")
	}
	if r.BillID != nil {
		_, err := uuid.Parse(*r.BillID)
		f.Check(err == nil, prefix+"bill_id", "must be a UUID.")
	}
	return f.Err()
}

// checkRail applies the rules that depend on the quote's rail: a fiat
// payment needs a known payout reason and a statement description.
func (r ExecuteRequest) checkRail(rail, prefix string) error {
	var f apierr.Fields
	if rail == RailFiat {
		f.Check(r.PayoutReason != nil && slices.ContainsFunc(PayoutReasons, func(p PayoutReason) bool { return p.Code == *r.PayoutReason }),
			prefix+"payout_reason", "is required for fiat payments: a code from the payments config (PYR###).")
		f.Check(r.StatementDescription != nil, prefix+"statement_description", "is required for fiat payments (at most 35 characters).")
	}
	return f.Err()
}

// Executed is the outcome of an execute call: the payment as it was
// created, and whether this call replays an earlier one with the same
// Idempotency-Key (then no payment was created now).
type Executed struct {
	Payment  Record
	Replayed bool
}

// Execute creates a payment from a quote and submits it for approval; no
// money moves. With an Idempotency-Key (scoped to the organization) a
// repeat within idempotency.Window returns the payment as the first call
// created it, and the key with another body is idempotency_key_reused. The
// key is stored in the same transaction as the payment, so a crash leaves
// neither behind, and a concurrent duplicate waits on the quote's lock for
// the first and then replays it.
//
// A payment of a bill (r.BillID) is not made here: the bill-payment flow
// makes it with LockQuote and ExecuteQuote and requests the bill in the
// same transaction.
func (s *Service) Execute(ctx context.Context, a actor.Actor, r ExecuteRequest, idempotencyKey string) (Executed, error) {
	if r.BillID != nil {
		return Executed{}, errors.New("payment: a payment of a bill is executed with its bill, by the bill-payment flow")
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Executed, error) {
		quote, err := s.LockQuote(ctx, tx, a, uuid.MustParse(r.QuoteID))
		if err != nil {
			return Executed{}, err
		}
		return s.ExecuteQuote(ctx, tx, a, quote, r, idempotencyKey)
	})
}

// LockQuote returns quote id locked in tx for a, a member of its
// organization who may write, before a payment is executed from it: the
// lock makes a concurrent execute of the same quote wait for this one.
// Another organization's quote is not_found.
func (s *Service) LockQuote(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Quote, error) {
	quote, err := loadQuote(ctx, tx, id, tx.ForUpdate())
	if err != nil {
		return Quote{}, err
	}
	if _, err := organization.Check(ctx, tx, a, quote.OrganizationID, organization.Need{Role: organization.Member, Write: true}); err != nil {
		return Quote{}, organization.Hide(err, apierr.NotFoundf("Quote"))
	}
	return quote, nil
}

// ExecuteQuote is Execute in the caller's transaction tx, from quote as
// LockQuote returned it: the payment r asks for, under its own approval,
// or, with idempotencyKey, the one the key's first call made (Replayed;
// the key of a payment of a bill is scoped to the bill). r.BillID is
// recorded on the payment; requesting the bill is the caller's.
func (s *Service) ExecuteQuote(ctx context.Context, tx *db.Tx, a actor.Actor, quote Quote, r ExecuteRequest, idempotencyKey string) (Executed, error) {
	newPayment := func() (Record, error) { return s.create(ctx, tx, a, quote, r, nil, true, "") }
	if idempotencyKey == "" {
		p, err := newPayment()
		return Executed{Payment: p}, err
	}
	k, err := r.idempotencyKey(quote.OrganizationID, idempotencyKey)
	if err != nil {
		return Executed{}, err
	}
	p, replayed, err := idempotency.Do(ctx, tx, k, newPayment)
	return Executed{Payment: p, Replayed: replayed}, err
}

// idempotencyKey scopes a client's key to the organization, or to the bill
// the payment pays, and fingerprints the request.
func (r ExecuteRequest) idempotencyKey(orgID uuid.UUID, key string) (idempotency.Key, error) {
	scope := "organization:" + orgID.String()
	if r.BillID != nil {
		scope = "bill:" + *r.BillID
	}
	hash, err := idempotency.HashInput(r)
	return idempotency.Key{Scope: scope, Key: key, InputHash: hash}, err
}

// create makes one payment from a locked quote. A payment sent alone gets
// its own approval; a batch row (batchID set) is covered by the batch's.
func (s *Service) create(ctx context.Context, tx *db.Tx, a actor.Actor, quote Quote, r ExecuteRequest,
	batchID *uuid.UUID, ownApproval bool, fieldPrefix string) (Record, error) {
	switch {
	case quote.UsedAt != nil:
		return Record{}, apierr.New(apierr.QuoteAlreadyUsed, "This quote has already paid for a payment; ask for a new quote.")
	case !tx.Now().Before(quote.ExpiresAt):
		return Record{}, apierr.New(apierr.QuoteExpired, "This quote has expired; ask for a new quote.")
	}
	if err := r.checkRail(quote.Rail, fieldPrefix); err != nil {
		return Record{}, err
	}
	res, err := tx.ExecContext(ctx, `UPDATE quotes SET used_at = $2 WHERE id = $1 AND used_at IS NULL`, quote.ID, tx.Now())
	if err != nil {
		return Record{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Record{}, apierr.New(apierr.QuoteAlreadyUsed, "This quote has already paid for a payment; ask for a new quote.")
	}
	id := uuid.Must(uuid.NewV7())
	var approvalID *uuid.UUID
	if ownApproval {
		aid, err := createApproval(ctx, tx, quote.OrganizationID, "payment", id, a.UserID)
		if err != nil {
			return Record{}, err
		}
		approvalID = &aid
	}
	debited, err := quote.Source.Add(quote.Fee)
	if err != nil {
		return Record{}, err
	}
	ref, err := event.Append(ctx, tx, quote.OrganizationID, "payment-"+id.String(), id.String(), "payment.created", map[string]any{
		"payment_id": id, "organization_id": quote.OrganizationID, "quote_id": quote.ID, "rail": quote.Rail,
		"debited": debited, "delivered": quote.Destination, "created_by_id": a.UserID,
	})
	if err != nil {
		return Record{}, err
	}
	// The row comes back as stored (RETURNING), as a later read would show it.
	p, err := scanPayment(tx.QueryRowContext(ctx, `INSERT INTO payments (id, organization_id, quote_id, bill_id, payment_contact_id, payment_batch_id,
		approval_request_id, rail, status, tag, debited_amount, debited_currency, delivered_amount, delivered_currency, fee_amount,
		payout_reason, statement_description, internal_notes, event_id, event_stream, event_type, created_by_id, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'awaiting_approval', $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $22)
		RETURNING `+paymentColumns,
		id, quote.OrganizationID, quote.ID, r.BillID, quote.ContactID, batchID, approvalID, quote.Rail, r.Tag,
		debited.Minor, debited.Currency, quote.Destination.Minor, quote.Destination.Currency, quote.Fee.Minor,
		r.PayoutReason, trimmed(r.StatementDescription), r.InternalNotes, ref.EventID, ref.Stream, ref.Type, a.UserID, tx.Now()))
	if err != nil {
		return Record{}, err
	}
	if err := paymentUpdated(ctx, tx, quote.OrganizationID, id, AwaitingApproval); err != nil {
		return Record{}, err
	}
	return p.Record, audit.Record(ctx, tx, quote.OrganizationID, audit.PaymentExecuted, audit.To("payment", id))
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

// Cancel withdraws a payment its initiator no longer wants: while it awaits
// approval, or (crypto) while approved funds wait for the custody partner,
// in which case the funds come back. An approval recorded in the app at
// the same moment comes first or after, never both: the approval row is
// locked before the payment's, as every transaction that changes both
// does (see lockApprovalOf).
//
// Cancel runs in the caller's transaction tx and returns the payment
// cancelled; the caller releases what waited on it (the bill it pays) in
// tx. A transaction aborted as a deadlock or a serialization failure may be
// run again (db.InTxRetry): everything Cancel does is in tx.
func (s *Service) Cancel(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Record, error) {
	// Who may cancel, and which approval covers the payment, never change:
	// they are read before any lock.
	p, err := loadPayment(ctx, tx, id, "")
	if err != nil {
		return Record{}, err
	}
	if _, err := organization.Check(ctx, tx, a, p.OrganizationID, organization.Need{Role: organization.Member, Write: true}); err != nil {
		return Record{}, organization.Hide(err, apierr.NotFoundf("Payment"))
	}
	if p.CreatedByID != a.UserID {
		return Record{}, apierr.New(apierr.Forbidden, "Only the person who made the payment can cancel it.")
	}
	if p.PaymentBatchID != nil {
		return Record{}, apierr.New(apierr.Conflict, "This payment belongs to a batch; the batch's approval covers it.")
	}
	if p, err = lockApprovalOf(ctx, tx, p); err != nil {
		return Record{}, err
	}
	switch {
	case p.Status == AwaitingApproval:
		if err := decideApproval(ctx, tx, *p.ApprovalRequestID, ApprovalCancelled, a.UserID, nil); err != nil {
			return Record{}, err
		}
	case p.Cancellable:
		if err := reverse(ctx, tx, p, "cancelled before the custody partner sent it"); err != nil {
			return Record{}, err
		}
	default:
		return Record{}, apierr.Newf(apierr.Conflict, "This payment can no longer be cancelled (it is %s).", p.Status)
	}
	cancelled, err := s.setStatus(ctx, tx, p.ID, Cancelled, nil)
	if err != nil {
		return Record{}, err
	}
	return cancelled, audit.Record(ctx, tx, p.OrganizationID, audit.PaymentCancelled, audit.To("payment", p.ID))
}

// lockApprovalOf locks the approval of payment p, then p itself, and
// returns p as it now stands. The lock order of a payment and its approval
// is the approval first, then its payments by id, then what they touch
// (the bill, the ledger): recording an approval in the app locks the
// approval, then the payments it covers; a transaction that took the
// payment first and then the approval would wait on it while it waits on
// the payment, and PostgreSQL would abort one of them as a deadlock.
func lockApprovalOf(ctx context.Context, tx *db.Tx, p stored) (stored, error) {
	if p.ApprovalRequestID != nil {
		if _, err := loadApproval(ctx, tx, *p.ApprovalRequestID, tx.ForUpdate()); err != nil {
			return stored{}, err
		}
	}
	return loadPayment(ctx, tx, p.ID, tx.ForUpdate())
}

// setStatus moves a payment to status (and its rail to railState, when
// given) and returns it as it now is.
func (s *Service) setStatus(ctx context.Context, tx *db.Tx, id uuid.UUID, status string, railState *string) (Record, error) {
	p, err := scanPayment(tx.QueryRowContext(ctx, `UPDATE payments SET status = $2, rail_state = COALESCE($3, rail_state), updated_at = $4
		WHERE id = $1 RETURNING `+paymentColumns, id, status, railState, tx.Now()))
	if err != nil {
		return Record{}, err
	}
	return p.Record, paymentUpdated(ctx, tx, p.OrganizationID, id, p.Status)
}

// Event types of the organization's realtime channel (docs/api.md, Realtime): a
// payment or approval changed. The event holds only the id; the channel
// shows the record as it is when it delivers the event.
const (
	PaymentUpdated  = "payment.updated"
	ApprovalUpdated = "approval.updated"
)

// paymentUpdated appends PaymentUpdated for payment id of orgID, now in
// status, in tx. The status it moved to rides along (the channel shows the
// payment as it is when it delivers the event), so that a flow following
// payments (docs/api.md, Payment requests) sees every step even when it
// reads the event after later ones.
func paymentUpdated(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID, status string) error {
	_, err := event.Append(ctx, tx, orgID, "payment-"+id.String(), id.String(), PaymentUpdated,
		map[string]string{"payment_id": id.String(), "status": status})
	return err
}

// PaymentChange is what a PaymentUpdated event says: which payment, and
// the status it moved to (empty in events recorded before it was carried).
type PaymentChange struct {
	PaymentID uuid.UUID `json:"payment_id"`
	Status    string    `json:"status"`
}

// StatusOf returns the status of payment id as q sees it, for a flow that
// follows payments; not_found when there is none.
func StatusOf(ctx context.Context, q db.Reader, id uuid.UUID) (string, error) {
	p, err := loadPayment(ctx, q, id, "")
	return p.Status, err
}

// updated appends typ (PaymentUpdated or ApprovalUpdated) for the payment or
// approval id of orgID in tx.
func updated(ctx context.Context, tx *db.Tx, orgID uuid.UUID, typ string, id uuid.UUID) error {
	kind, _, _ := strings.Cut(typ, ".")
	_, err := event.Append(ctx, tx, orgID, kind+"-"+id.String(), id.String(), typ, map[string]string{kind + "_id": id.String()})
	return err
}
