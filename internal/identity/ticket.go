package identity

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// RealtimeTicketLifetime is how long a realtime ticket works after issue,
// on the service clock (docs/api.md, Realtime).
const RealtimeTicketLifetime = 30 * time.Second

const (
	ticketPurpose = "realtime-ticket"
	ticketPrefix  = "srrt_"
)

// RealtimeTicket is a one-use stand-in for a session's bearer on one
// organization's realtime channel: an EventSource (or a WebSocket opened by a
// browser) cannot send an Authorization header, and a session token in a
// URL would outlive the request in logs and history.
type RealtimeTicket struct {
	Ticket    string
	ExpiresAt time.Time
}

// IssueRealtimeTicket issues a ticket for a's session on organization org.
// The caller has checked that a may read org's channel. Only the ticket's
// keyed hash is kept; the session's expired tickets are cleared as it goes.
func (s *Service) IssueRealtimeTicket(ctx context.Context, a actor.Actor, org uuid.UUID) (RealtimeTicket, error) {
	if a.IsKey() || a.Session.ID == uuid.Nil {
		return RealtimeTicket{}, errNotAuthenticated
	}
	ticket := ticketPrefix + keyring.RandomToken(32)
	var out RealtimeTicket
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		if _, err := tx.ExecContext(ctx, `DELETE FROM realtime_tickets WHERE session_id = $1 AND expires_at <= $2`, a.Session.ID, now); err != nil {
			return err
		}
		out = RealtimeTicket{Ticket: ticket, ExpiresAt: now.Add(RealtimeTicketLifetime).UTC()}
		_, err := tx.ExecContext(ctx, `
			INSERT INTO realtime_tickets (id, token_hash, session_id, organization_id, inserted_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`,
			uuid.Must(uuid.NewV7()), s.Keys.Hash(ticketPurpose, ticket), a.Session.ID, org, now, out.ExpiresAt)
		return err
	})
	if err != nil {
		return RealtimeTicket{}, err
	}
	return out, nil
}

// RedeemRealtimeTicket spends ticket on organization org's channel and
// returns the person of its session. Every ticket that does not admit the
// request (unknown, spent, expired, for another organization, or its session
// ended) is not_authenticated; one for another organization is not spent.
// Redeeming does not count as activity of the session: a stream does not
// keep a session alive.
func (s *Service) RedeemRealtimeTicket(ctx context.Context, ticket string, org uuid.UUID) (actor.Actor, error) {
	if !strings.HasPrefix(ticket, ticketPrefix) || len(ticket) > 128 {
		return actor.Actor{}, errNotAuthenticated
	}
	var a actor.Actor
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		now := tx.Now()
		var sessionID uuid.UUID
		err := tx.QueryRowContext(ctx, `
			DELETE FROM realtime_tickets WHERE token_hash = $1 AND organization_id = $2 AND expires_at > $3
			RETURNING session_id`, s.Keys.Hash(ticketPurpose, ticket), org, now).Scan(&sessionID)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotAuthenticated
		}
		if err != nil {
			return err
		}
		ses := &a.Session
		err = tx.QueryRowContext(ctx, `
			SELECT s.id, s.user_id, s.device_id, s.inserted_at, s.expires_at, s.idle_expires_at, d.platform
			FROM sessions s JOIN devices d ON d.id = s.device_id
			WHERE s.id = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND s.idle_expires_at > $2`, sessionID, now).
			Scan(&ses.ID, &ses.UserID, &ses.DeviceID, &ses.InsertedAt, &ses.ExpiresAt, &ses.IdleExpiresAt, &ses.Platform)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotAuthenticated // the session ended: nothing to admit
		}
		ses.InsertedAt, ses.ExpiresAt, ses.IdleExpiresAt = ses.InsertedAt.UTC(), ses.ExpiresAt.UTC(), ses.IdleExpiresAt.UTC()
		a.UserID = ses.UserID
		return err
	})
	if errors.Is(err, errNotAuthenticated) {
		return actor.Actor{}, errNotAuthenticated
	}
	if err != nil {
		return actor.Actor{}, err
	}
	return a, nil
}
