package ratelimit_test

import (
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Every passed request learns how many more would pass at once and when the
// bucket gains its next token; a refused one learns 0 and its Retry-After.
// Memory and the exact store (a small burst) count the same way.
func TestRemainingCountsDown(t *testing.T) {
	rule := ratelimit.Rule{Name: "sign-in", Rate: 1, Burst: 3} // one a second, three at once
	check := func(t *testing.T, l ratelimit.Limiter, advance func(time.Duration)) {
		for want := 2; want >= 0; want-- {
			d := mustAllow(t, l, "203.0.113.7", rule)
			if !d.Allowed || d.Remaining != want || d.Reset != time.Second {
				t.Fatalf("passed request: %+v, want remaining %d, reset 1s", d, want)
			}
		}
		d := mustAllow(t, l, "203.0.113.7", rule)
		if d.Allowed || d.Remaining != 0 || d.Reset != d.RetryAfter || d.RetryAfter != time.Second {
			t.Fatalf("refused request: %+v, want remaining 0 and reset = retry after = 1s", d)
		}
		advance(1500 * time.Millisecond) // one and a half tokens back
		d = mustAllow(t, l, "203.0.113.7", rule)
		if !d.Allowed || d.Remaining != 0 || !near(d.Reset, 500*time.Millisecond) {
			t.Fatalf("after 1.5 s: %+v, want remaining 0, the next token in 0.5 s", d)
		}
	}
	t.Run("memory", func(t *testing.T) {
		ft := newFakeTime()
		check(t, ratelimit.NewMemory(ft.Now), ft.Advance)
	})
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		clk := clock.NewManual(t0)
		check(t, ratelimit.NewStore(d, clk, testKeys(t)), func(d time.Duration) { clk.Advance(d) })
	})
}

// A leased rule counts down by one per request too, from the burst less
// the reserve every take keeps, so what a client is told always passes.
func TestLeasedRemainingCountsDown(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		s := ratelimit.NewStore(d, clock.NewManual(t0), testKeys(t))
		rule := ratelimit.Rule{Name: "address", Rate: 20, Burst: 1200} // 1200 a minute
		_, life := ratelimit.Plan(rule)
		reserve := int(time.Duration(life) / (time.Second / 20))
		prev := -1
		for i := range 200 {
			dec := mustAllow(t, s, "203.0.113.7", rule)
			if !dec.Allowed {
				t.Fatalf("request %d refused", i)
			}
			if want := 1200 - reserve - 1 - i; dec.Remaining != want {
				t.Fatalf("request %d: remaining %d, want %d (burst less reserve %d, less those taken)", i, dec.Remaining, want, reserve)
			}
			if dec.Reset <= 0 || dec.Reset > 50*time.Millisecond {
				t.Fatalf("request %d: reset %v, want within one interval (50 ms)", i, dec.Reset)
			}
			if prev >= 0 && dec.Remaining != prev-1 {
				t.Fatalf("request %d: remaining %d after %d", i, dec.Remaining, prev)
			}
			prev = dec.Remaining
		}
	})
}

// Layered tells the smaller remaining of its two buckets.
func TestLayeredTellsTheSmallerRemaining(t *testing.T) {
	ft := newFakeTime()
	local, shared := ratelimit.NewMemory(ft.Now), ratelimit.NewMemory(ft.Now)
	l := ratelimit.Layered{Local: local, Shared: shared}
	rule := ratelimit.Rule{Name: "address", Rate: 1, Burst: 10}
	for range 4 {
		mustAllow(t, shared, "k", rule) // another instance drew on the shared bucket
	}
	if d := mustAllow(t, l, "k", rule); !d.Allowed || d.Remaining != 5 {
		t.Fatalf("layered: %+v, want remaining 5 (the shared bucket's)", d)
	}
	for range 7 {
		mustAllow(t, local, "j", rule)
	}
	if d := mustAllow(t, l, "j", rule); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("layered: %+v, want remaining 2 (the local bucket's)", d)
	}
}
