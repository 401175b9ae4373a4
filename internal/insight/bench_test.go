package insight_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/insight"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// benchRows is the size of the organization's feed in the benchmark.
const benchRows = 1_000_000

// benchToday is the service clock's date: last_12_months is then
// 2025-11-01 to 2026-10-31.
var benchToday = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// BenchmarkLast12MonthsByDay times insights of last_12_months grouped by
// day (the service call: reading the day sums and folding them into 365
// periods) over
// an organization with a million feed rows, all inside the range, on each
// engine; another organization's 100,000 rows sit beside them. Each
// iteration's time is kept, and the median and 90th percentile are reported
// as ms-median and ms-p90. Seeding takes a while (it is reported as
// seed-seconds); run it alone:
//
//	go test -run '^$' -bench Last12MonthsByDay -benchtime 30x ./internal/insight/
func BenchmarkLast12MonthsByDay(b *testing.B) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			// With b.Loop this function runs once per -count: the setup is
			// not timed.
			d := dbtest.Open(b, e.Migrated(b), db.WithClock(clock.NewManual(benchToday)))
			org, a := fixture.Member(b, d, organization.Owner)
			other := fixture.Organization(b, d, "Other")
			began := time.Now()
			seed(b, d, org.ID, benchRows, 1)
			seed(b, d, other.ID, benchRows/10, 2)
			// The rows went in by the million, not through ledger.Record: the
			// day sums are computed as migration 00017 computes them for the
			// rows before it, and checked against the feed.
			fixture.BackfillDaySums(b, d)
			if err := ledger.CheckInvariants(context.Background(), d.Reader()); err != nil {
				b.Fatal(err)
			}
			analyze := "ANALYZE"
			if d.Dialect() == db.Postgres {
				analyze = "VACUUM ANALYZE" // what autovacuum does after a bulk load
			}
			pools := d.Pools()
			pool := pools["main"] // PostgreSQL's one pool; SQLite's writer
			if pool == nil {
				pool = pools["write"]
			}
			if _, err := pool.Exec(analyze); err != nil {
				b.Fatal(err)
			}
			seeded := time.Since(began)
			svc := insight.Service{DB: d}
			var took []time.Duration
			for b.Loop() {
				start := time.Now()
				res, err := svc.Get(context.Background(), a, org.ID, insight.Query{Preset: "last_12_months", GroupBy: insight.Day})
				took = append(took, time.Since(start))
				if err != nil {
					b.Fatal(err)
				}
				if len(res.Periods) != 365 || res.TransactionCount < benchRows*9/10 {
					b.Fatalf("%d periods, %d rows", len(res.Periods), res.TransactionCount)
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
			b.ReportMetric(float64(took[len(took)*9/10].Microseconds())/1000, "ms-p90")
			b.ReportMetric(seeded.Seconds(), "seed-seconds")
		})
	}
}

// seed inserts n feed rows of orgID spread over last_12_months: a mix of
// card spend, deposits, payments with their fees, some reversed, and crypto,
// in four currencies; multi-row INSERTs in one transaction.
func seed(b *testing.B, d *db.DB, orgID uuid.UUID, n int, seedValue uint64) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seedValue, 42))
	from := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)
	span := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC).Sub(from)
	currencies := []string{"EUR", "EUR", "EUR", "EUR", "EUR", "USD", "USD", "USD", "GBP", "JPY"}
	// 9 parameters a row: SQLite (as built by modernc) takes at most 999
	// parameters a statement, PostgreSQL 65,535.
	const perRow = 9
	perInsert := 7000
	if d.Dialect() == db.SQLite {
		perInsert = 111
	}
	err := d.Tx(ctx, func(tx *db.Tx) error {
		args := make([]any, 0, perInsert*perRow)
		var values strings.Builder
		flush := func() error {
			if len(args) == 0 {
				return nil
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO transactions (id, organization_id, type, entry_id, direction, amount, currency, description, payment_id, recorded_at) VALUES `+values.String(), args...)
			args, values = args[:0], strings.Builder{}
			return err
		}
		row := func(typ, direction string, amount int64, cur string, paymentID *uuid.UUID, at time.Time) error {
			if values.Len() > 0 {
				values.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&values, "($%d, $%d, $%d, NULL, $%d, $%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
			args = append(args, uuid.Must(uuid.NewV7()), orgID, typ, direction, amount, cur, "Benchmark row", paymentID, at)
			if len(args) == perInsert*perRow {
				return flush()
			}
			return nil
		}
		for written := 0; written < n; {
			at := from.Add(time.Duration(rng.Int64N(int64(span))))
			cur := currencies[rng.IntN(len(currencies))]
			amount := 100 + rng.Int64N(500_000)
			var err error
			switch k := rng.IntN(100); {
			case k < 50: // card spend, one in twenty a refund
				direction := "out"
				if rng.IntN(20) == 0 {
					direction = "in"
				}
				err, written = row("card_transaction", direction, amount, "USD", nil, at), written+1
			case k < 65:
				err, written = row("deposit", "in", amount*10, cur, nil, at), written+1
			case k < 70:
				err, written = row("crypto_incoming", "in", amount, "USD", nil, at), written+1
			case k < 72:
				err, written = row("internal_transfer", "out", amount, cur, nil, at), written+1
			default: // a payment and its fee, one in thirty reversed a day later
				payment := uuid.Must(uuid.NewV7())
				typ := "fiat_outgoing"
				if rng.IntN(10) == 0 {
					typ = "crypto_outgoing"
				}
				fee := 100 + amount/200
				err = row(typ, "out", amount, cur, &payment, at)
				if err == nil {
					err = row("fee", "out", fee, cur, &payment, at)
				}
				written += 2
				if err == nil && rng.IntN(30) == 0 && written < n {
					err, written = row("reversal", "in", amount+fee, cur, &payment, at.Add(24*time.Hour)), written+1
				}
			}
			if err != nil {
				return err
			}
		}
		return flush()
	})
	if err != nil {
		b.Fatal(err)
	}
}
