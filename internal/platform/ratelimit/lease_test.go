package ratelimit_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// tat reads the arrival time of the only bucket in the table.
func tat(t *testing.T, d *db.DB) time.Time {
	t.Helper()
	var ns int64
	if err := d.Reader().QueryRowContext(ctx, `SELECT tat FROM rate_limits`).Scan(&ns); err != nil {
		t.Fatal(err)
	}
	return time.Unix(0, ns).UTC()
}

func TestLeasePlan(t *testing.T) {
	for _, tc := range []struct {
		rule        ratelimit.Rule
		chunk       int64
		life        time.Duration
		description string
	}{
		{ratelimit.Rule{Rate: 10.0 / 60, Burst: 10}, 1, 0, "the sign-in limit: exact"},
		{ratelimit.Rule{Rate: 1, Burst: 40}, 1, 0, "a small burst: exact"},
		{ratelimit.Rule{Rate: 20, Burst: 1200}, 40, 2 * time.Second, "the address limit: what 2 s refill"},
		{ratelimit.Rule{Rate: 1e6, Burst: 1e9}, 50, 2 * time.Second, "a vast budget: at most 50"},
		{ratelimit.Rule{Rate: 10, Burst: 200}, 10, time.Second, "a twentieth of the burst"},
		{ratelimit.Rule{Rate: 100.0 / 3600, Burst: 100}, 1, 0, "a slow rule: a token outlives any lease"},
	} {
		chunk, life := ratelimit.Plan(tc.rule)
		if chunk != tc.chunk || time.Duration(life) != tc.life {
			t.Errorf("%s: %+v leases %d for %v, want %d for %v", tc.description, tc.rule, chunk, time.Duration(life), tc.chunk, tc.life)
		}
	}
}

// Many goroutines of one process on one key take one lease at a time, and
// each lease is one statement: chunks of 1, 2, 4 ... 32, then 50, so 1,600
// requests cost 37 statements, not 1,600, and the bucket is charged for
// the requests and the one chunk not yet spent.
func TestLeaseOneStatementPerChunk(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		s := ratelimit.NewStore(d, clock.NewManual(t0), testKeys(t))
		rule := ratelimit.Rule{Name: "address", Rate: 1000, Burst: 100_000} // chunks of 50
		var passed atomic.Int64
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				for range 100 {
					dec, err := s.Allow(ctx, "203.0.113.7", rule)
					if err != nil {
						t.Error(err)
						return
					}
					if dec.Allowed {
						passed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		if n := passed.Load(); n != 1600 {
			t.Fatalf("%d of 1600 passed, want all", n)
		}
		if n := s.Statements(); n != 37 {
			t.Fatalf("%d statements for 1600 requests, want 37 (6 growing chunks and 31 of 50)", n)
		}
		// 1+2+...+32 = 63 tokens, then 31 chunks of 50: 1,613 taken.
		if got, want := tat(t, d), t0.Add(1613*time.Millisecond); !got.Equal(want) {
			t.Fatalf("bucket charged up to %v, want %v (1,613 tokens of 1 ms)", got, want)
		}
	})
}

// A lease lapses by the injected clock: its tokens left are lost, and the
// next lease is sized by what the last one served.
func TestLeaseLapsesByTheClock(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		clk := clock.NewManual(t0)
		s := ratelimit.NewStore(d, clk, testKeys(t))
		rule := ratelimit.Rule{Name: "address", Rate: 10, Burst: 200} // chunks of 10 for 1 s, 100 ms a token
		one := func() {
			t.Helper()
			if !mustAllow(t, s, "k", rule).Allowed {
				t.Fatal("refused with the bucket nearly full")
			}
		}
		for range 7 + 1 { // leases of 1, 2, 4 spent; one of 8 with 7 left
			one()
		}
		if n := s.Statements(); n != 4 {
			t.Fatalf("%d statements, want 4", n)
		}
		clk.Advance(time.Second - 1)
		one() // the lease still serves
		if n := s.Statements(); n != 4 {
			t.Fatalf("%d statements within the lease, want 4", n)
		}
		clk.Advance(1)
		one() // lapsed with 6 left: a new lease, of the 2 the last one served
		if n := s.Statements(); n != 5 {
			t.Fatalf("%d statements after the lease lapsed, want 5", n)
		}
		// The bucket was charged 1.5 s for the 15 tokens of before, the 6
		// lost ones too; the new lease adds 2 tokens.
		if got, want := tat(t, d), t0.Add(1700*time.Millisecond); !got.Equal(want) {
			t.Fatalf("bucket at %v, want %v", got, want)
		}
		one()
		if n := s.Statements(); n != 5 {
			t.Fatalf("%d statements, want the second token from the lease", n)
		}
	})
}

// A rule with a small burst is not leased: every request is a statement,
// and two instances together grant exactly the burst.
func TestSmallBurstStaysExactAcrossStores(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn, clk, keys := e.Migrated(t), clock.NewManual(t0), testKeys(t)
			a, b := ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys), ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys)
			rule := ratelimit.Rule{Name: "sign-in", Rate: 10.0 / 60, Burst: 10}
			passed := 0
			for i := range 30 {
				if mustAllow(t, []*ratelimit.Store{a, b}[i%2], "203.0.113.7", rule).Allowed {
					passed++
				}
			}
			if passed != 10 || a.Statements()+b.Statements() != 30 {
				t.Fatalf("%d passed in %d statements, want 10 in 30", passed, a.Statements()+b.Statements())
			}
			clk.Advance(6 * time.Second)
			if !mustAllow(t, b, "203.0.113.7", rule).Allowed || mustAllow(t, a, "203.0.113.7", rule).Allowed {
				t.Fatal("6 s refilled not exactly one token")
			}
		})
	}
}

// Two instances leasing from one bucket never pass more, over any span,
// than the bucket grants one token at a time: the burst and what refills
// over the span. The script first leaves one instance holding a lease while
// the bucket refills to the brim, then drains it from both instances just
// before the lease lapses (tokens handed out late meeting tokens refilled
// meanwhile: without the reserve each take keeps, that passes 208 at once
// where the burst is 200); then random traffic.
func TestLeasingIsNeverLooserThanTheBudget(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn, clk, keys := e.Migrated(t), clock.NewManual(t0), testKeys(t)
			stores := []*ratelimit.Store{
				ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys),
				ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys),
			}
			const burst, interval = 200, 100 * time.Millisecond
			rule := ratelimit.Rule{Name: "address", Rate: 10, Burst: burst} // chunks of 10 for 1 s
			var granted []time.Time
			send := func(s *ratelimit.Store) {
				if mustAllow(t, s, "203.0.113.7", rule).Allowed {
					granted = append(granted, clk.Now())
				}
			}

			for range 15 { // leases of 1, 2, 4, 8: the next will be of 10
				send(stores[0])
			}
			clk.Advance(30 * time.Second) // the bucket is full again
			send(stores[0])               // a lease of 10: 9 left
			clk.Advance(time.Second - 1)
			for i := range 600 {
				send(stores[i%2])
			}
			if len(granted) < 200 {
				t.Fatalf("only %d passed where the bucket was full: stricter than need be", len(granted))
			}

			rnd := rand.New(rand.NewPCG(22, 11))
			for range 300 {
				clk.Advance(time.Duration(rnd.Int64N(int64(400 * time.Millisecond))))
				for range rnd.IntN(40) {
					send(stores[rnd.IntN(2)])
				}
			}

			// Every span from one grant to another: granted[i..j] with all
			// ties at both ends.
			slices.SortFunc(granted, time.Time.Compare)
			for i := 0; i < len(granted); i++ {
				if i > 0 && granted[i].Equal(granted[i-1]) {
					continue
				}
				for j := len(granted) - 1; j >= i; j-- {
					if j+1 < len(granted) && granted[j].Equal(granted[j+1]) {
						continue
					}
					span := granted[j].Sub(granted[i])
					if n := int64(j - i + 1); n*int64(interval) > burst*int64(interval)+int64(span) {
						t.Fatalf("%d passed within %v (from %v), more than the burst of %d and %v of refill",
							n, span, granted[i].Sub(t0), burst, span)
					}
				}
			}
			t.Logf("%d passed in %d statements", len(granted), stores[0].Statements()+stores[1].Statements())
		})
	}
}

// A refusal is remembered until the bucket can give a token again: a
// client over the budget costs no statement per refused request.
func TestLeaseRemembersRefusals(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedSQLiteDSN(t))
	clk := clock.NewManual(t0)
	s := ratelimit.NewStore(d, clk, testKeys(t))
	rule := ratelimit.Rule{Name: "address", Rate: 10, Burst: 200}
	passed := 0
	for range 400 {
		if mustAllow(t, s, "k", rule).Allowed {
			passed++
		}
	}
	// The bucket keeps a second's refill in reserve.
	if passed != 190 {
		t.Fatalf("%d passed, want 190 (the burst less the 10 kept for leases out)", passed)
	}
	before := s.Statements()
	dec := mustAllow(t, s, "k", rule)
	if dec.Allowed || dec.RetryAfter != 100*time.Millisecond || s.Statements() != before {
		t.Fatalf("got %+v after %d more statements, want refused for 100ms without one", dec, s.Statements()-before)
	}
	clk.Advance(100 * time.Millisecond)
	if !mustAllow(t, s, "k", rule).Allowed {
		t.Fatal("refused after the wait it was told")
	}
}

// Leases of clients gone quiet are dropped, so many distinct keys do not
// grow the process without bound; a lease still running is kept.
func TestLeasesAreSwept(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedSQLiteDSN(t))
	clk := clock.NewManual(t0)
	s := ratelimit.NewStore(d, clk, testKeys(t))
	rule := ratelimit.Rule{Name: "address", Rate: 10, Burst: 200}
	for i := range 1000 {
		mustAllow(t, s, fmt.Sprintf("10.0.%d.%d", i/256, i%256), rule)
	}
	clk.Advance(2 * time.Second) // every lease lapsed
	for range 1 + 2 + 1 {        // leases of 1 and 2 spent, one of 4 running
		mustAllow(t, s, "busy", rule)
	}
	for i := range 1100 {
		mustAllow(t, s, fmt.Sprintf("10.1.%d.%d", i/256, i%256), rule)
	}
	if n := s.Leases(); n != 1101 {
		t.Fatalf("%d leases held, want the 1,100 new ones and the running one", n)
	}
	before := s.Statements()
	if !mustAllow(t, s, "busy", rule).Allowed || s.Statements() != before {
		t.Fatal("the sweep dropped a running lease")
	}
}
