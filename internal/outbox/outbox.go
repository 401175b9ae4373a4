// Package outbox queues messages to people: messaging-app codes, new-device
// notices, email fallback codes and security alerts. A message is written in
// the transaction of the change that causes it, then a Sender delivers it.
// In the sandbox, messages are read back through the outbox helper.
package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
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

// deliverJob is the job kind that hands a message to the Sender.
const deliverJob = "outbox.deliver"

// Queue stores m in q (the transaction of the change that causes it) with
// the job that delivers it, so a message is sent if and only if the change commits.
func Queue(ctx context.Context, q db.Querier, now time.Time, m Message) (Message, error) {
	m.ID = uuid.Must(uuid.NewV7())
	m.InsertedAt = now
	if _, err := q.ExecContext(ctx, `
		INSERT INTO outbox_messages (id, user_id, kind, channel, subject, body, code, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		m.ID, m.UserID, m.Kind, m.Channel, m.Subject, m.Body, m.Code, now); err != nil {
		return m, err
	}
	_, err := job.Enqueue(ctx, q, now, deliverJob, deliverPayload{MessageID: m.ID})
	return m, err
}

type deliverPayload struct {
	MessageID uuid.UUID `json:"message_id"`
}

// Sender delivers a message to its person on its channel (email, messaging app).
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Delivery hands queued messages to a Sender through the job runner.
type Delivery struct {
	DB     *db.DB
	Clock  clock.Clock
	Sender Sender
}

// Register adds the delivery job to r.
func (d *Delivery) Register(r *job.Runner) {
	r.Handle(deliverJob, d.deliver)
}

func (d *Delivery) deliver(ctx context.Context, j job.Job) error {
	var p deliverPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	var m Message
	var delivered *time.Time
	err := d.DB.Reader().QueryRowContext(ctx, `
		SELECT id, user_id, kind, channel, subject, body, code, inserted_at, delivered_at FROM outbox_messages WHERE id = $1`, p.MessageID).
		Scan(&m.ID, &m.UserID, &m.Kind, &m.Channel, &m.Subject, &m.Body, &m.Code, &m.InsertedAt, &delivered)
	if errors.Is(err, sql.ErrNoRows) {
		return job.Permanent(fmt.Errorf("message %s is gone", p.MessageID))
	}
	if err != nil || delivered != nil {
		return err
	}
	if err := d.Sender.Send(ctx, m); err != nil {
		return err
	}
	_, err = d.DB.Reader().ExecContext(ctx, `UPDATE outbox_messages SET delivered_at = $2 WHERE id = $1 AND delivered_at IS NULL`, m.ID, d.Clock.Now())
	return err
}

// LogSender stands in for real channels: it records that a message went out,
// naming its kind and person but never its body or code.
type LogSender struct {
	Logger *slog.Logger
}

// Send logs the delivery.
func (s LogSender) Send(ctx context.Context, m Message) error {
	s.Logger.InfoContext(ctx, "message delivered", "message_id", m.ID.String(), "kind", string(m.Kind), "channel", m.Channel)
	return nil
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
		WHERE (user_id = $1 OR $1 IS NULL)
		  AND ($2 = '' OR kind = $2)
		  AND (id < $3 OR $3 IS NULL)
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
