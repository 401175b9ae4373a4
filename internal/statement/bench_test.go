package statement_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/flow/statementing"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/statement"
)

// benchEntries is how many entries the benchmarked statement holds.
const benchEntries = 100_000

// BenchmarkStatement100k times a statement of 100,000 entries (one year of
// one currency, with other rows around it) through the use case the API
// calls, as CSV and as camt.053, on each engine, written to a counting
// discard. Each iteration's time is kept and the median reported as
// ms-median, with the CPU time the process spent in it as cpu-ms-median
// (on a loaded machine wall time waits for the cores); rss-growth-MB is the process's peak resident size during the
// iterations less its resident size before them (Linux: the peak is reset
// through /proc/self/clear_refs). Run it alone:
//
//	go test -run '^$' -bench Statement100k -benchtime 5x ./internal/statement/
func BenchmarkStatement100k(b *testing.B) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			clk := clock.NewManual(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC))
			d := dbtest.Open(b, e.Migrated(b), db.WithClock(clk))
			org, member := fixture.Member(b, d, organization.Member)
			began := time.Now()
			seedRows(b, d, org.ID, "EUR", benchEntries, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), 1)
			seedRows(b, d, org.ID, "EUR", benchEntries/10, time.Date(2024, 12, 1, 0, 0, 0, 0, time.UTC), 2) // the year before
			seedRows(b, d, org.ID, "USD", benchEntries/10, time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), 3) // another currency
			if _, err := d.Pools()[poolName(d)].Exec(analyze(d)); err != nil {
				b.Fatal(err)
			}
			seeded := time.Since(began)
			flow := statementing.Service{DB: d, Statements: &statement.Service{DB: d}}
			for _, format := range []string{statement.CSV, statement.CAMT053} {
				b.Run(format, func(b *testing.B) {
					q := statement.Query{Currency: "EUR", From: time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Format: format}
					resetPeak()
					before := rss("VmRSS")
					var took, cpu []time.Duration
					var size int64
					for b.Loop() {
						start, startCPU := time.Now(), cpuTime()
						st, err := flow.Open(context.Background(), member, org.ID, q)
						if err != nil {
							b.Fatal(err)
						}
						w := &counter{}
						n, err := st.WriteTo(context.Background(), w)
						st.Close()
						took, cpu = append(took, time.Since(start)), append(cpu, cpuTime()-startCPU)
						if err != nil || n != benchEntries {
							b.Fatalf("%d entries: %v", n, err)
						}
						size = w.n
					}
					peak := rss("VmHWM")
					slices.Sort(took)
					slices.Sort(cpu)
					b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
					b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds())/1000, "cpu-ms-median")
					b.ReportMetric(float64(peak-before)/(1<<20), "rss-growth-MB")
					b.ReportMetric(float64(size)/(1<<20), "output-MB")
					b.ReportMetric(seeded.Seconds(), "seed-seconds")
				})
			}
		})
	}
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*counter)(nil)

func poolName(d *db.DB) string {
	if d.Dialect() == db.Postgres {
		return "main"
	}
	return "write"
}

func analyze(d *db.DB) string {
	if d.Dialect() == db.Postgres {
		return "VACUUM ANALYZE"
	}
	return "ANALYZE"
}

// resetPeak resets the process's peak resident size (VmHWM), on Linux.
func resetPeak() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// rss reads a size field of /proc/self/status in bytes (0 off Linux).
func rss(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// seedRows inserts n feed rows of orgID in currency over the year from
// start: deposits, card spend, payments with their fees; multi-row INSERTs
// in one transaction (the statement reads the feed alone).
func seedRows(b *testing.B, d *db.DB, orgID uuid.UUID, currency string, n int, start time.Time, seedValue uint64) {
	b.Helper()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seedValue, 7))
	span := start.AddDate(1, 0, 0).Sub(start) - time.Hour
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
		for i := range n {
			typ, dir, amount := "deposit", "in", 10_000+rng.Int64N(1_000_000)
			var payment *uuid.UUID
			switch k := rng.IntN(10); {
			case k < 5:
				typ, dir, amount = "card_transaction", "out", 100+rng.Int64N(5_000)
			case k < 8:
				id := uuid.Must(uuid.NewV7())
				typ, dir, amount, payment = "fiat_outgoing", "out", 100+rng.Int64N(50_000), &id
			}
			if values.Len() > 0 {
				values.WriteString(", ")
			}
			p := len(args)
			fmt.Fprintf(&values, "($%d, $%d, $%d, NULL, $%d, $%d, $%d, $%d, $%d, $%d)", p+1, p+2, p+3, p+4, p+5, p+6, p+7, p+8, p+9)
			args = append(args, uuid.Must(uuid.NewV7()), orgID, typ, dir, amount, currency, fmt.Sprintf("Benchmark row %d", i), payment,
				start.Add(time.Duration(rng.Int64N(int64(span)))))
			if len(args) == perInsert*perRow {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		return flush()
	})
	if err != nil {
		b.Fatal(err)
	}
}
