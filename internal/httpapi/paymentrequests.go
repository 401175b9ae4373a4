package httpapi

import (
	"net/http"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/flow/requesting"
	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Payment requests as a resource: every operation's path names the
// organization first, and the request (paymentRequestID) second.
var (
	paymentRequests = resource[requesting.View, paymentRequestRecord]{at: organizationID, record: newPaymentRequestRecord,
		pages: "payment-requests", key: func(v requesting.View) page.Key { return paymentrequest.PageKey(v.Request) }}
	paymentRequestID = param{"payment_request_id", "Payment request"}
)

type requesterRecord struct {
	Kind string     `json:"kind"`
	ID   *uuid.UUID `json:"id"`
	Name string     `json:"name"`
}

type paymentRequestRecord struct {
	ID             uuid.UUID       `json:"id"`
	Status         string          `json:"status"`
	PaymentContact contactRecord   `json:"payment_contact"`
	Amount         string          `json:"amount"`
	Currency       string          `json:"currency"`
	Reference      *string         `json:"reference"`
	Reason         *string         `json:"reason"`
	Note           *string         `json:"note"`
	ExternalID     *string         `json:"external_id"`
	RequestedBy    requesterRecord `json:"requested_by"`
	PaymentID      *uuid.UUID      `json:"payment_id"`
	PaymentStatus  *string         `json:"payment_status"`
	DecidedByID    *uuid.UUID      `json:"decided_by_id"`
	DeclineReason  *string         `json:"decline_reason"`
	ExpiresAt      time.Time       `json:"expires_at"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
}

func newPaymentRequestRecord(v requesting.View) paymentRequestRecord {
	r := v.Request
	return paymentRequestRecord{ID: r.ID, Status: r.Status, PaymentContact: newContactRecord(v.Contact), Amount: r.Amount.String(),
		Currency: r.Amount.Currency, Reference: r.Reference, Reason: r.Reason, Note: r.Note, ExternalID: r.ExternalID,
		RequestedBy: requesterRecord{Kind: r.RequestedBy.Kind, ID: r.RequestedBy.ID, Name: r.RequestedBy.Name},
		PaymentID:   r.PaymentID, PaymentStatus: r.PaymentStatus, DecidedByID: r.DecidedByID, DeclineReason: r.DeclineReason,
		ExpiresAt: r.ExpiresAt, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
}

// createPaymentRequest is written out: it reads the Idempotency-Key header
// and marks a replay.
func (s *server) createPaymentRequest(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var req paymentrequest.CreateRequest
	if err := decode(r, &req); err != nil {
		return err
	}
	out, err := s.PaymentRequests.Create(r.Context(), actorOf(r), org, req, key)
	if err == nil && out.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	return paymentRequests.answer(w, r, http.StatusCreated, out.View, err)
}

// paymentRequestFilter reads the list's filters: one status, one external id.
var paymentRequestFilter = &filter[paymentrequest.Filter]{read: readPaymentRequestFilter, params: []string{"status", "external_id"}}

func readPaymentRequestFilter(r *http.Request) (paymentrequest.Filter, error) {
	q := r.URL.Query()
	f := paymentrequest.Filter{Status: q.Get("status"), ExternalID: q.Get("external_id")}
	var errs apierr.Fields
	if f.Status != "" {
		errs.Check(slices.Contains(paymentrequest.Statuses, f.Status), "status", "must be pending, accepted, declined, cancelled or expired.")
	}
	errs.Check(len(f.ExternalID) <= paymentrequest.ExternalIDMax, "external_id", "must be at most 255 characters.")
	return f, errs.Err()
}
