// Package outbox queues messages to people: messaging-app codes, new-device
// notices, email fallback codes and security alerts. A message is written in
// the transaction of the change that causes it, then a Sender delivers it.
// In the sandbox, messages are read back through the outbox helper.
package outbox

import (
	"context"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Kind says what a message is for.
type Kind string

// Message kinds (CONTRACT §9).
const (
	TOTPActivationCode Kind = "totp_activation_code"
	NewDevice          Kind = "new_device"
	StepUpEmailCode    Kind = "step_up_email_code"
	SecurityAlert      Kind = "security_alert"
	Notification       Kind = "notification"
)

// Kinds lists every kind, for validation.
var Kinds = []Kind{TOTPActivationCode, NewDevice, StepUpEmailCode, SecurityAlert, Notification}

// Channels messages travel on.
const (
	ChannelEmail     = "email"
	ChannelMessaging = "messaging_app"
)

// Message is one message to a person.
type Message struct {
	ID         uuid.UUID
	UserID     *uuid.UUID
	Kind       Kind
	Channel    string
	Subject    string
	Body       string
	Code       *string // the code of the code kinds, else nil
	InsertedAt time.Time
}

// Queue stores m in q (the transaction of the change that causes it).
func Queue(ctx context.Context, q db.Querier, now time.Time, m Message) (Message, error) {
	m.ID = uuid.Must(uuid.NewV7())
	m.InsertedAt = now
	_, err := q.ExecContext(ctx, `
		INSERT INTO outbox_messages (id, user_id, kind, channel, subject, body, code, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		m.ID, m.UserID, m.Kind, m.Channel, m.Subject, m.Body, m.Code, now)
	return m, err
}

// Filter narrows List; zero fields do not filter.
type Filter struct {
	UserID *uuid.UUID
	Kind   Kind
}

// List returns a page of messages, newest first (ids are time-ordered).
func List(ctx context.Context, q db.Querier, f Filter, req page.Request) ([]Message, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT id, user_id, kind, channel, subject, body, code, inserted_at FROM outbox_messages
		WHERE ($1 IS NULL OR user_id = $1)
		  AND ($2 = '' OR kind = $2)
		  AND ($3 IS NULL OR id < $3)
		ORDER BY id DESC LIMIT $4`,
		f.UserID, string(f.Kind), req.AfterUUID(), req.Limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		if err := rows.Scan(&m.ID, &m.UserID, &m.Kind, &m.Channel, &m.Subject, &m.Body, &m.Code, &m.InsertedAt); err != nil {
			return nil, err
		}
		m.InsertedAt = m.InsertedAt.UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// PageKey positions a page after m.
func PageKey(m Message) page.Key { return page.Key{ID: m.ID.String()} }
