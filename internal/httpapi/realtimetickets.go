package httpapi

// Realtime tickets: how a browser opens the realtime channel, whose
// EventSource cannot send the bearer header (docs/api.md, Realtime).

import (
	"context"
	"net/http"
	"time"

	"github.com/strongroom/strongroom/internal/identity"
)

type realtimeTicketRecord struct {
	Ticket    string    `json:"ticket"`
	ExpiresAt time.Time `json:"expires_at"`
}

// createRealtimeTicket issues a session's one-use ticket for the
// organization's channel, to any member who may open the channel.
func (s *server) createRealtimeTicket(w http.ResponseWriter, r *http.Request) error {
	org, err := organizationID.id(r)
	if err != nil {
		return err
	}
	if err := noBody(r); err != nil {
		return err
	}
	a := actorOf(r)
	if _, _, err := s.realtimeAccess(r.Context(), a, org); err != nil {
		return err
	}
	t, err := s.Identity.IssueRealtimeTicket(r.Context(), a, org)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	return writeJSON(w, http.StatusCreated, realtimeTicketRecord{Ticket: t.Ticket, ExpiresAt: t.ExpiresAt})
}

// authenticateRealtime admits the realtime channel's request by its bearer
// (a session or a key holding events:subscribe) or, without one, by a
// ticket in the query, which it spends.
func (s *server) authenticateRealtime(r *http.Request) (*http.Request, error) {
	ticket := r.URL.Query().Get("ticket")
	if _, ok := bearer(r); ok || ticket == "" {
		return s.authenticate(r, true)
	}
	org, err := organizationID.id(r)
	if err != nil {
		return r, identity.ErrNotAuthenticated()
	}
	a, err := s.Identity.RedeemRealtimeTicket(r.Context(), ticket, org)
	if err != nil {
		infoOf(r).tokenRefused = true
		return r, err
	}
	infoOf(r).userID = a.UserID.String()
	if err := s.limit(r, s.LocalLimiter, policyCredential, "session:"+a.Session.ID.String(), s.Limits.PerCredential); err != nil {
		return r, err
	}
	return r.WithContext(context.WithValue(r.Context(), actorKey{}, a)), nil
}
