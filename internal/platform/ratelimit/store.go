package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"math"
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
// algorithm, which is a token bucket told differently): every request pushes
// it one interval (1/Rate) further, from now when it lies in the past, and a
// request passes when the pushed time stays within Burst intervals of now.
// That is one integer per bucket, decided and written by one statement, so
// concurrent requests on any instance are counted one after the other by
// the row lock of the upsert and none slips past the burst. A refused
// request leaves the bucket as it was, as Memory does.
//
// Time comes from the injected clock, so tests drive refills by hand. The
// server passes the real clock even under the sandbox's manual one, which
// is each instance's own and so cannot time a budget they share. Instances
// whose clocks disagree by a moment disagree on refills by that moment.
type Store struct {
	db    *db.DB
	clock clock.Clock
	keys  *keyring.Keyring
}

// NewStore returns a Store on d, reading the time from clk and hashing keys
// with keys, so that no client address or other key is stored as it is.
func NewStore(d *db.DB, clk clock.Clock, keys *keyring.Keyring) *Store {
	return &Store{db: d, clock: clk, keys: keys}
}

// keyPurpose is the keyring purpose of the stored keys; the rule name is part
// of the purpose, so two rules never share a bucket whatever their keys.
const keyPurpose = "rate-limit/"

// maxSpan bounds a bucket's interval and burst span (a century), so that
// vanishing rates neither overflow nanoseconds nor outlive the sweep.
const maxSpan = int64(100 * 365 * 24 * time.Hour)

// allowSQL takes one token from a bucket, creating it full. The first
// branch of the CASE is a refusal (the bucket stays), the second pushes a
// future arrival time by one interval, the third starts from now.
// $1 key, $2 now + interval, $3 the latest tat that still passes (now +
// burst span - interval), $4 now, $5 interval.
const allowSQL = `
	INSERT INTO rate_limits (key, tat, allowed) VALUES ($1, $2, TRUE)
	ON CONFLICT (key) DO UPDATE SET
		allowed = rate_limits.tat <= $3,
		tat = CASE WHEN rate_limits.tat > $3 THEN rate_limits.tat
		           WHEN rate_limits.tat > $4 THEN rate_limits.tat + $5
		           ELSE $2 END
	RETURNING allowed, tat`

// Allow takes one token from the bucket of (rule.Name, key) if it has one.
func (s *Store) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	if !(rule.Rate > 0) || math.IsInf(rule.Rate, 1) {
		return Decision{Allowed: true}, nil
	}
	burst := int64(max(rule.Burst, 1))
	interval := maxSpan / burst
	if f := math.Ceil(float64(time.Second) / rule.Rate); f < float64(interval) {
		interval = max(int64(f), 1)
	}
	now := s.clock.Now().UnixNano()
	last := now + burst*interval - interval
	args := []any{s.keys.Hash(keyPurpose+rule.Name, key), now + interval, last, now, interval}

	var allowed bool
	var tat int64
	err := s.run(ctx, func(q db.Querier) error {
		return q.QueryRowContext(ctx, allowSQL, args...).Scan(&allowed, &tat)
	})
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit %s: %w", rule.Name, err)
	}
	if allowed {
		return Decision{Allowed: true}, nil
	}
	// The bucket lets the next request through once tat is back within reach.
	return Decision{Allowed: false, RetryAfter: max(time.Duration(tat-last), 1)}, nil
}

// run runs one statement as its own transaction. On PostgreSQL that is the
// statement alone on the pool: the upsert is atomic by itself, and this
// statement runs on every request, so it is spared a BEGIN and a COMMIT
// (two more round trips). On SQLite it joins the single writer's group
// commit like every other write.
func (s *Store) run(ctx context.Context, fn func(q db.Querier) error) error {
	if s.db.Dialect() == db.Postgres {
		// On PostgreSQL the reader is the write pool (see db.DB.Reader).
		return fn(s.db.Reader())
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

// Allow takes a token from Local and then from Shared.
func (l Layered) Allow(ctx context.Context, key string, rule Rule) (Decision, error) {
	d, err := l.Local.Allow(ctx, key, rule)
	if err != nil || !d.Allowed {
		return d, err
	}
	return l.Shared.Allow(ctx, key, rule)
}
