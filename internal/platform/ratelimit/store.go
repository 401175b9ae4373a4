package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// Store is a Limiter whose buckets live in the database (table
// rate_limits), so every server instance on one database draws on the same
// buckets: ten instances grant what one would. It fails closed: when the
// database cannot decide, Allow returns the error and the caller refuses.
//
// A bucket is kept as its theoretical arrival time (the generic cell rate
// algorithm, which is a token bucket told differently): every token taken
// pushes it one interval (1/Rate) further, from now when it lies in the
// past, and a take passes when the pushed time stays within Burst intervals
// of now. That is one integer per bucket, decided and written by one
// statement, so concurrent requests on any instance are counted one after
// the other by the row lock of the upsert and none slips past the burst. A
// refused take leaves the bucket as it was, as Memory does.
//
// A rule with a small burst (the sign-in limits) takes one token per
// request: exact across instances, one write per request. A rule with a
// large burst (the address limit, which every request passes) would cost
// every request a write that way, so the Store leases its tokens instead:
// one statement takes a chunk, and this process hands the chunk out to the
// requests that follow until it is spent or its lease ends (see leased).
//
// Time comes from the injected clock, so tests drive refills by hand. The
// server passes the real clock even under the sandbox's manual one, which
// is each instance's own and so cannot time a budget they share. Instances
// whose clocks disagree by a moment disagree on refills by that moment.
type Store struct {
	db    *db.DB
	clock clock.Clock
	keys  *keyring.Keyring

	mu        sync.Mutex
	leases    map[bucketKey]*lease
	nextSweep int // sweep leases once len(leases) reaches this

	statements atomic.Int64 // statements run by take, for tests
}

// NewStore returns a Store on d, reading the time from clk and hashing keys
// with keys, so that no client address or other key is stored as it is.
func NewStore(d *db.DB, clk clock.Clock, keys *keyring.Keyring) *Store {
	return &Store{db: d, clock: clk, keys: keys, leases: make(map[bucketKey]*lease), nextSweep: minSweep}
}

// keyPurpose is the keyring purpose of the stored keys; the rule name is part
// of the purpose, so two rules never share a bucket whatever their keys.
const keyPurpose = "rate-limit/"

// maxSpan bounds a bucket's interval and burst span (a century), so that
// vanishing rates neither overflow nanoseconds nor outlive the sweep.
const maxSpan = int64(100 * 365 * 24 * time.Hour)

// Leasing. A chunk is at most a twentieth of the burst and at most
// maxChunk tokens, and a lease lives at most maxLeaseLife and at most the
// time a twentieth of the burst takes to refill, so a process never holds
// more than a small share of a client's budget. Below minLeaseBurst a
// chunk would be a handful of tokens: the rule stays exact instead.
const (
	minLeaseBurst = 100
	leaseShare    = 20
	maxChunk      = 50
	maxLeaseLife  = int64(2 * time.Second)
)

// plan is how Store applies a rule: its interval and burst in GCRA terms,
// the largest chunk a lease takes (1: no leasing, one token per request)
// and a lease's life in nanoseconds (0 without leasing).
type plan struct {
	interval, burst int64
	chunk, life     int64
}

func planFor(rule Rule) plan {
	burst := int64(max(rule.Burst, 1))
	interval := maxSpan / burst
	if f := math.Ceil(float64(time.Second) / rule.Rate); f < float64(interval) {
		interval = max(int64(f), 1)
	}
	p := plan{interval: interval, burst: burst, chunk: 1}
	if burst < minLeaseBurst {
		return p
	}
	// burst*interval <= maxSpan, so nothing here overflows. A chunk never
	// represents more time than its lease lives.
	life := min(maxLeaseLife, burst*interval/leaseShare)
	if chunk := min(burst/leaseShare, maxChunk, life/interval); chunk >= 2 {
		p.chunk, p.life = chunk, life
	}
	return p
}

// takeSQL takes n tokens from a bucket, creating it full. The first
// branch of the CASE is a refusal (the bucket stays), the second pushes a
// future arrival time by n intervals, the third starts from now.
// $1 key, $2 now + n intervals, $3 the latest tat that still passes (now +
// burst span - reserve - n intervals), $4 now, $5 n intervals.
const takeSQL = `
	INSERT INTO rate_limits (key, tat, allowed) VALUES ($1, $2, TRUE)
	ON CONFLICT (key) DO UPDATE SET
		allowed = rate_limits.tat <= $3,
		tat = CASE WHEN rate_limits.tat > $3 THEN rate_limits.tat
		           WHEN rate_limits.tat > $4 THEN rate_limits.tat + $5
		           ELSE $2 END
	RETURNING allowed, tat`

// take runs takeSQL for n tokens at now, keeping p.life in reserve (see
// leased). When refused, retry is the time until n tokens are there. tat is
// the bucket's arrival time after the statement.
func (s *Store) take(ctx context.Context, hashed string, p plan, n, now int64) (ok bool, retry time.Duration, tat int64, err error) {
	last := now + p.burst*p.interval - p.life - n*p.interval
	args := []any{hashed, now + n*p.interval, last, now, n * p.interval}
	s.statements.Add(1)
	err = s.run(ctx, func(q db.Querier) error {
		return q.QueryRowContext(ctx, takeSQL, args...).Scan(&ok, &tat)
	})
	if err != nil || ok {
		return ok, 0, tat, err
	}
	// The bucket lets the take through once tat is back within reach.
	return false, max(time.Duration(tat-last), 1), tat, nil
}

// left is what a bucket whose arrival time is tat holds at now beyond the
// reserve: how many single takes would pass (whole tokens), and when the
// next one would (unix ns).
func (p plan) left(tat, now int64) (tokens, next int64) {
	spare := now + p.burst*p.interval - p.life - tat
	if spare < 0 {
		return 0, now - spare + p.interval
	}
	return spare / p.interval, now + p.interval - spare%p.interval
}

func (s *Store) hash(rule Rule, key string) string {
	return s.keys.Hash(keyPurpose+rule.Name, key)
}

// Allow takes one token from the bucket of (rule.Name, key) if it has one.
func (s *Store) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	if !(rule.Rate > 0) || math.IsInf(rule.Rate, 1) {
		return Decision{Allowed: true}, nil
	}
	p := planFor(rule)
	if p.chunk > 1 {
		return s.leased(ctx, key, rule, p)
	}
	now := s.clock.Now().UnixNano()
	ok, retry, tat, err := s.take(ctx, s.hash(rule, key), p, 1, now)
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit %s: %w", rule.Name, err)
	}
	if !ok {
		return Decision{RetryAfter: retry, Reset: retry}, nil
	}
	tokens, next := p.left(tat, now)
	return Decision{Allowed: true, Remaining: int(min(tokens, math.MaxInt32)), Reset: time.Duration(next - now)}, nil
}

// lease is this process's share of one shared bucket: tokens taken from it
// in one statement and not yet handed out.
type lease struct {
	left    int64 // tokens not yet handed out
	expires int64 // unix ns from which left counts for nothing
	granted int64 // tokens the last lease took (0: it was refused or failed)
	size    int64 // the chunk the next lease asks for
	// single is until when leases take one token: the bucket lately had
	// less than a chunk, and asking for one first would cost a refused
	// statement per token.
	single int64
	// closed is when the bucket can next give a token, after a refusal:
	// its arrival time only ever grows, so nobody's request passes sooner.
	closed int64
	// beyond is what the bucket held beyond the lease when it was taken
	// (whole tokens), and next when it was to gain its next one (unix ns):
	// the RateLimit header's figures, as of the last statement.
	beyond, next int64
	// taking is open while one goroutine runs the statement for the next
	// lease; the others wait for it instead of each taking a chunk.
	taking chan struct{}
}

// nextSize sizes the lease about to be taken at now from how the last one
// went: spent, twice as many (a new key starts at one token, so a client
// that makes one request costs one token); lapsed with tokens left, as
// many as were used, so a slow client wastes little of its own budget.
func (l *lease) nextSize(now, chunk int64) int64 {
	switch {
	case now < l.single:
		l.size = 1
	case l.granted == 0:
	case l.left == 0:
		l.size = 2 * l.granted
	default:
		l.size = l.granted - l.left
	}
	l.size = min(max(l.size, 1), chunk)
	return l.size
}

// leased serves Allow for a rule with a large burst from this process's
// lease on the bucket, taking a new chunk when the lease is spent or has
// lapsed. One goroutine per key takes a lease at a time; the others wait
// for it and then share it.
//
// Leasing is never looser than taking tokens one by one. A lease lives
// p.life; its tokens left then are lost (the bucket keeps them spent). A
// token handed out up to p.life after the bucket gave it could be spent
// together with the p.life's worth of tokens the bucket refilled
// meanwhile: a full burst and that much more at once. So every take keeps
// p.life's worth in reserve: it passes only when that many tokens stay in
// the bucket after it. Over any span, all instances together then pass at
// most what the bucket would pass one token at a time, the burst and the
// refill over the span; the price is a burst smaller by the reserve.
func (s *Store) leased(ctx context.Context, key string, rule Rule, p plan) (Decision, error) {
	k := bucketKey{rule.Name, key}
	for {
		s.mu.Lock()
		now := s.clock.Now().UnixNano()
		l := s.leases[k]
		if l == nil {
			if len(s.leases) >= s.nextSweep {
				s.sweepLeases(now)
			}
			l = &lease{size: 1}
			s.leases[k] = l
		}
		if ch := l.taking; ch != nil {
			s.mu.Unlock()
			select {
			case <-ch:
				continue
			case <-ctx.Done():
				return Decision{}, fmt.Errorf("rate limit %s: %w", rule.Name, ctx.Err())
			}
		}
		if l.left > 0 && now < l.expires {
			l.left--
			d := l.decision(now, p)
			s.mu.Unlock()
			return d, nil
		}
		if now < l.closed {
			s.mu.Unlock()
			wait := time.Duration(l.closed - now)
			return Decision{Allowed: false, RetryAfter: wait, Reset: wait}, nil
		}
		n := l.nextSize(now, p.chunk)
		done := make(chan struct{})
		l.taking, l.left, l.granted = done, 0, 0
		s.mu.Unlock()

		got, retry, tat, err := s.takeChunk(ctx, s.hash(rule, key), p, n, now)

		s.mu.Lock()
		l.taking = nil
		close(done)
		d := Decision{RetryAfter: retry, Reset: retry}
		if err == nil && got > 0 {
			l.granted, l.left, l.expires = got, got-1, now+p.life
			l.beyond, l.next = p.left(tat, now)
			if got < n { // the bucket is nearly empty: one at a time for a while
				l.single = now + p.life
			}
			d = l.decision(now, p)
		} else if err == nil {
			l.closed = now + int64(retry)
		}
		s.mu.Unlock()
		if err != nil {
			return Decision{}, fmt.Errorf("rate limit %s: %w", rule.Name, err)
		}
		return d, nil
	}
}

// decision is a passed request's Decision from the lease: the tokens it
// still holds and those the bucket held beyond it. A refill since the lease
// was taken is not counted until the next one: the figures err low.
func (l *lease) decision(now int64, p plan) Decision {
	reset := l.next - now
	if reset <= 0 {
		reset = p.interval - (now-l.next)%p.interval
	}
	return Decision{Allowed: true, Remaining: int(min(l.left+l.beyond, math.MaxInt32)), Reset: time.Duration(reset)}
}

// takeChunk takes n tokens, or when the bucket has fewer, one: a request
// the bucket can still pass is not refused for want of a whole chunk. Each
// attempt is one statement. It returns how many it took and the bucket's
// arrival time after.
func (s *Store) takeChunk(ctx context.Context, hashed string, p plan, n, now int64) (int64, time.Duration, int64, error) {
	ok, retry, tat, err := s.take(ctx, hashed, p, n, now)
	if err != nil || ok {
		return n, 0, tat, err
	}
	if n == 1 {
		return 0, retry, tat, nil
	}
	if ok, retry, tat, err = s.take(ctx, hashed, p, 1, now); err != nil || ok {
		return 1, 0, tat, err
	}
	return 0, retry, tat, nil
}

// sweepLeases drops leases that are over and remember no refusal, as
// Memory drops full buckets: a missing lease is what a lapsed one is, bar
// the chunk size it had grown to. s.mu must be held.
func (s *Store) sweepLeases(now int64) {
	for k, l := range s.leases {
		if l.taking == nil && now >= l.expires && now >= l.closed {
			delete(s.leases, k)
		}
	}
	s.nextSweep = max(minSweep, 2*len(s.leases))
}

// run runs one statement as its own transaction. On PostgreSQL that is the
// statement alone on the pool: the upsert is atomic by itself, and this
// statement runs on every request, so it is spared a BEGIN and a COMMIT
// (two more round trips). On SQLite it joins the single writer's group
// commit like every other write.
func (s *Store) run(ctx context.Context, fn func(q db.Querier) error) error {
	if q, ok := s.db.Autocommit(); ok {
		return fn(q)
	}
	return s.db.Tx(ctx, func(tx *db.Tx) error { return fn(tx) })
}

// Sweep deletes the buckets that are full again (their arrival time is
// past): a missing bucket is created full, so nothing changes for anyone.
// It reports how many it deleted.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	now := s.clock.Now().UnixNano()
	var n int64
	err := s.run(ctx, func(q db.Querier) error {
		res, err := q.ExecContext(ctx, `DELETE FROM rate_limits WHERE tat <= $1`, now)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}

// SweepEvery is how often Run sweeps: buckets of the request limits are
// full again within a minute or so, and until swept a row only costs room.
const SweepEvery = 5 * time.Minute

// Run sweeps every interval (SweepEvery when 0) until ctx ends. The
// interval is real time, as the job poller's is; which buckets are full
// again is read from the injected clock.
func (s *Store) Run(ctx context.Context, interval time.Duration, logger *slog.Logger) {
	if interval <= 0 {
		interval = SweepEvery
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			logger.Warn("rate limits: sweep failed", "error", err.Error())
		}
	}
}

// Layered asks Local first and Shared only when Local lets the request
// through, so a request passes only when both do: never looser than Shared
// alone. Local is a per-process Memory with the same rules; it refuses a
// flood from one client on this instance without a database write per
// refused request.
type Layered struct {
	Local, Shared Limiter
}

// Allow takes a token from Local and then from Shared. A passed request
// is told the smaller of the two buckets' Remaining.
func (l Layered) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	d, err := l.Local.Allow(ctx, key, rule)
	if err != nil || !d.Allowed {
		return d, err
	}
	shared, err := l.Shared.Allow(ctx, key, rule)
	if err != nil || !shared.Allowed || shared.Remaining < d.Remaining ||
		shared.Remaining == d.Remaining && shared.Reset > d.Reset {
		return shared, err
	}
	return d, nil
}
