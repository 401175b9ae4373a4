package ratelimit_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

func testKeys(t *testing.T) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New([]byte("rate-limit-test-root-secret-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mustAllow(t *testing.T, l ratelimit.Limiter, key string, rule ratelimit.Rule) ratelimit.Decision {
	t.Helper()
	d, err := l.Allow(ctx, key, rule)
	if err != nil {
		t.Fatalf("Allow(%q, %s): %v", key, rule.Name, err)
	}
	return d
}

func countRows(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM rate_limits`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStoreImplementsLimiter(t *testing.T) {
	var _ ratelimit.Limiter = (*ratelimit.Store)(nil)
	var _ ratelimit.Limiter = ratelimit.Layered{}
}

// The store behaves as Memory does: the burst, then refusals that take
// nothing, refilled by the injected clock and no further than the burst.
func TestStoreBurstRefillAndRollover(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		s := ratelimit.NewStore(d, clk, testKeys(t))
		rule := ratelimit.Rule{Name: "sign-in", Rate: 3.0 / 60, Burst: 3} // 3 a minute

		for i := range 3 {
			if dec := mustAllow(t, s, "203.0.113.7", rule); !dec.Allowed {
				t.Fatalf("request %d refused", i+1)
			}
		}
		for range 3 {
			dec := mustAllow(t, s, "203.0.113.7", rule)
			if dec.Allowed || dec.RetryAfter != 20*time.Second {
				t.Fatalf("after the burst got %+v, want refused for 20s", dec)
			}
		}
		clk.Advance(15 * time.Second)
		if dec := mustAllow(t, s, "203.0.113.7", rule); dec.Allowed || dec.RetryAfter != 5*time.Second {
			t.Fatalf("15s on got %+v, want refused for 5s more", dec)
		}
		clk.Advance(5 * time.Second)
		if !mustAllow(t, s, "203.0.113.7", rule).Allowed {
			t.Fatal("one token refilled after 20s, but the request was refused")
		}
		if mustAllow(t, s, "203.0.113.7", rule).Allowed {
			t.Fatal("a second request passed after only one token refilled")
		}
		// A long rest refills the burst and no further.
		clk.Advance(time.Hour)
		passed := 0
		for range 10 {
			if mustAllow(t, s, "203.0.113.7", rule).Allowed {
				passed++
			}
		}
		if passed != 3 {
			t.Fatalf("after an hour %d passed, want the burst of 3", passed)
		}
	})
}

func TestStoreKeysAndRulesAreIndependentAndHashed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		s := ratelimit.NewStore(d, clock.NewManual(time.Now()), testKeys(t))
		a := ratelimit.Rule{Name: "address", Rate: 1, Burst: 1}
		b := ratelimit.Rule{Name: "sign-in", Rate: 1, Burst: 1}
		mustAllow(t, s, "198.51.100.1", a)
		if mustAllow(t, s, "198.51.100.1", a).Allowed {
			t.Fatal("the bucket should be empty")
		}
		if !mustAllow(t, s, "198.51.100.2", a).Allowed {
			t.Fatal("another key was limited by the first")
		}
		if !mustAllow(t, s, "198.51.100.1", b).Allowed {
			t.Fatal("another rule was limited by the first")
		}
		// Off rules neither refuse nor write.
		for range 5 {
			if !mustAllow(t, s, "198.51.100.1", ratelimit.Rule{Name: "off"}).Allowed {
				t.Fatal("a rule that is off refused")
			}
		}
		if n := countRows(t, d); n != 3 {
			t.Fatalf("%d rows, want 3", n)
		}
		// Keys are stored hashed: no address in the table.
		rows, err := d.Reader().QueryContext(ctx, `SELECT key FROM rate_limits`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(k, "198.51") || len(k) != 64 {
				t.Fatalf("stored key %q is not a hash", k)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	})
}

// Concurrent requests through two stores (two server instances) on one
// database are counted exactly: the burst passes, not one more.
func TestStoreConcurrentIncrementsAreExact(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.Migrated(t)
			clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
			keys := testKeys(t)
			stores := []*ratelimit.Store{
				ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys),
				ratelimit.NewStore(dbtest.Open(t, dsn), clk, keys),
			}
			const burst = 40
			rule := ratelimit.Rule{Name: "address", Rate: 1, Burst: burst}
			var passed atomic.Int64
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for range 15 {
						dec, err := stores[g%2].Allow(ctx, "203.0.113.9", rule)
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
			if n := passed.Load(); n != burst {
				t.Fatalf("%d of 120 concurrent requests passed, want exactly the burst of %d", n, burst)
			}
		})
	}
}

func TestStoreSweepDeletesOnlyFullBuckets(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		clk := clock.NewManual(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		s := ratelimit.NewStore(d, clk, testKeys(t))
		fast := ratelimit.Rule{Name: "fast", Rate: 1, Burst: 5}          // full again 1s after one request
		slow := ratelimit.Rule{Name: "slow", Rate: 1.0 / 3600, Burst: 1} // full again in an hour
		mustAllow(t, s, "a", fast)
		mustAllow(t, s, "victim", slow)
		clk.Advance(time.Minute)
		n, err := s.Sweep(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 || countRows(t, d) != 1 {
			t.Fatalf("swept %d, %d rows left; want the fast bucket gone and the slow one kept", n, countRows(t, d))
		}
		// The kept bucket still refuses: sweeping it would hand out a fresh burst.
		if mustAllow(t, s, "victim", slow).Allowed {
			t.Fatal("a bucket still refilling was swept")
		}
		clk.Advance(time.Hour)
		if n, err := s.Sweep(ctx); err != nil || n != 1 {
			t.Fatalf("after an hour swept %d (%v), want 1", n, err)
		}
	})
}

// A database that cannot answer is an error, never a pass: the caller refuses.
func TestStoreFailsClosed(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		s := ratelimit.NewStore(d, clock.NewManual(time.Now()), testKeys(t))
		rule := ratelimit.Rule{Name: "address", Rate: 1, Burst: 10}
		mustAllow(t, s, "k", rule)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		dec, err := s.Allow(ctx, "k", rule)
		if err == nil || dec.Allowed {
			t.Fatalf("on a closed database got %+v, %v; want an error and no pass", dec, err)
		}
		l := ratelimit.Layered{Local: ratelimit.NewMemory(nil), Shared: s}
		if dec, err := l.Allow(ctx, "k", rule); err == nil || dec.Allowed {
			t.Fatalf("layered on a closed database got %+v, %v; want an error and no pass", dec, err)
		}
	})
}

// Layered passes a request only when both limiters do.
func TestLayeredIsNeverLooserThanEither(t *testing.T) {
	clk := newFakeTime()
	rule := ratelimit.Rule{Name: "r", Rate: 1, Burst: 2}
	local, shared := ratelimit.NewMemory(clk.Now), ratelimit.NewMemory(clk.Now)
	l := ratelimit.Layered{Local: local, Shared: shared}
	// Another instance spent the shared burst.
	allow(shared, "k", rule)
	allow(shared, "k", rule)
	if mustAllow(t, l, "k", rule).Allowed {
		t.Fatal("passed with the shared bucket empty")
	}
	// This instance's own bucket empty refuses without asking the shared one.
	failing := ratelimit.Layered{Local: local, Shared: errLimiter{}}
	allow(local, "j", rule)
	allow(local, "j", rule)
	if dec, err := failing.Allow(context.Background(), "j", rule); err != nil || dec.Allowed {
		t.Fatalf("got %+v, %v; want refused by the local bucket alone", dec, err)
	}
}

type errLimiter struct{}

func (errLimiter) Allow(context.Context, string, ratelimit.Rule) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("unreachable")
}
