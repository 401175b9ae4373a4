package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/cli"
)

// The organization's events (docs/api.md, Events): the list and one event,
// rendered for each viewer, keys with events:read and events:subscribe,
// transaction.created, and `strongroom listen` forwarding signed events.

func eventsPath(org string) string { return "/api/v1/organizations/" + org + "/events" }

// listedEvents is the first page of org's events for bearer with query.
func listedEvents(t *testing.T, s *apitest.Server, bearer, org, query string) []apitest.Message {
	t.Helper()
	path := eventsPath(org)
	if query != "" {
		path += "?" + query
	}
	var page struct {
		Data    []apitest.Message `json:"data"`
		HasMore bool              `json:"has_more"`
	}
	s.Get(t, path, bearer).ExpectStatus(t, 200).Decode(t, &page)
	return page.Data
}

// typesOf lists the messages' types, in order.
func typesOf(ms []apitest.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Type
	}
	return out
}

// dataIDs lists the ids of the records the messages carry.
func dataIDs(t *testing.T, ms []apitest.Message) []string {
	t.Helper()
	out := make([]string, len(ms))
	for i, m := range ms {
		var rec struct {
			ID string `json:"id"`
		}
		m.Decode(t, &rec)
		out[i] = rec.ID
	}
	return out
}

func TestEventsListGetAndFilter(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "events-list@acme.test", "1000.00")
	start := now(t, s)
	advance(t, s, time.Minute)
	pay := p.pay(t, s, "100.00")

	// Newest first: the payment's approval and payment, then the deposit's row.
	all := listedEvents(t, s, p.web, p.org, "")
	if got := typesOf(all); !slices.Equal(got, []string{"payment.updated", "approval.updated", "transaction.created"}) &&
		!slices.Equal(got, []string{"approval.updated", "payment.updated", "transaction.created"}) {
		t.Fatalf("events %v", got)
	}
	for i := 1; i < len(all); i++ {
		if all[i].OccurredAt.After(all[i-1].OccurredAt) {
			t.Fatalf("events not newest first: %v", all)
		}
	}

	// Filters: an exact type, a prefix, times.
	payments := listedEvents(t, s, p.web, p.org, "type=payment.*")
	if got := dataIDs(t, payments); len(got) != 1 || got[0] != pay.Id.String() || payments[0].Type != "payment.updated" {
		t.Fatalf("payment.* events %v %v", typesOf(payments), got)
	}
	rows := listedEvents(t, s, p.web, p.org, "type=transaction.created&type=approval.updated")
	if got := typesOf(rows); len(got) != 2 || slices.Contains(got, "payment.updated") {
		t.Fatalf("two types: %v", got)
	}
	mid := start.Add(30 * time.Second).Format(time.RFC3339)
	if got := typesOf(listedEvents(t, s, p.web, p.org, "occurred_to="+url.QueryEscape(mid))); !slices.Equal(got, []string{"transaction.created"}) {
		t.Fatalf("before %s: %v", mid, got)
	}
	if got := typesOf(listedEvents(t, s, p.web, p.org, "occurred_from="+url.QueryEscape(mid))); len(got) != 2 || slices.Contains(got, "transaction.created") {
		t.Fatalf("from %s: %v", mid, got)
	}
	for _, bad := range []string{"type=nothing.updated", "type=pay*", "type=nothing.*", "occurred_from=yesterday",
		"occurred_from=" + url.QueryEscape(mid) + "&occurred_to=" + url.QueryEscape(mid)} {
		s.Get(t, eventsPath(p.org)+"?"+bad, p.web).ExpectError(t, 400, "invalid_request")
	}

	// Pages of one, followed by their cursors, give the same events.
	var walked []string
	for cursor := ""; ; {
		path := eventsPath(p.org) + "?limit=1"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		var page api.EventPage
		s.Get(t, path, p.web).ExpectStatus(t, 200).Decode(t, &page)
		for _, ev := range page.Data {
			typ, _ := ev.Discriminator()
			walked = append(walked, typ)
		}
		if !page.HasMore {
			break
		}
		cursor = *page.NextCursor
	}
	if !slices.Equal(walked, typesOf(all)) {
		t.Fatalf("paged %v, listed %v", walked, typesOf(all))
	}

	// One event, as listed; the client's helpers agree.
	var one apitest.Message
	s.Get(t, eventsPath(p.org)+"/"+all[0].ID, p.web).ExpectStatus(t, 200).Decode(t, &one)
	if one.ID != all[0].ID || one.Type != all[0].Type || string(one.Data) != string(all[0].Data) {
		t.Fatalf("GET event %+v, listed %+v", one, all[0])
	}
	c := p.client(t, s)
	n := 0
	for ev, err := range c.Events(t.Context(), p.org, &api.ListEventsParams{Type: &[]string{"transaction.*"}}) {
		if err != nil {
			t.Fatal(err)
		}
		msg, err := ev.AsTransactionCreatedMessage()
		if err != nil || msg.Data.Type != "deposit" {
			t.Fatalf("client event %+v, %v", msg, err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("client listed %d transaction events", n)
	}
	ev, err := c.Event(t.Context(), p.org, all[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if typ, _ := ev.Discriminator(); typ != all[0].Type {
		t.Fatalf("client event of type %s", typ)
	}

	// Another organization's events are not found, nor is its list.
	other := newPayer(t, s, "events-other@acme.test", "")
	s.Get(t, eventsPath(other.org)+"/"+all[0].ID, other.web).ExpectError(t, 404, "not_found")
	s.Get(t, eventsPath(p.org)+"/"+all[0].ID, other.web).ExpectError(t, 404, "not_found")
	s.Get(t, eventsPath(p.org), other.web).ExpectError(t, 404, "not_found")
	s.Get(t, eventsPath(p.org)+"/not-an-id", p.web).ExpectError(t, 404, "not_found")

	// Thirty days on, they are neither listed nor found.
	advance(t, s, 30*24*time.Hour+2*time.Minute)
	p.signInAgain(t, s)
	if got := listedEvents(t, s, p.web, p.org, ""); len(got) != 0 {
		t.Fatalf("events after 30 days: %v", typesOf(got))
	}
	s.Get(t, eventsPath(p.org)+"/"+all[0].ID, p.web).ExpectError(t, 404, "not_found")
}

// A member sees the events of their own card, not another member's; an
// owner sees both; a key sees what a person of its role would.
func TestEventsShowEachViewerWhatTheyMaySee(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "events-viewers@acme.test")
	org := orgOf(t, s, p)
	alice := addCardUser(t, s, org, "alice@events-viewers.test", "member", "Alice", "Liddell")
	bob := addCardUser(t, s, org, "bob@events-viewers.test", "member", "", "")
	bobs := cardFor(t, s, org, bob.id, 100)
	alices := cardFor(t, s, org, alice.id, 200)

	cardsSeen := func(bearer string) []string {
		t.Helper()
		ids := dataIDs(t, listedEvents(t, s, bearer, org, "type=card.updated"))
		slices.Sort(ids)
		return ids
	}
	both := []string{bobs.Id.String(), alices.Id.String()}
	slices.Sort(both)
	if got := cardsSeen(p.web); !slices.Equal(got, both) {
		t.Fatalf("owner sees cards %v, want %v", got, both)
	}
	if got := cardsSeen(alice.token); !slices.Equal(got, []string{alices.Id.String()}) {
		t.Fatalf("Alice sees cards %v, want only hers", got)
	}
	var bobsEvent string
	for _, m := range listedEvents(t, s, p.web, org, "type=card.updated") {
		if dataIDs(t, []apitest.Message{m})[0] == bobs.Id.String() {
			bobsEvent = m.ID
		}
	}
	s.Get(t, eventsPath(org)+"/"+bobsEvent, alice.token).ExpectError(t, 404, "not_found")
	s.Get(t, eventsPath(org)+"/"+bobsEvent, bob.token).ExpectStatus(t, 200)

	admin := createKey(t, s, p, org, keyOf("Admin events", "admin", "events:read"))
	member := createKey(t, s, p, org, keyOf("Member events", "member", "events:read"))
	if got := cardsSeen(admin.Secret); !slices.Equal(got, both) {
		t.Fatalf("admin key sees cards %v, want %v", got, both)
	}
	if got := cardsSeen(member.Secret); len(got) != 0 {
		t.Fatalf("member key sees cards %v, want none (it holds none)", got)
	}
	s.Get(t, eventsPath(org)+"/"+bobsEvent, admin.Secret).ExpectStatus(t, 200)
	s.Get(t, eventsPath(org)+"/"+bobsEvent, member.Secret).ExpectError(t, 404, "not_found")

	// A key without events:read, and one of another organization.
	balances := balancesKey(t, s, p, org)
	s.Get(t, eventsPath(org), balances.Secret).ExpectError(t, 403, "api_scope_missing")
	s.Get(t, eventsPath(org)+"/"+bobsEvent, balances.Secret).ExpectError(t, 403, "api_scope_missing")
	q := newPerson(t, s, "events-viewers-other@acme.test")
	theirs := createKey(t, s, q, orgOf(t, s, q), keyOf("Theirs", "admin", "events:read"))
	s.Get(t, eventsPath(org), theirs.Secret).ExpectError(t, 404, "not_found")
	s.Get(t, eventsPath(org)+"/"+bobsEvent, theirs.Secret).ExpectError(t, 404, "not_found")
}

// Every feed row is an event: a deposit's row is transaction.created with
// the Transaction as its GET renders it.
func TestDepositIsATransactionCreatedEvent(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "events-deposit.test")
	sse := freshEvents(t, s, o.id, o.owner.token)
	deposit(t, s, o.id, "EUR", "250.00")
	m := sse.Next(t, realtimeWait)
	expectMessage(t, m, "transaction.created", o.id)
	var row api.Transaction
	m.Decode(t, &row)
	if row.Type != "deposit" || row.Effect == nil || row.Effect.Total != "250.00" || row.Effect.Direction != "in" {
		t.Fatalf("transaction.created %+v", row)
	}
	var got api.Transaction
	s.Get(t, "/api/v1/organizations/"+o.id+"/transactions/"+row.Id.String(), o.owner.token).ExpectStatus(t, 200).Decode(t, &got)
	if a, b := string(mustJSON(t, got)), string(mustJSON(t, row)); a != b {
		t.Fatalf("event's transaction %s, GET %s", b, a)
	}
	listed := listedEvents(t, s, o.owner.token, o.id, "type=transaction.created")
	if len(listed) != 1 || listed[0].ID != m.ID {
		t.Fatalf("listed %v, want the event %s", typesOf(listed), m.ID)
	}
}

// A key with events:subscribe follows the realtime channel; revoking it
// ends the stream at once.
func TestRealtimeWithAnEventsSubscribeKey(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "events-subscribe@acme.test")
	org := orgOf(t, s, p)
	k := createKey(t, s, p, org, keyOf("Listener", "member", "events:subscribe"))
	sse := s.Events(t, realtimePath(org), k.Secret, nil)
	ws := s.WebSocket(t, realtimePath(org), k.Secret)
	deposit(t, s, org, "EUR", "10.00")
	first := sse.Next(t, realtimeWait)
	expectMessage(t, first, "transaction.created", org)
	expectMessage(t, ws.Next(t, realtimeWait), "transaction.created", org)

	// A reconnecting key gets what it missed.
	deposit(t, s, org, "EUR", "20.00")
	expectMessage(t, sse.Next(t, realtimeWait), "transaction.created", org)
	expectMessage(t, ws.Next(t, realtimeWait), "transaction.created", org)
	again := s.Events(t, realtimePath(org), k.Secret, map[string]string{"Last-Event-ID": first.ID})
	var replayed api.Transaction
	again.Next(t, realtimeWait).Decode(t, &replayed)
	if replayed.Effect == nil || replayed.Effect.Total != "20.00" {
		t.Fatalf("replayed %+v, want the 20.00 deposit", replayed)
	}

	// Keys without the scope, or of another organization, are refused.
	reader := createKey(t, s, p, org, keyOf("Reader", "member", "events:read"))
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(org), Bearer: reader.Secret,
		Header: map[string]string{"Accept": "text/event-stream"}}).ExpectError(t, 403, "api_scope_missing")

	// Revocation ends the streams, and nothing more is sent.
	s.Post(t, keyPath(org, k.ApiKey.Id.String(), "revoke"), p.web, nil).ExpectStatus(t, 200)
	deposit(t, s, org, "EUR", "30.00")
	expectEndedEmpty(t, sse, "server-sent events after the key's revocation")
	expectEndedEmpty(t, again, "replayed server-sent events after the key's revocation")
	expectEndedEmpty(t, ws, "WebSocket after the key's revocation")
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(org), Bearer: k.Secret,
		Header: map[string]string{"Accept": "text/event-stream"}}).ExpectError(t, 401, "invalid_api_key")
}

// receiver records the webhook deliveries it verified with the Standard
// Webhooks library, once it knows the secret.
type receiver struct {
	mu       sync.Mutex
	secret   string
	verified []map[string]any
	headers  []http.Header
	failures []string
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	rc.mu.Lock()
	defer rc.mu.Unlock()
	wh, err := standardwebhooks.NewWebhook(rc.secret)
	if err == nil {
		err = wh.Verify(body, r.Header)
	}
	if err != nil {
		rc.failures = append(rc.failures, err.Error())
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	rc.verified = append(rc.verified, ev)
	rc.headers = append(rc.headers, r.Header.Clone())
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) got() ([]map[string]any, []http.Header, []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.verified), slices.Clone(rc.headers), slices.Clone(rc.failures)
}

var signingSecret = regexp.MustCompile(`Signing secret: (whsec_[A-Za-z0-9+/=]+)`)

// `strongroom listen --forward-to` follows the channel and posts each
// event signed as a webhook, verified here with the Standard Webhooks library.
func TestListenForwardsSignedEvents(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPerson(t, s, "events-listen@acme.test")
	org := orgOf(t, s, p)
	k := createKey(t, s, p, org, keyOf("Listen", "member", "events:subscribe"))
	rc := &receiver{}
	hook := httptest.NewServer(rc)
	t.Cleanup(hook.Close)

	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr := &apitest.Buffer{}, &apitest.Buffer{}
	done := make(chan int, 1)
	getenv := func(k2 string) string {
		switch k2 {
		case "STRONGROOM_URL":
			return s.URL
		case "STRONGROOM_TOKEN":
			return k.Secret
		}
		return ""
	}
	go func() {
		done <- cli.Run(ctx, []string{"listen", "--forward-to", hook.URL + "/hook", "--events", "transaction.*", "--org", org},
			getenv, strings.NewReader(""), stdout, stderr)
	}()
	t.Cleanup(func() { cancel(); <-done })
	var secret string
	eventually(t, "listen prints its signing secret", func() bool {
		if m := signingSecret.FindStringSubmatch(stdout.String()); m != nil {
			secret = m[1]
			return true
		}
		return false
	})
	rc.mu.Lock()
	rc.secret = secret
	rc.mu.Unlock()
	eventually(t, "listen is connected", func() bool { return strings.Contains(stdout.String(), "Connected") })
	// A card change is not forwarded (--events), the deposit is.
	issueCard(t, s, org, map[string]any{"monthly_limit": 10})
	deposit(t, s, org, "EUR", "42.00")
	eventually(t, "the deposit's event is forwarded", func() bool {
		v, _, f := rc.got()
		return len(v) > 0 || len(f) > 0
	})
	verified, headers, failures := rc.got()
	if len(failures) > 0 {
		t.Fatalf("deliveries that did not verify: %v\nstdout %s\nstderr %s", failures, stdout, stderr)
	}
	ev := verified[0]
	if ev["type"] != "transaction.created" || ev["organization_id"] != org {
		t.Fatalf("forwarded %v", ev)
	}
	if headers[0].Get("webhook-id") != ev["id"] {
		t.Fatalf("webhook-id %q, event id %v", headers[0].Get("webhook-id"), ev["id"])
	}
	listed := listedEvents(t, s, p.web, org, "type=transaction.created")
	if len(listed) != 1 || listed[0].ID != ev["id"] {
		t.Fatalf("forwarded %v, listed %v", ev["id"], listed)
	}
	if len(verified) != 1 {
		t.Fatalf("forwarded %d events, want the deposit's alone", len(verified))
	}
	// listen prints what it forwarded once the receiver has answered.
	eventually(t, "listen reports the forwarded event", func() bool {
		return strings.Contains(stdout.String(), "transaction.created")
	})
}
