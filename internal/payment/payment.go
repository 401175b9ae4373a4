package payment

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// Payment statuses (CONTRACT §7).
const (
	AwaitingApproval = "awaiting_approval"
	Approved         = "approved"
	Processing       = "processing"
	Completed        = "completed"
	Failed           = "failed"
	Rejected         = "rejected"
	Cancelled        = "cancelled"
)

// IdempotencyWindow is how long an Idempotency-Key replays its response.
const IdempotencyWindow = 24 * time.Hour

// Record is a payment as the API shows it (spec 2.12, CONTRACT §7).
type Record struct {
	ID                   uuid.UUID    `json:"id"`
	OrganizationID       uuid.UUID    `json:"organization_id"`
	Rail                 string       `json:"rail"`
	Status               string       `json:"status"`
	Tag                  *string      `json:"tag,omitempty"`
	QuoteID              *uuid.UUID   `json:"quote_id"`
	BillID               *uuid.UUID   `json:"bill_id"`
	PaymentContactID     uuid.UUID    `json:"payment_contact_id"`
	PaymentBatchID       *uuid.UUID   `json:"payment_batch_id"`
	ApprovalRequestID    *uuid.UUID   `json:"approval_request_id"`
	TransactionID        *uuid.UUID   `json:"transaction_id"`
	Cancellable          bool         `json:"cancellable"`
	Debited              money.Amount `json:"debited"`
	Delivered            money.Amount `json:"delivered"`
	Fee                  money.Amount `json:"fee"`
	DomainEvent          event.Ref    `json:"domain_event"`
	RailState            *string      `json:"rail_state"`
	PayoutReason         *string      `json:"payout_reason"`
	StatementDescription *string      `json:"statement_description"`
	InternalNotes        *string      `json:"internal_notes"`
	CreatedByID          uuid.UUID    `json:"created_by_id"`
	InsertedAt           time.Time    `json:"inserted_at"`
	UpdatedAt            time.Time    `json:"updated_at"`
}

// stored is a payment row with what the ledger needs beyond the record.
type stored struct {
	Record
	source                   money.Amount
	debitEntryID, feeEntryID *uuid.UUID
}

const paymentColumns = `id, organization_id, rail, status, tag, quote_id, bill_id, payment_contact_id, payment_batch_id, approval_request_id,
	transaction_id, debited_amount, debited_currency, delivered_amount, delivered_currency, fee_amount, event_id, event_stream, event_type,
	rail_state, payout_reason, statement_description, internal_notes, created_by_id, inserted_at, updated_at, debit_entry_id, fee_entry_id`

func scanPayment(row interface{ Scan(...any) error }) (stored, error) {
	var p stored
	r := &p.Record
	err := row.Scan(&r.ID, &r.OrganizationID, &r.Rail, &r.Status, &r.Tag, &r.QuoteID, &r.BillID, &r.PaymentContactID, &r.PaymentBatchID,
		&r.ApprovalRequestID, &r.TransactionID, &r.Debited.Minor, &r.Debited.Currency, &r.Delivered.Minor, &r.Delivered.Currency,
		&r.Fee.Minor, &r.DomainEvent.EventID, &r.DomainEvent.Stream, &r.DomainEvent.Type, &r.RailState, &r.PayoutReason,
		&r.StatementDescription, &r.InternalNotes, &r.CreatedByID, &r.InsertedAt, &r.UpdatedAt, &p.debitEntryID, &p.feeEntryID)
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

func loadPayment(ctx context.Context, q db.Querier, id uuid.UUID, lock string) (stored, error) {
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

// ExecuteRequest is the body of executePayment (spec 4.10).
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

// hash is the request's fingerprint for Idempotency-Key reuse checks.
func (r ExecuteRequest) hash() string {
	b, _ := json.Marshal(r)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Executed is the outcome of an execute call: the payment, and whether it
// is a replay of an earlier call with the same Idempotency-Key.
type Executed struct {
	Payment json.RawMessage
	Replay  bool
}

// Execute creates a payment from a quote and submits it for approval; no
// money moves. With an Idempotency-Key (scoped to the organization, or to
// the bill) a repeat within 24 hours replays the first response, and the key
// with another body is idempotency_key_reused. The key is claimed in the
// same transaction as the payment, so a crash leaves neither behind and a
// concurrent duplicate waits for the first and then replays it.
func (s *Service) Execute(ctx context.Context, a actor.Actor, r ExecuteRequest, idempotencyKey string) (Executed, error) {
	var out Executed
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		quote, err := loadQuote(ctx, tx, uuid.MustParse(r.QuoteID), s.DB.ForUpdate())
		if err != nil {
			return err
		}
		if _, err := organization.Check(ctx, tx, a, quote.OrganizationID, organization.Need{Role: organization.Member, Write: true}); err != nil {
			return organization.Hide(err, apierr.NotFoundf("Quote"))
		}
		scope := "organization:" + quote.OrganizationID.String()
		if r.BillID != nil {
			scope = "bill:" + *r.BillID
		}
		if idempotencyKey != "" {
			replay, err := s.replay(ctx, tx, now, scope, idempotencyKey, r.hash())
			if err != nil || replay != nil {
				out = Executed{Payment: replay, Replay: true}
				return err
			}
		}
		record, err := s.create(ctx, tx, now, a, quote, r, nil, true, "")
		if err != nil {
			return err
		}
		body, err := json.Marshal(record)
		if err != nil {
			return err
		}
		out.Payment = body
		if idempotencyKey != "" {
			_, err = tx.ExecContext(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, expires_at, inserted_at)
				VALUES ($1, $2, $3, 201, $4, $5, $6)`, scope, idempotencyKey, r.hash(), string(body), now.Add(IdempotencyWindow), now)
		}
		return err
	})
	return out, err
}

// replay returns the stored response of (scope, key) when the same request
// was made within the window; an expired record is forgotten.
func (s *Service) replay(ctx context.Context, tx *db.Tx, now time.Time, scope, key, hash string) (json.RawMessage, error) {
	var storedHash, body string
	var expires time.Time
	err := tx.QueryRowContext(ctx, `SELECT request_hash, response_body, expires_at FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key).
		Scan(&storedHash, &body, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !now.Before(expires) {
		_, err := tx.ExecContext(ctx, `DELETE FROM idempotency_keys WHERE scope = $1 AND key = $2`, scope, key)
		return nil, err
	}
	if storedHash != hash {
		return nil, apierr.New(apierr.IdempotencyKeyReused, "This Idempotency-Key was used with a different request; use a new key for a new payment.")
	}
	return json.RawMessage(body), nil
}

// create makes one payment from a locked quote. A payment sent alone gets
// its own approval; a batch row (batchID set) is covered by the batch's.
func (s *Service) create(ctx context.Context, tx *db.Tx, now time.Time, a actor.Actor, quote Quote, r ExecuteRequest,
	batchID *uuid.UUID, ownApproval bool, fieldPrefix string) (Record, error) {
	switch {
	case quote.UsedAt != nil:
		return Record{}, apierr.New(apierr.QuoteAlreadyUsed, "This quote has already paid for a payment; ask for a new quote.")
	case !now.Before(quote.ExpiresAt):
		return Record{}, apierr.New(apierr.QuoteExpired, "This quote has expired; ask for a new quote.")
	}
	if err := r.checkRail(quote.Rail, fieldPrefix); err != nil {
		return Record{}, err
	}
	if r.BillID != nil {
		// Bills arrive with the bills feature; until then no bill id can be valid.
		return Record{}, apierr.NotFoundf("Bill")
	}
	res, err := tx.ExecContext(ctx, `UPDATE quotes SET used_at = $2 WHERE id = $1 AND used_at IS NULL`, quote.ID, now)
	if err != nil {
		return Record{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Record{}, apierr.New(apierr.QuoteAlreadyUsed, "This quote has already paid for a payment; ask for a new quote.")
	}
	id := uuid.Must(uuid.NewV7())
	var approvalID *uuid.UUID
	if ownApproval {
		aid, err := createApproval(ctx, tx, now, quote.OrganizationID, "payment", id, a.UserID)
		if err != nil {
			return Record{}, err
		}
		approvalID = &aid
	}
	debited, err := quote.Source.Add(quote.Fee)
	if err != nil {
		return Record{}, err
	}
	ref, err := event.Append(ctx, tx, now, "payment-"+id.String(), id.String(), "payment.created", map[string]any{
		"payment_id": id, "organization_id": quote.OrganizationID, "quote_id": quote.ID, "rail": quote.Rail,
		"debited": debited, "delivered": quote.Destination, "created_by_id": a.UserID,
	})
	if err != nil {
		return Record{}, err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO payments (id, organization_id, quote_id, bill_id, payment_contact_id, payment_batch_id,
		approval_request_id, rail, status, tag, debited_amount, debited_currency, delivered_amount, delivered_currency, fee_amount,
		payout_reason, statement_description, internal_notes, event_id, event_stream, event_type, created_by_id, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'awaiting_approval', $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $22)`,
		id, quote.OrganizationID, quote.ID, r.BillID, quote.ContactID, batchID, approvalID, quote.Rail, r.Tag,
		debited.Minor, debited.Currency, quote.Destination.Minor, quote.Destination.Currency, quote.Fee.Minor,
		r.PayoutReason, trimmed(r.StatementDescription), r.InternalNotes, ref.EventID, ref.Stream, ref.Type, a.UserID, now)
	if err != nil {
		return Record{}, err
	}
	p, err := loadPayment(ctx, tx, id, "")
	return p.Record, err
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
// in which case the funds come back.
func (s *Service) Cancel(ctx context.Context, a actor.Actor, id uuid.UUID) (Record, error) {
	var out Record
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		p, err := loadPayment(ctx, tx, id, s.DB.ForUpdate())
		if err != nil {
			return err
		}
		if _, err := organization.Check(ctx, tx, a, p.OrganizationID, organization.Need{Role: organization.Member, Write: true}); err != nil {
			return organization.Hide(err, apierr.NotFoundf("Payment"))
		}
		if p.CreatedByID != a.UserID {
			return apierr.New(apierr.Forbidden, "Only the person who made the payment can cancel it.")
		}
		if p.PaymentBatchID != nil {
			return apierr.New(apierr.Conflict, "This payment belongs to a batch; the batch's approval covers it.")
		}
		switch {
		case p.Status == AwaitingApproval:
			if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'cancelled', decided_by_id = $2, decided_at = $3 WHERE id = $1 AND status = 'pending'`,
				p.ApprovalRequestID, a.UserID, now); err != nil {
				return err
			}
		case p.Cancellable:
			if err := s.reverse(ctx, tx, now, p, "cancelled before the custody partner sent it"); err != nil {
				return err
			}
		default:
			return apierr.Newf(apierr.Conflict, "This payment can no longer be cancelled (it is %s).", p.Status)
		}
		if err := setStatus(ctx, tx, now, p.ID, Cancelled, nil); err != nil {
			return err
		}
		p, err = loadPayment(ctx, tx, id, "")
		out = p.Record
		return err
	})
	return out, err
}

func setStatus(ctx context.Context, tx *db.Tx, now time.Time, id uuid.UUID, status string, railState *string) error {
	_, err := tx.ExecContext(ctx, `UPDATE payments SET status = $2, rail_state = COALESCE($3, rail_state), updated_at = $4 WHERE id = $1`,
		id, status, railState, now)
	return err
}
