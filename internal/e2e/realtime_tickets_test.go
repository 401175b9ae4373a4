package e2e_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// ticket issues a realtime ticket for token's session on org.
func ticket(t *testing.T, s *apitest.Server, token, org string) api.RealtimeTicket {
	t.Helper()
	var out api.RealtimeTicket
	s.Post(t, realtimePath(org)+"/tickets", token, nil).ExpectStatus(t, http.StatusCreated).Decode(t, &out)
	return out
}

// withTicket is the channel's path opened with ticket instead of a bearer.
func withTicket(org, ticket string) string {
	return realtimePath(org) + "?ticket=" + url.QueryEscape(ticket)
}

var eventStream = map[string]string{"Accept": "text/event-stream"}

// A browser opens the realtime channel with a ticket: once, within 30
// seconds on the service clock, on its own organization only, and the
// stream ends when the session that got the ticket signs out.
func TestRealtimeTickets(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	a := newCardOwner(t, s, "tickets-a.test")
	b := newCardOwner(t, s, "tickets-b.test")

	tk := ticket(t, s, a.owner.token, a.id)
	if !strings.HasPrefix(tk.Ticket, "srrt_") {
		t.Fatalf("ticket %q, want the srrt_ prefix", tk.Ticket)
	}
	if want := now(t, s).Add(30 * time.Second); !tk.ExpiresAt.Equal(want) {
		t.Fatalf("expires_at %s, want %s (30 s on the service clock)", tk.ExpiresAt, want)
	}

	// Used on another organization's channel it is refused, and not spent.
	s.Do(t, apitest.Request{Method: "GET", Path: withTicket(b.id, tk.Ticket), Header: eventStream}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	// Once: the first opening spends it.
	st := s.Events(t, withTicket(a.id, tk.Ticket), "", nil)
	s.Do(t, apitest.Request{Method: "GET", Path: withTicket(a.id, tk.Ticket), Header: eventStream}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	c := issueCard(t, s, a.id, map[string]any{"monthly_limit": 10})
	expectCard(t, st, a.id, c.Id.String())

	// Expired after 30 seconds on the service clock.
	late := ticket(t, s, a.owner.token, a.id)
	advance(t, s, 31*time.Second)
	s.Do(t, apitest.Request{Method: "GET", Path: withTicket(a.id, late.Ticket), Header: eventStream}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	// Unknown tickets and forms.
	for _, bad := range []string{"srrt_nothing", "srs_" + tk.Ticket[5:], strings.Repeat("x", 300)} {
		s.Do(t, apitest.Request{Method: "GET", Path: withTicket(a.id, bad), Header: eventStream}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	}

	// Only a member gets one, and only with a session.
	s.Post(t, realtimePath(a.id)+"/tickets", b.owner.token, nil).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, realtimePath(a.id)+"/tickets", "", nil).ExpectError(t, http.StatusUnauthorized, "not_authenticated")

	// A stream opened with a ticket ends when its session signs out, and a
	// ticket of a session that ended is refused.
	unspent := ticket(t, s, a.owner.token, a.id)
	s.Post(t, "/api/v1/auth/sign-out", a.owner.token, nil).ExpectStatus(t, http.StatusOK)
	expectEndedEmpty(t, st, "ticket stream after sign-out")
	s.Do(t, apitest.Request{Method: "GET", Path: withTicket(a.id, unspent.Ticket), Header: eventStream}).ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	// The tickets went in URLs; none reached the logs.
	assertNoSecrets(t, s, tk.Ticket, late.Ticket, unspent.Ticket)
}
