package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Approval statuses.
const (
	ApprovalPending   = "pending"
	ApprovalApproved  = "approved"
	ApprovalRejected  = "rejected"
	ApprovalCancelled = "cancelled"
)

// ApprovalStatuses lists the filter values of listApprovals.
var ApprovalStatuses = []string{ApprovalPending, ApprovalApproved, ApprovalRejected, ApprovalCancelled}

// Approval is a request for a person to approve a payment or a batch.
type Approval struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Status         string
	Kind           string
	TargetID       uuid.UUID
	RequestedByID  uuid.UUID
	DecidedByID    *uuid.UUID
	DecidedAt      *time.Time
	InsertedAt     time.Time
}

func createApproval(ctx context.Context, tx *db.Tx, orgID uuid.UUID, kind string, target, requester uuid.UUID) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	_, err := tx.ExecContext(ctx, `INSERT INTO approvals (id, organization_id, kind, target_id, status, requested_by_id, inserted_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $6)`, id, orgID, kind, target, requester, tx.Now())
	if err != nil {
		return id, err
	}
	return id, updated(ctx, tx, orgID, ApprovalUpdated, id)
}

// decideApproval closes a pending approval as status (approved, rejected
// or cancelled), decided by decider at tx.Now(), with the reason given for a
// rejection. An approval no longer pending is left as it is.
func decideApproval(ctx context.Context, tx *db.Tx, id uuid.UUID, status string, decider uuid.UUID, reason *string) error {
	var orgID uuid.UUID
	err := tx.QueryRowContext(ctx, `UPDATE approvals SET status = $2, decided_by_id = $3, decided_at = $4, reason = COALESCE($5, reason)
		WHERE id = $1 AND status = 'pending' RETURNING organization_id`, id, status, decider, tx.Now(), reason).Scan(&orgID)
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	return updated(ctx, tx, orgID, ApprovalUpdated, id)
}

const approvalColumns = `id, organization_id, status, kind, target_id, requested_by_id, decided_by_id, decided_at, inserted_at`

func scanApproval(row db.Scanner) (Approval, error) {
	var a Approval
	err := row.Scan(&a.ID, &a.OrganizationID, &a.Status, &a.Kind, &a.TargetID, &a.RequestedByID, &a.DecidedByID, &a.DecidedAt, &a.InsertedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return a, apierr.NotFoundf("Approval")
	}
	a.InsertedAt = a.InsertedAt.UTC()
	if a.DecidedAt != nil {
		t := a.DecidedAt.UTC()
		a.DecidedAt = &t
	}
	return a, err
}

func loadApproval(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (Approval, error) {
	return scanApproval(q.QueryRowContext(ctx, `SELECT `+approvalColumns+` FROM approvals WHERE id = $1`+lock, id))
}

// ListApprovals returns a page of the organization's approvals, newest
// first, optionally of one status, and how many are pending in all.
func (s *Service) ListApprovals(ctx context.Context, a actor.Actor, orgID uuid.UUID, status string, req page.Request) ([]Approval, int, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Member}); err != nil {
		return nil, 0, err
	}
	var pending int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM approvals WHERE organization_id = $1 AND status = 'pending'`, orgID).Scan(&pending); err != nil {
		return nil, 0, err
	}
	out, err := db.QueryAll(ctx, q, scanApproval, `SELECT `+approvalColumns+` FROM approvals
		WHERE organization_id = $1 AND ($2 = '' OR status = $2) AND (id < $3 OR $3 IS NULL) ORDER BY id DESC LIMIT $4`,
		orgID, status, req.AfterUUID(), req.Limit+1)
	return out, pending, err
}

// GetApproval returns an approval of an organization the actor belongs to.
func (s *Service) GetApproval(ctx context.Context, a actor.Actor, id uuid.UUID) (Approval, error) {
	q := s.DB.Reader()
	x, err := loadApproval(ctx, q, id, "")
	if err != nil {
		return Approval{}, err
	}
	if _, err := organization.Check(ctx, q, a, x.OrganizationID, organization.Need{Role: organization.Member}); err != nil {
		return Approval{}, organization.Hide(err, apierr.NotFoundf("Approval"))
	}
	return x, nil
}

// ApprovalPageKey positions a page after x.
func ApprovalPageKey(x Approval) page.Key { return page.Key{ID: x.ID.String()} }

// approvable loads an approval for an approver: not_found outside the
// organization, forbidden to members (approvers are owners and admins).
func (s *Service) approvable(ctx context.Context, q db.Reader, a actor.Actor, id uuid.UUID, lock string) (Approval, error) {
	x, err := loadApproval(ctx, q, id, lock)
	if err != nil {
		return x, err
	}
	if _, err := organization.Check(ctx, q, a, x.OrganizationID, organization.Need{Role: organization.Admin, Write: true}); err != nil {
		if apierr.Is(err, apierr.Forbidden) {
			return x, apierr.New(apierr.Forbidden, "Only owners and admins approve payments.")
		}
		return x, organization.Hide(err, apierr.NotFoundf("Approval"))
	}
	return x, nil
}

// targets lists the payments an approval covers, each with its contact's
// name, locked for the transaction when lock is tx.ForUpdateOf("p") (the
// payments only: a contact, which many payments share, is read, not locked).
func targets(ctx context.Context, q db.Reader, x Approval, lock string) ([]stored, error) {
	column := "p.id"
	if x.Kind == "payment_batch" {
		column = "p.payment_batch_id"
	}
	return db.QueryAll(ctx, q, func(row db.Scanner) (stored, error) {
		var name string
		p, err := scanPaymentWith(row, &name)
		p.contactName = name
		return p, err
	}, `SELECT `+paymentColumnsOf("p")+`, c.name FROM payments p JOIN payment_contacts c ON c.id = p.payment_contact_id
		WHERE `+column+` = $1 ORDER BY p.id`+lock, x.TargetID)
}

// needs sums what the payments take from each currency's balance. The sums
// are checked: a sum beyond int64 (money.ErrOverflow) is more than any
// balance holds, so the payments cannot be covered.
func needs(ps []stored) (map[string]money.Amount, error) {
	out := map[string]money.Amount{}
	for _, p := range ps {
		if err := addTo(out, p.Debited); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addTo adds a to the total of its currency in totals, refusing a sum
// beyond int64 with money.ErrOverflow.
func addTo(totals map[string]money.Amount, a money.Amount) error {
	sum, err := money.Amount{Minor: totals[a.Currency].Minor, Currency: a.Currency}.Add(a)
	if err == nil {
		totals[a.Currency] = sum
	}
	return err
}

// fundsCover reports whether the organization's available balances cover
// what the payments take.
func fundsCover(ctx context.Context, q db.Reader, orgID uuid.UUID, ps []stored) (bool, error) {
	total, err := needs(ps)
	if errors.Is(err, money.ErrOverflow) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for cur, need := range total {
		bal, err := ledger.AvailableBalance(ctx, q, orgID, cur)
		if err != nil || bal < need.Minor {
			return false, err
		}
	}
	return true, nil
}

// ToSign is the first half of a person's approval of a payment (or batch):
// it returns the approval and what they sign to approve it, naming amount,
// currency and recipient. The approving flow (internal/flow/approving) asks
// for their signature on it in the approving app; the approval is recorded
// (RecordApproval) the moment the app answers. An approval approved
// already, a retry after that, comes back with no summary. Funds are
// checked now (insufficient_funds and nothing to sign when they fall short)
// and again when the approval is recorded; an approval rejected or
// cancelled is a conflict.
func (s *Service) ToSign(ctx context.Context, a actor.Actor, id uuid.UUID) (Approval, string, error) {
	q := s.DB.Reader()
	x, err := s.approvable(ctx, q, a, id, "")
	if err != nil {
		return x, "", err
	}
	switch x.Status {
	case ApprovalApproved:
		return x, "", nil
	case ApprovalRejected, ApprovalCancelled:
		return x, "", apierr.Newf(apierr.Conflict, "This approval was %s.", x.Status)
	}
	ps, err := targets(ctx, q, x, "")
	if err != nil {
		return x, "", err
	}
	ok, err := fundsCover(ctx, q, x.OrganizationID, ps)
	if err != nil {
		return x, "", err
	}
	if !ok {
		return x, "", ledger.ErrInsufficientFunds
	}
	text, err := summary(ps)
	return x, text, err
}

// summary names what is approved: amount, currency and recipient.
func summary(ps []stored) (string, error) {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		parts = append(parts, fmt.Sprintf("Pay %s %s to %s (%s %s debited, fee included)",
			p.Delivered.String(), p.Delivered.Currency, p.contactName, p.Debited.String(), p.Debited.Currency))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	total, err := needs(ps)
	if err != nil {
		return "", err
	}
	totals := make([]string, 0, len(total))
	for cur, sum := range total {
		totals = append(totals, sum.String()+" "+cur)
	}
	return fmt.Sprintf("Batch of %d payments (%s debited): %s", len(ps), strings.Join(totals, ", "), strings.Join(parts, "; ")), nil
}

// RecordApproval is called, in the app's transaction, when a payment
// approval's tx_signed challenge is answered. It moves the funds and records
// the approval; if the funds no longer cover the payments, nothing is
// recorded (the savepoint is rolled back, so the caller's transaction goes
// on), the payments keep waiting, and it returns ledger.ErrInsufficientFunds;
// likewise forbidden when the approver lost the role or the membership since
// approve, conflict when the approval was cancelled or rejected since, and
// organization_unavailable when the organization may no longer move money.
func (s *Service) RecordApproval(ctx context.Context, tx *db.Tx, approvalID, approverID uuid.UUID) error {
	return tx.Savepoint(ctx, func() error { return s.recordApproval(ctx, tx, approvalID, approverID) })
}

var errMayNoLongerApprove = apierr.New(apierr.Forbidden, "You may no longer approve payments of this organization.")

func (s *Service) recordApproval(ctx context.Context, tx *db.Tx, approvalID, approverID uuid.UUID) error {
	// The approval is locked first, then its payments (see lockApprovalOf).
	x, err := loadApproval(ctx, tx, approvalID, tx.ForUpdate())
	switch {
	case err != nil:
		return err
	case x.Status == ApprovalRejected || x.Status == ApprovalCancelled:
		// Cancelled or rejected while the challenge waited in the app (or at
		// the same moment): nothing is approved, and the app must not say it was.
		return apierr.Newf(apierr.Conflict, "This payment approval was %s meanwhile; nothing was approved.", x.Status)
	case x.Status != ApprovalPending:
		return nil // approved already, through another challenge
	}
	// The approver's role is checked again: it may have changed since approve was called.
	// So is the organization's status: a paused, banned or deleted organization
	// moves no money (organization_unavailable; nothing is recorded). The
	// shared lock keeps a ban or a change of role from slipping in before this
	// transaction commits, and lets approvals of one organization, and
	// writes that refer to it, go on side by side.
	need := organization.Need{Role: organization.Admin, Write: true, Lock: tx.ForShare()}
	if _, err := organization.Check(ctx, tx, actor.Actor{UserID: approverID}, x.OrganizationID, need); err != nil {
		if apierr.Is(err, apierr.NotFound) {
			// They saw the payment when they called approve; hiding it now helps nobody.
			return errMayNoLongerApprove
		}
		return err
	}
	ps, err := targets(ctx, tx, x, tx.ForUpdateOf("p"))
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Status != AwaitingApproval {
			continue
		}
		if _, err := job.Enqueue(ctx, tx, railJob, railPayload{PaymentID: p.ID}); err != nil {
			return err
		}
	}
	debits, err := debit(ctx, tx, ps)
	if err != nil {
		return err
	}
	if err := decideApproval(ctx, tx, x.ID, ApprovalApproved, approverID, nil); err != nil {
		return err
	}
	// The money moves last: moving it locks the organization's ledger
	// accounts, which every other approval of the organization then waits
	// for until this transaction commits. (The audit entry is appended at
	// the commit.)
	if err := debits.Move(ctx, tx); err != nil {
		return err
	}
	return audit.Record(ctx, tx, x.OrganizationID, audit.ApprovalApproved, audit.To("approval", x.ID))
}

// debit writes what moves the funds of the payments awaiting approval
// among ps: for each, the amount sent from available to pending (held until
// the rail settles) and the fee to the platform, each entry with its row in
// the feed, and the payment approved. It returns the entries, whose
// balances the caller moves (ledger.Written.Move) as late as it can. ps
// are as targets read them, with their contacts' names.
func debit(ctx context.Context, tx *db.Tx, ps []stored) (*ledger.Written, error) {
	var (
		debited []stored
		entries []ledger.Entry
	)
	for _, p := range ps {
		if p.Status != AwaitingApproval {
			continue
		}
		org, cur := p.OrganizationID, p.Debited.Currency
		name := p.contactName
		debited = append(debited, p)
		entries = append(entries,
			ledger.Entry{OrganizationID: &org, Kind: "payment", Description: "Payment to " + name,
				Postings: []ledger.Posting{
					{Account: ledger.OrgAccount(org, cur, ledger.Available), Amount: -p.source.Minor},
					{Account: ledger.OrgAccount(org, cur, ledger.Pending), Amount: p.source.Minor},
				}},
			ledger.Entry{OrganizationID: &org, Kind: "fee", Description: "Fee for payment to " + name,
				Postings: []ledger.Posting{
					{Account: ledger.OrgAccount(org, cur, ledger.Available), Amount: -p.Fee.Minor},
					{Account: ledger.PlatformAccount(org, cur, ledger.Fees), Amount: p.Fee.Minor},
				}})
	}
	written, err := ledger.Write(ctx, tx, entries...)
	if err != nil {
		return nil, err
	}
	for i, p := range debited {
		org, cur, name := p.OrganizationID, p.Debited.Currency, p.contactName
		debitID, feeID := written.IDs[2*i], written.IDs[2*i+1]
		feedType := "fiat_outgoing"
		if p.Rail == RailCrypto {
			feedType = "crypto_outgoing"
		}
		paymentID := p.ID
		rows, err := ledger.RecordAll(ctx, tx,
			ledger.Transaction{OrganizationID: org, Type: feedType, EntryID: &debitID, Direction: "out",
				Amount: p.source.Minor, Currency: cur, Description: "Payment to " + name, PaymentID: &paymentID},
			ledger.Transaction{OrganizationID: org, Type: "fee", EntryID: &feeID, Direction: "out",
				Amount: p.Fee.Minor, Currency: cur, Description: "Fee for payment to " + name, PaymentID: &paymentID})
		if err != nil {
			return nil, err
		}
		row := rows[0]
		res, err := tx.ExecContext(ctx, `UPDATE payments SET status = 'approved', transaction_id = $2, debit_entry_id = $3, fee_entry_id = $4, updated_at = $5
			WHERE id = $1 AND status = 'awaiting_approval'`, p.ID, row.ID, debitID, feeID, tx.Now())
		if err != nil {
			return nil, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if err := paymentUpdated(ctx, tx, org, p.ID, Approved); err != nil {
			return nil, err
		}
	}
	return written, nil
}

// RejectRequest is the body of rejecting an approval.
type RejectRequest struct {
	Reason *string `json:"reason"`
}

// Validate checks the body's fields.
func (r RejectRequest) Validate() error {
	var f apierr.Fields
	if r.Reason != nil {
		f.Check(len(*r.Reason) <= 500, "reason", "must be at most 500 characters.")
	}
	return f.Err()
}

// Reject refuses a pending approval: its payments are rejected and no money
// moves. It runs in the caller's transaction tx and returns the approval
// and the payments it rejected; the caller releases what waited on them
// (the bill a payment pays) in tx. A transaction aborted as a deadlock or a
// serialization failure may be run again (db.InTxRetry).
func (s *Service) Reject(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID, r RejectRequest) (Approval, []Record, error) {
	// The approval is locked first, then its payments (see lockApprovalOf).
	x, err := s.approvable(ctx, tx, a, id, tx.ForUpdate())
	if err != nil {
		return Approval{}, nil, err
	}
	if x.Status != ApprovalPending {
		return Approval{}, nil, apierr.Newf(apierr.Conflict, "This approval is already %s.", x.Status)
	}
	ps, err := targets(ctx, tx, x, tx.ForUpdateOf("p"))
	if err != nil {
		return Approval{}, nil, err
	}
	rejected := make([]Record, 0, len(ps))
	for _, p := range ps {
		p, err := s.setStatus(ctx, tx, p.ID, Rejected, nil)
		if err != nil {
			return Approval{}, nil, err
		}
		rejected = append(rejected, p)
	}
	if err := decideApproval(ctx, tx, x.ID, ApprovalRejected, a.UserID, r.Reason); err != nil {
		return Approval{}, nil, err
	}
	if err := audit.Record(ctx, tx, x.OrganizationID, audit.ApprovalRejected, audit.To("approval", x.ID)); err != nil {
		return Approval{}, nil, err
	}
	x, err = loadApproval(ctx, tx, id, "")
	return x, rejected, err
}
