package identity

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/watched"
)

// Session limits: a session ends after SessionIdle without a request, and
// SessionLifetime after sign-in whatever its use (docs/api.md, Authentication).
const (
	SessionIdle     = 30 * time.Minute
	SessionLifetime = 30 * 24 * time.Hour
)

// Keyring purposes of the tokens this package issues.
const (
	sessionPurpose   = "session-token"
	challengePurpose = "sign-in-challenge"
	trustPurpose     = "device-trust-token"
)

// Token prefixes tell a reader which kind of secret leaked, without revealing it.
const (
	sessionPrefix   = "srs_"
	challengePrefix = "src_"
	trustPrefix     = "srt_"
)

// errNotAuthenticated is the one answer for every token that does not act
// as a person: missing, unknown, ended, idle too long or too old.
var errNotAuthenticated = apierr.New(apierr.NotAuthenticated, "You are not signed in, or your session has ended. Please sign in again.")

// ErrNotAuthenticated returns the error of a request without a live session.
func ErrNotAuthenticated() error { return errNotAuthenticated }

// startSession creates a session for userID on deviceID and returns its token.
func startSession(ctx context.Context, q db.Querier, keys *keyring.Keyring, userID, deviceID uuid.UUID) (uuid.UUID, string, error) {
	now := q.Now()
	token := sessionPrefix + keyring.RandomToken(32)
	id := uuid.Must(uuid.NewV7())
	_, err := q.ExecContext(ctx, `
		INSERT INTO sessions (id, token_hash, user_id, device_id, inserted_at, expires_at, idle_expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		id, keys.Hash(sessionPurpose, token), userID, deviceID, now,
		now.Add(SessionLifetime), minTime(now.Add(SessionIdle), now.Add(SessionLifetime)))
	return id, token, err
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// IsSessionToken reports whether token has the form of a session token.
func IsSessionToken(token string) bool {
	return len(token) > len(sessionPrefix) && token[:len(sessionPrefix)] == sessionPrefix
}

// Authenticate resolves a session token to its actor and renews the idle end
// to 30 minutes after now (never past the absolute end). A single conditional
// update checks and renews, so a session cannot be renewed after it ended.
func (s *Service) Authenticate(ctx context.Context, token string) (actor.Actor, error) {
	if !IsSessionToken(token) {
		return actor.Actor{}, errNotAuthenticated
	}
	hash := s.Keys.Hash(sessionPurpose, token)
	now := s.DB.Now()
	cache := s.sessionCache()
	a, ok := cache.Get(hash, now)
	ses := &a.Session
	if !ok || !now.Before(ses.ExpiresAt) || !now.Before(ses.IdleExpiresAt) {
		// Not kept, or over by what this instance knows (another may have
		// slid the idle end since): read it.
		epoch := cache.Begin()
		var err error
		if a, err = s.readSession(ctx, hash, now); err != nil {
			return actor.Actor{}, err
		}
		cache.Put(epoch, hash, a, now)
	}
	// The idle window slides with each request; a request within a second
	// of the last slide leaves it (and the device's last_seen_at) as they
	// are, so a busy session does not take the writer on every request.
	slid := now.Add(SessionIdle)
	if ses.ExpiresAt.Before(slid) {
		slid = ses.ExpiresAt
	}
	if slid.Sub(ses.IdleExpiresAt) < idleSlideStep {
		return a, nil
	}
	err := s.DB.Tx(ctx, func(tx *db.Tx) error {
		err := tx.QueryRowContext(ctx, `
			UPDATE sessions SET idle_expires_at = CASE WHEN expires_at < $3 THEN expires_at ELSE $3 END
			WHERE token_hash = $1 AND ended_at IS NULL AND expires_at > $2 AND idle_expires_at > $2
			RETURNING idle_expires_at`, hash, tx.Now(), tx.Now().Add(SessionIdle)).Scan(&ses.IdleExpiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			return errNotAuthenticated // ended or expired since it was read
		}
		if err != nil {
			return err
		}
		ses.IdleExpiresAt = ses.IdleExpiresAt.UTC()
		_, err = tx.ExecContext(ctx, `UPDATE devices SET last_seen_at = $2 WHERE id = $1`, ses.DeviceID, tx.Now())
		return err
	})
	if err != nil {
		cache.Forget(hash)
		return actor.Actor{}, err
	}
	idle := ses.IdleExpiresAt
	cache.Update(hash, func(kept actor.Actor) actor.Actor { kept.Session.IdleExpiresAt = idle; return kept })
	return a, nil
}

// readSession reads the live session whose token hashes to hash.
func (s *Service) readSession(ctx context.Context, hash string, now time.Time) (actor.Actor, error) {
	var a actor.Actor
	var first, last *string
	var email string
	ses := &a.Session
	err := s.DB.Reader().QueryRowContext(ctx, `
		SELECT s.id, s.user_id, s.device_id, s.inserted_at, s.expires_at, s.idle_expires_at, d.platform,
		       u.first_name, u.last_name, u.email
		FROM sessions s JOIN devices d ON d.id = s.device_id JOIN users u ON u.id = s.user_id
		WHERE s.token_hash = $1 AND s.ended_at IS NULL AND s.expires_at > $2 AND s.idle_expires_at > $2`, hash, now).
		Scan(&ses.ID, &ses.UserID, &ses.DeviceID, &ses.InsertedAt, &ses.ExpiresAt, &ses.IdleExpiresAt, &ses.Platform,
			&first, &last, &email)
	if errors.Is(err, sql.ErrNoRows) {
		return actor.Actor{}, errNotAuthenticated
	}
	if err != nil {
		return actor.Actor{}, err
	}
	ses.InsertedAt, ses.ExpiresAt, ses.IdleExpiresAt = ses.InsertedAt.UTC(), ses.ExpiresAt.UTC(), ses.IdleExpiresAt.UTC()
	a.UserID = ses.UserID
	a.Name = DisplayName(first, last, email)
	return a, nil
}

// EndedTopic is notified by every transaction that ends a session, so the
// cache of live sessions (sessionCache) of every instance empties as it
// commits.
const EndedTopic = "sessions"

// sessionCache returns the service's cache of live sessions by token hash,
// made on first use. It saves a request the read of its session (five of a
// payment's requests each read it); a session ends only by sign-out, which
// notifies EndedTopic, or by time, which is checked against what is kept.
func (s *Service) sessionCache() *watched.Cache[actor.Actor] {
	s.sessionsOnce.Do(func() { s.sessions = watched.New[actor.Actor](s.DB, time.Minute, 10_000, EndedTopic) })
	return s.sessions
}

// idleSlideStep is the least a request moves a session's idle expiry.
const idleSlideStep = time.Second

// SessionsTopic is the notification topic of userID's sessions: every
// transaction that ends one of them (sign-out) notifies it, in every
// instance sharing the database, so what holds a session open for long (a
// realtime stream) learns at once that it ended, without reading the
// session again before each thing it does.
func SessionsTopic(userID uuid.UUID) string { return "sessions/" + userID.String() }

// SessionLiveUntil returns, while session id could still authenticate a
// request (not ended, not expired, not idle), the moment it stops doing so
// unless a request renews it (the earlier of its idle and absolute ends);
// else not_authenticated. It reads only: unlike Authenticate it does not
// count as activity, so a long-lived stream re-checks its session without
// keeping it alive. Ends before that moment are notified on SessionsTopic.
func (s *Service) SessionLiveUntil(ctx context.Context, id uuid.UUID) (time.Time, error) {
	var expires, idle time.Time
	err := s.DB.Reader().QueryRowContext(ctx, `SELECT expires_at, idle_expires_at FROM sessions
		WHERE id = $1 AND ended_at IS NULL AND expires_at > $2 AND idle_expires_at > $2`, id, s.Clock.Now()).Scan(&expires, &idle)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, errNotAuthenticated
	}
	if err != nil {
		return time.Time{}, err
	}
	return minTime(expires, idle).UTC(), nil
}

// SignOut ends the session of token, if it is one; it never fails for a dead
// token. Whatever holds the session open hears it on SessionsTopic.
func (s *Service) SignOut(ctx context.Context, token string) error {
	if !IsSessionToken(token) {
		return nil
	}
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		var userID, sessionID uuid.UUID
		err := tx.QueryRowContext(ctx, `UPDATE sessions SET ended_at = $2 WHERE token_hash = $1 AND ended_at IS NULL RETURNING user_id, id`,
			s.Keys.Hash(sessionPurpose, token), tx.Now()).Scan(&userID, &sessionID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil // ended already, or no session
		}
		if err != nil {
			return err
		}
		tx.Notify(SessionsTopic(userID))
		tx.Notify(EndedTopic)
		u, err := GetUser(ctx, tx, userID)
		if err != nil {
			return err
		}
		return audit.RecordForPerson(ctx, tx, userID, audit.User(userID, DisplayName(u.FirstName, u.LastName, u.Email)),
			audit.SessionEnded, audit.To("session", sessionID))
	})
}

// DisplayName is how a person is named in records of what they did: first
// and last name, or the email when neither is set.
func DisplayName(first, last *string, email string) string {
	name := strings.TrimSpace(deref(first) + " " + deref(last))
	if name == "" {
		return email
	}
	return name
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
