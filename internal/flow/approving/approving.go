// Package approving is a person's approval of payments through the
// approving app: asking for it (payment says what is to be signed, step-up
// mints the challenge the app shows) and answering assurance challenges
// (step-up verifies the answer and settles the challenge; for a payment
// approval, payment records the approval in between, in the same
// transaction). Neither package knows the other: this use case calls both.
package approving

import (
	"context"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/stepup"
)

// Service answers challenges.
type Service struct {
	DB       *db.DB
	StepUp   *stepup.Service
	Payments *payment.Service
}

// Challenge asks for a person's signed approval of payment approval
// approvalID (a payment's or a batch's): the answer is a step_up_required
// error carrying a tx_signed challenge that names amount, currency and
// recipient, answered in the approving app (Approve); the approval is
// recorded the moment the app satisfies it. A retry after that returns the
// approved Approval. Funds are checked first (no challenge when they fall
// short: insufficient_funds) and again when the approval is recorded; see
// payment.Service.ToSign for the other refusals. A person without an
// approval credential gets approval_credential_required and no challenge;
// while their step-up is locked, rate_limited.
func (s *Service) Challenge(ctx context.Context, a actor.Actor, approvalID uuid.UUID) (payment.Approval, error) {
	x, summary, err := s.Payments.ToSign(ctx, a, approvalID)
	if err != nil || x.Status == payment.ApprovalApproved {
		return x, err
	}
	ch, err := s.StepUp.Mint(ctx, a, stepup.Request{Purpose: "payment_approval", Kind: "payment_approval", Binding: "tx_signed",
		ApprovalID: &x.ID, ActionSummary: &summary})
	if err != nil {
		return x, err
	}
	return x, &apierr.Error{Type: apierr.StepUpRequired, StepUp: ch,
		Message: "Approve this payment in the Strongroom app: check the amount and recipient it shows, and enter the code shown here."}
}

// Approve satisfies a pending challenge with the app's signature (and the
// match code shown on the originating surface, unless that surface is the
// app itself); see stepup.Service.VerifyApproval for the errors. Three
// wrong match codes decline it.
//
// A payment approval is recorded in the same transaction and its challenge
// answered at consumed. When funds fall short at that moment nothing is
// recorded, the challenge and its step-up are declined, and the answer is
// insufficient_funds; the same holds, answering forbidden, when the approver
// lost the role since approve. When the organization is paused, banned or
// deleted meanwhile, the answer is organization_unavailable and nothing
// changes: the challenge stays pending for when it is active again. When
// the payment was cancelled or its approval rejected meanwhile, the answer
// is conflict and the challenge is declined likewise.
//
// The transaction locks the step-up's rows (the sudo session first), then
// the approval, then its payments, the order every transaction that changes
// a payment and its approval keeps; should PostgreSQL still abort it as a
// deadlock or a serialization failure, it is run once more before
// answering. Everything it does is in its transaction, so it may run again.
func (s *Service) Approve(ctx context.Context, a actor.Actor, challengeID uuid.UUID, r stepup.ApproveRequest) (stepup.Challenge, error) {
	return db.Retry(ctx, func() (stepup.Challenge, error) { return s.approve(ctx, a, challengeID, r) })
}

func (s *Service) approve(ctx context.Context, a actor.Actor, challengeID uuid.UUID, r stepup.ApproveRequest) (stepup.Challenge, error) {
	return stepup.Answering(ctx, s.DB, func(tx *db.Tx) (stepup.Challenge, error) {
		v, err := s.StepUp.VerifyApproval(ctx, tx, a, challengeID, r)
		if err != nil {
			return stepup.Challenge{}, err
		}
		approvalID := v.PaymentApprovalID()
		if approvalID == nil {
			return s.StepUp.Satisfy(ctx, tx, v)
		}
		// The challenge is consumed before the approval is recorded:
		// recording moves the money, which locks the organization's ledger
		// accounts until this transaction commits, and every other approval
		// of the organization waits for them, so whatever can run before it
		// does.
		var (
			consumed   stepup.Challenge
			consumeErr error
		)
		err = tx.Savepoint(ctx, func() error {
			if consumed, consumeErr = s.StepUp.Consume(ctx, tx, v); consumeErr != nil {
				return consumeErr
			}
			return s.Payments.RecordApproval(ctx, tx, *approvalID, a.UserID)
		})
		if consumeErr != nil {
			return stepup.Challenge{}, consumeErr
		}
		if refused, ok := apierr.As(err); ok && refused.Type != apierr.OrganizationUnavailable {
			// Nothing was recorded (funds short, the approver may no longer
			// approve, or the payment is no longer to approve), and the
			// challenge is no longer consumed; the approver starts again
			// with approve if there is still something to approve.
			return stepup.Challenge{}, s.StepUp.DeclineRefused(ctx, tx, v, refused)
		}
		if err != nil {
			return stepup.Challenge{}, err
		}
		return consumed, nil
	})
}
