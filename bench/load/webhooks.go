package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/strongroom/strongroom/client/api"
)

// webhookFlags are the webhooks scenario's flags.
type webhookFlags struct {
	events, endpoints int
	source            string
	wait              time.Duration
}

// webhookDeliveries measures webhook deliveries per second to a local
// receiver. The receiver verifies every delivery's signature with the
// Standard Webhooks library and counts each event once (a repeat of a
// webhook-id is counted apart); the run fails when an event is not
// delivered within wait, or a signature does not verify.
//
// The events come from source: "deposit" makes sandbox deposits, each a
// transaction.created event that the fan-out turns into one delivery per
// endpoint (the whole way an event travels); "ping" queues a webhook.ping
// straight to one endpoint (the delivery alone), spreading them over the
// endpoints.
func webhookDeliveries(e *env, concurrency, events, endpoints int, source string, wait time.Duration) error {
	ctx := context.Background()
	if events < 1 || endpoints < 1 {
		return errors.New("-events and -endpoints must be at least 1")
	}
	if source != "deposit" && source != "ping" {
		return fmt.Errorf("-source must be deposit or ping, not %q", source)
	}
	rcv, err := startReceiver()
	if err != nil {
		return err
	}
	defer rcv.stop()

	o, err := e.newOwner()
	if err != nil {
		return err
	}
	web, err := o.signIn("web", true) // creating an endpoint asks for a step-up
	if err != nil {
		return err
	}
	types := []string{"transaction.created"}
	if source == "ping" {
		types = []string{"webhook.ping"}
	}
	ids := make([]string, endpoints)
	for i := range ids {
		created, err := web.CreateWebhookEndpoint(ctx, o.orgID.String(), api.WebhookEndpointCreation{
			Url: fmt.Sprintf("%s/hooks/%d", rcv.url, i), EventTypes: types, Description: ptr("load")})
		if err != nil {
			return fmt.Errorf("create webhook endpoint: %w", err)
		}
		wh, err := standardwebhooks.NewWebhook(created.Secret)
		if err != nil {
			return fmt.Errorf("the endpoint's secret: %w", err)
		}
		rcv.verifiers = append(rcv.verifiers, wh)
		ids[i] = created.WebhookEndpoint.Id.String()
	}
	if source == "deposit" {
		// The deposits need their currency account; one deposit opens it
		// before the endpoints hear anything that counts.
		if err := e.deposit(o.orgID, "EUR"); err != nil {
			return err
		}
	}

	// expected is what each endpoint must receive, and when its event was
	// made: deposit keys are the transaction's id (the event's data.id),
	// ping keys the event's id.
	var mu sync.Mutex
	expected := make(map[delivered]time.Time, events*endpoints)
	work := make(chan int, events)
	for i := range events {
		work <- i
	}
	close(work)
	start := time.Now()
	rcv.counting.Store(true)
	gen := forEach(concurrency, work, func(i int) error {
		switch source {
		case "ping":
			p, err := e.sandbox.SandboxPingWebhookEndpoint(ctx, ids[i%endpoints])
			if err != nil {
				return err
			}
			mu.Lock()
			expected[delivered{i % endpoints, p.EventId.String()}] = time.Now()
			mu.Unlock()
		default:
			t, err := e.sandbox.SandboxDeposit(ctx, o.orgID.String(), api.SandboxDeposit{Currency: "EUR", Amount: "1.00"})
			if err != nil {
				return err
			}
			now := time.Now()
			mu.Lock()
			for ep := range endpoints {
				expected[delivered{ep, t.Id.String()}] = now
			}
			mu.Unlock()
		}
		return nil
	})
	generated := time.Since(start)
	if gen.errors > 0 {
		return fmt.Errorf("%d of %d events could not be made; first: %w", gen.errors, events, gen.firstErr)
	}

	// Wait until every expected delivery has arrived, or wait has passed
	// without one arriving.
	deadline := time.Now().Add(wait)
	for {
		missing, last := rcv.missing(expected)
		if missing == 0 || time.Now().After(deadline) {
			break
		}
		if last.Add(wait).After(deadline) {
			deadline = last.Add(wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
	r := rcv.report()
	total := len(expected)
	var lags []time.Duration
	var lastArrival time.Time
	for k, made := range expected {
		if at, ok := r.arrived[k]; ok {
			lags = append(lags, max(0, at.Sub(made)))
			if at.After(lastArrival) {
				lastArrival = at
			}
		}
	}
	missing := total - len(lags)
	elapsed := lastArrival.Sub(start)
	fmt.Printf("webhook deliveries to a local receiver (%s: %d events, %d endpoint(s), %d clients making events)\n",
		source, events, endpoints, concurrency)
	fmt.Printf("  events made:  %d in %v (%.1f/s)\n", events, generated.Round(time.Millisecond), float64(events)/generated.Seconds())
	fmt.Printf("  delivered:    %d of %d, %d lost, %d repeated, %d unexpected\n", total-missing, total, missing, r.repeats, r.unexpected)
	if elapsed > 0 {
		fmt.Printf("  throughput:   %.1f deliveries/s (first event made to last delivery, %v)\n",
			float64(total-missing)/elapsed.Seconds(), elapsed.Round(time.Millisecond))
		fmt.Printf("  drain:        %v after the last event was made\n", max(0, elapsed-generated).Round(time.Millisecond))
	}
	slices.Sort(lags)
	if n := len(lags); n > 0 {
		pct := func(p float64) time.Duration { return lags[min(n-1, int(p*float64(n)))].Round(100 * time.Microsecond) }
		fmt.Printf("  latency:      event made to delivered p50 %v  p90 %v  p99 %v  max %v\n", pct(0.5), pct(0.9), pct(0.99), pct(1))
	}
	fmt.Printf("  signatures:   %d verified with the Standard Webhooks library, %d refused (every delivery received, the set-up's too)\n", r.verified, r.badSignature+r.badTimestamp)
	if r.badTimestamp > 0 {
		fmt.Printf("  refused for their timestamp (more than 5 minutes from this machine's clock): %d\n", r.badTimestamp)
	}
	if r.firstBad != "" {
		fmt.Printf("  first refusal: %s\n", r.firstBad)
	}
	switch {
	case missing > 0:
		return fmt.Errorf("%d of %d deliveries did not arrive within %v of the last one", missing, total, wait)
	case r.badSignature+r.badTimestamp > 0 || r.malformed > 0:
		return fmt.Errorf("%d deliveries did not verify, %d were malformed", r.badSignature+r.badTimestamp, r.malformed)
	}
	return nil
}

// delivered is one event at one endpoint.
type delivered struct {
	endpoint int
	key      string
}

// receiver is a local webhook receiver: endpoint i is served at /hooks/i
// and verified with verifiers[i].
type receiver struct {
	url       string
	srv       *http.Server
	verifiers []*standardwebhooks.Webhook
	counting  atomic.Bool

	mu           sync.Mutex
	arrived      map[delivered]time.Time
	seen         map[string]bool // endpoint and webhook-id
	last         time.Time
	repeats      int
	unexpected   int
	malformed    int
	verified     int
	badSignature int
	badTimestamp int
	firstBad     string
}

type receiverReport struct {
	arrived                                                              map[delivered]time.Time
	repeats, unexpected, malformed, verified, badSignature, badTimestamp int
	firstBad                                                             string
}

func startReceiver() (*receiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &receiver{url: "http://" + ln.Addr().String(), arrived: map[delivered]time.Time{}, seen: map[string]bool{}}
	r.srv = &http.Server{Handler: http.HandlerFunc(r.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

func (r *receiver) stop() { _ = r.srv.Close() }

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, 1<<20))
	idx, convErr := strconv.Atoi(strings.TrimPrefix(req.URL.Path, "/hooks/"))
	if err != nil || convErr != nil || idx < 0 || idx >= len(r.verifiers) || req.Method != http.MethodPost {
		http.Error(w, "unknown hook", http.StatusNotFound)
		return
	}
	// Always 2xx: a refused delivery would wait for a retry on the
	// server's manual clock, which this tool does not move.
	defer w.WriteHeader(http.StatusNoContent)
	if !r.counting.Load() {
		return
	}
	verr := r.verifiers[idx].Verify(body, req.Header)
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			ID string `json:"id"` // the Transaction, as its GET renders it
		} `json:"data"`
	}
	jerr := json.Unmarshal(body, &ev)
	id := req.Header.Get("webhook-id")

	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case verr == nil:
		r.verified++
	case errors.Is(verr, standardwebhooks.ErrMessageTooOld), errors.Is(verr, standardwebhooks.ErrMessageTooNew):
		r.badTimestamp++
	default:
		r.badSignature++
	}
	if verr != nil && r.firstBad == "" {
		r.firstBad = fmt.Sprintf("endpoint %d, webhook-id %s: %v", idx, id, verr)
	}
	if jerr != nil || ev.ID != id || req.Header.Get("Content-Type") != "application/json" {
		r.malformed++
		if r.firstBad == "" {
			r.firstBad = fmt.Sprintf("endpoint %d, webhook-id %s: body id %q, Content-Type %q, %v", idx, id, ev.ID, req.Header.Get("Content-Type"), jerr)
		}
		return
	}
	if r.seen[strconv.Itoa(idx)+" "+id] {
		r.repeats++
		return
	}
	r.seen[strconv.Itoa(idx)+" "+id] = true
	key := delivered{idx, id}
	switch ev.Type {
	case "transaction.created":
		key.key = ev.Data.ID
	case "webhook.ping":
	default:
		r.unexpected++
		return
	}
	r.last = time.Now()
	r.arrived[key] = r.last
}

// missing counts the expected deliveries not yet arrived, and says when
// the last one did.
func (r *receiver) missing(expected map[delivered]time.Time) (int, time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k := range expected {
		if _, ok := r.arrived[k]; !ok {
			n++
		}
	}
	return n, r.last
}

func (r *receiver) report() receiverReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	return receiverReport{arrived: maps.Clone(r.arrived), repeats: r.repeats,
		unexpected: r.unexpected, malformed: r.malformed, verified: r.verified, badSignature: r.badSignature,
		badTimestamp: r.badTimestamp, firstBad: r.firstBad}
}
