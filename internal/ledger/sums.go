package ledger

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// DaySums is what moved in one currency on one UTC day of an organization's
// feed, in signed minor units (CONTRACT §8c):
//
//   - Incoming: deposit and crypto_incoming rows.
//   - Outgoing: fiat_outgoing, crypto_outgoing and fee rows, less the
//     reversal rows of payments (a reversal row with a payment_id: the
//     payment rail writes one when a payment fails or is cancelled, for its
//     amount and fee together).
//   - Payments: card_transaction rows, purchases (out) less refunds (in),
//     less a reversal row without a payment (none is written today: a card
//     entry is the only other outgoing one a reversal could undo).
//
// Each row counts with its direction: in the category's own direction it
// adds, in the other it subtracts. internal_transfer rows count in none.
// Count is the number of rows counted.
type DaySums struct {
	Day      time.Time // midnight UTC
	Currency string
	Incoming int64
	Outgoing int64
	Payments int64
	Count    int64
}

// daySumsSQL sums the rows of [$2, $3) by day and currency: the engine's
// UTC day of the row (%[2]s) shown as text YYYY-MM-DD (%[1]s); the range
// condition walks the index transactions_insights_idx (organization_id,
// recorded_at, then the columns summed), so no table row is read.
const daySumsSQL = `SELECT %[1]s AS day, currency,
	SUM(CASE WHEN type IN ('deposit', 'crypto_incoming')
		THEN CASE WHEN direction = 'in' THEN amount ELSE -amount END ELSE 0 END),
	SUM(CASE WHEN type IN ('fiat_outgoing', 'crypto_outgoing', 'fee') OR (type = 'reversal' AND payment_id IS NOT NULL)
		THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
	SUM(CASE WHEN type = 'card_transaction' OR (type = 'reversal' AND payment_id IS NULL)
		THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
	COUNT(*)
FROM transactions
WHERE organization_id = $1 AND recorded_at >= $2 AND recorded_at < $3
  AND type IN ('deposit', 'crypto_incoming', 'fiat_outgoing', 'crypto_outgoing', 'fee', 'reversal', 'card_transaction')
GROUP BY %[2]s, currency
ORDER BY 1, 2`

// dayExpr is each engine's UTC day of recorded_at: how it is shown, and
// what rows are grouped by. SQLite keeps times as text,
// "2006-01-02 15:04:05.999999999+00:00" in UTC, so the day is the first ten
// characters; PostgreSQL groups by the date and formats each group once.
var dayExpr = map[db.Dialect][2]string{
	db.SQLite:   {`substr(recorded_at, 1, 10)`, `substr(recorded_at, 1, 10)`},
	db.Postgres: {`to_char((recorded_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD')`, `(recorded_at AT TIME ZONE 'UTC')::date`},
}

// DailySums returns the sums of orgID's feed rows recorded in [from, to)
// (midnight UTC bounds), by day and then currency, both ascending; a day
// and currency without rows is absent. The database sums in integers and
// fails rather than overflow (SQLite: "integer overflow"; PostgreSQL sums
// bigint as numeric, which does not fit int64 on scan).
func DailySums(ctx context.Context, q db.Querier, dialect db.Dialect, orgID uuid.UUID, from, to time.Time) ([]DaySums, error) {
	expr, ok := dayExpr[dialect]
	if !ok {
		return nil, fmt.Errorf("ledger: daily sums: unknown dialect %q", dialect)
	}
	return db.QueryAll(ctx, q, scanDaySums, fmt.Sprintf(daySumsSQL, expr[0], expr[1]), orgID, from.UTC(), to.UTC())
}

func scanDaySums(row db.Scanner) (DaySums, error) {
	var s DaySums
	var day string
	if err := row.Scan(&day, &s.Currency, &s.Incoming, &s.Outgoing, &s.Payments, &s.Count); err != nil {
		return s, err
	}
	d, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return s, fmt.Errorf("ledger: daily sums: day %q: %w", day, err)
	}
	s.Day = d
	return s, nil
}
