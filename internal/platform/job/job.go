// Package job runs background work from a durable job table. A job is
// enqueued in the transaction of the change that needs it, so both commit or
// neither; a Runner in any server instance claims it when due and retries it
// with exponential backoff until it succeeds or runs out of attempts.
//
// Delivery is at least once: a worker that dies mid-job leaves the job
// leased, and once the lease expires another runner runs it again. Handlers
// must therefore be idempotent.
package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Job is one claimed job as its handler sees it.
type Job struct {
	ID      uuid.UUID
	Kind    string
	Payload json.RawMessage
	// Attempts counts the runs so far, including this one.
	Attempts    int
	MaxAttempts int
	// LeaseExpiries counts the earlier attempts that never reported back
	// before their lease ran out: their process died or hung. A handler
	// whose work may itself kill the process (reading a hostile document)
	// uses it to stop trying.
	LeaseExpiries int

	completed *atomic.Bool // set by Complete
}

// Complete records j as done in tx, the transaction of the handler's last
// writes, so the outcome commits with them and the runner has nothing left
// to record: one transaction fewer for a job that ends in one anyway. The
// handler must return tx's error; when it returns nil the runner takes the
// job as completed. Like the runner's own record, it leaves alone a job
// whose lease was lost to another run.
func Complete(ctx context.Context, tx *db.Tx, j Job) error {
	if _, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'done', locked_until = NULL, updated_at = $1
		WHERE id = $2 AND status = 'running' AND attempts = $3`, tx.Now(), j.ID, j.Attempts); err != nil {
		return err
	}
	if j.completed != nil {
		j.completed.Store(true)
	}
	return nil
}

// Cancel records the job id, still pending, as done in tx: the work it was
// to do has been done there. A job already claimed is left to its run.
func Cancel(ctx context.Context, tx *db.Tx, id uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `UPDATE jobs SET status = 'done', updated_at = $2 WHERE id = $1 AND status = 'pending'`,
		id, tx.Now())
	return err
}

// Handler runs one job. An error schedules a retry (unless wrapped with
// Permanent or the job is out of attempts); a panic counts as an error.
type Handler func(ctx context.Context, j Job) error

// DefaultMaxAttempts is how often a job runs at most unless Enqueue is told otherwise.
const DefaultMaxAttempts = 10

type options struct {
	runAt       time.Time
	maxAttempts int
	fairKey     string
}

// Option configures Enqueue.
type Option func(*options)

// RunAt delays the job's first run until t.
func RunAt(t time.Time) Option { return func(o *options) { o.runAt = t } }

// MaxAttempts sets how often the job runs at most before it is dead.
func MaxAttempts(n int) Option { return func(o *options) { o.maxAttempts = n } }

// FairKey makes the job take turns with the other jobs of its kind that have
// the same key (an organization's id, say): runners, in every instance, run
// at most one of them at a time, oldest first, so a key with a thousand
// queued jobs holds one worker slot and leaves the rest to other keys.
func FairKey(key string) Option { return func(o *options) { o.fairKey = key } }

// Enqueue adds a job of kind with payload (stored as JSON) in tx, the
// transaction of the change that needs it, so the job exists if and only if
// the change commits. The job is due at tx.Now() unless RunAt says
// otherwise. Runners (in every instance, on PostgreSQL) wake as soon as tx
// commits.
func Enqueue(ctx context.Context, tx *db.Tx, kind string, payload any, opts ...Option) (uuid.UUID, error) {
	now := tx.Now()
	o := options{runAt: now, maxAttempts: DefaultMaxAttempts}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxAttempts < 1 {
		return uuid.Nil, fmt.Errorf("job %s: max attempts %d: must be at least 1", kind, o.maxAttempts)
	}
	body, err := json.Marshal(payload)
	if err != nil {
		return uuid.Nil, fmt.Errorf("job %s: encode payload: %w", kind, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.Nil, fmt.Errorf("job %s: %w", kind, err)
	}
	var fairKey *string
	if o.fairKey != "" {
		fairKey = &o.fairKey
	}
	// The job is written as tx commits (in the same statement as its events
	// on PostgreSQL): nothing reads it back before then.
	tx.InsertAtCommit(`INSERT INTO jobs (id, kind, payload, status, attempts, max_attempts, run_at, inserted_at, updated_at, fair_key)`,
		id, kind, string(body), "pending", 0, o.maxAttempts, o.runAt.UTC(), now.UTC(), now.UTC(), fairKey)
	tx.Notify(Topic)
	return id, nil
}

// Topic is the notification topic a committed Enqueue wakes runners on.
const Topic = "jobs"

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as one no retry can cure (a malformed payload, a
// record that no longer exists): the job becomes dead at once. Permanent(nil)
// is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// DefaultBackoff waits 1 s after the first failed attempt and doubles up to
// 10 minutes, plus up to 10% jitter so jobs that failed together (a partner
// outage) do not all retry in the same instant.
func DefaultBackoff(attempts int) time.Duration {
	d := 10 * time.Minute
	if attempts < 1 {
		attempts = 1
	}
	if attempts <= 10 {
		d = min(d, time.Second<<(attempts-1))
	}
	return d + rand.N(d/10+1)
}

// RunnerOption configures a Runner.
type RunnerOption func(*Runner)

// WithPollInterval sets how long Run waits for a Notify before looking for
// due jobs anyway (retries and other instances' jobs only show up so).
func WithPollInterval(d time.Duration) RunnerOption {
	return func(r *Runner) {
		if d > 0 {
			r.poll = d
		}
	}
}

// WithLease sets how long a claimed job stays reserved for its runner. A job
// still running after that may be claimed again elsewhere, so the lease is
// also the handler's time limit.
func WithLease(d time.Duration) RunnerOption {
	return func(r *Runner) {
		if d > 0 {
			r.lease = d
		}
	}
}

// WithBatchSize sets how many jobs one claim takes at most.
func WithBatchSize(n int) RunnerOption {
	return func(r *Runner) {
		if n > 0 {
			r.batch = n
		}
	}
}

// WithConcurrency sets how many jobs Run keeps running at once.
func WithConcurrency(n int) RunnerOption {
	return func(r *Runner) {
		if n > 0 {
			r.concurrency = n
		}
	}
}

// WithBackoff replaces DefaultBackoff; it gets the number of attempts made.
func WithBackoff(f func(attempts int) time.Duration) RunnerOption {
	return func(r *Runner) {
		if f != nil {
			r.backoff = f
		}
	}
}

// WithShutdownGrace sets how long running handlers may go on after Run's
// context is cancelled before their own context is cancelled too.
func WithShutdownGrace(d time.Duration) RunnerOption {
	return func(r *Runner) {
		if d >= 0 {
			r.grace = d
		}
	}
}

// Runner claims due jobs and runs their handlers.
type Runner struct {
	db          *db.DB
	clk         clock.Clock
	logger      *slog.Logger
	poll        time.Duration
	lease       time.Duration
	batch       int
	concurrency int
	grace       time.Duration
	backoff     func(int) time.Duration
	wake        chan struct{}

	mu       sync.RWMutex
	handlers map[string]Handler

	sweepMu   sync.Mutex
	sweptAt   time.Time // the runner's clock at the last lease sweep
	sweptWall time.Time // and the wall clock's
}

// claimSpacing is the least time between two rounds of claims. Every
// committed Enqueue and every finished job wakes the runner; under load a
// claim per wake-up would cost a transaction for a job or none, where
// claims spaced apart take the jobs of every wake-up in between at once
// (at 5 ms, 2.6 claims of two statements each a payment at 75 payments a
// second, most of them finding nothing: bench/RESULTS.md, issue 28).
const claimSpacing = 25 * time.Millisecond

// sweepEvery is how often a claim also looks for jobs whose lease ran out:
// leases last minutes, and a claim that skips the look is two statements
// cheaper. It looks again once a second has passed on the runner's clock
// (a manual clock's jump is seen at the next claim) or on the wall clock (a
// lease cut short in the database, or another instance's clock, is seen
// within a second even while a manual clock stands still).
const sweepEvery = time.Second

// sweepDue reports whether a claim at now looks for expired leases, and
// if so counts it as done.
func (r *Runner) sweepDue(now time.Time) bool {
	r.sweepMu.Lock()
	defer r.sweepMu.Unlock()
	wall := time.Now() // a cadence, not a time rule: the wall clock's
	if !r.sweptAt.IsZero() && now.Sub(r.sweptAt) < sweepEvery && !now.Before(r.sweptAt) && wall.Sub(r.sweptWall) < sweepEvery {
		return false
	}
	r.sweptAt, r.sweptWall = now, wall
	return true
}

// NewRunner returns a runner over d whose every time reading (due times,
// leases, backoff) comes from clk. Defaults: poll 1 s, lease 5 min, batch 10,
// concurrency 10, shutdown grace 10 s, DefaultBackoff.
func NewRunner(d *db.DB, clk clock.Clock, logger *slog.Logger, opts ...RunnerOption) *Runner {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{
		db: d, clk: clk, logger: logger,
		poll: time.Second, lease: 5 * time.Minute, batch: 10, concurrency: 10,
		grace: 10 * time.Second, backoff: DefaultBackoff,
		wake:     make(chan struct{}, 1),
		handlers: map[string]Handler{},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Handle registers the handler of kind. Jobs of kinds without a handler are
// never claimed, so an instance running older code leaves new kinds to the
// instances that know them. Handle panics if kind already has one.
func (r *Runner) Handle(kind string, h Handler) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.handlers[kind]; ok {
		panic("job: kind " + kind + " registered twice")
	}
	r.handlers[kind] = h
}

// Notify wakes Run at once. It never blocks.
func (r *Runner) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// RunDue claims up to one batch of due jobs, runs them concurrently with ctx
// and records their outcomes. It returns how many jobs ran; handler failures
// are recorded on the jobs, not returned.
func (r *Runner) RunDue(ctx context.Context) (int, error) {
	jobs, err := r.claim(ctx, r.batch)
	if err != nil {
		return 0, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, j := range jobs {
		wg.Go(func() {
			if err := r.execute(ctx, j); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return len(jobs), errors.Join(errs...)
}

// Run claims and runs jobs until ctx is done, keeping up to the concurrency
// limit running. On cancellation it stops claiming and waits for the running
// handlers. Their context is not cancelled with ctx: a payout half submitted
// is better finished than abandoned. It is cancelled only after the shutdown
// grace, so a handler that honours its context cannot hold the shutdown for
// longer; whatever it returns is still recorded.
func (r *Runner) Run(ctx context.Context) {
	hctx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(r.grace, cancelHandlers) })
	defer stopGrace()

	var running sync.WaitGroup
	defer running.Wait()
	slots := make(chan struct{}, r.concurrency)

	enqueued, unsubscribe := r.db.Subscribe(Topic)
	defer unsubscribe()
	t := time.NewTimer(0)
	defer t.Stop()
	var lastClaim time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		case <-enqueued:
		case <-t.C:
		}
		if wait := claimSpacing - time.Since(lastClaim); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		lastClaim = time.Now()
		for ctx.Err() == nil {
			// Only this loop fills slots, so the free count can only grow meanwhile.
			want := min(r.batch, cap(slots)-len(slots))
			if want == 0 {
				break // a finishing job calls Notify
			}
			jobs, err := r.claim(ctx, want)
			if err != nil {
				if ctx.Err() == nil {
					r.logger.LogAttrs(ctx, slog.LevelError, "job claim failed", slog.String("error", err.Error()))
				}
				break
			}
			for _, j := range jobs {
				slots <- struct{}{}
				running.Go(func() {
					defer func() {
						<-slots
						r.Notify()
					}()
					if err := r.execute(hctx, j); err != nil {
						r.logger.LogAttrs(hctx, slog.LevelError, "job outcome not recorded",
							slog.String("job_id", j.ID.String()), slog.String("kind", j.Kind),
							slog.Int("attempt", j.Attempts), slog.String("error", err.Error()))
					}
				})
			}
			if len(jobs) < want {
				break
			}
		}
		t.Reset(r.poll)
	}
}

// claim leases up to n due jobs of the kinds this runner handles.
//
// Short transaction of its own: on PostgreSQL each subquery locks the rows
// it picks and skips rows another instance is claiming, so no job is claimed
// twice and claimers do not queue behind each other; SQLite has a single
// writer. A running job whose lease expired (its runner died) is claimed
// again, counting the expiry; one that had no attempts left is declared dead
// instead, so a job that kills its worker cannot do so forever. Those are
// looked for at most about once a second (sweepEvery).
//
// Jobs with a fair key are claimed one statement each, so that each sees the
// ones claimed before it and no key gets two at once. Two instances claiming
// at the same moment may each start one of a key's jobs; the turn-taking is
// for sharing, not for mutual exclusion.
func (r *Runner) claim(ctx context.Context, n int) ([]Job, error) {
	r.mu.RLock()
	kinds := make([]string, 0, len(r.handlers))
	for k := range r.handlers {
		kinds = append(kinds, k)
	}
	r.mu.RUnlock()
	if len(kinds) == 0 || n < 1 {
		return nil, nil
	}
	slices.Sort(kinds)
	now := r.clk.Now()
	sweepArgs := []any{now}
	sweepKinds := make([]string, len(kinds))
	for i, k := range kinds {
		sweepArgs = append(sweepArgs, k)
		sweepKinds[i] = fmt.Sprintf("$%d", len(sweepArgs))
	}

	sources := []source{pending}
	sweep := r.sweepDue(now)
	if sweep {
		// Jobs whose lease ran out first: they are the oldest.
		sources = []source{expired, pending}
	}
	var jobs []Job
	err := r.db.Tx(ctx, func(tx *db.Tx) error {
		if !sweep {
			return r.claimFrom(ctx, tx, now, kinds, n, sources, &jobs)
		}
		_, err := tx.ExecContext(ctx, `
			UPDATE jobs SET status = 'dead', locked_until = NULL, updated_at = $1,
				lease_expiries = lease_expiries + 1,
				last_error = 'lease expired during the last attempt: the worker stopped or overran its lease'
			WHERE status = 'running' AND locked_until < $1 AND attempts >= max_attempts
				AND kind IN (`+strings.Join(sweepKinds, ", ")+`)`, sweepArgs...)
		if err != nil {
			return fmt.Errorf("job: expire leases: %w", err)
		}
		return r.claimFrom(ctx, tx, now, kinds, n, sources, &jobs)
	})
	if err != nil {
		return nil, err
	}
	return jobs, nil
}

// claimFrom claims up to n jobs into jobs from each of sources in turn,
// those without a fair key, then those with one; each walk of its index
// stops after what it takes.
func (r *Runner) claimFrom(ctx context.Context, tx *db.Tx, now time.Time, kinds []string, n int, sources []source, jobs *[]Job) error {
	for _, due := range sources {
		some, err := r.claimSome(ctx, tx, now, kinds, n-len(*jobs), due.cond+` AND j.fair_key IS NULL`, due.order)
		if err != nil {
			return err
		}
		*jobs = append(*jobs, some...)
	}
	for _, due := range sources {
		for len(*jobs) < n {
			turn, err := r.claimSome(ctx, tx, now, kinds, 1, due.cond+` AND j.fair_key IS NOT NULL AND NOT EXISTS (
				SELECT 1 FROM jobs o WHERE o.kind = j.kind AND o.fair_key = j.fair_key
					AND o.status = 'running' AND o.locked_until >= $2)`, due.order)
			if err != nil {
				return err
			}
			if len(turn) == 0 {
				break
			}
			*jobs = append(*jobs, turn...)
		}
	}
	return nil
}

// source is what a claim takes, as a condition on the candidate j that
// may use $2 (now), oldest first in the order of the partial index the
// condition matches, so that a claim reads only what it takes.
type source struct{ cond, order string }

var (
	// pending: a job due to run, by due time.
	pending = source{`j.status = 'pending' AND j.run_at <= $2`, `j.run_at`}
	// expired: a running one whose lease ran out (its runner died) with
	// attempts left, by the lease's end.
	expired = source{`j.status = 'running' AND j.locked_until < $2 AND j.attempts < j.max_attempts`, `j.locked_until`}
)

// claimSome leases up to n jobs of kinds that meet cond, a condition on the
// candidate j that may use $2 (now), first in order.
func (r *Runner) claimSome(ctx context.Context, tx *db.Tx, now time.Time, kinds []string, n int, cond, order string) ([]Job, error) {
	if n < 1 {
		return nil, nil
	}
	args := []any{now.Add(r.lease), now, n}
	placeholders := make([]string, len(kinds))
	for i, k := range kinds {
		args = append(args, k)
		placeholders[i] = fmt.Sprintf("$%d", len(args))
	}
	rows, err := tx.QueryContext(ctx, `
		UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_until = $1, updated_at = $2,
			lease_expiries = lease_expiries + CASE WHEN status = 'running' THEN 1 ELSE 0 END
		WHERE id IN (
			SELECT j.id FROM jobs j
			WHERE `+cond+`
				AND j.kind IN (`+strings.Join(placeholders, ", ")+`)
			ORDER BY `+order+`
			LIMIT $3`+r.db.SkipLocked()+`)
		RETURNING id, kind, payload, attempts, max_attempts, lease_expiries`, args...)
	if err != nil {
		return nil, fmt.Errorf("job: claim: %w", err)
	}
	defer rows.Close()
	var jobs []Job
	for rows.Next() {
		var (
			j       Job
			payload string
		)
		if err := rows.Scan(&j.ID, &j.Kind, &payload, &j.Attempts, &j.MaxAttempts, &j.LeaseExpiries); err != nil {
			return nil, fmt.Errorf("job: claim: %w", err)
		}
		j.Payload = json.RawMessage(payload)
		j.completed = new(atomic.Bool)
		jobs = append(jobs, j)
	}
	return jobs, rows.Err()
}

// maxErrorLen bounds last_error: a handler may fail with a whole response body.
const maxErrorLen = 2000

// execute runs a claimed job and records its outcome. The error is about
// recording; the handler's own error goes on the job.
func (r *Runner) execute(ctx context.Context, j Job) error {
	r.mu.RLock()
	h := r.handlers[j.Kind]
	r.mu.RUnlock()

	hctx, cancel := context.WithTimeout(ctx, r.lease)
	err := r.call(hctx, h, j)
	cancel()
	if err == nil && j.completed != nil && j.completed.Load() {
		return nil // recorded by the handler, with its own writes
	}

	// The outcome is recorded even when ctx has just been cancelled, or the
	// job would run again for nothing.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	now := r.clk.Now()
	attrs := []slog.Attr{
		slog.String("job_id", j.ID.String()), slog.String("kind", j.Kind),
		slog.Int("attempt", j.Attempts), slog.Int("max_attempts", j.MaxAttempts),
	}
	var (
		query string
		args  []any
	)
	switch {
	case err == nil:
		query = `UPDATE jobs SET status = 'done', locked_until = NULL, updated_at = $1
			WHERE id = $2 AND status = 'running' AND attempts = $3`
		args = []any{now, j.ID, j.Attempts}
	case IsPermanent(err) || j.Attempts >= j.MaxAttempts:
		query = `UPDATE jobs SET status = 'dead', locked_until = NULL, last_error = $4, updated_at = $1
			WHERE id = $2 AND status = 'running' AND attempts = $3`
		args = []any{now, j.ID, j.Attempts, truncate(err.Error())}
		r.logger.LogAttrs(ctx, slog.LevelError, "job dead", append(attrs,
			slog.Bool("permanent", IsPermanent(err)), slog.String("error", err.Error()))...)
	default:
		runAt := now.Add(r.backoff(j.Attempts))
		query = `UPDATE jobs SET status = 'pending', run_at = $5, locked_until = NULL, last_error = $4, updated_at = $1
			WHERE id = $2 AND status = 'running' AND attempts = $3`
		args = []any{now, j.ID, j.Attempts, truncate(err.Error()), runAt}
		r.logger.LogAttrs(ctx, slog.LevelWarn, "job failed, will retry", append(attrs,
			slog.Time("retry_at", runAt), slog.String("error", err.Error()))...)
	}
	// The status and attempts conditions make a runner whose lease expired
	// and whose job was claimed again leave the newer run's record alone.
	var stale bool
	txErr := r.db.Tx(rctx, func(tx *db.Tx) error {
		res, err := tx.ExecContext(rctx, query, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		stale = err == nil && n == 0
		return err
	})
	if txErr != nil {
		return fmt.Errorf("job %s: record outcome: %w", j.ID, txErr)
	}
	if stale {
		r.logger.LogAttrs(ctx, slog.LevelWarn, "job outcome dropped: lease lost to another run", attrs...)
	}
	return nil
}

// call runs h, turning a panic into an error so the job is retried like any
// failure instead of taking the process down.
func (r *Runner) call(ctx context.Context, h Handler, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.logger.LogAttrs(ctx, slog.LevelError, "job handler panicked",
				slog.String("job_id", j.ID.String()), slog.String("kind", j.Kind),
				slog.Int("attempt", j.Attempts), slog.String("panic", fmt.Sprint(p)),
				slog.String("stack", string(debug.Stack())))
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return h(ctx, j)
}

func truncate(s string) string {
	if len(s) <= maxErrorLen {
		return s
	}
	n := maxErrorLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
