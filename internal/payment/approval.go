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
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/stepup"
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

func createApproval(ctx context.Context, tx *db.Tx, now time.Time, orgID uuid.UUID, kind string, target, requester uuid.UUID) (uuid.UUID, error) {
	id := uuid.Must(uuid.NewV7())
	_, err := tx.ExecContext(ctx, `INSERT INTO approvals (id, organization_id, kind, target_id, status, requested_by_id, inserted_at)
		VALUES ($1, $2, $3, $4, 'pending', $5, $6)`, id, orgID, kind, target, requester, now)
	return id, err
}

const approvalColumns = `id, organization_id, status, kind, target_id, requested_by_id, decided_by_id, decided_at, inserted_at`

func scanApproval(row interface{ Scan(...any) error }) (Approval, error) {
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

func loadApproval(ctx context.Context, q db.Querier, id uuid.UUID, lock string) (Approval, error) {
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
	rows, err := q.QueryContext(ctx, `SELECT `+approvalColumns+` FROM approvals
		WHERE organization_id = $1 AND ($2 = '' OR status = $2) AND (id < $3 OR $3 IS NULL) ORDER BY id DESC LIMIT $4`,
		orgID, status, req.AfterUUID(), req.Limit+1)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []Approval
	for rows.Next() {
		x, err := scanApproval(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, x)
	}
	return out, pending, rows.Err()
}

// ApprovalPageKey positions a page after x.
func ApprovalPageKey(x Approval) page.Key { return page.Key{ID: x.ID.String()} }

// approvable loads an approval for an approver: not_found outside the
// organization, forbidden to members (approvers are owners and admins).
func (s *Service) approvable(ctx context.Context, q db.Querier, a actor.Actor, id uuid.UUID, lock string) (Approval, error) {
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

// targets lists the payments an approval covers, locked for the transaction.
func targets(ctx context.Context, q db.Querier, x Approval, lock string) ([]stored, error) {
	column := "id"
	if x.Kind == "payment_batch" {
		column = "payment_batch_id"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+paymentColumns+` FROM payments WHERE `+column+` = $1 ORDER BY id`+lock, x.TargetID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []stored
	for rows.Next() {
		p, err := scanPayment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// needs sums what the payments take from each currency's balance.
func needs(ps []stored) map[string]int64 {
	out := map[string]int64{}
	for _, p := range ps {
		out[p.Debited.Currency] += p.Debited.Minor
	}
	return out
}

func (s *Service) fundsCover(ctx context.Context, q db.Querier, orgID uuid.UUID, ps []stored) (bool, error) {
	for cur, need := range needs(ps) {
		bal, err := ledger.AvailableBalance(ctx, q, orgID, cur)
		if err != nil || bal < need {
			return false, err
		}
	}
	return true, nil
}

// Approve asks for a person's signed approval of a payment (or batch): the
// answer is a step_up_required error carrying a tx_signed challenge that
// names amount, currency and recipient, answered in the approving app; the
// approval is recorded the moment the app satisfies it. A retry after that
// returns the approved Approval. Funds are checked now (no challenge when
// they fall short) and again when the approval is recorded. A person
// without an approval credential gets approval_credential_required and no
// challenge; while their step-up is locked, rate_limited.
func (s *Service) Approve(ctx context.Context, a actor.Actor, id uuid.UUID) (Approval, error) {
	q := s.DB.Reader()
	x, err := s.approvable(ctx, q, a, id, "")
	if err != nil {
		return x, err
	}
	switch x.Status {
	case ApprovalApproved:
		return x, nil
	case ApprovalRejected, ApprovalCancelled:
		return x, apierr.Newf(apierr.Conflict, "This approval was %s.", x.Status)
	}
	ps, err := targets(ctx, q, x, "")
	if err != nil {
		return x, err
	}
	ok, err := s.fundsCover(ctx, q, x.OrganizationID, ps)
	if err != nil {
		return x, err
	}
	if !ok {
		return x, ledger.ErrInsufficientFunds
	}
	summary, err := s.summary(ctx, q, ps)
	if err != nil {
		return x, err
	}
	ch, err := s.StepUp.Mint(ctx, a, stepup.Request{Purpose: "payment_approval", Kind: "payment_approval", Binding: "tx_signed", ApprovalID: &x.ID, ActionSummary: &summary})
	if err != nil {
		return x, err
	}
	return x, &apierr.Error{Type: apierr.StepUpRequired, StepUp: ch,
		Message: "Approve this payment in the Strongroom app: check the amount and recipient it shows, and enter the code shown here."}
}

// summary names what is approved: amount, currency and recipient.
func (s *Service) summary(ctx context.Context, q db.Querier, ps []stored) (string, error) {
	parts := make([]string, 0, len(ps))
	for _, p := range ps {
		c, err := contactOf(ctx, q, p.PaymentContactID)
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("Pay %s %s to %s (%s %s debited, fee included)",
			p.Delivered.String(), p.Delivered.Currency, c.Name, p.Debited.String(), p.Debited.Currency))
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	total := needs(ps)
	totals := make([]string, 0, len(total))
	for cur, minor := range total {
		totals = append(totals, money.Amount{Minor: minor, Currency: cur}.String()+" "+cur)
	}
	return fmt.Sprintf("Batch of %d payments (%s debited): %s", len(ps), strings.Join(totals, ", "), strings.Join(parts, "; ")), nil
}

// RecordApproval is called, in the app's transaction, when a payment
// approval's tx_signed challenge is answered. It moves the funds and records
// the approval; if the funds no longer cover the payments, nothing is
// recorded (the savepoint is rolled back, so the caller's transaction goes
// on), the payments keep waiting, and it returns ledger.ErrInsufficientFunds.
func (s *Service) RecordApproval(ctx context.Context, tx *db.Tx, approvalID, approverID uuid.UUID) error {
	return tx.Savepoint(ctx, func() error { return s.recordApproval(ctx, tx, approvalID, approverID) })
}

func (s *Service) recordApproval(ctx context.Context, tx *db.Tx, approvalID, approverID uuid.UUID) error {
	now := s.Clock.Now()
	x, err := loadApproval(ctx, tx, approvalID, s.DB.ForUpdate())
	if err != nil || x.Status != ApprovalPending {
		return err
	}
	// The approver's role is checked again: it may have changed since approve was called.
	// So is the organization's status: a paused, banned or deleted organization
	// moves no money (organization_unavailable; nothing is recorded). The lock
	// keeps a ban from slipping in before this transaction commits.
	need := organization.Need{Role: organization.Admin, Write: true, Lock: s.DB.ForUpdate()}
	if _, err := organization.Check(ctx, tx, actor.Actor{UserID: approverID}, x.OrganizationID, need); err != nil {
		if _, refused := apierr.As(err); refused && !apierr.Is(err, apierr.OrganizationUnavailable) {
			return nil
		}
		return err
	}
	ps, err := targets(ctx, tx, x, s.DB.ForUpdate())
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Status != AwaitingApproval {
			continue
		}
		if err := s.debit(ctx, tx, now, p); err != nil {
			return err
		}
		if _, err := job.Enqueue(ctx, tx, now, railJob, railPayload{PaymentID: p.ID}); err != nil {
			return err
		}
	}
	_, err = tx.ExecContext(ctx, `UPDATE approvals SET status = 'approved', decided_by_id = $2, decided_at = $3 WHERE id = $1 AND status = 'pending'`,
		x.ID, approverID, now)
	return err
}

// debit moves a payment's funds at approval: the amount sent from available
// to pending (held until the rail settles), the fee to the platform, each
// with its row in the feed.
func (s *Service) debit(ctx context.Context, tx *db.Tx, now time.Time, p stored) error {
	org, cur := p.OrganizationID, p.Debited.Currency
	name, err := counterparty(ctx, tx, p.PaymentContactID)
	if err != nil {
		return err
	}
	debitID, err := ledger.Post(ctx, tx, now, ledger.Entry{OrganizationID: &org, Kind: "payment", Description: "Payment to " + name,
		Postings: []ledger.Posting{
			{Account: ledger.OrgAccount(org, cur, ledger.Available), Amount: -p.source.Minor},
			{Account: ledger.OrgAccount(org, cur, ledger.Pending), Amount: p.source.Minor},
		}})
	if err != nil {
		return err
	}
	feeID, err := ledger.Post(ctx, tx, now, ledger.Entry{OrganizationID: &org, Kind: "fee", Description: "Fee for payment to " + name,
		Postings: []ledger.Posting{
			{Account: ledger.OrgAccount(org, cur, ledger.Available), Amount: -p.Fee.Minor},
			{Account: ledger.PlatformAccount(cur, ledger.Fees), Amount: p.Fee.Minor},
		}})
	if err != nil {
		return err
	}
	feedType := "fiat_outgoing"
	if p.Rail == RailCrypto {
		feedType = "crypto_outgoing"
	}
	paymentID := p.ID
	row, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org, Type: feedType, EntryID: &debitID, Direction: "out",
		Amount: p.source.Minor, Currency: cur, Description: "Payment to " + name, PaymentID: &paymentID, RecordedAt: now})
	if err != nil {
		return err
	}
	if _, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: org, Type: "fee", EntryID: &feeID, Direction: "out",
		Amount: p.Fee.Minor, Currency: cur, Description: "Fee for payment to " + name, PaymentID: &paymentID, RecordedAt: now}); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE payments SET status = 'approved', transaction_id = $2, debit_entry_id = $3, fee_entry_id = $4, updated_at = $5
		WHERE id = $1 AND status = 'awaiting_approval'`, p.ID, row.ID, debitID, feeID, now)
	return err
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

// Reject refuses a pending approval: its payments are rejected and no money moves.
func (s *Service) Reject(ctx context.Context, a actor.Actor, id uuid.UUID, r RejectRequest) (Approval, error) {
	var out Approval
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		x, err := s.approvable(ctx, tx, a, id, s.DB.ForUpdate())
		if err != nil {
			return err
		}
		if x.Status != ApprovalPending {
			return apierr.Newf(apierr.Conflict, "This approval is already %s.", x.Status)
		}
		ps, err := targets(ctx, tx, x, s.DB.ForUpdate())
		if err != nil {
			return err
		}
		for _, p := range ps {
			if err := setStatus(ctx, tx, now, p.ID, Rejected, nil); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE approvals SET status = 'rejected', decided_by_id = $2, decided_at = $3, reason = $4 WHERE id = $1`,
			x.ID, a.UserID, now, r.Reason); err != nil {
			return err
		}
		out, err = loadApproval(ctx, tx, id, "")
		return err
	})
	return out, err
}
