// Package paymentrequest keeps payment requests: a program (through an API
// key) or a person proposes a payment to one of the organization's payment
// contacts, and a person who may pay answers it (docs/api.md, Payment
// requests). A request waits (pending) until it is accepted, declined,
// cancelled by its requester, or expires 30 days after it was made.
//
// The package knows payments only by id and status: checking the contact
// when a request is made, making the payment when one is accepted, and
// following that payment to its end are the payment-request flow's
// (internal/flow/requesting), which calls the operations here that take the
// caller's transaction. Every change of a request appends Updated in its
// transaction.
package paymentrequest

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Statuses of a request. Only pending changes; the other four are final.
const (
	Pending   = "pending"
	Accepted  = "accepted"
	Declined  = "declined"
	Cancelled = "cancelled"
	Expired   = "expired"
)

// Statuses lists every status, for validating a filter.
var Statuses = []string{Pending, Accepted, Declined, Cancelled, Expired}

// Kinds of requester.
const (
	ByAPIKey = "api_key"
	ByUser   = "user"
)

// Lifetime is how long a request waits for an answer before it expires.
const Lifetime = 30 * 24 * time.Hour

// Scopes an API key needs: to read requests, and to make or cancel them.
const (
	ScopeRead  = "payment_requests:read"
	ScopeWrite = "payment_requests:write"
)

// Updated is the event type appended on every change of a request (its
// data names the request; the realtime channel, the events list and
// webhooks render the request as its GET does).
const Updated = "payment_request.updated"

// Requester is who made a request: an API key (with no id when the sandbox
// plays a program) or a person; Name is theirs as it was then.
type Requester struct {
	Kind string     `json:"kind"`
	ID   *uuid.UUID `json:"id"`
	Name string     `json:"name"`
}

// Request is a payment request.
//
// Request is also the snapshot a create call's Idempotency-Key replays: its
// JSON keys are written out so that renaming a field cannot change what a
// stored snapshot replays to.
type Request struct {
	ID             uuid.UUID    `json:"id"`
	OrganizationID uuid.UUID    `json:"organization_id"`
	Status         string       `json:"status"`
	ContactID      uuid.UUID    `json:"payment_contact_id"`
	Amount         money.Amount `json:"amount"`
	Reference      *string      `json:"reference"`
	Reason         *string      `json:"reason"`
	Note           *string      `json:"note"`
	ExternalID     *string      `json:"external_id"`
	RequestedBy    Requester    `json:"requested_by"`
	PaymentID      *uuid.UUID   `json:"payment_id"`
	PaymentStatus  *string      `json:"payment_status"`
	DecidedByID    *uuid.UUID   `json:"decided_by_id"`
	DeclineReason  *string      `json:"decline_reason"`
	ExpiresAt      time.Time    `json:"expires_at"`
	CreatedAt      time.Time    `json:"created_at"`
	UpdatedAt      time.Time    `json:"updated_at"`
}

// PageKey positions a page after r (lists are newest first, by id).
func PageKey(r Request) page.Key { return page.Key{ID: r.ID.String()} }

const columns = `id, organization_id, status, payment_contact_id, amount, currency, reference, reason, note, external_id,
	requested_by_kind, requested_by_id, requested_by_name, payment_id, payment_status, decided_by_id, decline_reason,
	expires_at, created_at, updated_at`

func scan(row db.Scanner) (Request, error) {
	var r Request
	err := row.Scan(&r.ID, &r.OrganizationID, &r.Status, &r.ContactID, &r.Amount.Minor, &r.Amount.Currency, &r.Reference, &r.Reason,
		&r.Note, &r.ExternalID, &r.RequestedBy.Kind, &r.RequestedBy.ID, &r.RequestedBy.Name, &r.PaymentID, &r.PaymentStatus,
		&r.DecidedByID, &r.DeclineReason, &r.ExpiresAt, &r.CreatedAt, &r.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return r, errNotFound
	}
	r.ExpiresAt, r.CreatedAt, r.UpdatedAt = r.ExpiresAt.UTC(), r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return r, err
}

var errNotFound = apierr.NotFoundf("Payment request")

// Service keeps payment requests. Every time it applies is its
// transaction's Now (db.Tx).
type Service struct {
	DB *db.DB
}

// Check is the policy of the request operations of orgID: any member's
// session, or a key of the organization holding payment_requests:read (or
// :write, when write). An operation that pays or refuses to pay (accept,
// decline) passes people only (Decide).
func Check(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID, write bool) error {
	scope := ScopeRead
	if write {
		scope = ScopeWrite
	}
	_, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member, Write: write, Scope: scope})
	return err
}

// CreateRequest is the body of createPaymentRequest.
type CreateRequest struct {
	ContactID  string  `json:"payment_contact_id"`
	Amount     string  `json:"amount"`
	Currency   string  `json:"currency"`
	Reference  *string `json:"reference"`
	Reason     *string `json:"reason"`
	Note       *string `json:"note"`
	ExternalID *string `json:"external_id"`
}

// Longest texts, in characters: the reference is what the recipient's bank
// statement shows (as a payment's statement description).
const (
	ReferenceMax  = 35
	NoteMax       = 1000
	ExternalIDMax = 255
	ReasonMax     = 500
)

// Validate checks the body's fields; what depends on the contact (the
// reason and reference a bank transfer needs) is the flow's.
func (r CreateRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.ContactID)
	f.Check(err == nil, "payment_contact_id", "is required: the id of one of the organization's payment contacts.")
	if !money.IsCurrency(r.Currency) {
		f.Add("currency", "is required: an ISO 4217 currency code in capitals.")
	} else if _, why := r.amount(); why != "" {
		f.Add("amount", why)
	}
	text := func(field string, v *string, max int, what string) {
		if v != nil {
			n := utf8.RuneCountInString(strings.TrimSpace(*v))
			f.Check(n > 0 && n <= max, field, what)
		}
	}
	text("reference", r.Reference, ReferenceMax, "must be 1 to 35 characters: the text on the recipient's bank statement.")
	text("note", r.Note, NoteMax, "must be 1 to 1000 characters.")
	text("external_id", r.ExternalID, ExternalIDMax, "must be 1 to 255 characters.")
	if r.Reason != nil {
		f.Check(len(*r.Reason) == 6 && strings.HasPrefix(*r.Reason, "PYR"), "reason", "must be a payout reason code (PYR###) from the payments config.")
	}
	return f.Err()
}

// amount is the body's amount in its currency: positive, at the currency's
// precision, at most 15 digits before the decimal point; or why not.
func (r CreateRequest) amount() (money.Amount, string) {
	a, err := money.Parse(r.Amount, r.Currency)
	var pe *money.ParseError
	switch {
	case r.Amount == "":
		return a, "is required: a decimal string such as \"100.00\"."
	case errors.As(err, &pe):
		return a, pe.Reason + "."
	case err != nil || !a.IsPositive():
		return a, "must be a positive amount in " + r.Currency + "."
	}
	return a, ""
}

func trimmed(s *string) *string {
	if s == nil {
		return nil
	}
	t := strings.TrimSpace(*s)
	return &t
}

// Insert makes a pending request of orgID to contactID (checked by the
// caller) as by asks, expiring Lifetime from now, in tx: its row, its
// Updated event and the job that expires it.
func Insert(ctx context.Context, tx *db.Tx, orgID uuid.UUID, r CreateRequest, by Requester) (Request, error) {
	amount, why := r.amount()
	if why != "" {
		return Request{}, apierr.InvalidField("amount", why)
	}
	id := uuid.Must(uuid.NewV7())
	now := tx.Now()
	expires := now.Add(Lifetime)
	_, err := tx.ExecContext(ctx, `INSERT INTO payment_requests (id, organization_id, status, payment_contact_id, amount, currency,
		reference, reason, note, external_id, requested_by_kind, requested_by_id, requested_by_name, expires_at, created_at, updated_at)
		VALUES ($1, $2, 'pending', $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
		id, orgID, uuid.MustParse(r.ContactID), amount.Minor, amount.Currency, trimmed(r.Reference), r.Reason, trimmed(r.Note),
		trimmed(r.ExternalID), by.Kind, by.ID, by.Name, expires, now)
	if err != nil {
		return Request{}, err
	}
	if _, err := job.Enqueue(ctx, tx, expireJob, expirePayload{ID: id}, job.RunAt(expires)); err != nil {
		return Request{}, err
	}
	out, err := changed(ctx, tx, id)
	if err != nil {
		return Request{}, err
	}
	return out, audit.Record(ctx, tx, orgID, audit.PaymentRequestCreated, audit.To("payment_request", id))
}

// changed reads request id as tx left it and appends its Updated event.
func changed(ctx context.Context, tx *db.Tx, id uuid.UUID) (Request, error) {
	r, err := load(ctx, tx, id, "")
	if err != nil {
		return Request{}, err
	}
	_, err = event.Append(ctx, tx, r.OrganizationID, "payment_request-"+id.String(), id.String(), Updated,
		map[string]string{"payment_request_id": id.String()})
	return r, err
}

func load(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (Request, error) {
	return scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM payment_requests WHERE id = $1`+lock, id))
}

// Get returns request id of orgID to a, who may read requests there;
// another organization's request is not_found.
func (s *Service) Get(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Request, error) {
	q := s.DB.Reader()
	if err := Check(ctx, q, a, orgID, false); err != nil {
		return Request{}, organization.Hide(err, errNotFound)
	}
	r, err := load(ctx, q, id, "")
	if err == nil && r.OrganizationID != orgID {
		return Request{}, errNotFound
	}
	return r, err
}

// Find returns request id to a, who may read requests of its organization
// (not_found otherwise): for an event that names the request alone.
func (s *Service) Find(ctx context.Context, a actor.Actor, id uuid.UUID) (Request, error) {
	q := s.DB.Reader()
	r, err := load(ctx, q, id, "")
	if err != nil {
		return Request{}, err
	}
	if err := Check(ctx, q, a, r.OrganizationID, false); err != nil {
		return Request{}, organization.Hide(err, errNotFound)
	}
	return r, nil
}

// Filter narrows a list: one status, one external id (empty: any).
type Filter struct {
	Status     string
	ExternalID string
}

// List returns a page of orgID's requests, newest first, to a, who may read
// them.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f Filter, req page.Request) ([]Request, error) {
	q := s.DB.Reader()
	if err := Check(ctx, q, a, orgID, false); err != nil {
		return nil, err
	}
	where, args := `organization_id = $1`, []any{orgID}
	if f.Status != "" {
		args = append(args, f.Status)
		where += ` AND status = $2`
	}
	if f.ExternalID != "" {
		args = append(args, f.ExternalID)
		where += ` AND external_id = $` + itoa(len(args))
	}
	if after := req.AfterUUID(); after != nil {
		args = append(args, *after)
		where += ` AND id < $` + itoa(len(args))
	}
	args = append(args, req.Limit+1)
	return db.QueryAll(ctx, q, scan, `SELECT `+columns+` FROM payment_requests WHERE `+where+` ORDER BY id DESC LIMIT $`+itoa(len(args)), args...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// Decide checks that a may answer requests of orgID (accept or decline):
// a member who may make payments, in person; an API key never may
// (api_key_not_permitted), as a key can never pay.
func Decide(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID) error {
	_, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member, Write: true})
	return err
}

// Lock returns request id of orgID locked in tx, still pending, for a who
// may answer it (Decide): accepting it makes the payment, and the lock
// keeps a cancel, a decline or a second accept waiting until this
// transaction ends, after which they find it no longer pending. Another
// organization's request is not_found; a request answered or expired is a
// conflict.
func Lock(ctx context.Context, tx *db.Tx, a actor.Actor, orgID, id uuid.UUID) (Request, error) {
	if err := Decide(ctx, tx, a, orgID); err != nil {
		return Request{}, organization.Hide(err, errNotFound)
	}
	r, err := load(ctx, tx, id, tx.ForUpdate())
	if err == nil && r.OrganizationID != orgID {
		err = errNotFound
	}
	if err != nil {
		return Request{}, err
	}
	return r, open(tx, r)
}

// open is nil when r may still change, else the conflict that says why not.
func open(tx *db.Tx, r Request) error {
	switch {
	case r.Status != Pending:
		return apierr.Newf(apierr.Conflict, "This payment request is %s; only a pending request can change.", r.Status)
	case !tx.Now().Before(r.ExpiresAt):
		return apierr.New(apierr.Conflict, "This payment request has expired; only a pending request can change.")
	}
	return nil
}

// settle moves request id from pending to status with set (an SQL SET list
// whose parameters start at $3), in one conditional update: of two answers
// at the same moment exactly one changes it and the other finds it no
// longer pending (a conflict naming what it became).
func settle(ctx context.Context, tx *db.Tx, id uuid.UUID, status, set string, args ...any) (Request, error) {
	res, err := tx.ExecContext(ctx, `UPDATE payment_requests SET status = $2, updated_at = $3`+set+`
		WHERE id = $1 AND status = 'pending' AND expires_at > $3`, append([]any{id, status, tx.Now()}, args...)...)
	if err != nil {
		return Request{}, err
	}
	if n, err := res.RowsAffected(); err != nil {
		return Request{}, err
	} else if n == 0 {
		r, err := load(ctx, tx, id, "")
		if err != nil {
			return Request{}, err
		}
		if err := open(tx, r); err != nil {
			return Request{}, err
		}
		return Request{}, errors.New("paymentrequest: a pending request was not changed")
	}
	out, err := changed(ctx, tx, id)
	if err != nil {
		return Request{}, err
	}
	return out, audit.Record(ctx, tx, out.OrganizationID, settledActions[status], audit.To("payment_request", id))
}

// settledActions are the audit log's actions of the answers settle records.
var settledActions = map[string]string{
	Accepted:  audit.PaymentRequestAccepted,
	Declined:  audit.PaymentRequestDeclined,
	Cancelled: audit.PaymentRequestCancelled,
}

// MarkAccepted records that r (as Lock returned it) was accepted by userID
// and became payment paymentID, now in paymentStatus, in tx.
func MarkAccepted(ctx context.Context, tx *db.Tx, r Request, userID, paymentID uuid.UUID, paymentStatus string) (Request, error) {
	return settle(ctx, tx, r.ID, Accepted, `, decided_by_id = $4, payment_id = $5, payment_status = $6`, userID, paymentID, paymentStatus)
}

// DeclineRequest is the body of declinePaymentRequest.
type DeclineRequest struct {
	Reason string `json:"reason"`
}

// Validate checks the body's fields.
func (r DeclineRequest) Validate() error {
	n := utf8.RuneCountInString(strings.TrimSpace(r.Reason))
	if n == 0 || n > ReasonMax {
		return apierr.InvalidField("reason", "is required: 1 to 500 characters saying why.")
	}
	return nil
}

// Decline refuses request id of orgID for a, who may answer it (Decide),
// giving the requester r's reason. A request no longer pending is a
// conflict.
func (s *Service) Decline(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r DeclineRequest) (Request, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Request, error) {
		if err := Decide(ctx, tx, a, orgID); err != nil {
			return Request{}, organization.Hide(err, errNotFound)
		}
		if _, err := own(ctx, tx, orgID, id); err != nil {
			return Request{}, err
		}
		return settle(ctx, tx, id, Declined, `, decided_by_id = $4, decline_reason = $5`, a.UserID, strings.TrimSpace(r.Reason))
	})
}

// own reads request id of orgID (not_found when it is another's).
func own(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (Request, error) {
	r, err := load(ctx, q, id, "")
	if err == nil && r.OrganizationID != orgID {
		err = errNotFound
	}
	return r, err
}

// Cancel withdraws request id of orgID for its requester while it is
// pending: a key cancels the requests it made, a person their own (a key
// needs payment_requests:write). Anyone else is forbidden; a request no
// longer pending is a conflict.
func (s *Service) Cancel(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Request, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Request, error) {
		if err := Check(ctx, tx, a, orgID, true); err != nil {
			return Request{}, organization.Hide(err, errNotFound)
		}
		r, err := own(ctx, tx, orgID, id)
		if err != nil {
			return Request{}, err
		}
		if !requestedBy(r, a) {
			return Request{}, apierr.New(apierr.Forbidden, "Only who made a payment request can cancel it; a person who may pay can decline it instead.")
		}
		return settle(ctx, tx, id, Cancelled, ``)
	})
}

// requestedBy reports whether a made r.
func requestedBy(r Request, a actor.Actor) bool {
	by := r.RequestedBy
	if by.ID == nil {
		return false
	}
	if a.IsKey() {
		return by.Kind == ByAPIKey && *by.ID == a.Key.ID
	}
	return by.Kind == ByUser && *by.ID == a.UserID
}

// PaymentChanged records that payment paymentID is now in status: the
// request it came from (if any) shows it, with its Updated event, unless
// it showed that status already. It reports whether a request changed.
func PaymentChanged(ctx context.Context, tx *db.Tx, paymentID uuid.UUID, status string) (bool, error) {
	var id uuid.UUID
	err := tx.QueryRowContext(ctx, `UPDATE payment_requests SET payment_status = $2, updated_at = $3
		WHERE payment_id = $1 AND (payment_status IS NULL OR payment_status <> $2) RETURNING id`, paymentID, status, tx.Now()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	_, err = changed(ctx, tx, id)
	return err == nil, err
}

// Requested returns which of payments came from a payment request: one
// statement for a batch of payment events, most of which are not.
func Requested(ctx context.Context, q db.Reader, payments []uuid.UUID) (map[uuid.UUID]bool, error) {
	out := map[uuid.UUID]bool{}
	if len(payments) == 0 {
		return out, nil
	}
	placeholders := make([]string, len(payments))
	args := make([]any, len(payments))
	for i, id := range payments {
		placeholders[i] = "$" + strconv.Itoa(i+1)
		args[i] = id
	}
	ids, err := db.QueryAll(ctx, q, func(r db.Scanner) (uuid.UUID, error) {
		var id uuid.UUID
		return id, r.Scan(&id)
	}, `SELECT payment_id FROM payment_requests WHERE payment_id IN (`+strings.Join(placeholders, ", ")+`)`, args...)
	for _, id := range ids {
		out[id] = true
	}
	return out, err
}

// expireJob expires one request when its time comes.
const expireJob = "payment_request.expire"

type expirePayload struct {
	ID uuid.UUID `json:"payment_request_id"`
}

// Register adds the expiry worker to r.
func (s *Service) Register(r *job.Runner) { r.Handle(expireJob, s.expire) }

// expire moves a request still pending at its expiry to expired, with its
// Updated event; a request answered meanwhile stays as it is.
func (s *Service) expire(ctx context.Context, j job.Job) error {
	var p expirePayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE payment_requests SET status = 'expired', updated_at = $2
			WHERE id = $1 AND status = 'pending' AND expires_at <= $2`, p.ID, tx.Now())
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			// Answered meanwhile (done), or not yet due by this
			// transaction's clock: then it is tried again later.
			r, err := load(ctx, tx, p.ID, "")
			if errors.Is(err, errNotFound) {
				return job.Permanent(err)
			}
			if err == nil && r.Status == Pending {
				err = fmt.Errorf("paymentrequest: %s is not due to expire until %s", p.ID, r.ExpiresAt.Format(time.RFC3339))
			}
			return err
		}
		_, err = changed(ctx, tx, p.ID)
		return err
	})
}
