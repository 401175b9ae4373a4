// Package requesting runs payment requests end to end (docs/api.md,
// Payment requests): making one names a payment contact, which must be the
// organization's; accepting one quotes and executes its payment in the
// accepting person's name, exactly as execute does (the approval by phone
// follows), in the transaction that marks it accepted; and following the
// payment, a durable consumer of payment.updated events (Follow) moves the
// request's payment_status with each step the payment takes, to its end.
//
// Neither paymentrequest nor payment knows the other: each operation here
// owns the transaction and calls both. Every answer is a View: the request
// with its payment contact as the contact's own GET shows it.
package requesting

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/idempotency"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs payment requests.
type Service struct {
	DB       *db.DB
	Requests *paymentrequest.Service
	Payments *payment.Service
}

// View is a payment request as the API shows it: the request and its
// payment contact.
type View struct {
	paymentrequest.Request
	Contact payment.Contact
}

// view adds r's contact, read in q.
func view(ctx context.Context, q db.Reader, r paymentrequest.Request) (View, error) {
	c, err := payment.ContactOf(ctx, q, r.OrganizationID, r.ContactID)
	return View{Request: r, Contact: c}, err
}

// Create makes a pending request of orgID for a, a member or a key with
// payment_requests:write (docs/api.md, Payment requests). The contact must
// be one of the organization's (not_found otherwise) and its currency
// reachable from the request's; a bank transfer needs a reason (a payout
// reason code) and a reference (the text on the recipient's statement),
// as its payment will. With idempotencyKey, a repeat within 24 hours by the
// same requester returns the request as first made (replayed) and makes
// nothing; the key with another body is idempotency_key_reused.
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, r paymentrequest.CreateRequest, idempotencyKey string) (Created, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Created, error) {
		if err := paymentrequest.Check(ctx, tx, a, orgID, true); err != nil {
			return Created{}, err
		}
		by, err := requester(ctx, tx, a, orgID)
		if err != nil {
			return Created{}, err
		}
		create := func() (paymentrequest.Request, error) { return s.insert(ctx, tx, orgID, r, by) }
		var out Created
		var made paymentrequest.Request
		if idempotencyKey == "" {
			made, err = create()
		} else {
			k, kerr := key(orgID, by, idempotencyKey, r)
			if kerr != nil {
				return Created{}, kerr
			}
			made, out.Replayed, err = idempotency.Do(ctx, tx, k, create)
		}
		if err != nil {
			return Created{}, err
		}
		out.View, err = view(ctx, tx, made)
		return out, err
	})
}

// Created is the outcome of a create call: the request as it was made, and
// whether this call replays an earlier one with the same Idempotency-Key
// (then nothing was made now).
type Created struct {
	View
	Replayed bool
}

// SandboxCreate makes a request of orgID as a program would, with no key:
// the requester is an API key with no id, named "Sandbox", so nobody can
// cancel it (a person declines it).
func (s *Service) SandboxCreate(ctx context.Context, orgID uuid.UUID, r paymentrequest.CreateRequest) (View, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (View, error) {
		out, err := s.insert(ctx, tx, orgID, r, paymentrequest.Requester{Kind: paymentrequest.ByAPIKey, Name: "Sandbox"})
		if err != nil {
			return View{}, err
		}
		return view(ctx, tx, out)
	})
}

// insert checks r against its contact and makes the request.
func (s *Service) insert(ctx context.Context, tx *db.Tx, orgID uuid.UUID, r paymentrequest.CreateRequest, by paymentrequest.Requester) (paymentrequest.Request, error) {
	c, err := payment.ContactOf(ctx, tx, orgID, uuid.MustParse(r.ContactID))
	if err != nil {
		return paymentrequest.Request{}, err
	}
	var f apierr.Fields
	if _, err := s.Payments.Rates.Rate(ctx, r.Currency, c.Currency); err != nil {
		f.Add("currency", "cannot be converted to the contact's currency ("+c.Currency+") here.")
	}
	if c.Rail == payment.RailFiat {
		f.Check(r.Reason != nil && slices.ContainsFunc(payment.PayoutReasons, func(p payment.PayoutReason) bool { return p.Code == *r.Reason }),
			"reason", "is required for a bank transfer: a payout reason code (PYR###) from the payments config.")
		f.Check(r.Reference != nil, "reference", "is required for a bank transfer: the text on the recipient's bank statement (at most 35 characters).")
	} else if r.Reason != nil {
		f.Check(slices.ContainsFunc(payment.PayoutReasons, func(p payment.PayoutReason) bool { return p.Code == *r.Reason }),
			"reason", "must be a payout reason code (PYR###) from the payments config.")
	}
	if err := f.Err(); err != nil {
		return paymentrequest.Request{}, err
	}
	return paymentrequest.Insert(ctx, tx, orgID, r, by)
}

// requester names a, who makes a request of orgID: the key's name, or the
// person's.
func requester(ctx context.Context, q db.Reader, a actor.Actor, orgID uuid.UUID) (paymentrequest.Requester, error) {
	if a.IsKey() {
		id := a.Key.ID
		name, err := apikey.NameOf(ctx, q, orgID, id)
		return paymentrequest.Requester{Kind: paymentrequest.ByAPIKey, ID: &id, Name: name}, err
	}
	u, err := identity.GetUser(ctx, q, a.UserID)
	if err != nil {
		return paymentrequest.Requester{}, err
	}
	id := u.ID
	var parts []string
	for _, p := range []*string{u.FirstName, u.LastName} {
		if p != nil && strings.TrimSpace(*p) != "" {
			parts = append(parts, strings.TrimSpace(*p))
		}
	}
	name := strings.Join(parts, " ")
	if name == "" {
		name = u.Email
	}
	return paymentrequest.Requester{Kind: paymentrequest.ByUser, ID: &id, Name: name}, nil
}

// key scopes a client's Idempotency-Key to the organization and the
// requester (two programs' keys never meet), and fingerprints the body.
func key(orgID uuid.UUID, by paymentrequest.Requester, k string, r paymentrequest.CreateRequest) (idempotency.Key, error) {
	hash, err := idempotency.HashInput(r)
	return idempotency.Key{Scope: "payment_request:" + orgID.String() + ":" + by.Kind + ":" + by.ID.String(), Key: k, InputHash: hash}, err
}

// Get returns request id of orgID (see paymentrequest.Service.Get).
func (s *Service) Get(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (View, error) {
	r, err := s.Requests.Get(ctx, a, orgID, id)
	if err != nil {
		return View{}, err
	}
	return view(ctx, s.DB.Reader(), r)
}

// Find returns request id, whatever its organization, as a may see it:
// for an event that names the request alone.
func (s *Service) Find(ctx context.Context, a actor.Actor, id uuid.UUID) (View, error) {
	r, err := s.Requests.Find(ctx, a, id)
	if err != nil {
		return View{}, err
	}
	return view(ctx, s.DB.Reader(), r)
}

// List returns a page of orgID's requests, newest first (see
// paymentrequest.Service.List).
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f paymentrequest.Filter, req page.Request) ([]View, error) {
	rs, err := s.Requests.List(ctx, a, orgID, f, req)
	if err != nil {
		return nil, err
	}
	q := s.DB.Reader()
	contacts := map[uuid.UUID]payment.Contact{}
	out := make([]View, len(rs))
	for i, r := range rs {
		c, ok := contacts[r.ContactID]
		if !ok {
			if c, err = payment.ContactOf(ctx, q, orgID, r.ContactID); err != nil {
				return nil, err
			}
			contacts[r.ContactID] = c
		}
		out[i] = View{Request: r, Contact: c}
	}
	return out, nil
}

// Cancel withdraws a pending request for its requester (see
// paymentrequest.Service.Cancel).
func (s *Service) Cancel(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (View, error) {
	r, err := s.Requests.Cancel(ctx, a, orgID, id)
	if err != nil {
		return View{}, err
	}
	return view(ctx, s.DB.Reader(), r)
}

// Decline refuses a pending request (see paymentrequest.Service.Decline).
func (s *Service) Decline(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r paymentrequest.DeclineRequest) (View, error) {
	out, err := s.Requests.Decline(ctx, a, orgID, id, r)
	if err != nil {
		return View{}, err
	}
	return view(ctx, s.DB.Reader(), out)
}

// Accept turns pending request id of orgID into a payment in a's name, in
// one transaction: a, a member who may make payments (never a key), gets a
// quote for it and executes it exactly as the preflight and execute
// operations do (the same checks and refusals; the payment then awaits its
// approval in the approving app), and the request is marked accepted with
// the payment's id. The amount is what the contact receives when the
// request is in the contact's currency, and otherwise what leaves the
// organization's balance in the request's currency; the balance is debited
// in the request's currency, the fee on top.
//
// The request is locked first: a cancel, a decline or another accept at
// the same moment waits, then finds it no longer pending (conflict). Should
// PostgreSQL abort the transaction as a deadlock or a serialization
// failure, it is run once more.
func (s *Service) Accept(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (View, error) {
	return db.InTxRetry(ctx, s.DB, func(tx *db.Tx) (View, error) {
		r, err := paymentrequest.Lock(ctx, tx, a, orgID, id)
		if err != nil {
			return View{}, err
		}
		c, err := payment.ContactOf(ctx, tx, orgID, r.ContactID)
		if err != nil {
			return View{}, err
		}
		side := "send"
		if r.Amount.Currency == c.Currency {
			side = "receive"
		}
		quote, err := s.Payments.QuoteIn(ctx, tx, a, payment.PreflightRequest{OrganizationID: orgID.String(), Rail: c.Rail,
			ContactID: c.ID.String(), SourceCurrency: r.Amount.Currency, Amount: r.Amount.String(), AmountSide: side})
		if err != nil {
			return View{}, err
		}
		exec := payment.ExecuteRequest{QuoteID: quote.ID.String(), PayoutReason: r.Reason, StatementDescription: r.Reference, InternalNotes: r.Note}
		if err := exec.Validate(); err != nil {
			return View{}, err
		}
		locked, err := s.Payments.LockQuote(ctx, tx, a, quote.ID)
		if err != nil {
			return View{}, err
		}
		out, err := s.Payments.ExecuteQuote(ctx, tx, a, locked, exec, "")
		if err != nil {
			return View{}, err
		}
		accepted, err := paymentrequest.MarkAccepted(ctx, tx, r, a.UserID, out.Payment.ID, out.Payment.Status)
		if err != nil {
			return View{}, err
		}
		return View{Request: accepted, Contact: c}, nil
	})
}

// ConsumerName is the name of Follow's durable position among the event
// consumers.
const ConsumerName = "payment_requests"

// Follow is the durable consumer of payment events: for each payment.updated
// event of events (committed, in commit order), the request the payment
// came from, if any, takes the payment's status as its payment_status,
// appending payment_request.updated when it changes, in tx, the
// transaction that stores the consumer's position. Events of other types
// are passed over.
func (s *Service) Follow(ctx context.Context, tx *db.Tx, events []event.Event) error {
	var changes []payment.PaymentChange
	var ids []uuid.UUID
	for _, e := range events {
		if e.Type != payment.PaymentUpdated {
			continue
		}
		var ch payment.PaymentChange
		if err := json.Unmarshal(e.Data, &ch); err != nil || ch.PaymentID == uuid.Nil {
			continue // not a payment's event as payment writes them: nothing to follow
		}
		changes = append(changes, ch)
		ids = append(ids, ch.PaymentID)
	}
	// Most payments come from no request: one look for the whole batch.
	requested, err := paymentrequest.Requested(ctx, tx, ids)
	if err != nil {
		return err
	}
	for _, ch := range changes {
		if !requested[ch.PaymentID] {
			continue
		}
		if ch.Status == "" {
			status, err := payment.StatusOf(ctx, tx, ch.PaymentID)
			if apierr.Is(err, apierr.NotFound) {
				continue
			}
			if err != nil {
				return err
			}
			ch.Status = status
		}
		if _, err := paymentrequest.PaymentChanged(ctx, tx, ch.PaymentID, ch.Status); err != nil {
			return err
		}
	}
	return nil
}
