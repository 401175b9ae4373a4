// Package mca holds multi-currency receiving accounts (docs/api.md,
// Multi-currency accounts): which currencies an organization can receive,
// requests to the banking partner, selections saved until business
// verification is done, retries while the partner is unreachable, and
// partner webhooks.
package mca

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/watched"
)

// Account states.
const (
	Available  = "available"
	Processing = "processing"
	Failed     = "failed"
	Active     = "active"
)

// Outcomes of one requested currency.
const (
	Requested           = "requested"
	AlreadyActive       = "already_active"
	AlreadyProcessing   = "already_processing"
	OutcomeFailed       = "failed"
	ProviderUnavailable = "provider_unavailable"
)

// Service runs currency accounts. Its transactions stamp rows with tx.Now().
type Service struct {
	DB *db.DB
	// Currencies an organization may hold, sorted.
	Currencies []string
	Partner    Partner

	cacheOnce sync.Once
	cache     *watched.Cache[map[string]row]
}

// Entry is one currency's account as the list reports it.
type Entry struct {
	Currency         string
	State            string
	FailureNote      *string
	FirstRequestedAt *time.Time
	RequestsEnabled  bool
}

// Outcome is what a request did for one currency.
type Outcome struct {
	Currency string
	Result   string
}

// Result answers a request: every currency's entry after it, and what it
// did for each currency asked for.
type Result struct {
	Data     []Entry
	Outcomes []Outcome
}

// BalancesScope is the API-key scope that reads the list.
const BalancesScope = "balances:read"

// List returns every currency the organization may hold, sorted by code.
// A session actor must be a member; an API key must be the organization's
// and hold balances:read.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID) ([]Entry, error) {
	q := s.DB.Reader()
	acc, err := organization.Admit(ctx, q, a, orgID, organization.Need{Scope: BalancesScope})
	if err != nil {
		return nil, err
	}
	cache, key, now := s.rowsCache(), orgID.String(), q.Now()
	rs, ok := cache.Get(key, now)
	if !ok {
		epoch := cache.Begin()
		if rs, err = rows(ctx, q, orgID); err != nil {
			return nil, err
		}
		cache.Put(epoch, key, rs, now)
	}
	return s.build(rs, acc.Status), nil
}

type row struct {
	state            string
	awaiting         bool
	failureNote      *string
	firstRequestedAt time.Time
}

// rows reads the organization's currency rows by currency.
func rows(ctx context.Context, q db.Reader, orgID uuid.UUID) (map[string]row, error) {
	rs, err := q.QueryContext(ctx, `SELECT currency, state, awaiting_submission, failure_note, first_requested_at
		FROM currency_accounts WHERE organization_id = $1`, orgID)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]row{}
	for rs.Next() {
		var c string
		var r row
		if err := rs.Scan(&c, &r.state, &r.awaiting, &r.failureNote, &r.firstRequestedAt); err != nil {
			return nil, err
		}
		r.firstRequestedAt = r.firstRequestedAt.UTC()
		out[c] = r
	}
	return out, rs.Err()
}

// lockedRows locks the organization's row for tx and reads its status and
// currency rows: requests, submissions and webhooks of one organization then
// change its currencies one at a time.
func lockedRows(ctx context.Context, tx *db.Tx, orgID uuid.UUID) (map[string]row, organization.Status, error) {
	status, err := organization.StatusOf(ctx, tx, orgID, tx.ForUpdate())
	if err != nil {
		return nil, "", err
	}
	rs, err := rows(ctx, tx, orgID)
	return rs, status, err
}

// entries lists every currency of an organization in status.
func (s *Service) entries(ctx context.Context, q db.Reader, orgID uuid.UUID, status organization.Status) ([]Entry, error) {
	rs, err := rows(ctx, q, orgID)
	if err != nil {
		return nil, err
	}
	return s.build(rs, status), nil
}

// build lists every currency of an organization in status from its rows
// by currency, which it only reads.
func (s *Service) build(rs map[string]row, status organization.Status) []Entry {
	out := make([]Entry, 0, len(s.Currencies))
	for _, c := range s.Currencies {
		e := Entry{Currency: c, State: Available, RequestsEnabled: status == organization.Active}
		if r, ok := rs[c]; ok {
			e.State, e.FailureNote = r.state, r.failureNote
			t := r.firstRequestedAt
			e.FirstRequestedAt = &t
		}
		out = append(out, e)
	}
	return out
}

// RequestBody is the body of requesting currencies.
type RequestBody struct {
	Currencies []string `json:"currencies"`
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)

// IsCurrencyCode reports whether c has the form of an ISO 4217 code.
func IsCurrencyCode(c string) bool { return currencyCode.MatchString(c) }

// Validate checks the body's fields.
func (r RequestBody) Validate() error {
	var f apierr.Fields
	f.Check(len(r.Currencies) >= 1 && len(r.Currencies) <= 50, "currencies", "is required: 1 to 50 ISO 4217 currency codes.")
	for i, c := range r.Currencies {
		f.Check(currencyCode.MatchString(c), fmt.Sprintf("currencies[%d]", i), "must be a three-letter ISO 4217 code in capitals.")
	}
	return f.Err()
}

// Request asks for receiving accounts in currencies. Owners and
// admins may ask. The partner's eligibility is read before anything is
// written, so a failed read changes nothing. A paused organization may ask
// but changes nothing: its requests are disabled, so every currency's
// outcome is failed; a banned or deleted one is refused.
func (s *Service) Request(ctx context.Context, a actor.Actor, orgID uuid.UUID, body RequestBody) (Result, error) {
	q := s.DB.Reader()
	// Declared a read: while paused it records nothing (see above), and while
	// active the organization's row is locked and its status read again in
	// the transaction that records.
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{Role: organization.Admin}); err != nil {
		return Result{}, err
	}
	org, err := organization.Get(ctx, q, orgID)
	if err != nil {
		return Result{}, err
	}
	if org.EntityStatus == organization.EntityRejected {
		return Result{}, apierr.New(apierr.EntityRejected, "Business verification was rejected, so no receiving account can be opened. Contact support.")
	}
	wanted := slices.Clone(body.Currencies)
	slices.Sort(wanted)
	wanted = slices.Compact(wanted)

	var offered []string
	submitNow := org.EntityStatus == organization.EntityReady && org.Status == organization.Active
	if submitNow {
		if offered, err = s.Partner.Offered(ctx, orgID); err != nil {
			return Result{}, apierr.New(apierr.PartnerError, "The banking partner could not be reached to check eligibility; nothing was changed. Try again shortly.")
		}
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Result, error) {
		return s.record(ctx, tx, orgID, wanted, submitNow, offered)
	})
}

// record applies a request for wanted in tx, with the organization's row
// locked: submitNow when the partner takes requests for this business (it
// offers the currencies offered), otherwise the selection is saved.
func (s *Service) record(ctx context.Context, tx *db.Tx, orgID uuid.UUID, wanted []string, submitNow bool, offered []string) (Result, error) {
	rs, status, err := lockedRows(ctx, tx, orgID)
	if err != nil {
		return Result{}, err
	}
	hasActive := anyActive(rs)
	var out Result
	retry := false
	for _, c := range wanted {
		r, exists := rs[c]
		result := ""
		switch {
		case exists && r.state == Active:
			result = AlreadyActive
		case exists && r.state == Processing:
			result = AlreadyProcessing
		case status != organization.Active || !slices.Contains(s.Currencies, c):
			// Not requestable here: nothing is asked of the partner or recorded.
			result = OutcomeFailed
		case !submitNow:
			result = Requested
			err = move(ctx, tx, orgID, c, r, exists, Processing, true, "selection saved until business verification is done")
		case !slices.Contains(offered, c):
			result = OutcomeFailed
			err = move(ctx, tx, orgID, c, r, exists, Failed, false, notOffered)
		default:
			// The partner call is inside the transaction so the outcome is
			// recorded with the state it produced; the sandbox partner answers at once.
			var opening Opening
			opening, err = s.Partner.Open(ctx, orgID, c, hasActive)
			switch {
			case errors.Is(err, ErrUnavailable):
				result, retry = ProviderUnavailable, true
				err = move(ctx, tx, orgID, c, r, exists, Processing, true, "partner unavailable; will retry")
			case err != nil:
				return Result{}, err
			case opening == Refused:
				result = OutcomeFailed
				err = move(ctx, tx, orgID, c, r, exists, Failed, false, "the partner refused the account")
			default:
				result = Requested
				hasActive = hasActive || opening == Opened
				err = move(ctx, tx, orgID, c, r, exists, string(opening), false, "requested from the partner")
			}
		}
		if err != nil {
			return Result{}, err
		}
		out.Outcomes = append(out.Outcomes, Outcome{Currency: c, Result: result})
	}
	if retry {
		if err := enqueueSubmit(ctx, tx, orgID); err != nil {
			return Result{}, err
		}
	}
	out.Data, err = s.entries(ctx, tx, orgID, status)
	return out, err
}

const notOffered = "the partner does not offer this currency to this business"

func anyActive(rs map[string]row) bool {
	for _, r := range rs {
		if r.state == Active {
			return true
		}
	}
	return false
}

// move records a currency's new state and its history, at tx.Now(), and
// notifies Topic so that no instance lists the rows it kept from before.
func move(ctx context.Context, tx *db.Tx, orgID uuid.UUID, currency string, r row, exists bool, to string, awaiting bool, reason string) error {
	tx.Notify(Topic)
	from := Available
	if exists {
		from = r.state
		if _, err := tx.ExecContext(ctx, `UPDATE currency_accounts SET state = $3, awaiting_submission = $4, updated_at = $5
			WHERE organization_id = $1 AND currency = $2`, orgID, currency, to, awaiting, tx.Now()); err != nil {
			return err
		}
	} else if _, err := tx.ExecContext(ctx, `
		INSERT INTO currency_accounts (organization_id, currency, state, awaiting_submission, first_requested_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $5)`, orgID, currency, to, awaiting, tx.Now()); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO currency_account_history (id, organization_id, currency, from_state, to_state, reason, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, uuid.Must(uuid.NewV7()), orgID, currency, from, to, reason, tx.Now())
	return err
}

// submitJob submits saved selections once the entity is ready, and retries
// requests the partner could not take.
const submitJob = "mca.submit"

type submitPayload struct {
	OrganizationID uuid.UUID `json:"organization_id"`
}

// Register adds the submission job to r.
func (s *Service) Register(r *job.Runner) { r.Handle(submitJob, s.submit) }

// EntityReady is called in the transaction that marks the organization's
// business verification ready: its saved selections get submitted.
func EntityReady(ctx context.Context, tx *db.Tx, orgID uuid.UUID) error {
	return enqueueSubmit(ctx, tx, orgID)
}

func enqueueSubmit(ctx context.Context, tx *db.Tx, orgID uuid.UUID) error {
	_, err := job.Enqueue(ctx, tx, submitJob, submitPayload{OrganizationID: orgID})
	return err
}

func (s *Service) submit(ctx context.Context, j job.Job) error {
	var p submitPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	org, err := organization.Get(ctx, s.DB.Reader(), p.OrganizationID)
	if err != nil {
		return job.Permanent(err)
	}
	if org.EntityStatus != organization.EntityReady || org.Status != organization.Active {
		return nil // submitted when the entity becomes ready (a new job then)
	}
	offered, err := s.Partner.Offered(ctx, org.ID)
	if err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		rs, _, err := lockedRows(ctx, tx, org.ID)
		if err != nil {
			return err
		}
		hasActive := anyActive(rs)
		currencies := slices.Sorted(maps.Keys(rs))
		for _, c := range currencies {
			r := rs[c]
			if !r.awaiting || r.state != Processing {
				continue
			}
			if !slices.Contains(offered, c) {
				if err := move(ctx, tx, org.ID, c, r, true, Failed, false, notOffered); err != nil {
					return err
				}
				continue
			}
			opening, err := s.Partner.Open(ctx, org.ID, c, hasActive)
			if err != nil {
				return err // unavailable: the job retries with backoff
			}
			hasActive = hasActive || opening == Opened
			if err := move(ctx, tx, org.ID, c, r, true, string(opening), false, "submitted to the partner"); err != nil {
				return err
			}
		}
		return nil
	})
}

// Webhook is a partner notification.
type Webhook struct {
	OrganizationID uuid.UUID `json:"organization_id"`
	Currency       string    `json:"currency"`
	Event          string    `json:"event"`
}

// Validate checks the body's fields.
func (w Webhook) Validate() error {
	var f apierr.Fields
	f.Check(w.OrganizationID != uuid.Nil, "organization_id", "is required.")
	f.Check(currencyCode.MatchString(w.Currency), "currency", "must be a three-letter ISO 4217 code in capitals.")
	f.Check(w.Event == "account.activated", "event", "must be account.activated.")
	return f.Err()
}

// Activated records the partner's word that an account supports a currency:
// processing or failed becomes active, with the earlier history kept.
func (s *Service) Activated(ctx context.Context, w Webhook) error {
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		rs, _, err := lockedRows(ctx, tx, w.OrganizationID)
		if err != nil {
			return err
		}
		r, exists := rs[w.Currency]
		if exists && r.state == Active {
			return nil
		}
		return move(ctx, tx, w.OrganizationID, w.Currency, r, exists, Active, false, "partner webhook: account activated")
	})
}

// History is one recorded state change.
type History struct {
	From, To, Reason string
	At               time.Time
}

// HistoryOf lists the state changes of one currency, oldest first.
func (s *Service) HistoryOf(ctx context.Context, orgID uuid.UUID, currency string) ([]History, error) {
	rows, err := s.DB.Reader().QueryContext(ctx, `SELECT from_state, to_state, reason, inserted_at FROM currency_account_history
		WHERE organization_id = $1 AND currency = $2 ORDER BY id`, orgID, currency)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []History
	for rows.Next() {
		var h History
		if err := rows.Scan(&h.From, &h.To, &h.Reason, &h.At); err != nil {
			return nil, err
		}
		out = append(out, h)
	}
	return out, rows.Err()
}
