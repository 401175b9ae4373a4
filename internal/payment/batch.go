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
		f.Check(p.BillID == nil, fmt.Sprintf("payments[%d].bill_id", i), "is not taken in a batch: pay a bill with its own payment.")
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
	ID                uuid.UUID
	OrganizationID    uuid.UUID
	Status            string
	ApprovalRequestID *uuid.UUID
	CreatedByID       uuid.UUID
	Payments          []Record
	InsertedAt        time.Time
}

// CreateBatch creates the payments of a batch and its single approval, all
// or none.
func (s *Service) CreateBatch(ctx context.Context, a actor.Actor, r BatchRequest) (Batch, error) {
	orgID := uuid.MustParse(r.OrganizationID)
	id, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (uuid.UUID, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Role: organization.Member, Write: true}); err != nil {
			return uuid.Nil, err
		}
		id := uuid.Must(uuid.NewV7())
		if _, err := tx.ExecContext(ctx, `INSERT INTO payment_batches (id, organization_id, created_by_id, inserted_at) VALUES ($1, $2, $3, $4)`,
			id, orgID, a.UserID, tx.Now()); err != nil {
			return uuid.Nil, err
		}
		// What the batch takes from each balance, which the approval's funds
		// check adds up: it must fit in int64 like any balance.
		totals := map[string]money.Amount{}
		for i, pr := range r.Payments {
			p, err := s.createInBatch(ctx, tx, a, orgID, id, i, pr)
			if err != nil {
				return uuid.Nil, err
			}
			if err := addTo(totals, p.Debited); err != nil {
				return uuid.Nil, apierr.InvalidField("payments",
					fmt.Sprintf("take more from the %s balance in all than any balance can hold; split the batch.", p.Debited.Currency))
			}
		}
		approvalID, err := createApproval(ctx, tx, orgID, "payment_batch", id, a.UserID)
		if err != nil {
			return uuid.Nil, err
		}
		_, err = tx.ExecContext(ctx, `UPDATE payment_batches SET approval_request_id = $2 WHERE id = $1`, id, approvalID)
		return id, err
	})
	if err != nil {
		return Batch{}, err
	}
	return s.GetBatch(ctx, a, id)
}

// createInBatch creates payment i of batch batchID; its errors name the
// payment (its field, or "Payment 3 of the batch").
func (s *Service) createInBatch(ctx context.Context, tx *db.Tx, a actor.Actor, orgID, batchID uuid.UUID, i int, r ExecuteRequest) (Record, error) {
	prefix := fmt.Sprintf("payments[%d].", i)
	quote, err := loadQuote(ctx, tx, uuid.MustParse(r.QuoteID), tx.ForUpdate())
	if err != nil || quote.OrganizationID != orgID {
		return Record{}, apierr.InvalidField(prefix+"quote_id", "is not a quote of this organization.")
	}
	p, err := s.create(ctx, tx, a, quote, r, &batchID, false, prefix)
	if e, ok := apierr.As(err); ok && e.Type != apierr.InvalidRequest {
		return Record{}, &apierr.Error{Type: e.Type, Message: fmt.Sprintf("Payment %d of the batch: %s", i+1, e.Message), Details: e.Details}
	}
	return p, err
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
