package ratelimit_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// fakeTime is a clock the test moves by hand; safe for concurrent reads.
type fakeTime struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeTime() *fakeTime {
	return &fakeTime{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeTime) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

var ctx = context.Background()

// near reports whether got is within a microsecond of want: the bucket
// works in float64 tokens, so exact nanoseconds are not promised.
func near(got, want time.Duration) bool {
	d := got - want
	return d > -time.Microsecond && d < time.Microsecond
}

// allow asks m, which never fails.
func allow(m *ratelimit.Memory, key string, rule ratelimit.Rule) ratelimit.Decision {
	d, err := m.Allow(ctx, key, rule)
	if err != nil {
		panic(err)
	}
	return d
}

func TestMemoryImplementsLimiter(t *testing.T) {
	var _ ratelimit.Limiter = ratelimit.NewMemory(nil)
}

func TestBurstThenRefused(t *testing.T) {
	for _, tc := range []struct {
		rule ratelimit.Rule
		wait time.Duration
	}{
		{ratelimit.Rule{Name: "login", Rate: 1, Burst: 3}, time.Second},
		{ratelimit.Rule{Name: "login", Rate: 0.5, Burst: 5}, 2 * time.Second},
		{ratelimit.Rule{Name: "api", Rate: 100, Burst: 20}, 10 * time.Millisecond},
		{ratelimit.Rule{Name: "slow", Rate: 5.0 / 3600, Burst: 5}, 720 * time.Second},
	} {
		clk := newFakeTime()
		m := ratelimit.NewMemory(clk.Now)
		for i := range tc.rule.Burst {
			if d := allow(m, "k", tc.rule); !d.Allowed || d.RetryAfter != 0 {
				t.Fatalf("%+v: request %d refused: %+v", tc.rule, i+1, d)
			}
		}
		for range 3 { // refusals take nothing, so the wait does not grow
			d := allow(m, "k", tc.rule)
			if d.Allowed || !near(d.RetryAfter, tc.wait) {
				t.Fatalf("%+v: after the burst got %+v, want refused with RetryAfter %v", tc.rule, d, tc.wait)
			}
		}
	}
}

func TestRefill(t *testing.T) {
	clk := newFakeTime()
	m := ratelimit.NewMemory(clk.Now)
	rule := ratelimit.Rule{Name: "login", Rate: 1, Burst: 3}
	for range 3 {
		allow(m, "k", rule)
	}

	clk.Advance(400 * time.Millisecond)
	if d := allow(m, "k", rule); d.Allowed || !near(d.RetryAfter, 600*time.Millisecond) {
		t.Fatalf("after 400ms got %+v, want refused for 600ms more", d)
	}

	clk.Advance(600 * time.Millisecond)
	if d := allow(m, "k", rule); !d.Allowed {
		t.Fatalf("after 1s got %+v, want one token", d)
	}
	if d := allow(m, "k", rule); d.Allowed {
		t.Fatal("a second request passed after only one token refilled")
	}

	// A long rest refills the bucket to Burst and no further.
	clk.Advance(time.Hour)
	allowed := 0
	for range 10 {
		if allow(m, "k", rule).Allowed {
			allowed++
		}
	}
	if allowed != 3 {
		t.Fatalf("after an hour %d passed, want the burst of 3", allowed)
	}
}

func TestKeysAndRulesAreIndependent(t *testing.T) {
	clk := newFakeTime()
	m := ratelimit.NewMemory(clk.Now)
	login := ratelimit.Rule{Name: "login", Rate: 1, Burst: 2}
	api := ratelimit.Rule{Name: "api", Rate: 1, Burst: 2}
	for range 2 {
		allow(m, "alice", login)
	}
	if allow(m, "alice", login).Allowed {
		t.Fatal("alice's login bucket should be empty")
	}
	if !allow(m, "bob", login).Allowed {
		t.Fatal("bob was limited by alice's bucket")
	}
	if !allow(m, "alice", api).Allowed {
		t.Fatal("alice's api rule was limited by her login rule")
	}
	// Name and key are kept apart, not joined into one string.
	a := ratelimit.Rule{Name: "a:b", Rate: 1, Burst: 1}
	b := ratelimit.Rule{Name: "a", Rate: 1, Burst: 1}
	allow(m, "c", a)
	if !allow(m, "b:c", b).Allowed {
		t.Fatal(`("a:b", "c") and ("a", "b:c") shared a bucket`)
	}
}

func TestUnlimitedAndDegenerateRules(t *testing.T) {
	m := ratelimit.NewMemory(newFakeTime().Now)
	for _, rate := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		for range 1000 {
			if d := allow(m, "k", ratelimit.Rule{Name: "off", Rate: rate, Burst: 0}); !d.Allowed {
				t.Fatalf("rate %v refused a request", rate)
			}
		}
	}
	if n := m.Len(); n != 0 {
		t.Fatalf("unlimited rules made %d buckets", n)
	}
	zero := ratelimit.Rule{Name: "zero-burst", Rate: 1, Burst: 0}
	if !allow(m, "k", zero).Allowed || allow(m, "k", zero).Allowed {
		t.Fatal("a burst of 0 should behave as 1")
	}
	tiny := ratelimit.Rule{Name: "tiny", Rate: 1e-300, Burst: 1}
	allow(m, "k", tiny)
	if d := allow(m, "k", tiny); d.Allowed || d.RetryAfter <= 0 {
		t.Fatalf("a vanishing rate gave %+v, want refused with a positive wait", d)
	}
}

func TestRuleChangeApplies(t *testing.T) {
	clk := newFakeTime()
	m := ratelimit.NewMemory(clk.Now)
	allow(m, "k", ratelimit.Rule{Name: "r", Rate: 1, Burst: 1})
	// Raised rate: the bucket refills at the new rate from now on.
	if d := allow(m, "k", ratelimit.Rule{Name: "r", Rate: 10, Burst: 1}); d.Allowed || !near(d.RetryAfter, 100*time.Millisecond) {
		t.Fatalf("after raising the rate got %+v, want refused for 100ms", d)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, 1},
		{0, 1},
		{time.Nanosecond, 1},
		{999 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{2 * time.Second, 2},
		{59*time.Second + time.Millisecond, 60},
		{time.Hour, 3600},
		{time.Duration(math.MaxInt64), math.MaxInt32},
	} {
		if got := ratelimit.RetryAfterSeconds(tc.d); got != tc.want {
			t.Errorf("RetryAfterSeconds(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	clk := newFakeTime()
	m := ratelimit.NewMemory(clk.Now)
	rule := ratelimit.Rule{Name: "api", Rate: 1, Burst: 50}
	var shared atomic.Int64
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 500 {
				if allow(m, "shared", rule).Allowed {
					shared.Add(1)
				}
				allow(m, fmt.Sprintf("g%d-%d", g, i), rule)
				if i%100 == 0 {
					m.Len()
				}
			}
		})
	}
	wg.Wait()
	// The clock stood still, so the shared bucket let exactly its burst through.
	if n := shared.Load(); n != 50 {
		t.Fatalf("%d requests passed on the shared key, want 50", n)
	}
}

func TestEvictionKeepsMapSmall(t *testing.T) {
	clk := newFakeTime()
	m := ratelimit.NewMemory(clk.Now)
	rule := ratelimit.Rule{Name: "ip", Rate: 1, Burst: 5}

	// One key spent on a slow rule must survive the churn: dropping it
	// would hand the client a fresh burst.
	slow := ratelimit.Rule{Name: "slow", Rate: 1.0 / 3600, Burst: 1}
	allow(m, "victim", slow)

	// 200,000 distinct clients, one request each, 1ms apart: a bucket is
	// full again 1s after its use, so about 1,000 are refilling at a time.
	maxLen := 0
	for i := range 200_000 {
		allow(m, fmt.Sprintf("10.0.%d.%d", i/256, i%256), rule)
		maxLen = max(maxLen, m.Len())
		clk.Advance(time.Millisecond)
	}
	if maxLen > 4096 {
		t.Fatalf("map grew to %d buckets, want at most 4096", maxLen)
	}
	if allow(m, "victim", slow).Allowed {
		t.Fatal("a bucket still refilling was evicted")
	}
}
