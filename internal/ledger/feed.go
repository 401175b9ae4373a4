package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Feed transaction types, the type of a transactions feed row.
var TransactionTypes = []string{"deposit", "fiat_outgoing", "crypto_outgoing", "crypto_incoming", "card_transaction", "internal_transfer", "fee", "reversal"}

// Transaction is one row of an organization's transactions feed.
type Transaction struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	Type           string
	EntryID        *uuid.UUID
	Direction      string // in or out
	Amount         int64  // minor units, positive
	Currency       string
	Description    string
	PaymentID      *uuid.UUID
	RecordedAt     time.Time
}

// TransactionCreated is the event of a new feed row, on the organization's
// channel; its data names the row (TransactionEvent).
const TransactionCreated = "transaction.created"

// TransactionEvent is the data of a TransactionCreated event.
type TransactionEvent struct {
	TransactionID  uuid.UUID `json:"transaction_id"`
	OrganizationID uuid.UUID `json:"organization_id"`
}

// Record adds a feed row in tx, recorded at tx.Now(), counts it in its
// day's sums (DaySums) as tx commits, and appends its TransactionCreated
// event. A row that would take a day's sum beyond int64 fails the commit
// with ErrDaySumLimit.
func Record(ctx context.Context, tx *db.Tx, t Transaction) (Transaction, error) {
	rows, err := RecordAll(ctx, tx, t)
	if err != nil {
		return t, err
	}
	return rows[0], nil
}

// RecordAll is Record of several rows, inserted in one statement on
// PostgreSQL, their events appended in the order given.
func RecordAll(ctx context.Context, tx *db.Tx, ts ...Transaction) ([]Transaction, error) {
	values := make([][]any, len(ts))
	for i := range ts {
		t := &ts[i]
		t.ID, t.RecordedAt = uuid.Must(uuid.NewV7()), tx.Now()
		values[i] = []any{t.ID, t.OrganizationID, t.Type, t.EntryID, t.Direction, t.Amount, t.Currency, t.Description, t.PaymentID, t.RecordedAt}
	}
	// One statement on PostgreSQL; a row a statement on SQLite, as for
	// journal entries (insertEntries): other tables refer to feed rows.
	batches := [][][]any{values}
	if tx.Dialect() != db.Postgres {
		batches = make([][][]any, len(values))
		for i, row := range values {
			batches[i] = [][]any{row}
		}
	}
	for _, rows := range batches {
		insert, args := db.Values(`INSERT INTO transactions (`+transactionColumns+`)`, 1, rows)
		if _, err := tx.ExecContext(ctx, insert, args...); err != nil {
			return nil, err
		}
	}
	for _, t := range ts {
		countAtCommit(tx, t)
		if _, err := event.Append(ctx, tx, t.OrganizationID, "transaction", t.ID.String(), TransactionCreated,
			TransactionEvent{TransactionID: t.ID, OrganizationID: t.OrganizationID}); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

const transactionColumns = `id, organization_id, type, entry_id, direction, amount, currency, description, payment_id, recorded_at`

func scanTransaction(row db.Scanner) (Transaction, error) {
	var t Transaction
	err := row.Scan(&t.ID, &t.OrganizationID, &t.Type, &t.EntryID, &t.Direction, &t.Amount, &t.Currency, &t.Description, &t.PaymentID, &t.RecordedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return t, apierr.NotFoundf("Transaction")
	}
	t.RecordedAt = t.RecordedAt.UTC()
	return t, err
}

// FeedFilter narrows the feed: dates are inclusive UTC calendar days.
type FeedFilter struct {
	From, To *time.Time // start of the first day, start of the day after the last
	Types    []string
}

// List returns a page of the feed, newest first (by time recorded, then id).
func List(ctx context.Context, q db.Reader, orgID uuid.UUID, f FeedFilter, req page.Request) ([]Transaction, error) {
	var afterTime *time.Time
	var afterID *uuid.UUID
	if req.After != nil {
		t, err1 := time.Parse(time.RFC3339Nano, req.After.Sort)
		id, err2 := uuid.Parse(req.After.ID)
		if err1 != nil || err2 != nil {
			return nil, apierr.New(apierr.InvalidCursor, "The cursor is not valid for this list; start again from the first page.")
		}
		afterTime, afterID = &t, &id
	}
	types := ""
	for _, t := range f.Types {
		types += "," + t
	}
	types += ","
	return db.QueryAll(ctx, q, scanTransaction, `SELECT `+transactionColumns+` FROM transactions
		WHERE organization_id = $1
		  AND (recorded_at >= $2 OR $2 IS NULL)
		  AND (recorded_at < $3 OR $3 IS NULL)
		  AND ($4 = ',' OR $4 LIKE '%,' || type || ',%')
		  AND (recorded_at < $5 OR (recorded_at = $5 AND id < $6) OR $5 IS NULL)
		ORDER BY recorded_at DESC, id DESC LIMIT $7`,
		orgID, f.From, f.To, types, afterTime, afterID, req.Limit+1)
}

// FeedPageKey positions a page after t.
func FeedPageKey(t Transaction) page.Key {
	return page.Key{Sort: t.RecordedAt.UTC().Format(time.RFC3339Nano), ID: t.ID.String()}
}

// Get returns one feed row of orgID; another organization's is not found.
func Get(ctx context.Context, q db.Reader, orgID, id uuid.UUID) (Transaction, error) {
	return scanTransaction(q.QueryRowContext(ctx, `SELECT `+transactionColumns+` FROM transactions WHERE id = $1 AND organization_id = $2`, id, orgID))
}

// PaymentRows returns the feed row of each of the payments ids that has
// one (a fiat_outgoing or crypto_outgoing row, recorded when the payment
// is approved), by payment.
func PaymentRows(ctx context.Context, q db.Reader, ids []uuid.UUID) (map[uuid.UUID]uuid.UUID, error) {
	out := map[uuid.UUID]uuid.UUID{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	type pair struct{ payment, row uuid.UUID }
	pairs, err := db.QueryAll(ctx, q, func(row db.Scanner) (pair, error) {
		var p pair
		err := row.Scan(&p.payment, &p.row)
		return p, err
	}, `SELECT payment_id, id FROM transactions
		WHERE payment_id IN (`+db.Placeholders(1, len(ids))+`) AND type IN ('fiat_outgoing', 'crypto_outgoing')`, args...)
	for _, p := range pairs {
		out[p.payment] = p.row
	}
	return out, err
}
