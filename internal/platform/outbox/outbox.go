// Package outbox queues messages to people: messaging-app codes, new-device
// notices, email fallback codes and security alerts. A message is written in
// the transaction of the change that causes it, then a Sender delivers it.
// In the sandbox, messages are read back through the outbox helper.
//
// Codes at rest: a message that carries a code (Message.Code) goes through
// Outbox.Queue, and its code is never stored in plaintext: the stored body
// holds CodePlaceholder where the code was. In test the code is kept sealed
// with the keyring (sealed_code), opened again for the delivery job and for
// the sandbox outbox. In live it is not stored at all: it is handed to the
// Sender in this process right after the commit, so a crash in between loses
// that one code and the person asks for another.
package outbox

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Kind says what a message is for.
type Kind string

// Message kinds, as the sandbox's outbox helper filters them (kind=).
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

// Queue stores m in tx (the transaction of the change that causes it, whose
// time it is inserted at) with the job that delivers it, so a message is
// sent if and only if the change commits. It refuses a message with a code:
// those go through Outbox.Queue, which keeps the code out of the database.
func Queue(ctx context.Context, tx *db.Tx, m Message) (Message, error) {
	if m.Code != nil {
		return m, ErrCodeNeedsOutbox
	}
	return insert(ctx, tx, m, nil, true)
}

// ErrCodeNeedsOutbox is returned by Queue for a message that carries a code.
var ErrCodeNeedsOutbox = errors.New("outbox: a message with a code must be queued through Outbox.Queue")

// CodePlaceholder stands in the stored body where the code was.
const CodePlaceholder = "[code withheld]"

// insert writes the row (the body as given, sealedCode as given) and, when
// withJob, the job that delivers it.
func insert(ctx context.Context, tx *db.Tx, m Message, sealedCode *string, withJob bool) (Message, error) {
	m.ID = uuid.Must(uuid.NewV7())
	m.InsertedAt = tx.Now()
	if _, err := tx.ExecContext(ctx, `
		INSERT INTO outbox_messages (id, user_id, kind, channel, subject, body, sealed_code, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		m.ID, m.UserID, m.Kind, m.Channel, m.Subject, m.Body, sealedCode, m.InsertedAt); err != nil {
		return m, err
	}
	if !withJob {
		return m, nil
	}
	_, err := job.Enqueue(ctx, tx, deliverJob, deliverPayload{MessageID: m.ID})
	return m, err
}

// codePurpose is the keyring purpose codes are sealed under.
const codePurpose = "outbox-code"

// Outbox queues messages that carry codes (and any other message) and
// delivers them; see the package documentation for how codes are kept.
type Outbox struct {
	DB    *db.DB
	Clock clock.Clock
	// Keys seals codes at rest in test.
	Keys *keyring.Keyring
	// Live: codes are never stored; they reach Sender right after the commit.
	Live   bool
	Sender Sender
	// Logger records failed in-process sends (never a code or a body).
	Logger *slog.Logger
}

// Queue stores m in tx, as the package-level Queue does, keeping its code
// out of the database: sealed in test, handed to the Sender after the commit
// in live. The returned message carries the code and full body.
func (o *Outbox) Queue(ctx context.Context, tx *db.Tx, m Message) (Message, error) {
	if o == nil {
		return m, ErrCodeNeedsOutbox
	}
	if m.Code == nil {
		return insert(ctx, tx, m, nil, true)
	}
	code := *m.Code
	if code == "" {
		return m, errors.New("outbox: empty code")
	}
	stored := m
	stored.Code = nil
	stored.Body = strings.ReplaceAll(m.Body, code, CodePlaceholder)
	if o.Live {
		saved, err := insert(ctx, tx, stored, nil, false)
		if err != nil {
			return m, err
		}
		m.ID, m.InsertedAt = saved.ID, saved.InsertedAt
		sent := m
		tx.AfterCommit(func() { o.sendNow(ctx, sent) })
		return m, nil
	}
	if o.Keys == nil {
		return m, errors.New("outbox: no keyring to seal codes with")
	}
	sealed, err := o.Keys.Seal(codePurpose, []byte(code))
	if err != nil {
		return m, err
	}
	saved, err := insert(ctx, tx, stored, &sealed, true)
	if err != nil {
		return m, err
	}
	m.ID, m.InsertedAt = saved.ID, saved.InsertedAt
	return m, nil
}

// sendAttempts bounds the in-process sends of a live code.
const sendAttempts = 3

// sendNow hands a live code message to the Sender (it was committed without
// its code and without a delivery job) and marks it delivered. The request
// may be gone by now, so its cancellation does not stop the send.
func (o *Outbox) sendNow(ctx context.Context, m Message) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	var err error
	for attempt := range sendAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(attempt) * 200 * time.Millisecond):
			}
		}
		if err = o.Sender.Send(ctx, m); err == nil {
			break
		}
	}
	if err == nil {
		err = o.DB.Tx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE outbox_messages SET delivered_at = $2 WHERE id = $1 AND delivered_at IS NULL`, m.ID, tx.Now())
			return err
		})
	}
	if err != nil && o.Logger != nil {
		// The error comes from the sender or the database, never from the message's text.
		o.Logger.ErrorContext(ctx, "code message not delivered; the person must ask again",
			"message_id", m.ID.String(), "kind", string(m.Kind), "channel", m.Channel, "error", err.Error())
	}
}

// open restores m's code and body from its sealed code, if it has one.
func (o *Outbox) open(m *Message, sealed *string) error {
	if sealed == nil {
		return nil
	}
	if o == nil || o.Keys == nil {
		return errors.New("outbox: no keyring to open codes with")
	}
	plain, err := o.Keys.Open(codePurpose, *sealed)
	if err != nil {
		return err
	}
	code := string(plain)
	m.Code = &code
	m.Body = strings.ReplaceAll(m.Body, CodePlaceholder, code)
	return nil
}

type deliverPayload struct {
	MessageID uuid.UUID `json:"message_id"`
}

// Sender delivers a message to its person on its channel (email, messaging app).
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// Register adds the delivery job to r.
func (o *Outbox) Register(r *job.Runner) {
	r.Handle(deliverJob, o.deliver)
}

func (o *Outbox) deliver(ctx context.Context, j job.Job) error {
	var p deliverPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	var m Message
	var sealed *string
	var delivered *time.Time
	err := o.DB.Reader().QueryRowContext(ctx, `
		SELECT id, user_id, kind, channel, subject, body, sealed_code, inserted_at, delivered_at FROM outbox_messages WHERE id = $1`, p.MessageID).
		Scan(&m.ID, &m.UserID, &m.Kind, &m.Channel, &m.Subject, &m.Body, &sealed, &m.InsertedAt, &delivered)
	if errors.Is(err, sql.ErrNoRows) {
		return job.Permanent(fmt.Errorf("message %s is gone", p.MessageID))
	}
	if err != nil || delivered != nil {
		return err
	}
	if err := o.open(&m, sealed); err != nil {
		return job.Permanent(fmt.Errorf("message %s: %w", p.MessageID, err))
	}
	if err := o.Sender.Send(ctx, m); err != nil {
		return err
	}
	_, err = o.DB.Reader().ExecContext(ctx, `UPDATE outbox_messages SET delivered_at = $2 WHERE id = $1 AND delivered_at IS NULL`, m.ID, o.Clock.Now())
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

// List returns a page of messages, newest first (ids are time-ordered), as
// stored: a code message carries no code and CodePlaceholder in its body.
func List(ctx context.Context, q db.Querier, f Filter, req page.Request) ([]Message, error) {
	return list(ctx, q, f, req, nil)
}

// List returns a page of messages as List does, with the codes sealed at
// rest (test) opened again: what the sandbox outbox shows.
func (o *Outbox) List(ctx context.Context, q db.Querier, f Filter, req page.Request) ([]Message, error) {
	return list(ctx, q, f, req, o)
}

func list(ctx context.Context, q db.Querier, f Filter, req page.Request, opener *Outbox) ([]Message, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT id, user_id, kind, channel, subject, body, sealed_code, inserted_at FROM outbox_messages
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
		var sealed *string
		if err := rows.Scan(&m.ID, &m.UserID, &m.Kind, &m.Channel, &m.Subject, &m.Body, &sealed, &m.InsertedAt); err != nil {
			return nil, err
		}
		if opener != nil {
			if err := opener.open(&m, sealed); err != nil {
				return nil, err
			}
		}
		m.InsertedAt = m.InsertedAt.UTC()
		out = append(out, m)
	}
	return out, rows.Err()
}

// PageKey positions a page after m.
func PageKey(m Message) page.Key { return page.Key{ID: m.ID.String()} }
