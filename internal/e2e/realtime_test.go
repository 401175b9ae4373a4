package e2e_test

import (
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// The organization's realtime channel (docs/api.md, Realtime): WebSocket and
// server-sent events, replay after a reconnect, organizations kept apart,
// access re-checked, streams ended by a stop, and delivery across instances.

// realtimeWait bounds the wait for one message: the tail wakes on commit,
// so a message usually takes milliseconds.
const realtimeWait = 10 * time.Second

func realtimePath(org string) string { return "/api/v1/organizations/" + org + "/realtime" }

// freshEvents opens org's channel as server-sent events for bearer, and
// freshWebSocket as a WebSocket; both pass over the events org had before:
// a connection naming no earlier message may still carry a few committed
// just before it opened (on PostgreSQL, with an older transaction running
// anywhere in the cluster, as other tests' do).
func freshEvents(t *testing.T, s *apitest.Server, org, bearer string) *apitest.Stream {
	t.Helper()
	earlier := earlierEvents(t, s, org, bearer)
	st := s.Events(t, realtimePath(org), bearer, nil)
	st.Skip(earlier...)
	return st
}

func freshWebSocket(t *testing.T, s *apitest.Server, org, bearer string) *apitest.Stream {
	t.Helper()
	earlier := earlierEvents(t, s, org, bearer)
	st := s.WebSocket(t, realtimePath(org), bearer)
	st.Skip(earlier...)
	return st
}

// earlierEvents lists the ids of org's events bearer may read so far.
func earlierEvents(t *testing.T, s *apitest.Server, org, bearer string) []string {
	t.Helper()
	var ids []string
	for _, m := range listedEvents(t, s, bearer, org, "limit=100") {
		ids = append(ids, m.ID)
	}
	return ids
}

// expectMessage fails t unless m is of type typ for org; it returns m's data id.
func expectMessage(t *testing.T, m apitest.Message, typ, org string) string {
	t.Helper()
	if m.Type != typ || m.OrganizationID != org {
		t.Fatalf("message %s of %s, want %s of %s: %s", m.Type, m.OrganizationID, typ, org, m.Data)
	}
	var data struct {
		ID string `json:"id"`
	}
	m.Decode(t, &data)
	return data.ID
}

// nextCard waits for a card.updated of org and returns the card.
func nextCard(t *testing.T, st *apitest.Stream, org string) (apitest.Message, api.Card) {
	t.Helper()
	m := st.Next(t, realtimeWait)
	expectMessage(t, m, "card.updated", org)
	var c api.Card
	m.Decode(t, &c)
	return m, c
}

func expectCard(t *testing.T, st *apitest.Stream, org, cardID string) apitest.Message {
	t.Helper()
	m, c := nextCard(t, st, org)
	if c.Id.String() != cardID {
		t.Fatalf("card.updated for card %s, want %s", c.Id.String(), cardID)
	}
	return m
}

// expectChange waits for a message of type typ of org about record id and
// fails t unless the record's status is one of statuses; it returns the message.
func expectChange(t *testing.T, st *apitest.Stream, org, typ, id string, statuses ...string) apitest.Message {
	t.Helper()
	m := st.Next(t, realtimeWait)
	var rec struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	m.Decode(t, &rec)
	if expectMessage(t, m, typ, org); rec.ID != id || !slices.Contains(statuses, rec.Status) {
		t.Fatalf("%s for %s at %s, want %s at %v", typ, rec.ID, rec.Status, id, statuses)
	}
	return m
}

func TestRealtimeWebSocketCarriesPaymentsAndApprovals(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "realtime-ws@acme.test", "1000.00")
	ws := freshWebSocket(t, s, p.org, p.web)

	pay := p.pay(t, s, "100.00")
	approvalID := pay.ApprovalRequestId.String()
	var approval api.Approval
	expectChange(t, ws, p.org, "approval.updated", approvalID, "pending").Decode(t, &approval)
	if approval.TargetId != pay.Id {
		t.Fatalf("approval for %s, want payment %s", approval.TargetId.String(), pay.Id.String())
	}
	var created api.Payment
	expectChange(t, ws, p.org, "payment.updated", pay.Id.String(), "awaiting_approval").Decode(t, &created)
	if created.DomainEvent.Type != "payment.created" {
		t.Fatalf("payment's domain_event %+v, want its payment.created", created.DomainEvent)
	}

	// Approval moves the funds: the payment is approved (shown as of
	// delivery, so possibly already processing), the approval decided, and
	// the rail takes the payment right after.
	p.approveInApp(t, s, approvalID)
	// The approval records the payment's and its fee's feed rows.
	for _, typ := range []api.TransactionType{"fiat_outgoing", "fee"} {
		var row api.Transaction
		m := ws.Next(t, realtimeWait)
		expectMessage(t, m, "transaction.created", p.org)
		if m.Decode(t, &row); row.Type != typ || row.PaymentId == nil || *row.PaymentId != pay.Id {
			t.Fatalf("transaction.created %+v, want the payment's %s row", row, typ)
		}
	}
	var moved api.Payment
	expectChange(t, ws, p.org, "payment.updated", pay.Id.String(), "approved", "processing").Decode(t, &moved)
	if moved.TransactionId == nil {
		t.Fatalf("approved payment without its transaction: %+v", moved)
	}
	expectChange(t, ws, p.org, "approval.updated", approvalID, "approved").Decode(t, &approval)
	if approval.DecidedById == nil || approval.DecidedById.String() != p.userID {
		t.Fatalf("approval decided by %v, want %s", approval.DecidedById, p.userID)
	}
	expectChange(t, ws, p.org, "payment.updated", pay.Id.String(), "processing")
	s.Post(t, "/api/v1/sandbox/payments/"+pay.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)
	expectChange(t, ws, p.org, "payment.updated", pay.Id.String(), "completed")

	// A rejection and a cancellation say so for the payment and its approval.
	rejected := p.pay(t, s, "10.00")
	expectChange(t, ws, p.org, "approval.updated", rejected.ApprovalRequestId.String(), "pending")
	expectChange(t, ws, p.org, "payment.updated", rejected.Id.String(), "awaiting_approval")
	s.Post(t, "/api/v1/approvals/"+rejected.ApprovalRequestId.String()+"/reject", p.web, map[string]any{"reason": "not ours"}).ExpectStatus(t, 200)
	expectChange(t, ws, p.org, "payment.updated", rejected.Id.String(), "rejected")
	expectChange(t, ws, p.org, "approval.updated", rejected.ApprovalRequestId.String(), "rejected")
	cancelled := p.pay(t, s, "10.00")
	expectChange(t, ws, p.org, "approval.updated", cancelled.ApprovalRequestId.String(), "pending")
	expectChange(t, ws, p.org, "payment.updated", cancelled.Id.String(), "awaiting_approval")
	s.Post(t, "/api/v1/payments/"+cancelled.Id.String()+"/cancel", p.web, nil).ExpectStatus(t, 200)
	expectChange(t, ws, p.org, "approval.updated", cancelled.ApprovalRequestId.String(), "cancelled")
	expectChange(t, ws, p.org, "payment.updated", cancelled.Id.String(), "cancelled")
}

func TestRealtimeServerSentEventsShowEachPersonWhatTheyMaySee(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOrg(t, s, "realtime-sse.test")
	owner := freshEvents(t, s, o.id, o.owner.token)
	if cc := owner.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	alice := freshEvents(t, s, o.id, o.alice.token)

	// Bob's card is not Alice's business; her first message is her own card.
	bobs := cardFor(t, s, o.id, o.bob.id, 100)
	alices := cardFor(t, s, o.id, o.alice.id, 200)
	m := expectCard(t, owner, o.id, bobs.Id.String())
	if m.EventID != m.ID {
		t.Errorf("SSE id %q differs from the message id %q", m.EventID, m.ID)
	}
	expectCard(t, owner, o.id, alices.Id.String())
	_, seen := nextCard(t, alice, o.id)
	if seen.Id != alices.Id {
		t.Fatalf("Alice was sent card %s, want only her own %s", seen.Id, alices.Id)
	}
	// What she sees is the card as her GET shows it (her own actions).
	expectActions(t, "Alice's card on the channel", seen, actions(getCard(t, s, o.alice.token, alices.Id.String()))...)

	// A change by the card network reaches both, as of delivery.
	setCardStatus(t, s, alices.Id.String(), "inactive")
	for _, st := range []*apitest.Stream{owner, alice} {
		if _, c := nextCard(t, st, o.id); c.Id != alices.Id || c.Status != "inactive" {
			t.Fatalf("after the network's change: card %s %s, want %s inactive", c.Id.String(), c.Status, alices.Id.String())
		}
	}
	// A person's own change too.
	cardAction(t, s, o.owner.token, bobs.Id.String(), "freeze")
	if _, c := nextCard(t, owner, o.id); c.Id != bobs.Id || !c.Frozen {
		t.Fatalf("after freeze: card %s frozen=%v, want %s frozen", c.Id.String(), c.Frozen, bobs.Id.String())
	}
}

func TestRealtimeReplaysWhatAReconnectingClientMissed(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "realtime-replay.test")
	path := realtimePath(o.id)
	first := s.Events(t, path, o.owner.token, nil)
	c1 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 10})
	m1 := expectCard(t, first, o.id, c1.Id.String())
	first.Close()

	c2 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 20})
	c3 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 30})
	// An EventSource reconnecting sends Last-Event-ID: the missed ones come
	// first, in order, then the live ones, with nothing twice.
	sse := s.Events(t, path, o.owner.token, map[string]string{"Last-Event-ID": m1.ID})
	expectCard(t, sse, o.id, c2.Id.String())
	expectCard(t, sse, o.id, c3.Id.String())
	c4 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 40})
	m4 := expectCard(t, sse, o.id, c4.Id.String())
	// A WebSocket names it with ?after=.
	ws := s.WebSocket(t, path+"?after="+m1.ID, o.owner.token)
	for _, c := range []api.Card{c2, c3, c4} {
		expectCard(t, ws, o.id, c.Id.String())
	}
	c5 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 50})
	expectCard(t, ws, o.id, c5.Id.String())
	expectCard(t, sse, o.id, c5.Id.String())
	// The header wins over the parameter.
	both := s.Events(t, path+"?after="+m1.ID, o.owner.token, map[string]string{"Last-Event-ID": m4.ID})
	expectCard(t, both, o.id, c5.Id.String())

	// Nothing older than 24 hours comes back.
	advance(t, s, 25*time.Hour)
	o.owner.signInAgain(t, s)
	c6 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 60})
	late := s.Events(t, path, o.owner.token, map[string]string{"Last-Event-ID": m1.ID})
	expectCard(t, late, o.id, c6.Id.String())
	c7 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 70})
	expectCard(t, late, o.id, c7.Id.String())

	// An id that is no message of this organization is refused.
	other := newCardOwner(t, s, "realtime-replay-other.test")
	theirs := freshEvents(t, s, other.id, other.owner.token)
	oc := issueCard(t, s, other.id, map[string]any{"monthly_limit": 10})
	om := expectCard(t, theirs, other.id, oc.Id.String())
	for _, id := range []string{om.ID, uuid.NewString()} {
		for field, req := range map[string]apitest.Request{
			"Last-Event-ID": {Method: "GET", Path: path, Bearer: o.owner.token, Header: map[string]string{"Accept": "text/event-stream", "Last-Event-ID": id}},
			"after":         {Method: "GET", Path: path + "?after=" + id, Bearer: o.owner.token, Header: upgrade},
		} {
			e := s.Do(t, req).ExpectError(t, http.StatusBadRequest, "invalid_request")
			if len(e.Error.Details) != 1 || e.Error.Details[0].Field != field {
				t.Errorf("unknown id in %s: details %+v, want the field named", field, e.Error.Details)
			}
		}
	}
	s.Do(t, apitest.Request{Method: "GET", Path: path + "?after=nope", Bearer: o.owner.token, Header: map[string]string{"Accept": "text/event-stream"}}).
		ExpectError(t, http.StatusBadRequest, "invalid_request")
}

// upgrade is the header of a WebSocket opening handshake.
var upgrade = map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ=="}

func TestRealtimeKeepsOrganizationsApart(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	a := newCardOwner(t, s, "realtime-a.test")
	b := newCardOwner(t, s, "realtime-b.test")
	sse := freshEvents(t, s, a.id, a.owner.token)
	ws := freshWebSocket(t, s, a.id, a.owner.token)

	// Messages come in commit order: had B's changes reached A's channel,
	// they would come before A's own.
	issueCard(t, s, b.id, map[string]any{"monthly_limit": 10})
	bc := issueCard(t, s, b.id, map[string]any{"monthly_limit": 10})
	setCardStatus(t, s, bc.Id.String(), "inactive")
	ac := issueCard(t, s, a.id, map[string]any{"monthly_limit": 10})
	expectCard(t, sse, a.id, ac.Id.String())
	expectCard(t, ws, a.id, ac.Id.String())

	// Someone else's organization does not exist, on either transport.
	sseHeader := map[string]string{"Accept": "text/event-stream"}
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(a.id), Bearer: b.owner.token, Header: sseHeader}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(a.id), Bearer: b.owner.token, Header: upgrade}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(uuid.NewString()), Bearer: a.owner.token, Header: sseHeader}).ExpectError(t, http.StatusNotFound, "not_found")
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(a.id), Header: sseHeader}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	// Neither a WebSocket nor an event stream.
	s.Get(t, realtimePath(a.id), a.owner.token).ExpectError(t, http.StatusBadRequest, "invalid_request")
}

func TestRealtimeEndsWhenTheSessionEndsOrTheOrganizationIsBanned(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t, "STRONGROOM_REALTIME_PING=1s")
	o := newCardOwner(t, s, "realtime-end.test")
	sse := freshEvents(t, s, o.id, o.owner.token)
	second := signInFully(t, s, o.owner.email, o.owner.secret)
	ws := freshWebSocket(t, s, o.id, second)

	// Signing out ends the stream of that session only.
	s.Post(t, "/api/v1/auth/sign-out", o.owner.token, nil).ExpectStatus(t, http.StatusOK)
	sse.Ended(t, realtimeWait)
	c := issueCard(t, s, o.id, map[string]any{"monthly_limit": 10})
	expectCard(t, ws, o.id, c.Id.String())

	// A banned organization's channel closes with a policy violation.
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/status", sbx, map[string]any{"status": "banned"}).ExpectStatus(t, http.StatusOK)
	err := ws.Ended(t, realtimeWait)
	if got := websocket.CloseStatus(err); got != websocket.StatusPolicyViolation {
		t.Fatalf("WebSocket closed with %v (%d), want policy violation", err, got)
	}
	s.Do(t, apitest.Request{Method: "GET", Path: realtimePath(o.id), Bearer: second, Header: map[string]string{"Accept": "text/event-stream"}}).
		ExpectError(t, http.StatusForbidden, "organization_unavailable")
}

func TestRealtimeStreamsEndWhenTheServerStops(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "realtime-stop.test")
	sse := freshEvents(t, s, o.id, o.owner.token)
	ws := freshWebSocket(t, s, o.id, o.owner.token)
	c := issueCard(t, s, o.id, map[string]any{"monthly_limit": 10})
	expectCard(t, sse, o.id, c.Id.String())
	expectCard(t, ws, o.id, c.Id.String())

	// Open streams neither hold the stop up nor outlive it.
	if err := s.Stop(); err != nil {
		t.Fatalf("stop with open streams: %v", err)
	}
	if err := ws.Ended(t, realtimeWait); websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Fatalf("WebSocket ended with %v, want going away", err)
	}
	sse.Ended(t, realtimeWait)
}

// Every instance serving one PostgreSQL database delivers every event of
// the organization to its own subscribers.
func TestRealtimeReachesSubscribersOfEveryInstance(t *testing.T) {
	t.Parallel()
	one, two := twoInstances(t)
	o := newCardOwner(t, one, "realtime-instances.test")
	onTwo := freshEvents(t, two, o.id, o.owner.token)
	onOne := freshWebSocket(t, one, o.id, o.owner.token)

	c := issueCard(t, one, o.id, map[string]any{"monthly_limit": 10})
	expectCard(t, onTwo, o.id, c.Id.String())
	expectCard(t, onOne, o.id, c.Id.String())
	setCardStatus(t, two, c.Id.String(), "inactive")
	for _, st := range []*apitest.Stream{onOne, onTwo} {
		if _, got := nextCard(t, st, o.id); got.Status != "inactive" {
			t.Fatalf("card %s after the change on the other instance, want inactive", got.Status)
		}
	}
}

// realtimeEnd bounds how long a stream may outlive its session's end: the
// end is notified as it commits, so "at once" (docs/api.md, Realtime) is
// given 5 s here.
const realtimeEnd = 5 * time.Second

// expectEndedEmpty fails t unless st ends within realtimeEnd having sent
// nothing more.
func expectEndedEmpty(t *testing.T, st *apitest.Stream, what string) error {
	t.Helper()
	err := st.Ended(t, realtimeEnd)
	if got := st.Pending(); len(got) > 0 {
		t.Errorf("%s: %d message(s) after the end, first %s %s", what, len(got), got[0].Type, got[0].Data)
	}
	return err
}

// A stream closes as soon as its session ends (sign-out, idle expiry on the
// service clock) or the organization stops admitting reads, and sends
// nothing after: not at the next keep-alive (25 s by default).
func TestRealtimeClosesAtOnceWhenTheSessionEnds(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "realtime-at-once.test")
	sse := freshEvents(t, s, o.id, o.owner.token)
	ws := freshWebSocket(t, s, o.id, o.owner.token)
	second := signInFully(t, s, o.owner.email, o.owner.secret)
	other := freshWebSocket(t, s, o.id, second)
	c := issueCard(t, s, o.id, map[string]any{"monthly_limit": 10})
	for _, st := range []*apitest.Stream{sse, ws, other} {
		expectCard(t, st, o.id, c.Id.String())
	}

	// Sign-out, then a change: the session's streams end without it.
	s.Post(t, "/api/v1/auth/sign-out", o.owner.token, nil).ExpectStatus(t, http.StatusOK)
	c2 := issueCard(t, s, o.id, map[string]any{"monthly_limit": 20})
	expectEndedEmpty(t, sse, "server-sent events after sign-out")
	if err := expectEndedEmpty(t, ws, "WebSocket after sign-out"); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("WebSocket closed with %v, want policy violation (session ended)", err)
	}
	// The person's other session goes on.
	expectCard(t, other, o.id, c2.Id.String())

	// The service clock passes the idle end (30 minutes without a request).
	advance(t, s, 31*time.Minute)
	expectEndedEmpty(t, other, "WebSocket after the idle end")

	// A banned organization's channel closes at once too.
	third := signInFully(t, s, o.owner.email, o.owner.secret)
	banned := freshEvents(t, s, o.id, third)
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/status", sbx, map[string]any{"status": "banned"}).ExpectStatus(t, http.StatusOK)
	expectEndedEmpty(t, banned, "server-sent events after the ban")
}

// A sign-out on one instance ends the session's streams on another sharing
// the PostgreSQL database at once.
func TestRealtimeSignOutOnAnotherInstanceClosesTheStream(t *testing.T) {
	t.Parallel()
	one, two := twoInstances(t)
	o := newCardOwner(t, one, "realtime-instances-end.test")
	sse := freshEvents(t, one, o.id, o.owner.token)
	ws := freshWebSocket(t, one, o.id, o.owner.token)
	c := issueCard(t, two, o.id, map[string]any{"monthly_limit": 10})
	expectCard(t, sse, o.id, c.Id.String())
	expectCard(t, ws, o.id, c.Id.String())

	two.Post(t, "/api/v1/auth/sign-out", o.owner.token, nil).ExpectStatus(t, http.StatusOK)
	issueCard(t, two, o.id, map[string]any{"monthly_limit": 20})
	expectEndedEmpty(t, sse, "server-sent events on the other instance after sign-out")
	if err := expectEndedEmpty(t, ws, "WebSocket on the other instance after sign-out"); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("WebSocket closed with %v, want policy violation (session ended)", err)
	}
}

// twoInstances starts two servers sharing one new database; t is skipped
// unless the e2e tests run on PostgreSQL (SQLite is one instance's).
func twoInstances(t *testing.T) (one, two *apitest.Server) {
	t.Helper()
	if os.Getenv(apitest.E2EDatabaseEnv) != "postgres" {
		t.Skip("two instances share a database on PostgreSQL only (" + apitest.E2EDatabaseEnv + "=postgres)")
	}
	dsn := apitest.NewDatabase(t)
	return apitest.Start(t, "STRONGROOM_DATABASE="+dsn), apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
}
