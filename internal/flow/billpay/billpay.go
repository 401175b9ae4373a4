// Package billpay pays bills: a payment that names a bill moves the bill to
// payment_requested in the transaction that makes the payment, and every
// way a payment ends (rejected, cancelled, failed on the rail) returns its
// bill to extracted in the transaction that ends it. It also gives a bill
// its payment contact: checking the one a person sets, or making one from
// the bill's supplier and bank fields.
//
// Neither bill nor payment knows the other: each operation here owns the
// transaction and calls both services with it. Every operation that can end
// a payment goes through here, so that no bill waits for a payment that
// has ended.
package billpay

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Service runs the operations that touch a payment and the bill it pays.
type Service struct {
	DB       *db.DB
	Payments *payment.Service
	Bills    *bill.Service
}

// Execute creates a payment from a quote and submits it for approval, as
// payment.Service.Execute does; a payment that names a bill (r.BillID)
// also moves the bill to payment_requested, in the same transaction, or is
// not made at all: another organization's bill is not_found (checked
// before the Idempotency-Key, which is then scoped to the bill), a bill the
// payment does not pay exactly is bill_mismatch. A replay under the key
// requests nothing again.
func (s *Service) Execute(ctx context.Context, a actor.Actor, r payment.ExecuteRequest, idempotencyKey string) (payment.Executed, error) {
	if r.BillID == nil {
		return s.Payments.Execute(ctx, a, r, idempotencyKey)
	}
	billID := uuid.MustParse(*r.BillID)
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (payment.Executed, error) {
		quote, err := s.Payments.LockQuote(ctx, tx, a, uuid.MustParse(r.QuoteID))
		if err != nil {
			return payment.Executed{}, err
		}
		if err := s.Bills.Find(ctx, tx, quote.OrganizationID, billID); err != nil {
			return payment.Executed{}, err
		}
		out, err := s.Payments.ExecuteQuote(ctx, tx, a, quote, r, idempotencyKey)
		if err != nil || out.Replayed {
			return out, err
		}
		p := out.Payment
		return out, s.Bills.Request(ctx, tx, bill.Payment{OrganizationID: p.OrganizationID, BillID: billID, PaymentID: p.ID,
			ApprovalID: *p.ApprovalRequestID, ContactID: p.PaymentContactID, Amount: p.Delivered})
	})
}

// release returns to extracted the bills that waited for the payments
// ended in tx.
func (s *Service) release(ctx context.Context, tx *db.Tx, ended ...payment.Record) error {
	for _, p := range ended {
		if p.BillID == nil {
			continue
		}
		if err := s.Bills.Release(ctx, tx, *p.BillID, p.ID); err != nil {
			return err
		}
	}
	return nil
}

// Cancel withdraws a payment (payment.Service.Cancel) and releases its
// bill, in one transaction, run once more should PostgreSQL abort it as a
// deadlock or a serialization failure.
func (s *Service) Cancel(ctx context.Context, a actor.Actor, id uuid.UUID) (payment.Record, error) {
	return db.InTxRetry(ctx, s.DB, func(tx *db.Tx) (payment.Record, error) {
		p, err := s.Payments.Cancel(ctx, tx, a, id)
		if err != nil {
			return payment.Record{}, err
		}
		return p, s.release(ctx, tx, p)
	})
}

// Reject refuses a pending approval (payment.Service.Reject) and releases
// the bills its payments paid, in one transaction, run once more should
// PostgreSQL abort it as a deadlock or a serialization failure.
func (s *Service) Reject(ctx context.Context, a actor.Actor, id uuid.UUID, r payment.RejectRequest) (payment.Approval, error) {
	return db.InTxRetry(ctx, s.DB, func(tx *db.Tx) (payment.Approval, error) {
		x, rejected, err := s.Payments.Reject(ctx, tx, a, id, r)
		if err != nil {
			return payment.Approval{}, err
		}
		return x, s.release(ctx, tx, rejected...)
	})
}

// Settle records the rail's outcome of a payment (payment.Service.Settle);
// a failed payment releases its bill in the same transaction, run once more
// should PostgreSQL abort it as a deadlock or a serialization failure.
func (s *Service) Settle(ctx context.Context, id uuid.UUID, outcome string) (payment.Record, error) {
	return db.InTxRetry(ctx, s.DB, func(tx *db.Tx) (payment.Record, error) {
		p, err := s.Payments.Settle(ctx, tx, id, outcome)
		if err != nil || p.Status != payment.Failed {
			return p, err
		}
		return p, s.release(ctx, tx, p)
	})
}

// UpdateBill changes the fields of bill id that r sends (bill.Service.Update)
// in one transaction; a payment contact it sets must be one of the bill's
// organization (not_found otherwise, and nothing changes).
func (s *Service) UpdateBill(ctx context.Context, a actor.Actor, id uuid.UUID, r bill.PatchRequest) (bill.Bill, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (bill.Bill, error) {
		b, err := s.Bills.Update(ctx, tx, a, id, r)
		if err != nil {
			return bill.Bill{}, err
		}
		if b.PaymentContactID != nil && r.PaymentContactID.Set {
			if _, err := payment.ContactOf(ctx, tx, b.OrganizationID, *b.PaymentContactID); err != nil {
				return bill.Bill{}, err
			}
		}
		return b, nil
	})
}

// CreateContact makes a payment contact from bill id's supplier name,
// currency and bank fields, and sets it as the bill's payment contact, in
// one transaction. What a fiat contact needs and the bill lacks is
// invalid_request naming the bill's fields; a bill no longer editable is a
// conflict.
func (s *Service) CreateContact(ctx context.Context, a actor.Actor, id uuid.UUID) (bill.Bill, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (bill.Bill, error) {
		b, err := s.Bills.Editable(ctx, tx, a, id)
		if err != nil {
			return bill.Bill{}, err
		}
		r := payment.ContactRequest{Rail: payment.RailFiat, Account: b.Bank}
		if b.SupplierName != nil {
			r.Name = *b.SupplierName
		}
		if b.Currency != nil {
			r.Currency = *b.Currency
		}
		if err := r.Validate(); err != nil {
			return bill.Bill{}, asBillFields(err)
		}
		c, err := payment.AddContact(ctx, tx, a, b.OrganizationID, r)
		if err != nil {
			return bill.Bill{}, err
		}
		return s.Bills.SetContact(ctx, tx, b, c.ID)
	})
}

// asBillFields renames the contact's fields in err's details to the bill's.
func asBillFields(err error) error {
	e, ok := apierr.As(err)
	if !ok {
		return err
	}
	details, _ := e.Details.([]apierr.FieldError)
	var f apierr.Fields
	for _, d := range details {
		switch d.Field {
		case "name":
			f.Add("supplier_name", "is required to make a payment contact: set the supplier's name first.")
		case "currency":
			f.Add("currency", "is required to make a payment contact: set the bill's currency first.")
		default:
			f.Add(d.Field, d.Message)
		}
	}
	out := f.Err().(*apierr.Error)
	out.Message = "The bill lacks what a payment contact needs: " + strings.Join(fieldNames(f), ", ") + "."
	return out
}

func fieldNames(f apierr.Fields) []string {
	out := make([]string, len(f))
	for i, d := range f {
		out[i] = d.Field
	}
	return out
}
