// Package ratelimit decides whether a request may pass under a token-bucket
// rule. Memory keeps the buckets in this process; Store keeps them in the
// database, so that several server instances on one database share them;
// Layered puts a Memory in front of a Store.
package ratelimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter decides whether one more request under key may pass now.
type Limiter interface {
	// Allow fails when it cannot decide (a shared store is unreachable);
	// the caller then refuses the request: a limit never fails open.
	Allow(ctx context.Context, key string, rule Rule) (Decision, error)
}

// Rule is a token bucket: Burst requests may pass at once, refilled at Rate
// per second. Name separates buckets, so one key (an IP, a user) can be
// limited independently per route family. A Rate <= 0 disables the rule,
// so a limit can be switched off by configuration; a Burst below 1 is
// taken as 1, since a bucket that never holds a token would refuse forever.
type Rule struct {
	Name  string
	Rate  float64 // tokens per second
	Burst int
}

// On reports whether the rule limits anything (a Rate <= 0 or infinite
// switches it off).
func (r Rule) On() bool { return r.Rate > 0 && !math.IsInf(r.Rate, 1) }

// Decision is the outcome of Allow.
type Decision struct {
	Allowed bool
	// RetryAfter is, when not allowed, the time until one token is
	// available, so the client can be told when to come back.
	RetryAfter time.Duration
	// Remaining is how many more requests the bucket would pass at once
	// after this one (its whole tokens), and Reset the time until it gains
	// the next whole token: until then no more than Remaining pass. Both
	// are what a client is told in the RateLimit header; for a refused
	// request Remaining is 0 and Reset is RetryAfter. They are zero for a
	// rule that is off.
	Remaining int
	Reset     time.Duration
}

// after is the Remaining and Reset of a bucket holding tokens (whole and
// fractional) that refills at rate per second.
func after(tokens, rate float64) (int, time.Duration) {
	whole := math.Floor(max(tokens, 0))
	reset := time.Duration(math.MaxInt64)
	if ns := math.Ceil((whole + 1 - max(tokens, 0)) / rate * float64(time.Second)); ns < float64(math.MaxInt64) {
		reset = max(time.Duration(ns), 1)
	}
	return int(min(whole, math.MaxInt32)), reset
}

// RetryAfterSeconds converts d for the Retry-After header, which only
// carries whole seconds: rounding up keeps clients from retrying too early,
// and the minimum of 1 keeps them from retrying at once.
func RetryAfterSeconds(d time.Duration) int {
	if d <= time.Second {
		return 1
	}
	s := d / time.Second
	if d%time.Second != 0 {
		s++
	}
	if s > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(s)
}

// minSweep is the number of buckets below which Memory never sweeps, so a
// small map is not walked over and over for nothing.
const minSweep = 1024

// Memory is an in-process Limiter using golang.org/x/time/rate, one bucket
// per (rule.Name, key). Each instance behind a load balancer grants its own
// full burst with it: Store is the one to share a budget between instances.
//
// Every time decision reads the injected now, so tests drive it without
// sleeping. Buckets idle long enough to be full again are dropped, since a
// full bucket is exactly what a missing one would be created as; that keeps
// memory bounded under many distinct keys (say, client IPs) without a
// background goroutine.
type Memory struct {
	now func() time.Time

	mu        sync.Mutex
	buckets   map[bucketKey]*rate.Limiter
	nextSweep int // sweep once len(buckets) reaches this
}

type bucketKey struct{ rule, key string }

// NewMemory returns an empty Memory reading the time from now (time.Now
// when nil).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, buckets: make(map[bucketKey]*rate.Limiter), nextSweep: minSweep}
}

// Allow takes one token from the bucket of (rule.Name, key) if it has one.
// A refused request takes nothing, so a client hammering a closed bucket
// does not push its own reopening further away.
func (m *Memory) Allow(_ context.Context, key string, rule Rule) (Decision, error) {
	return m.take(key, rule), nil
}

func (m *Memory) take(key string, rule Rule) Decision {
	if !(rule.Rate > 0) || math.IsInf(rule.Rate, 1) {
		return Decision{Allowed: true}
	}
	limit, burst := rate.Limit(rule.Rate), max(rule.Burst, 1)
	now := m.now()

	m.mu.Lock()
	defer m.mu.Unlock()

	k := bucketKey{rule.Name, key}
	lim, ok := m.buckets[k]
	if !ok {
		if len(m.buckets) >= m.nextSweep {
			m.sweep(now)
		}
		lim = rate.NewLimiter(limit, burst)
		m.buckets[k] = lim
	} else {
		// A rule changed by configuration applies from now on, keeping
		// the tokens the bucket already holds.
		if lim.Limit() != limit {
			lim.SetLimitAt(now, limit)
		}
		if lim.Burst() != burst {
			lim.SetBurstAt(now, burst)
		}
	}

	if lim.AllowN(now, 1) {
		d := Decision{Allowed: true}
		d.Remaining, d.Reset = after(lim.TokensAt(now), rule.Rate)
		return d
	}
	// m.mu keeps the bucket still between AllowN and TokensAt.
	missing := 1 - lim.TokensAt(now)
	// Rounded up, and capped for rates so slow the wait overflows a Duration.
	wait := time.Duration(math.MaxInt64)
	if ns := math.Ceil(missing / rule.Rate * float64(time.Second)); ns < float64(math.MaxInt64) {
		wait = max(time.Duration(ns), 1)
	}
	return Decision{Allowed: false, RetryAfter: wait, Reset: wait}
}

// Len reports how many buckets Memory holds, for metrics and tests.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.buckets)
}

// sweep drops full buckets. It runs only once the map has doubled since the
// last sweep, so its cost spreads to O(1) per new bucket and the map stays
// within about twice the buckets still refilling. m.mu must be held.
func (m *Memory) sweep(now time.Time) {
	for k, lim := range m.buckets {
		if lim.TokensAt(now) >= float64(lim.Burst()) {
			delete(m.buckets, k)
		}
	}
	m.nextSweep = max(minSweep, 2*len(m.buckets))
}
