package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/webhook"
)

var start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// receiver is an Outbound that answers from a script and records what it
// was sent; block, when set, holds every send until it is closed.
type receiver struct {
	mu       sync.Mutex
	answers  []int // answered in turn; the last one repeats
	got      []webhook.Message
	inFlight int
	most     int
	block    chan struct{}
	// crash: events whose next send dies with its process (a panic the
	// runner recovers, the outcome never recorded), once each.
	crash map[string]bool
}

func (r *receiver) CheckURL(context.Context, string) error { return nil }

func (r *receiver) Send(ctx context.Context, m webhook.Message) (webhook.Response, error) {
	r.mu.Lock()
	r.inFlight++
	r.most = max(r.most, r.inFlight)
	block := r.block
	if r.crash[m.ID] {
		delete(r.crash, m.ID)
		r.inFlight--
		r.mu.Unlock()
		panic("the process died mid-send")
	}
	r.mu.Unlock()
	if block != nil {
		<-block
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	r.got = append(r.got, m)
	status := 200
	if len(r.answers) > 0 {
		status = r.answers[0]
		if len(r.answers) > 1 {
			r.answers = r.answers[1:]
		}
	}
	return webhook.Response{Status: status, Body: []byte(strings.Repeat("x", 3000))}, nil
}

func (r *receiver) sent() []webhook.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

type env struct {
	d     *db.DB
	clk   *clock.Manual
	svc   *webhook.Service
	recv  *receiver
	jobs  *job.Runner
	org   organization.Organization
	owner actor.Actor
}

func eachEnv(t *testing.T, test func(t *testing.T, e *env)) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org, owner := fixture.Member(t, d, organization.Owner)
		recv := &receiver{}
		svc := &webhook.Service{DB: d, Clock: clk, Keys: fixture.Keys(t), Outbound: recv,
			Render: func(_ context.Context, _ uuid.UUID, e event.Event) ([]byte, bool, error) {
				b, err := json.Marshal(map[string]any{"id": e.ID, "type": e.Type, "data": e.Data})
				return b, true, err
			}}
		jobs := job.NewRunner(d, clk, nil, job.WithBatchSize(50), job.WithConcurrency(50))
		svc.Register(jobs)
		test(t, &env{d: d, clk: clk, svc: svc, recv: recv, jobs: jobs, org: org, owner: owner})
	})
}

// create adds an endpoint as the owner (the step-up between check and
// creation has tests of its own).
func (e *env) create(t *testing.T, types ...string) (webhook.Endpoint, string) {
	t.Helper()
	url := "https://hooks.example.test/in"
	r := webhook.Request{URL: &url, EventTypes: &types}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	c, err := e.svc.CheckCreate(context.Background(), e.owner, e.org.ID, r)
	if err != nil {
		t.Fatal(err)
	}
	ep, secret, err := e.svc.Create(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	return ep, secret
}

// emit appends events of typ to the organization and hands them to the
// fan-out, as the event consumer does.
func (e *env) emit(t *testing.T, typ string, n int) []uuid.UUID {
	t.Helper()
	var ids []uuid.UUID
	err := e.d.Tx(context.Background(), func(tx *db.Tx) error {
		var events []event.Event
		for i := range n {
			ref, err := event.Append(context.Background(), tx, e.org.ID, "test", fmt.Sprint(i), typ, map[string]int{"n": i})
			if err != nil {
				return err
			}
			ids = append(ids, ref.EventID)
			events = append(events, event.Event{ID: ref.EventID, OrganizationID: e.org.ID, Type: typ})
		}
		return e.svc.FanOut(context.Background(), tx, events)
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// run runs the due jobs until none is left.
func (e *env) run(t *testing.T) {
	t.Helper()
	for range 100 {
		n, err := e.jobs.RunDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("jobs keep coming")
}

func (e *env) deliveries(t *testing.T, ep webhook.Endpoint) []webhook.Delivery {
	t.Helper()
	ds, err := e.svc.Deliveries(context.Background(), e.owner, e.org.ID, ep.ID, page.Request{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

func (e *env) endpoint(t *testing.T, ep webhook.Endpoint) webhook.Endpoint {
	t.Helper()
	got, err := e.svc.Get(context.Background(), e.owner, e.org.ID, ep.ID)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestScheduleWaits(t *testing.T) {
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	for i, w := range want {
		at, ok := webhook.NextAttempt(i+1, start)
		if !ok || at.Sub(start) != w {
			t.Errorf("after attempt %d: next in %v (%v), want %v", i+1, at.Sub(start), ok, w)
		}
	}
	if _, ok := webhook.NextAttempt(len(want)+1, start); ok {
		t.Errorf("attempt %d has a next; it should be the last", len(want)+1)
	}
	if webhook.MaxAttempts != 8 {
		t.Errorf("MaxAttempts = %d, want 8", webhook.MaxAttempts)
	}
}

func TestMatches(t *testing.T) {
	for _, c := range []struct {
		types []string
		typ   string
		want  bool
	}{
		{[]string{"*"}, "payment.updated", true},
		{[]string{"payment.updated"}, "payment.updated", true},
		{[]string{"payment.updated", "card.updated"}, "card.updated", true},
		{[]string{"payment.updated"}, "payment.created", false},
		{[]string{"payment"}, "payment.updated", false},
	} {
		if got := webhook.Matches(c.types, c.typ); got != c.want {
			t.Errorf("Matches(%v, %s) = %v, want %v", c.types, c.typ, got, c.want)
		}
	}
}

func TestValidation(t *testing.T) {
	u := func(s string) *string { return &s }
	types := func(s ...string) *[]string { return &s }
	for _, c := range []struct {
		r     webhook.Request
		field string
	}{
		{webhook.Request{URL: u("ftp://x.test/"), EventTypes: types("*")}, "url"},
		{webhook.Request{URL: u("https://user:pw@x.test/"), EventTypes: types("*")}, "url"},
		{webhook.Request{URL: u("https://x.test/" + strings.Repeat("a", 2048)), EventTypes: types("*")}, "url"},
		{webhook.Request{URL: u("https://x.test/"), EventTypes: types()}, "event_types"},
		{webhook.Request{URL: u("https://x.test/"), EventTypes: types("*", "payment.updated")}, "event_types"},
		{webhook.Request{URL: u("https://x.test/"), EventTypes: types("Payment Updated")}, "event_types"},
	} {
		err := c.r.Validate()
		e, ok := apierr.As(err)
		var details []apierr.FieldError
		if ok {
			details, _ = e.Details.([]apierr.FieldError)
		}
		if !ok || e.Type != apierr.InvalidRequest || len(details) == 0 || details[0].Field != c.field {
			t.Errorf("%s %v: %v, want invalid %s", str(c.r.URL), *c.r.EventTypes, err, c.field)
		}
	}
}

func str(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// A receiver failing twice gets the event three times, with the same id,
// on the schedule of the service's clock; each attempt is signed with the
// endpoint's secret.
func TestRetriesFollowTheSchedule(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, secret := e.create(t, "payment.updated")
		e.recv.answers = []int{500, 500, 200}
		ids := e.emit(t, "payment.updated", 1)
		e.emit(t, "card.updated", 1) // not listed: never delivered

		e.run(t)
		d := e.deliveries(t, ep)
		if len(d) != 1 || d[0].Status != webhook.Pending || d[0].Attempt != 1 || *d[0].ResponseStatus != 500 ||
			d[0].NextAttemptAt == nil || !d[0].NextAttemptAt.Equal(start.Add(5*time.Second)) {
			t.Fatalf("after the first attempt: %+v", d)
		}
		if len(*d[0].ResponseBody) != webhook.MaxResponse {
			t.Errorf("kept %d bytes of the response, want %d", len(*d[0].ResponseBody), webhook.MaxResponse)
		}
		e.clk.Advance(4 * time.Second)
		e.run(t)
		if n := len(e.recv.sent()); n != 1 {
			t.Fatalf("%d attempts before the retry was due, want 1", n)
		}
		e.clk.Advance(time.Second)
		e.run(t)
		e.clk.Advance(5 * time.Minute)
		e.run(t)
		sent := e.recv.sent()
		if len(sent) != 3 {
			t.Fatalf("%d attempts, want 3", len(sent))
		}
		for _, m := range sent {
			if m.ID != ids[0].String() || len(m.Secrets) != 1 || m.Secrets[0] != secret {
				t.Errorf("attempt with id %s secrets %d, want id %s and the endpoint's secret", m.ID, len(m.Secrets), ids[0])
			}
		}
		d = e.deliveries(t, ep)
		if d[0].Status != webhook.Succeeded || d[0].Attempt != 3 || d[0].NextAttemptAt != nil {
			t.Errorf("after the third attempt: %+v", d[0])
		}
	})
}

// A receiver that always fails gets eight attempts, then the delivery is failed.
func TestDeliveryFailsAfterTheLastAttempt(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, _ := e.create(t, "*")
		e.recv.answers = []int{503}
		e.emit(t, "payment.updated", 1)
		e.run(t)
		for _, wait := range webhook.Schedule {
			e.clk.Advance(wait)
			e.run(t)
		}
		d := e.deliveries(t, ep)
		if n := len(e.recv.sent()); n != webhook.MaxAttempts || d[0].Status != webhook.Failed || d[0].NextAttemptAt != nil {
			t.Errorf("%d attempts, delivery %s next %v; want %d attempts and failed", n, d[0].Status, d[0].NextAttemptAt, webhook.MaxAttempts)
		}
		if e.endpoint(t, ep).Disabled {
			t.Error("the endpoint was disabled after less than five failing days")
		}
		// A manual retry makes one more attempt now.
		if _, err := e.svc.Retry(context.Background(), e.owner, e.org.ID, ep.ID, d[0].ID); err != nil {
			t.Fatal(err)
		}
		e.run(t)
		if n := len(e.recv.sent()); n != webhook.MaxAttempts+1 {
			t.Errorf("%d attempts after a manual retry, want %d", n, webhook.MaxAttempts+1)
		}
	})
}

// 410 disables the endpoint at once, its owners are told, and its other
// deliveries stop.
func TestGoneDisables(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, _ := e.create(t, "*")
		e.recv.answers = []int{410}
		e.emit(t, "payment.updated", 1)
		e.run(t)
		got := e.endpoint(t, ep)
		if !got.Disabled || got.DisabledReason == nil || !strings.Contains(*got.DisabledReason, "410") {
			t.Fatalf("after 410: disabled %v (%s)", got.Disabled, str(got.DisabledReason))
		}
		d := e.deliveries(t, ep)
		if d[0].Status != webhook.Failed || d[0].NextAttemptAt != nil {
			t.Errorf("the delivery answered 410 is %s, next %v", d[0].Status, d[0].NextAttemptAt)
		}
		e.emit(t, "payment.updated", 1)
		e.run(t)
		if n := len(e.recv.sent()); n != 1 {
			t.Errorf("%d sends; a disabled endpoint gets nothing more", n)
		}
		alerts, err := outbox.List(context.Background(), e.d.Reader(), outbox.Filter{UserID: &e.owner.UserID, Kind: outbox.SecurityAlert}, page.Request{Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(alerts, func(m outbox.Message) bool { return strings.Contains(m.Body, "410") }) {
			t.Errorf("the owner was not told the endpoint was disabled: %v", alerts)
		}
	})
}

// An endpoint every delivery to which failed for five days is disabled; a
// success in between starts the count again.
func TestFiveFailingDaysDisable(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, _ := e.create(t, "*")
		e.recv.answers = []int{500}
		e.emit(t, "payment.updated", 1)
		e.run(t)
		e.clk.Advance(3 * 24 * time.Hour)
		e.recv.mu.Lock()
		e.recv.answers = []int{200}
		e.recv.mu.Unlock()
		e.run(t) // the retry due now succeeds: the streak ends
		e.recv.mu.Lock()
		e.recv.answers = []int{500}
		e.recv.mu.Unlock()
		e.emit(t, "payment.updated", 1)
		e.run(t)
		e.clk.Advance(3 * 24 * time.Hour)
		e.emit(t, "payment.updated", 1)
		e.run(t)
		if e.endpoint(t, ep).Disabled {
			t.Fatal("disabled after three failing days (the count starts at the last success)")
		}
		e.clk.Advance(2*24*time.Hour + time.Minute)
		e.emit(t, "payment.updated", 1)
		e.run(t)
		got := e.endpoint(t, ep)
		if !got.Disabled || !strings.Contains(str(got.DisabledReason), "5 days") {
			t.Errorf("after five failing days: disabled %v (%s)", got.Disabled, str(got.DisabledReason))
		}
		// Enabling it again clears the reason.
		on := false
		c, err := e.svc.CheckUpdate(context.Background(), e.owner, e.org.ID, ep.ID, webhook.UpdateRequest{Disabled: &on})
		if err != nil {
			t.Fatal(err)
		}
		if got, err = e.svc.Update(context.Background(), c); err != nil || got.Disabled || got.DisabledReason != nil {
			t.Errorf("enabled again: %+v, %v", got, err)
		}
	})
}

// A burst of events makes jobs for the endpoint's four slots only; the
// other deliveries wait without one and are handed on as slots free, each
// arriving once.
func TestBurstWaitsWithoutJobs(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.create(t, "*")
		ids := e.emit(t, "payment.updated", 30)
		var jobs int
		if err := e.d.Reader().QueryRowContext(context.Background(),
			`SELECT count(*) FROM jobs WHERE kind = 'webhook.deliver' AND status = 'pending'`).Scan(&jobs); err != nil {
			t.Fatal(err)
		}
		if jobs != webhook.InFlight {
			t.Errorf("%d delivery jobs for a burst of %d, want %d", jobs, len(ids), webhook.InFlight)
		}
		e.run(t)
		got := map[string]int{}
		for _, m := range e.recv.sent() {
			got[m.ID]++
		}
		for _, id := range ids {
			if got[id.String()] != 1 {
				t.Errorf("event %s arrived %d times, want once", id, got[id.String()])
			}
		}
		if len(got) != len(ids) {
			t.Errorf("%d events arrived, want %d", len(got), len(ids))
		}
		// The jobs that guarded carried deliveries ended with them.
		var left int
		if err := e.d.Reader().QueryRowContext(context.Background(),
			`SELECT count(*) FROM jobs WHERE kind = 'webhook.deliver' AND status <> 'done'`).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Errorf("%d delivery jobs left after every delivery arrived", left)
		}
	})
}

// A job carries on with the deliveries waiting for its slot; one whose
// process dies while sending such a delivery leaves it to the job that
// guards it, due when the slot's lease runs out: it arrives then, once.
func TestCarriedDeliveryIsRetriedAfterACrash(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.create(t, "*")
		ids := e.emit(t, "payment.updated", 20)
		crashed := ids[10].String() // waits at first: sent by a job carrying on
		e.recv.crash = map[string]bool{crashed: true}
		e.run(t)
		count := func() map[string]int {
			got := map[string]int{}
			for _, m := range e.recv.sent() {
				got[m.ID]++
			}
			return got
		}
		if got := count(); len(got) != len(ids)-1 || got[crashed] != 0 {
			t.Fatalf("before the lease ran out: %d events arrived (the crashed one %d times), want all but it", len(got), got[crashed])
		}
		e.clk.Advance(webhook.DefaultLease + time.Second)
		e.run(t)
		got := count()
		for _, id := range ids {
			if got[id.String()] != 1 {
				t.Errorf("event %s arrived %d times, want once", id, got[id.String()])
			}
		}
	})
}

// At most four deliveries of one endpoint are in flight at once, even with
// two runners (two instances) claiming at the same time; all arrive.
func TestFourInFlight(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, _ := e.create(t, "*")
		other := job.NewRunner(e.d, e.clk, nil, job.WithBatchSize(50), job.WithConcurrency(50))
		e.svc.Register(other)
		e.recv.block = make(chan struct{})
		ids := e.emit(t, "payment.updated", 12)

		var wg sync.WaitGroup
		for _, r := range []*job.Runner{e.jobs, other} {
			wg.Go(func() {
				if _, err := r.RunDue(context.Background()); err != nil {
					t.Error(err)
				}
			})
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			e.recv.mu.Lock()
			n := e.recv.inFlight
			e.recv.mu.Unlock()
			if n == webhook.InFlight || time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(100 * time.Millisecond) // a fifth send, if any could start, has had time to
		close(e.recv.block)
		wg.Wait()
		e.run(t)
		if e.recv.most != webhook.InFlight {
			t.Errorf("%d deliveries were in flight at once, want %d", e.recv.most, webhook.InFlight)
		}
		got := map[string]bool{}
		for _, m := range e.recv.sent() {
			got[m.ID] = true
		}
		for _, id := range ids {
			if !got[id.String()] {
				t.Errorf("event %s never arrived", id)
			}
		}
		for _, d := range e.deliveries(t, ep) {
			if d.Status != webhook.Succeeded {
				t.Errorf("delivery %s is %s", d.ID, d.Status)
			}
		}
	})
}

// After a rotation both secrets sign for 24 hours, then only the new one.
func TestRotationOverlap(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, old := e.create(t, "*")
		c, err := e.svc.CheckRotate(context.Background(), e.owner, e.org.ID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, secret, err := e.svc.Rotate(context.Background(), c)
		if err != nil || secret == old || !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("rotate: %v, new secret %q", err, secret)
		}
		e.emit(t, "payment.updated", 1)
		e.run(t)
		e.clk.Advance(webhook.SecretOverlap)
		e.emit(t, "payment.updated", 1)
		e.run(t)
		sent := e.recv.sent()
		if len(sent) != 2 || !slices.Equal(sent[0].Secrets, []string{secret, old}) || !slices.Equal(sent[1].Secrets, []string{secret}) {
			t.Errorf("secrets signing: %d sends", len(sent))
		}
		alerts, _ := outbox.List(context.Background(), e.d.Reader(), outbox.Filter{UserID: &e.owner.UserID, Kind: outbox.SecurityAlert}, page.Request{Limit: 10})
		if len(alerts) != 2 {
			t.Errorf("%d security alerts to the owner, want 2 (created, rotated)", len(alerts))
		}
	})
}

// Members and other organizations see nothing; a key needs the scope.
func TestAccess(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ep, _ := e.create(t, "*")
		member := fixture.Join(t, e.d, e.org.ID, "bob@acme.test", organization.Member)
		other := fixture.Organization(t, e.d, "Other")
		outsider := fixture.Join(t, e.d, other.ID, "eve@other.test", organization.Owner)
		ctx := context.Background()
		if _, err := e.svc.Get(ctx, member, e.org.ID, ep.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("a member reads an endpoint: %v", err)
		}
		if _, err := e.svc.Get(ctx, outsider, e.org.ID, ep.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("an outsider reads an endpoint: %v", err)
		}
		key := actor.Actor{Key: &actor.Key{ID: uuid.New(), OrganizationID: e.org.ID, Lookup: "abcdefgh", Role: "admin",
			Scopes: []string{"balances:read"}, OrganizationStatus: "active"}}
		if _, err := e.svc.Get(ctx, key, e.org.ID, ep.ID); !apierr.Is(err, apierr.APIScopeMissing) {
			t.Errorf("a key without the scope: %v", err)
		}
		key.Key.Scopes = []string{webhook.Scope}
		if _, err := e.svc.Get(ctx, key, e.org.ID, ep.ID); err != nil {
			t.Errorf("a key with the scope: %v", err)
		}
	})
}

// Only event types the events API shows are delivered, even to "*".
func TestOnlyShownTypesAreDelivered(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		e.svc.Delivers = func(typ string) bool { return typ == "payment.updated" }
		ep, _ := e.create(t, "*")
		e.emit(t, "payment_contact.created", 2)
		ids := e.emit(t, "payment.updated", 1)
		e.run(t)
		ds := e.deliveries(t, ep)
		if len(ds) != 1 || ds[0].EventID != ids[0] || ds[0].Status != webhook.Succeeded {
			t.Errorf("deliveries: %+v", ds)
		}
	})
}
