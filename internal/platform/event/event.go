// Package event records domain events in the transaction of the change they
// describe (Append) and hands each organization's committed events to its
// open realtime connections (Tail), replaying from the table what a
// reconnecting client missed (Subscription.Replay). Durable consumers
// (Consume, Consumer) hand every committed event once to a named consumer,
// whose position is stored in the database with its own writes.
package event

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Event is one stored domain event.
type Event struct {
	Seq int64
	ID  uuid.UUID
	// OrganizationID is the organization whose realtime channel carries the
	// event; uuid.Nil when it concerns none (and for events stored before
	// organizations were recorded).
	OrganizationID uuid.UUID
	Stream         string
	AggregateID    string
	Type           string
	Data           json.RawMessage
	OccurredAt     time.Time
}

// Ref is what records carry to point at the event that recorded them.
type Ref struct {
	EventID     uuid.UUID `json:"event_id"`
	Stream      string    `json:"stream"`
	AggregateID string    `json:"aggregate_id"`
	Type        string    `json:"type"`
}

// Append writes one event in tx, the caller's open transaction (as it
// commits), so the event exists if and only if the change it describes commits; it occurred at
// tx.Now(). data is stored as JSON. orgID names the organization whose
// realtime channel carries the event (uuid.Nil: none). Tails (in every
// instance, on PostgreSQL) wake as soon as tx commits.
func Append(ctx context.Context, tx *db.Tx, orgID uuid.UUID, stream, aggregateID, typ string, data any) (Ref, error) {
	body, err := json.Marshal(data)
	if err != nil {
		return Ref{}, fmt.Errorf("event %s: encode data: %w", typ, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Ref{}, fmt.Errorf("event %s: %w", typ, err)
	}
	// seq comes from the table (and on PostgreSQL tx_id from its default), so
	// the same text serves both engines. The events of a transaction are
	// written together as it commits: nothing reads them back before, and
	// seq follows the order they were appended in.
	tx.InsertAtCommit(`INSERT INTO domain_events (id, organization_id, stream, aggregate_id, type, data, occurred_at)`,
		id, uuid.NullUUID{UUID: orgID, Valid: orgID != uuid.Nil}, stream, aggregateID, typ, string(body), tx.Now().UTC())
	tx.Notify(Topic)
	return Ref{EventID: id, Stream: stream, AggregateID: aggregateID, Type: typ}, nil
}

// Topic is the notification topic a committed Append wakes tails on.
const Topic = "events"

const eventColumns = `seq, id, organization_id, stream, aggregate_id, type, data, occurred_at`

// scanEvents reads rows of eventColumns, followed by the transaction id as
// text when tx is not nil (PostgreSQL), and closes them.
func scanEvents(rows *sql.Rows, tx *[]uint64) ([]Event, error) {
	defer rows.Close()
	var events []Event
	for rows.Next() {
		var (
			e    Event
			org  uuid.NullUUID
			data string
			xid  string
		)
		dest := []any{&e.Seq, &e.ID, &org, &e.Stream, &e.AggregateID, &e.Type, &data, &e.OccurredAt}
		if tx != nil {
			dest = append(dest, &xid)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if tx != nil {
			n, err := strconv.ParseUint(xid, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("event #%d: transaction id %q: %w", e.Seq, xid, err)
			}
			*tx = append(*tx, n)
		}
		e.OrganizationID = org.UUID
		e.Data = json.RawMessage(data)
		e.OccurredAt = e.OccurredAt.UTC()
		events = append(events, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return events, rows.Close()
}
