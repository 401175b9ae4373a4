// Package metrics holds the Prometheus series the service exports at
// /metrics beyond the HTTP layer's own, so that domain code records what
// happened by calling plain functions (StepUp, WebhookDelivery,
// BillExtraction) and never touches Prometheus.
//
// Two kinds of series:
//
//   - Counters and histograms of events, kept in this process: each
//     instance counts what it did, and Prometheus sums the instances
//     (sum(rate(...))), which stays true however many share the database.
//     Domain code records an event after its transaction commits
//     (db.Tx.AfterCommit), so a rolled-back or retried transaction counts
//     nothing.
//   - Gauges of the database's state (payments by status, the job queue),
//     read on scrape by one grouped query each (Gauges), cached for a few
//     seconds and bounded by a timeout: every instance reports the same
//     database-wide figure, so alert on max() of them, never sum().
//
// No series carries an organization or any other unbounded label.
package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Step-up outcomes (StepUp).
const (
	StepUpStarted       = "started"        // a step-up was asked for
	StepUpCompleted     = "completed"      // answered: a code, or approved in the app
	StepUpWrongCode     = "wrong_code"     // a wrong authenticator or emailed code
	StepUpMatchMismatch = "match_mismatch" // the app's match code did not match
	StepUpDeclined      = "declined"       // declined in the app, or refused at approval
	StepUpExpired       = "expired"        // ended unanswered: too many wrong codes, or left
)

// Webhook delivery outcomes (WebhookDelivery).
const (
	WebhookDelivered = "delivered" // the endpoint answered 2xx
	WebhookFailed    = "failed"    // any other answer, or none: retried on schedule or given up
	WebhookGone      = "gone"      // the endpoint answered 410: it is disabled
	WebhookDisabled  = "disabled"  // not sent: the endpoint is disabled
)

// Bill extraction outcomes (BillExtraction).
const (
	ExtractionCompleted = "completed" // fields were read from the file
	ExtractionFailed    = "failed"    // the file could not be read; the person fills the bill
)

var (
	stepUps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strongroom_step_ups_total",
		Help: "Step-up events by outcome: started, completed, wrong_code, match_mismatch, declined, expired (this instance's).",
	}, []string{"outcome"})
	webhookDeliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strongroom_webhook_deliveries_total",
		Help: "Webhook delivery attempts that landed, by outcome: delivered, failed, gone (410), disabled (not sent) (this instance's).",
	}, []string{"outcome"})
	extractions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "strongroom_bill_extractions_total",
		Help: "Bill extractions finished, by outcome: completed, failed (this instance's).",
	}, []string{"outcome"})
	extractionTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "strongroom_bill_extraction_duration_seconds",
		Help:    "Time to read a bill's file in the isolated reader, by outcome (this instance's).",
		Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60},
	}, []string{"outcome"})
)

func init() {
	// Every outcome is exported from the start at 0, so a rate() over a
	// series that has not happened yet reads 0, not nothing.
	for _, o := range []string{StepUpStarted, StepUpCompleted, StepUpWrongCode, StepUpMatchMismatch, StepUpDeclined, StepUpExpired} {
		stepUps.WithLabelValues(o)
	}
	for _, o := range []string{WebhookDelivered, WebhookFailed, WebhookGone, WebhookDisabled} {
		webhookDeliveries.WithLabelValues(o)
	}
	for _, o := range []string{ExtractionCompleted, ExtractionFailed} {
		extractions.WithLabelValues(o)
		extractionTime.WithLabelValues(o)
	}
}

// Events returns the collectors of the event series, for a registry. They
// are this process's: several registries (test servers in one process)
// may register them and then read the same counts.
func Events() []prometheus.Collector {
	return []prometheus.Collector{stepUps, webhookDeliveries, extractions, extractionTime}
}

// StepUp counts a step-up outcome (StepUpCompleted, …).
func StepUp(outcome string) { stepUps.WithLabelValues(outcome).Inc() }

// WebhookDelivery counts a delivery attempt's outcome (WebhookDelivered, …).
func WebhookDelivery(outcome string) { webhookDeliveries.WithLabelValues(outcome).Inc() }

// BillExtraction counts a finished extraction; took is how long reading
// the file took, observed when the file was read (took > 0).
func BillExtraction(outcome string, took time.Duration) {
	extractions.WithLabelValues(outcome).Inc()
	if took > 0 {
		extractionTime.WithLabelValues(outcome).Observe(took.Seconds())
	}
}

// Timer measures how long something takes on the monotonic clock: an
// operational figure, not a time any rule depends on.
type Timer struct{ start time.Time }

// StartTimer starts a Timer.
func StartTimer() Timer { return Timer{start: time.Now()} }

// Elapsed is the time since the timer started (0 for a zero Timer).
func (t Timer) Elapsed() time.Duration {
	if t.start.IsZero() {
		return 0
	}
	return max(time.Since(t.start), time.Nanosecond)
}
