package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/metrics"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
)

// Schedule is the wait before each retry of a failed attempt: after the
// first attempt 5 seconds, then 5 minutes, … The attempt after the last
// wait is the last; when it fails too the delivery is failed. The waits
// are read on the service's clock, so the sandbox's manual clock drives
// them.
var Schedule = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// MaxAttempts is how many attempts a delivery gets on its schedule.
var MaxAttempts = len(Schedule) + 1

// NextAttempt returns when the attempt after attempt number attempt (1 for
// the first) is due when it failed at at; ok is false when none follows.
func NextAttempt(attempt int, at time.Time) (time.Time, bool) {
	if attempt < 1 || attempt > len(Schedule) {
		return time.Time{}, false
	}
	return at.Add(Schedule[attempt-1]), true
}

// Limits of delivery.
const (
	// InFlight is how many deliveries of one endpoint may be sending at once,
	// across every instance.
	InFlight = 4
	// FailingFor is how long an endpoint may have failed every delivery
	// before it is disabled.
	FailingFor = 5 * 24 * time.Hour
	// MaxResponse is how much of a receiver's answer is kept.
	MaxResponse = 1024
	// FanOutBatch is how many events the fan-out consumer reads at once.
	FanOutBatch = 200
	// ConsumerName names the fan-out's position among the event consumers.
	ConsumerName = "webhook.fan_out"
	// DefaultLease is how long one attempt may hold its slot unless
	// Service.Lease says otherwise: the job runner's lease, so that a slot
	// left by an instance that died frees when its job is claimed again.
	DefaultLease = 5 * time.Minute

	deliverJob = "webhook.deliver"
	// jobAttempts bounds how often one job runs: it fails only when the
	// database does, or when its instance dies mid-attempt.
	jobAttempts = 10
)

// deliverPayload names the delivery a job attempts and the job's seq: a job
// whose seq is no longer the delivery's was overtaken (a manual retry) and
// does nothing.
type deliverPayload struct {
	DeliveryID uuid.UUID `json:"delivery_id"`
	Seq        int       `json:"seq"`
}

func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return DefaultLease
}

// FanOut is the event consumer that turns committed events into
// deliveries: one for each enabled endpoint of the event's organization
// whose event types match, with its job, in the consumer's transaction.
// webhook.ping events are addressed to one endpoint by Ping and skipped.
func (s *Service) FanOut(ctx context.Context, tx *db.Tx, events []event.Event) error {
	endpoints := map[uuid.UUID][]Endpoint{}
	for _, e := range events {
		if e.OrganizationID == uuid.Nil || e.Type == PingType || s.Delivers != nil && !s.Delivers(e.Type) {
			continue
		}
		eps, ok := endpoints[e.OrganizationID]
		if !ok {
			var err error
			if eps, err = matchingEndpoints(ctx, tx, e.OrganizationID); err != nil {
				return err
			}
			endpoints[e.OrganizationID] = eps
		}
		for _, ep := range eps {
			if Matches(ep.EventTypes, e.Type) {
				if err := s.createDelivery(ctx, tx, ep, e.ID, e.Type); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// createDelivery adds the delivery of eventID to endpoint e with its first
// job, due now; or, when InFlight of e's deliveries are already due or
// sending, as waiting for a slot: a finishing one hands it on. A burst of
// events thus makes no jobs that would only find every slot taken.
func (s *Service) createDelivery(ctx context.Context, tx *db.Tx, e Endpoint, eventID uuid.UUID, eventType string) error {
	busy, err := dueOrSending(ctx, tx, e.ID, InFlight)
	if err != nil {
		return err
	}
	id := uuid.Must(uuid.NewV7())
	created, err := insertDelivery(ctx, tx, id, e, eventID, eventType)
	if err != nil || !created {
		return err
	}
	if busy >= InFlight {
		return setWaiting(ctx, tx, id)
	}
	return s.schedule(ctx, tx, id, 1, tx.Now())
}

// schedule makes delivery id pending under job seq and enqueues that job at at.
func (s *Service) schedule(ctx context.Context, tx *db.Tx, id uuid.UUID, seq int, at time.Time) error {
	if err := setScheduled(ctx, tx, id, seq, at); err != nil {
		return err
	}
	_, err := job.Enqueue(ctx, tx, deliverJob, deliverPayload{DeliveryID: id, Seq: seq}, job.RunAt(at), job.MaxAttempts(jobAttempts))
	return err
}

// Register adds the delivery job to the runner.
func (s *Service) Register(r *job.Runner) { r.Handle(deliverJob, s.deliver) }

// attempt is what a delivery job took a slot for.
type attempt struct {
	delivery Delivery
	endpoint Endpoint
	secrets  []string
	seq      int
	// The job the attempt is made under, completed with the outcome: the
	// claimed one (job), or for an attempt carried on from the one before
	// it, the job that guards it (guard: due when its slot's lease runs
	// out, so it runs only if this instance dies before the outcome).
	job   job.Job
	guard uuid.UUID
}

// carryOn is how many more deliveries of its endpoint one job sends after
// its own, each taking the slot the one before freed, while the endpoint
// answers and deliveries wait: a burst then costs one write transaction a
// delivery instead of three (claim, slot, outcome). It stays small so that
// a busy endpoint holds a runner's slots for a few sends at a time, never
// the minutes other jobs (payments on the rail) would wait.
const carryOn = 8

// deliver runs one attempt of a delivery: it takes one of the endpoint's
// sending slots (or waits for one), sends the signed event, and records the
// outcome with the next attempt's job. The slot is a lease in the
// database: when this instance dies mid-attempt, the job is claimed again
// once its lease runs out and the attempt is made again, never lost.
func (s *Service) deliver(ctx context.Context, j job.Job) error {
	var p deliverPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(fmt.Errorf("webhook delivery: payload: %w", err))
	}
	a, ok, err := s.take(ctx, p)
	if err != nil || !ok {
		return err
	}
	a.job = j
	for carried := 0; ; carried++ {
		// Carrying on needs time for another send (10 s at most) well
		// within the job's own deadline.
		deadline, bounded := ctx.Deadline()
		carry := carried < carryOn && (!bounded || time.Until(deadline) > 3*webhooksend.Timeout)
		next, err := s.attempt(ctx, a, carry)
		if err != nil || next == nil {
			return err
		}
		a = *next
	}
}

// attempt sends a's delivery and records the outcome; with carry, a
// success also takes the endpoint's next waiting delivery into the freed
// slot and returns it.
func (s *Service) attempt(ctx context.Context, a attempt, carry bool) (*attempt, error) {
	body, deliverable, err := s.body(ctx, a.delivery)
	if e, refused := apierr.As(err); refused {
		// The organization cannot be read (banned or deleted): nothing
		// will render, so the delivery ends rather than hold its slot.
		return nil, s.finish(ctx, a, attemptOutcome{stop: "The event cannot be rendered: " + e.Message}, nil)
	}
	if err != nil {
		return nil, err // the job runs again; the slot stays ours meanwhile
	}
	if !deliverable {
		return nil, s.finish(ctx, a, attemptOutcome{stop: "The event can no longer be rendered: what it describes is gone."}, nil)
	}
	start := time.Now() // a duration is measured on the real clock, not the service's
	// The webhook-timestamp is left to the sender, which stamps the wall
	// time: receivers compare it with their own clock, not the service's.
	resp, sendErr := s.Outbound.Send(ctx, Message{URL: a.endpoint.URL, ID: a.delivery.EventID.String(),
		Body: body, Secrets: a.secrets})
	out := attemptOutcome{duration: time.Since(start), resp: resp, err: sendErr}
	var next *attempt
	if !carry {
		return nil, s.finish(ctx, a, out, nil)
	}
	return next, s.finish(ctx, a, out, &next)
}

// take locks the delivery and its endpoint and gives the attempt a sending
// slot. ok is false when there is nothing to send now: the job was
// overtaken, the delivery or endpoint is gone, the endpoint is disabled
// (the delivery stops), or all four slots are taken (the delivery waits
// for a finishing one to hand it its turn).
func (s *Service) take(ctx context.Context, p deliverPayload) (attempt, bool, error) {
	var a attempt
	var ok bool
	err := s.DB.TxRetry(ctx, func(tx *db.Tx) error {
		ok = false
		// Every writer of a delivery's slot locks its endpoint first, then
		// the delivery, so that takers and finishers never deadlock.
		endpointID, err := endpointOf(ctx, tx, p.DeliveryID)
		if errors.Is(err, errDeliveryNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		sn, err := lockSending(ctx, tx, endpointID)
		if errors.Is(err, errNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		d, st, err := lockDelivery(ctx, tx, p.DeliveryID)
		if errors.Is(err, errDeliveryNotFound) {
			return nil
		}
		if err != nil || st.seq != p.Seq || d.Status != Pending {
			return err
		}
		if sn.endpoint.Disabled {
			if err := stopDelivery(ctx, tx, d.ID, "The endpoint is disabled."); err != nil {
				return err
			}
			tx.AfterCommit(func() { metrics.WebhookDelivery(metrics.WebhookDisabled) })
			return s.handOn(ctx, tx, d.EndpointID)
		}
		// The endpoint's row lock orders every taker and every finisher of
		// its slots, in every instance, so the count below stays true
		// until this transaction commits.
		n, err := othersSending(ctx, tx, d.EndpointID, d.ID)
		if err != nil {
			return err
		}
		if n >= InFlight {
			return setWaiting(ctx, tx, d.ID)
		}
		if err := setSending(ctx, tx, d.ID, tx.Now().Add(s.lease())); err != nil {
			return err
		}
		secrets, err := s.secrets(sn)
		if err != nil {
			return err
		}
		a = attempt{delivery: d, endpoint: sn.endpoint, secrets: secrets, seq: st.seq}
		ok = true
		return nil
	})
	return a, ok, err
}

// secrets opens the endpoint's signing secrets (two while a rotation's
// overlap lasts).
func (s *Service) secrets(sn sending) ([]string, error) {
	secrets := make([]string, 0, len(sn.sealed))
	for _, sealed := range sn.sealed {
		secret, err := s.Keys.Open(secretPurpose, sealed)
		if err != nil {
			return nil, fmt.Errorf("webhook endpoint %s: secret: %w", sn.endpoint.ID, err)
		}
		secrets = append(secrets, string(secret))
	}
	return secrets, nil
}

// body renders the event of d: the Event JSON its endpoint receives.
func (s *Service) body(ctx context.Context, d Delivery) ([]byte, bool, error) {
	e, err := event.Get(ctx, s.DB.Reader(), d.OrganizationID, d.EventID, time.Time{})
	if errors.Is(err, event.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if e.Type == PingType {
		b, err := pingBody(e)
		return b, err == nil, err
	}
	return s.Render(ctx, d.OrganizationID, e)
}

// attemptOutcome is what one attempt came to.
type attemptOutcome struct {
	duration time.Duration
	resp     Response
	err      error
	// stop ends the delivery without an attempt, saying why.
	stop string
}

// finish records the attempt's outcome, schedules the next attempt or ends
// the delivery, applies the endpoint's rules (410 and five failing days
// disable it) and hands the freed slot to a waiting delivery: when carried
// is given and the attempt succeeded, by taking it for the caller to send
// (*carried; nil when none waits).
func (s *Service) finish(ctx context.Context, a attempt, out attemptOutcome, carried **attempt) error {
	return s.DB.TxRetry(ctx, func(tx *db.Tx) error {
		complete := func() error { return job.Complete(ctx, tx, a.job) }
		if a.guard != uuid.Nil {
			complete = func() error { return job.Cancel(ctx, tx, a.guard) }
		}
		if err := complete(); err != nil {
			return err
		}
		if carried != nil {
			*carried = nil // set again by this run of the transaction only
		}
		sn, err := lockSending(ctx, tx, a.endpoint.ID)
		if errors.Is(err, errNotFound) {
			return nil // deleted meanwhile, with its deliveries
		}
		if err != nil {
			return err
		}
		d, st, err := lockDelivery(ctx, tx, a.delivery.ID)
		if errors.Is(err, errDeliveryNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if st.seq != a.seq || st.sendingUntil == nil {
			return nil // overtaken: a later run of this job recorded it
		}
		if out.stop != "" {
			if err := stopDelivery(ctx, tx, d.ID, out.stop); err != nil {
				return err
			}
			return s.handOn(ctx, tx, d.EndpointID)
		}
		now := tx.Now()
		number := d.Attempt + 1
		rec := attemptRecord{status: Succeeded, durationMS: out.duration.Milliseconds()}
		success := out.err == nil && out.resp.Status >= 200 && out.resp.Status < 300
		if out.err != nil {
			msg := clip(out.err.Error(), 500)
			rec.err = &msg
		} else {
			status := out.resp.Status
			rec.responseStatus = &status
			body := responseText(out.resp.Body)
			rec.responseBody = &body
			if !success {
				msg := fmt.Sprintf("The endpoint answered %d.", status)
				rec.err = &msg
			}
		}
		gone := out.err == nil && out.resp.Status == 410
		var next *time.Time
		if !success {
			rec.status = Failed
			if at, ok := NextAttempt(number, now); ok && !gone && !sn.endpoint.Disabled {
				rec.status, next = Pending, &at
			}
		}
		rec.next = next
		if err := recordAttempt(ctx, tx, d.ID, rec); err != nil {
			return err
		}
		landed := metrics.WebhookFailed
		if success {
			landed = metrics.WebhookDelivered
		} else if gone {
			landed = metrics.WebhookGone
		}
		tx.AfterCommit(func() { metrics.WebhookDelivery(landed) })
		if next != nil {
			if err := s.schedule(ctx, tx, d.ID, st.seq+1, *next); err != nil {
				return err
			}
		}
		if err := s.endpointRules(ctx, tx, sn, success, gone); err != nil {
			return err
		}
		if success && carried != nil {
			var err error
			*carried, err = s.carry(ctx, tx, sn)
			return err
		}
		return s.handOn(ctx, tx, d.EndpointID)
	})
}

// carry takes the endpoint's oldest waiting delivery into the slot just
// freed, for the caller to send now, under a job due when the slot's lease
// runs out: it runs only if this instance dies before the outcome is
// recorded (finish cancels it with the outcome). nil when none waits.
func (s *Service) carry(ctx context.Context, tx *db.Tx, sn sending) (*attempt, error) {
	id, seq, ok, err := firstWaiting(ctx, tx, sn.endpoint.ID)
	if err != nil || !ok {
		return nil, err
	}
	now, seq := tx.Now(), seq+1
	if err := setScheduled(ctx, tx, id, seq, now); err != nil {
		return nil, err
	}
	if err := setSending(ctx, tx, id, now.Add(s.lease())); err != nil {
		return nil, err
	}
	guard, err := job.Enqueue(ctx, tx, deliverJob, deliverPayload{DeliveryID: id, Seq: seq},
		job.RunAt(now.Add(s.lease())), job.MaxAttempts(jobAttempts))
	if err != nil {
		return nil, err
	}
	d, _, err := lockDelivery(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	secrets, err := s.secrets(sn)
	if err != nil {
		return nil, err
	}
	return &attempt{delivery: d, endpoint: sn.endpoint, secrets: secrets, seq: seq, guard: guard}, nil
}

// endpointRules applies what an attempt's outcome means for its endpoint:
// a success ends its failing streak; a 410 disables it at once; failures
// only for FailingFor disable it too. The owners and admins are told.
func (s *Service) endpointRules(ctx context.Context, tx *db.Tx, sn sending, success, gone bool) error {
	id := sn.endpoint.ID
	if success {
		if sn.failingSince == nil {
			return nil
		}
		return setFailing(ctx, tx, id, nil)
	}
	now := tx.Now()
	if sn.failingSince == nil {
		if err := setFailing(ctx, tx, id, &now); err != nil {
			return err
		}
	}
	var reason string
	switch {
	case gone:
		reason = "The endpoint answered 410 Gone: it asked for no more deliveries."
	case sn.failingSince != nil && now.Sub(*sn.failingSince) >= FailingFor:
		reason = "Every delivery to the endpoint failed for 5 days."
	default:
		return nil
	}
	first, err := disable(ctx, tx, id, reason)
	if err != nil || !first {
		return err
	}
	return s.tell(ctx, tx, sn.endpoint.OrganizationID, organization.Admin, "Webhook endpoint disabled",
		fmt.Sprintf("Deliveries to the webhook endpoint at %s have stopped: %s Enable it again once it can receive them.", sn.endpoint.URL, reason))
}

// handOn gives a freed slot of endpointID to its oldest waiting delivery,
// whose job is enqueued now. Called with the endpoint's row locked.
func (s *Service) handOn(ctx context.Context, tx *db.Tx, endpointID uuid.UUID) error {
	id, seq, ok, err := firstWaiting(ctx, tx, endpointID)
	if err != nil || !ok {
		return err
	}
	return s.schedule(ctx, tx, id, seq+1, tx.Now())
}

// responseText is the kept part of a receiver's answer: at most
// MaxResponse bytes, as valid UTF-8 without NUL (it is stored as text).
func responseText(b []byte) string {
	if len(b) > MaxResponse {
		b = b[:MaxResponse]
	}
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	for len(s) > MaxResponse {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}
