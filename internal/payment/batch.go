package payment

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// MaxBatch is the most payments one batch holds.
const MaxBatch = 100

// BatchRequest is the body of createPaymentBatch.
type BatchRequest struct {
	OrganizationID string           `json:"organization_id"`
	Payments       []ExecuteRequest `json:"payments"`
}

// Validate checks the body's fields.
func (r BatchRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.OrganizationID)
	f.Check(err == nil, "organization_id", "is required: a UUID.")
	f.Check(len(r.Payments) >= 1 && len(r.Payments) <= MaxBatch, "payments", fmt.Sprintf("must hold 1 to %d payments.", MaxBatch))
	for i, p := range r.Payments {
		if err := p.validate(fmt.Sprintf("payments[%d].", i)); err != nil {
			if e, ok := apierr.As(err); ok {
				f = append(f, e.Details.([]apierr.FieldError)...)
			}
		}
	}
	return f.Err()
}

// Batch is several payments under one approval.
type Batch struct {
	ID                uuid.UUID  `json:"id"`
	OrganizationID    uuid.UUID  `json:"organization_id"`
	Status            string     `json:"status"`
	ApprovalRequestID *uuid.UUID `json:"approval_request_id"`
	CreatedByID       uuid.UUID  `json:"created_by_id"`
	Payments          []Record   `json:"payments"`
	InsertedAt        time.Time  `json:"inserted_at"`
}

// CreateBatch creates the payments of a batch and its single approval, all
// or none.
func (s *Service) CreateBatch(ctx context.Context, a actor.Actor, r BatchRequest) (Batch, error) {
	orgID := uuid.MustParse(r.OrganizationID)
	var id uuid.UUID
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Role: organization.Member, Write: true}); err != nil {
			return err
		}
		now := s.Clock.Now()
		id = uuid.Must(uuid.NewV7())
		if _, err := tx.ExecContext(ctx, `INSERT INTO payment_batches (id, organization_id, created_by_id, inserted_at) VALUES ($1, $2, $3, $4)`,
			id, orgID, a.UserID, now); err != nil {
			return err
		}
		// What the batch takes from each balance, which the approval's funds
		// check adds up: it must fit in int64 like any balance.
		totals := map[string]money.Amount{}
		for i, pr := range r.Payments {
			prefix := fmt.Sprintf("payments[%d].", i)
			quote, err := loadQuote(ctx, tx, uuid.MustParse(pr.QuoteID), s.DB.ForUpdate())
			if err != nil || quote.OrganizationID != orgID {
				return apierr.InvalidField(prefix+"quote_id", "is not a quote of this organization.")
			}
			p, err := s.create(ctx, tx, now, a, quote, pr, &id, false, prefix)
			if err != nil {
				if e, ok := apierr.As(err); ok && e.Type != apierr.InvalidRequest {
					e = &apierr.Error{Type: e.Type, Message: fmt.Sprintf("Payment %d of the batch: %s", i+1, e.Message), Details: e.Details}
					return e
				}
				return err
			}
			cur := p.Debited.Currency
			total, seen := totals[cur]
			if !seen {
				total = money.Amount{Currency: cur}
			}
			if totals[cur], err = total.Add(p.Debited); err != nil {
				return apierr.InvalidField("payments", fmt.Sprintf("take more from the %s balance in all than any balance can hold; split the batch.", cur))
			}
		}
		approvalID, err := createApproval(ctx, tx, now, orgID, "payment_batch", id, a.UserID)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE payment_batches SET approval_request_id = $2 WHERE id = $1`, id, approvalID)
		return err
	})
	if err != nil {
		return Batch{}, err
	}
	return s.GetBatch(ctx, a, id)
}

// GetBatch returns a batch with its payments; its status is its approval's.
func (s *Service) GetBatch(ctx context.Context, a actor.Actor, id uuid.UUID) (Batch, error) {
	q := s.DB.Reader()
	var b Batch
	err := q.QueryRowContext(ctx, `SELECT b.id, b.organization_id, b.approval_request_id, b.created_by_id, b.inserted_at, COALESCE(x.status, 'pending')
		FROM payment_batches b LEFT JOIN approvals x ON x.id = b.approval_request_id WHERE b.id = $1`, id).
		Scan(&b.ID, &b.OrganizationID, &b.ApprovalRequestID, &b.CreatedByID, &b.InsertedAt, &b.Status)
	if errors.Is(err, sql.ErrNoRows) {
		return b, apierr.NotFoundf("Payment batch")
	}
	if err != nil {
		return b, err
	}
	if _, err := organization.Check(ctx, q, a, b.OrganizationID, organization.Need{Role: organization.Member}); err != nil {
		return Batch{}, organization.Hide(err, apierr.NotFoundf("Payment batch"))
	}
	b.InsertedAt = b.InsertedAt.UTC()
	ps, err := targets(ctx, q, Approval{Kind: "payment_batch", TargetID: b.ID}, "")
	if err != nil {
		return b, err
	}
	b.Payments = make([]Record, len(ps))
	for i, p := range ps {
		b.Payments[i] = p.Record
	}
	return b, nil
}
