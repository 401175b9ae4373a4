package payment

import (
	"context"
	"encoding/json"
	"time"

	"github.com/google/uuid"

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
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		state := "submitted"
		_, err := tx.ExecContext(ctx, `UPDATE payments SET status = 'processing', rail_state = $2, updated_at = $3 WHERE id = $1 AND status = 'approved'`,
			p.PaymentID, state, s.Clock.Now())
		return err
	})
}

// Settle records the rail's outcome of a payment: completed moves the held
// funds out of Strongroom; failed returns them (and the fee) by reversing
// entries, never by editing them.
func (s *Service) Settle(ctx context.Context, id uuid.UUID, outcome string) (Record, error) {
	var out Record
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := s.Clock.Now()
		p, err := loadPayment(ctx, tx, id, s.DB.ForUpdate())
		if err != nil {
			return err
		}
		if p.Status != Approved && p.Status != Processing {
			return apierr.Newf(apierr.Conflict, "Only an approved or processing payment can settle; this one is %s.", p.Status)
		}
		org, cur := p.OrganizationID, p.Debited.Currency
		switch outcome {
		case Completed:
			var name string
			if name, err = counterparty(ctx, tx, p.PaymentContactID); err != nil {
				return err
			}
			if _, err := ledger.Post(ctx, tx, now, ledger.Entry{OrganizationID: &org, Kind: "settlement", Description: "Payment to " + name + " delivered",
				Postings: []ledger.Posting{
					{Account: ledger.OrgAccount(org, cur, ledger.Pending), Amount: -p.source.Minor},
					{Account: ledger.PlatformAccount(cur, ledger.World), Amount: p.source.Minor},
				}}); err != nil {
				return err
			}
			state := "settled"
			err = setStatus(ctx, tx, now, p.ID, Completed, &state)
		case Failed:
			if err := s.reverse(ctx, tx, now, p, "returned by the rail"); err != nil {
				return err
			}
			state := "returned"
			err = setStatus(ctx, tx, now, p.ID, Failed, &state)
		}
		if err != nil {
			return err
		}
		p, err = loadPayment(ctx, tx, id, "")
		out = p.Record
		return err
	})
	return out, err
}

// reverse gives back the funds of an approved payment: reversal entries of
// its debit and fee, and one reversal row in the feed, each naming the
// recipient; why says what happened ("returned by the rail").
func (s *Service) reverse(ctx context.Context, tx *db.Tx, now time.Time, p stored, why string) error {
	if p.debitEntryID == nil || p.feeEntryID == nil {
		return nil
	}
	name, err := counterparty(ctx, tx, p.PaymentContactID)
	if err != nil {
		return err
	}
	rev, err := ledger.Reverse(ctx, tx, now, *p.debitEntryID, "Reversal of payment to "+name+": "+why)
	if err != nil {
		return err
	}
	if _, err := ledger.Reverse(ctx, tx, now, *p.feeEntryID, "Refund of the fee for payment to "+name+": "+why); err != nil {
		return err
	}
	paymentID := p.ID
	_, err = ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: p.OrganizationID, Type: "reversal", EntryID: &rev, Direction: "in",
		Amount: p.Debited.Minor, Currency: p.Debited.Currency, Description: "Reversal of payment to " + name, PaymentID: &paymentID, RecordedAt: now})
	return err
}
