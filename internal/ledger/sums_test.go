package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// recordRow adds row to the feed in a transaction of its own.
func recordRow(d *db.DB, row ledger.Transaction) error {
	ctx := context.Background()
	row.Description = "test"
	_, err := db.InTx(ctx, d, func(tx *db.Tx) (ledger.Transaction, error) { return ledger.Record(ctx, tx, row) })
	return err
}

// TestDaySumsStayWithinInt64: a row that would take a day's sum beyond
// int64 is refused, and nothing of it is kept.
func TestDaySumsStayWithinInt64(t *testing.T) {
	start := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	fixture.Each(t, start, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		org := fixture.Organization(t, d, "Acme").ID
		record := func(amount int64) error {
			return recordRow(d, ledger.Transaction{OrganizationID: org, Type: "deposit", Direction: "in", Amount: amount, Currency: "EUR"})
		}
		if err := record(math.MaxInt64 - 1); err != nil {
			t.Fatal(err)
		}
		if err := record(2); !errors.Is(err, ledger.ErrDaySumLimit) {
			t.Fatalf("beyond int64: %v, want ErrDaySumLimit", err)
		}
		// Rows of two organizations in one transaction: the one beyond int64
		// refuses both.
		other := fixture.Organization(t, d, "Other").ID
		_, err := db.InTx(ctx, d, func(tx *db.Tx) ([]ledger.Transaction, error) {
			return ledger.RecordAll(ctx, tx,
				ledger.Transaction{OrganizationID: other, Type: "deposit", Direction: "in", Amount: 5, Currency: "EUR", Description: "test"},
				ledger.Transaction{OrganizationID: org, Type: "deposit", Direction: "in", Amount: 2, Currency: "EUR", Description: "test"})
		})
		if !errors.Is(err, ledger.ErrDaySumLimit) {
			t.Fatalf("two organizations, one beyond int64: %v, want ErrDaySumLimit", err)
		}
		day := start.Truncate(24 * time.Hour)
		if got, err := ledger.DailySums(ctx, d.Reader(), other, day, day.Add(24*time.Hour)); err != nil || len(got) != 0 {
			t.Fatalf("the other organization's sums after the refusal: %+v, %v", got, err)
		}
		if err := record(1); err != nil {
			t.Fatalf("up to int64: %v", err)
		}
		got, err := ledger.DailySums(ctx, d.Reader(), org, start.Truncate(24*time.Hour), start.Truncate(24*time.Hour).Add(24*time.Hour))
		if err != nil || len(got) != 1 || got[0].Incoming != math.MaxInt64 || got[0].Count != 2 {
			t.Fatalf("day sums %+v, %v", got, err)
		}
	})
}

// TestDailySums: each row counts in its category with its direction, by UTC
// day and currency; a payment's reversal comes off outgoing, a card refund
// off payments; internal transfers and other organizations are not counted;
// the range is [from, to); the migration's backfill gives the same sums.
func TestDailySums(t *testing.T) {
	start := time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC)
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		org := fixture.Organization(t, d, "Acme").ID
		other := fixture.Organization(t, d, "Other").ID
		payment := uuid.Must(uuid.NewV7())
		record := func(org uuid.UUID, typ, direction string, amount int64, cur string, paymentID *uuid.UUID) {
			t.Helper()
			if err := recordRow(d, ledger.Transaction{OrganizationID: org, Type: typ, Direction: direction, Amount: amount, Currency: cur, PaymentID: paymentID}); err != nil {
				t.Fatal(err)
			}
		}
		// 2026-12-31 23:59
		record(org, "deposit", "in", 100000, "EUR", nil)
		record(org, "card_transaction", "out", 2500, "USD", nil)
		record(other, "deposit", "in", 777, "EUR", nil)
		clk.Advance(time.Minute) // 2027-01-01 00:00, the next UTC day
		record(org, "fiat_outgoing", "out", 10000, "EUR", &payment)
		record(org, "fee", "out", 100, "EUR", &payment)
		record(org, "reversal", "in", 10100, "EUR", &payment)
		record(org, "crypto_outgoing", "out", 5000, "EUR", nil)
		record(org, "crypto_incoming", "in", 300, "EUR", nil)
		record(org, "card_transaction", "in", 500, "USD", nil)
		record(org, "internal_transfer", "out", 999, "EUR", nil)
		record(org, "reversal", "in", 200, "USD", nil) // of no payment: off payments
		clk.Advance(24 * time.Hour)                    // 2027-01-02: outside [from, to)
		record(org, "deposit", "in", 1, "GBP", nil)

		from, to := time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)
		got, err := ledger.DailySums(ctx, d.Reader(), org, from, to)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, s := range got {
			lines = append(lines, fmt.Sprintf("%s %s in=%d out=%d pay=%d n=%d", s.Day.Format(time.DateOnly), s.Currency, s.Incoming, s.Outgoing, s.Payments, s.Count))
		}
		want := []string{
			"2026-12-31 EUR in=100000 out=0 pay=0 n=1",
			"2026-12-31 USD in=0 out=0 pay=2500 n=1",
			"2027-01-01 EUR in=300 out=5000 pay=0 n=5",
			"2027-01-01 USD in=0 out=0 pay=-700 n=2",
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("daily sums:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}

		// Migration 00017 computes the same sums from the rows before it.
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := tx.ExecContext(ctx, "DELETE FROM transaction_day_sums")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		fixture.BackfillDaySums(t, d)
		if filled, err := ledger.DailySums(ctx, d.Reader(), org, from, to); err != nil || !reflect.DeepEqual(filled, got) {
			t.Errorf("backfilled %+v, %v; Record kept %+v", filled, err, got)
		}
		checkInvariants(t, d)
	})
}

// TestDailySumsReadByThePrimaryKey reads the plan of the query on each
// engine: it must range over the primary key (organization_id, day,
// currency) of transaction_day_sums. (On PostgreSQL the table of a test is
// tiny, so sequential scans are switched off for the look: the question is
// whether the index can serve the query.)
func TestDailySumsReadByThePrimaryKey(t *testing.T) {
	fixture.Each(t, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		org := uuid.Must(uuid.NewV7())
		from, to := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		plan, err := db.InTx(ctx, d, func(tx *db.Tx) (string, error) {
			explain := "EXPLAIN QUERY PLAN "
			if d.Dialect() == db.Postgres {
				explain = "EXPLAIN "
				if _, err := tx.ExecContext(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
					return "", err
				}
			}
			rows, err := tx.QueryContext(ctx, explain+ledger.DailySumsSQL, org, from.Format(time.DateOnly), to.Format(time.DateOnly))
			if err != nil {
				return "", err
			}
			defer rows.Close()
			cols, _ := rows.Columns()
			var out []string
			for rows.Next() {
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					return "", err
				}
				out = append(out, fmt.Sprint(vals...))
			}
			return strings.Join(out, "\n"), rows.Err()
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("plan:\n%s", plan)
		want := "SEARCH transaction_day_sums USING INDEX sqlite_autoindex_transaction_day_sums_1 (organization_id=? AND day>? AND day<?)"
		if d.Dialect() == db.Postgres {
			want = "Index Scan using transaction_day_sums_pkey"
		}
		if !strings.Contains(plan, want) {
			t.Errorf("the plan does not read by the primary key (%q):\n%s", want, plan)
		}
	})
}
