package ledger

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// signedAmount is a feed row's amount with its direction: what it added to
// the organization's available balance. Every row of the feed is recorded
// with the entry that moves the available balance by exactly that much (a
// deposit, a card payment, a payment and its fee, a reversal of both), so
// the rows of a currency recorded before an instant sum to the available
// balance at that instant.
const signedAmount = `CASE WHEN direction = 'in' THEN amount ELSE -amount END`

// statementSQL reads one statement in one SQL statement, so on both
// engines the balance before the range, the sum of the range and its rows
// come from one snapshot of the database: opening + rows = closing even
// while others post. The two sums are uncorrelated subqueries, computed
// once (the history before the range is read once, by the first); the rows
// use the feed index (organization_id, recorded_at, id).
const statementSQL = `SELECT
	(SELECT COALESCE(SUM(` + signedAmount + `), 0) FROM transactions WHERE organization_id = $1 AND currency = $2 AND recorded_at < $3),
	(SELECT COALESCE(SUM(` + signedAmount + `), 0) FROM transactions WHERE organization_id = $1 AND currency = $2 AND recorded_at >= $3 AND recorded_at < $4),
	` + transactionColumns + `
	FROM transactions
	WHERE organization_id = $1 AND currency = $2 AND recorded_at >= $3 AND recorded_at < $4
	ORDER BY recorded_at, id`

// balancesSQL is statementSQL's two sums alone, for a range without rows.
const balancesSQL = `SELECT
	(SELECT COALESCE(SUM(` + signedAmount + `), 0) FROM transactions WHERE organization_id = $1 AND currency = $2 AND recorded_at < $3),
	(SELECT COALESCE(SUM(` + signedAmount + `), 0) FROM transactions WHERE organization_id = $1 AND currency = $2 AND recorded_at >= $3 AND recorded_at < $4)`

// StatementCursor walks the feed rows of one organization in one currency
// recorded in a range, in booking order (time recorded, then id), one row
// at a time: a year of a busy account is never held in memory. Opening is
// the available balance at the start of the range (the sum of the rows
// recorded before it) and Closing at its end; Opening plus the rows' signed
// amounts is Closing, read from one snapshot.
type StatementCursor struct {
	Opening, Closing int64

	rows    *sql.Rows
	pending *Transaction // the first row, read to learn the balances
	current Transaction
	err     error
}

// OpenStatement starts reading orgID's rows in currency recorded in
// [from, to). The caller must Close the cursor.
func OpenStatement(ctx context.Context, q db.Reader, orgID uuid.UUID, currency string, from, to time.Time) (*StatementCursor, error) {
	from, to = from.UTC(), to.UTC()
	rows, err := q.QueryContext(ctx, statementSQL, orgID, currency, from, to)
	if err != nil {
		return nil, err
	}
	c := &StatementCursor{rows: rows}
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			rows.Close()
			return nil, err
		}
		rows.Close()
		c.rows = nil
		var moved int64
		if err := q.QueryRowContext(ctx, balancesSQL, orgID, currency, from, to).Scan(&c.Opening, &moved); err != nil {
			return nil, err
		}
		c.Closing = c.Opening + moved // zero: the range has no rows
		return c, nil
	}
	t, err := c.scan()
	if err != nil {
		rows.Close()
		return nil, err
	}
	c.pending = &t
	return c, nil
}

func (c *StatementCursor) scan() (Transaction, error) {
	var t Transaction
	var moved int64
	err := c.rows.Scan(&c.Opening, &moved, &t.ID, &t.OrganizationID, &t.Type, &t.EntryID, &t.Direction, &t.Amount, &t.Currency,
		&t.Description, &t.PaymentID, &t.RecordedAt)
	t.RecordedAt = t.RecordedAt.UTC()
	// Within int64: the closing balance is a balance the ledger held.
	c.Closing = c.Opening + moved
	return t, err
}

// Next advances to the next row; false at the end or on an error (Err).
func (c *StatementCursor) Next() bool {
	if c.err != nil {
		return false
	}
	if c.pending != nil {
		c.current, c.pending = *c.pending, nil
		return true
	}
	if c.rows == nil || !c.rows.Next() {
		if c.rows != nil {
			c.err = c.rows.Err()
		}
		return false
	}
	c.current, c.err = c.scan()
	return c.err == nil
}

// Transaction is the row Next moved to.
func (c *StatementCursor) Transaction() Transaction { return c.current }

// Err is what stopped the walk early, if anything.
func (c *StatementCursor) Err() error { return c.err }

// Close releases the rows; it may be called more than once.
func (c *StatementCursor) Close() error {
	if c.rows == nil {
		return nil
	}
	err := c.rows.Close()
	c.rows = nil
	return err
}

// Signed is t's amount with its direction: what it added to the available balance.
func (t Transaction) Signed() int64 {
	if t.Direction == "in" {
		return t.Amount
	}
	return -t.Amount
}

// Currencies lists the currencies in which the organization has an
// available balance account, sorted.
func Currencies(ctx context.Context, q db.Reader, orgID uuid.UUID) ([]string, error) {
	return db.QueryAll(ctx, q, func(row db.Scanner) (string, error) {
		var c string
		return c, row.Scan(&c)
	}, `SELECT currency FROM ledger_accounts WHERE organization_id = $1 AND kind = 'available' ORDER BY currency`, orgID)
}

// AvailableAccount is one organization's available balance in one currency.
type AvailableAccount struct {
	OrganizationID uuid.UUID
	Currency       string
	Balance        int64
}

// AvailableAccounts lists every organization's available balance, by
// organization and currency: what checks over the whole book (tests)
// reconcile statements with.
func AvailableAccounts(ctx context.Context, q db.Reader) ([]AvailableAccount, error) {
	return db.QueryAll(ctx, q, func(row db.Scanner) (AvailableAccount, error) {
		var a AvailableAccount
		return a, row.Scan(&a.OrganizationID, &a.Currency, &a.Balance)
	}, `SELECT organization_id, currency, balance FROM ledger_accounts
		WHERE kind = 'available' AND organization_id IS NOT NULL ORDER BY organization_id, currency`)
}

// LastRecorded is when the last feed row of any organization was recorded
// (the zero time when there is none).
func LastRecorded(ctx context.Context, q db.Reader) (time.Time, error) {
	var t time.Time
	err := q.QueryRowContext(ctx, `SELECT recorded_at FROM transactions ORDER BY recorded_at DESC LIMIT 1`).Scan(&t)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	return t.UTC(), err
}
