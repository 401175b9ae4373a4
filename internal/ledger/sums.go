package ledger

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// DaySums is what moved in one currency on one UTC day of an organization's
// feed, in signed minor units (docs/api.md, Insights):
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
// A row counts with its direction: in its category's own direction it adds,
// in the other it subtracts. internal_transfer rows count in none. Count is
// the number of rows counted.
//
// The sums are kept in transaction_day_sums by Record, in the transaction
// that adds the row (as it commits), so reading a year is at most 365 rows
// a currency.
type DaySums struct {
	Day      time.Time // midnight UTC
	Currency string
	Incoming int64
	Outgoing int64
	Payments int64
	Count    int64
}

// daySum says which sum of transaction_day_sums t counts in (its column)
// and by how much; false for a row that counts in none.
func daySum(t Transaction) (column string, delta int64, ok bool) {
	signed := func(own string) int64 {
		if t.Direction == own {
			return t.Amount
		}
		return -t.Amount
	}
	switch {
	case t.Type == "deposit" || t.Type == "crypto_incoming":
		return "incoming", signed("in"), true
	case t.Type == "fiat_outgoing" || t.Type == "crypto_outgoing" || t.Type == "fee" || (t.Type == "reversal" && t.PaymentID != nil):
		return "outgoing", signed("out"), true
	case t.Type == "card_transaction" || t.Type == "reversal":
		return "payments", signed("out"), true
	}
	return "", 0, false
}

// ErrDaySumLimit is returned when a feed row would take a day's sum beyond
// what int64 minor units hold: the row (and the movement of money it
// belongs to) is refused rather than the sum overflowing or becoming a float.
var ErrDaySumLimit = apierr.New(apierr.UnprocessableEntity, "This would take a day's total beyond the largest amount the ledger can hold.")

// countAtCommit queues t to be counted in its day's sums when tx commits.
// A day's sums row is written by every feed row of the organization that
// day, so it is written last (as late as the commit): from then on every
// other writer of it waits until this transaction ends.
func countAtCommit(tx *db.Tx, t Transaction) {
	if _, _, ok := daySum(t); ok {
		tx.QueueAtCommit("ledger.day_sums", t, addDaySums)
	}
}

// daySumKey is one row of transaction_day_sums.
type daySumKey struct {
	org           uuid.UUID
	day, currency string
}

// addDaySums counts the feed rows of one transaction (Transaction items) in
// their days' sums, in one statement that writes the days' rows in key
// order, so that two transactions writing the same rows never wait for
// each other. A sum may change only while it stays within ±math.MaxInt64,
// otherwise ErrDaySumLimit.
func addDaySums(ctx context.Context, tx *db.Tx, items []any) error {
	sums := map[daySumKey]*[4]int64{} // incoming, outgoing, payments, rows
	var keys []daySumKey
	for _, item := range items {
		t := item.(Transaction)
		column, delta, _ := daySum(t)
		k := daySumKey{t.OrganizationID, t.RecordedAt.UTC().Format(time.DateOnly), t.Currency}
		s := sums[k]
		if s == nil {
			s = &[4]int64{}
			sums[k] = s
			keys = append(keys, k)
		}
		i := map[string]int{"incoming": 0, "outgoing": 1, "payments": 2}[column]
		lo, hi := bounds(delta, false)
		if s[i] < lo || s[i] > hi {
			return ErrDaySumLimit
		}
		s[i] += delta
		s[3]++
	}
	slices.SortFunc(keys, func(a, b daySumKey) int {
		return cmp.Or(bytes.Compare(a.org[:], b.org[:]), cmp.Compare(a.day, b.day), cmp.Compare(a.currency, b.currency))
	})
	rows := make([][]any, len(keys))
	for i, k := range keys {
		s := sums[k]
		rows[i] = []any{k.org, k.day, k.currency, s[0], s[1], s[2], s[3]}
	}
	insert, args := db.Values(`INSERT INTO transaction_day_sums (organization_id, day, currency, incoming, outgoing, payments, row_count)`, 1, rows)
	res, err := tx.ExecContext(ctx, insert+`
		ON CONFLICT (organization_id, day, currency) DO UPDATE
		SET incoming = transaction_day_sums.incoming + excluded.incoming,
			outgoing = transaction_day_sums.outgoing + excluded.outgoing,
			payments = transaction_day_sums.payments + excluded.payments,
			row_count = transaction_day_sums.row_count + excluded.row_count
		WHERE `+withinInt64("incoming")+` AND `+withinInt64("outgoing")+` AND `+withinInt64("payments"), args...)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != int64(len(keys)) {
		if err != nil {
			return err
		}
		return ErrDaySumLimit
	}
	return nil
}

// withinInt64 is the condition that adding the new row's column to the kept
// one stays within ±math.MaxInt64, written so that it never computes a sum
// that would leave int64 itself.
func withinInt64(column string) string {
	return fmt.Sprintf(`(excluded.%[1]s >= 0 AND transaction_day_sums.%[1]s <= 9223372036854775807 - excluded.%[1]s
		OR excluded.%[1]s < 0 AND transaction_day_sums.%[1]s >= -9223372036854775807 - excluded.%[1]s)`, column)
}

// daySumsSQL reads the kept sums of [$2, $3) by the primary key
// transaction_day_sums_pkey (organization_id, day, currency).
const daySumsSQL = `SELECT day, currency, incoming, outgoing, payments, row_count FROM transaction_day_sums
	WHERE organization_id = $1 AND day >= $2 AND day < $3
	ORDER BY day, currency`

// DailySums returns the sums of orgID's feed rows recorded on the UTC days
// from (inclusive) to to (exclusive), by day and then currency, both
// ascending; a day and currency without rows is absent.
func DailySums(ctx context.Context, q db.Reader, orgID uuid.UUID, from, to time.Time) ([]DaySums, error) {
	return db.QueryAll(ctx, q, scanDaySums, daySumsSQL, orgID, from.UTC().Format(time.DateOnly), to.UTC().Format(time.DateOnly))
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

// checkDaySums adds a problem for each organization and currency whose kept
// day sums differ from the sums of its feed rows, recomputed here.
func checkDaySums(ctx context.Context, q db.Reader, problems *[]error) error {
	type key struct{ org, currency string }
	read := func(query string) (map[key][4]int64, error) {
		rows, err := q.QueryContext(ctx, query)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		out := map[key][4]int64{}
		for rows.Next() {
			var k key
			var v [4]int64
			if err := rows.Scan(&k.org, &k.currency, &v[0], &v[1], &v[2], &v[3]); err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, rows.Err()
	}
	kept, err := read(`SELECT organization_id, currency, SUM(incoming), SUM(outgoing), SUM(payments), SUM(row_count)
		FROM transaction_day_sums GROUP BY organization_id, currency`)
	if err != nil {
		return err
	}
	feed, err := read(`SELECT organization_id, currency,
		SUM(CASE WHEN type IN ('deposit', 'crypto_incoming') THEN CASE WHEN direction = 'in' THEN amount ELSE -amount END ELSE 0 END),
		SUM(CASE WHEN type IN ('fiat_outgoing', 'crypto_outgoing', 'fee') OR (type = 'reversal' AND payment_id IS NOT NULL)
			THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
		SUM(CASE WHEN type = 'card_transaction' OR (type = 'reversal' AND payment_id IS NULL)
			THEN CASE WHEN direction = 'out' THEN amount ELSE -amount END ELSE 0 END),
		COUNT(*)
		FROM transactions WHERE type <> 'internal_transfer' GROUP BY organization_id, currency`)
	if err != nil {
		return err
	}
	for k, v := range feed {
		if kept[k] != v {
			*problems = append(*problems, fmt.Errorf("organization %s %s: day sums %v, feed %v (incoming, outgoing, payments, rows)", k.org, k.currency, kept[k], v))
		}
		delete(kept, k)
	}
	for k, v := range kept {
		*problems = append(*problems, fmt.Errorf("organization %s %s: day sums %v without feed rows", k.org, k.currency, v))
	}
	return nil
}
