package payment

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
)

// railJob hands an approved payment to its rail.
const railJob = "payment.rail"

type railPayload struct {
	PaymentID uuid.UUID `json:"payment_id"`
}

// Register adds the rail worker to r.
func (s *Service) Register(r *job.Runner) { r.Handle(railJob, s.submit) }

// submit moves an approved payment to processing: it is with the rail until
// the rail reports (the sandbox settle helper plays the rail in `test`).
func (s *Service) submit(ctx context.Context, j job.Job) error {
	var p railPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	// The job is recorded done in the submission's own transaction.
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		var orgID uuid.UUID
		err := tx.QueryRowContext(ctx, `UPDATE payments SET status = 'processing', rail_state = 'submitted', updated_at = $2
			WHERE id = $1 AND status = 'approved' RETURNING organization_id`, p.PaymentID, tx.Now()).Scan(&orgID)
		if errors.Is(err, sql.ErrNoRows) {
			return job.Complete(ctx, tx, j) // settled, cancelled or submitted already
		}
		if err != nil {
			return err
		}
		if err := paymentUpdated(ctx, tx, orgID, p.PaymentID, Processing); err != nil {
			return err
		}
		return job.Complete(ctx, tx, j)
	})
}

// Settle records the rail's outcome of a payment: completed moves the held
// funds out of Strongroom; failed returns them (and the fee) by reversing
// entries, never by editing them. It runs in the caller's transaction tx
// and returns the payment settled; the caller releases what waited on a
// failed one (the bill it pays) in tx. A transaction aborted as a deadlock
// or a serialization failure may be run again (db.InTxRetry).
func (s *Service) Settle(ctx context.Context, tx *db.Tx, id uuid.UUID, outcome string) (Record, error) {
	// The payment alone is locked (its approval was decided long ago), then
	// the ledger and the bill, as in every transaction that locks a payment.
	p, err := loadPayment(ctx, tx, id, tx.ForUpdate())
	if err != nil {
		return Record{}, err
	}
	if p.Status != Approved && p.Status != Processing {
		return Record{}, apierr.Newf(apierr.Conflict, "Only an approved or processing payment can settle; this one is %s.", p.Status)
	}
	var state string
	switch outcome {
	case Completed:
		state, err = "settled", deliver(ctx, tx, p)
	case Failed:
		state, err = "returned", reverse(ctx, tx, p, "returned by the rail")
	default:
		return Record{}, fmt.Errorf("payment: unknown rail outcome %q", outcome)
	}
	if err != nil {
		return Record{}, err
	}
	r, err := s.setStatus(ctx, tx, p.ID, outcome, &state)
	if err != nil {
		return Record{}, err
	}
	return r, audit.Record(ctx, tx, p.OrganizationID, audit.PaymentSettled, audit.To("payment", p.ID))
}

// deliver moves a payment's held funds out of Strongroom: the rail has
// delivered them to the recipient.
func deliver(ctx context.Context, tx *db.Tx, p stored) error {
	name, err := counterparty(ctx, tx, p.PaymentContactID)
	if err != nil {
		return err
	}
	org, cur := p.OrganizationID, p.Debited.Currency
	_, err = ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &org, Kind: "settlement", Description: "Payment to " + name + " delivered",
		Postings: []ledger.Posting{
			{Account: ledger.OrgAccount(org, cur, ledger.Pending), Amount: -p.source.Minor},
			{Account: ledger.PlatformAccount(org, cur, ledger.World), Amount: p.source.Minor},
		}})
	return err
}

// reverse gives back the funds of an approved payment: reversal entries of
// its debit and fee, and one reversal row in the feed, each naming the
// recipient; why says what happened ("returned by the rail").
func reverse(ctx context.Context, tx *db.Tx, p stored, why string) error {
	if p.debitEntryID == nil || p.feeEntryID == nil {
		return nil
	}
	name, err := counterparty(ctx, tx, p.PaymentContactID)
	if err != nil {
		return err
	}
	rev, err := ledger.Reverse(ctx, tx, *p.debitEntryID, "Reversal of payment to "+name+": "+why)
	if err != nil {
		return err
	}
	if _, err := ledger.Reverse(ctx, tx, *p.feeEntryID, "Refund of the fee for payment to "+name+": "+why); err != nil {
		return err
	}
	paymentID := p.ID
	_, err = ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: p.OrganizationID, Type: "reversal", EntryID: &rev, Direction: "in",
		Amount: p.Debited.Minor, Currency: p.Debited.Currency, Description: "Reversal of payment to " + name, PaymentID: &paymentID})
	return err
}
