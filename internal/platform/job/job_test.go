package job_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/job"
)

var t0 = time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)

// each runs test once per engine on a new database whose transactions read
// their time from clk, the runner's clock, which starts at t0.
func each(t *testing.T, test func(t *testing.T, d *db.DB, clk *clock.Manual)) {
	t.Helper()
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			clk := clock.NewManual(t0)
			test(t, dbtest.Open(t, e.Migrated(t), db.WithClock(clk)), clk)
		})
	}
}

// enqueue adds a job due at due in a transaction of its own.
func enqueue(t *testing.T, d *db.DB, due time.Time, kind string, payload any, opts ...job.Option) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := d.Tx(context.Background(), func(tx *db.Tx) error {
		var err error
		id, err = job.Enqueue(context.Background(), tx, kind, payload, append([]job.Option{job.RunAt(due)}, opts...)...)
		return err
	})
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
	return id
}

type state struct {
	Status    string
	Attempts  int
	RunAt     time.Time
	LastError sql.NullString
}

func stateOf(t *testing.T, d *db.DB, id uuid.UUID) state {
	t.Helper()
	var s state
	err := d.Reader().QueryRowContext(context.Background(),
		`SELECT status, attempts, run_at, last_error FROM jobs WHERE id = $1`, id).
		Scan(&s.Status, &s.Attempts, &s.RunAt, &s.LastError)
	if err != nil {
		t.Fatalf("read job: %v", err)
	}
	return s
}

func runDue(t *testing.T, r *job.Runner, want int) {
	t.Helper()
	n, err := r.RunDue(context.Background())
	if err != nil {
		t.Fatalf("RunDue: %v", err)
	}
	if n != want {
		t.Fatalf("RunDue ran %d jobs, want %d", n, want)
	}
}

func TestFailingJobIsRetriedWithBackoff(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil)
		var attempts []int
		r.Handle("bill.extract", func(_ context.Context, j job.Job) error {
			attempts = append(attempts, j.Attempts)
			if j.Kind != "bill.extract" || string(j.Payload) != `{"bill":"b1"}` || j.MaxAttempts != job.DefaultMaxAttempts {
				t.Errorf("job = %+v (payload %s)", j, j.Payload)
			}
			if j.Attempts < 3 {
				return fmt.Errorf("try %d failed", j.Attempts)
			}
			return nil
		})
		id := enqueue(t, d, clk.Now(), "bill.extract", map[string]string{"bill": "b1"})

		runDue(t, r, 1)
		s := stateOf(t, d, id)
		if s.Status != "pending" || s.Attempts != 1 || s.LastError.String != "try 1 failed" {
			t.Fatalf("after first failure: %+v", s)
		}
		if wait := s.RunAt.Sub(clk.Now()); wait < time.Second || wait > 1100*time.Millisecond {
			t.Fatalf("first backoff %v, want 1s plus at most 10%%", wait)
		}
		runDue(t, r, 0)
		clk.Advance(900 * time.Millisecond)
		runDue(t, r, 0)
		clk.Advance(300 * time.Millisecond)
		runDue(t, r, 1)

		s = stateOf(t, d, id)
		if wait := s.RunAt.Sub(clk.Now()); s.Status != "pending" || s.Attempts != 2 || wait < 2*time.Second || wait > 2200*time.Millisecond {
			t.Fatalf("after second failure: %+v (wait %v)", s, s.RunAt.Sub(clk.Now()))
		}
		clk.Advance(1900 * time.Millisecond)
		runDue(t, r, 0)
		clk.Advance(400 * time.Millisecond)
		runDue(t, r, 1)

		if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 3 {
			t.Fatalf("after success: %+v", s)
		}
		if !slices.Equal(attempts, []int{1, 2, 3}) {
			t.Fatalf("attempts seen %v", attempts)
		}
		clk.Advance(time.Hour)
		runDue(t, r, 0)
	})
}

// A handler may record its job done with its own last writes: both
// commit or neither, and a rolled-back completion leaves the job to be
// retried like any failure.
func TestCompleteCommitsWithTheHandlersWrites(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		if err := d.Tx(context.Background(), func(tx *db.Tx) error {
			_, err := tx.ExecContext(context.Background(), `CREATE TABLE handled (job TEXT NOT NULL)`)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		r := job.NewRunner(d, clk, nil)
		fail := true
		r.Handle("webhook.deliver", func(ctx context.Context, j job.Job) error {
			return d.Tx(ctx, func(tx *db.Tx) error {
				if _, err := tx.ExecContext(ctx, `INSERT INTO handled (job) VALUES ($1)`, j.ID.String()); err != nil {
					return err
				}
				if err := job.Complete(ctx, tx, j); err != nil {
					return err
				}
				if fail {
					return errors.New("the write after the completion failed")
				}
				return nil
			})
		})
		id := enqueue(t, d, clk.Now(), "webhook.deliver", nil)
		handled := func() (n int) {
			if err := d.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM handled`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}

		runDue(t, r, 1)
		if s := stateOf(t, d, id); s.Status != "pending" || s.Attempts != 1 || handled() != 0 {
			t.Fatalf("after a rolled-back completion: %+v, %d writes kept", s, handled())
		}
		fail = false
		clk.Advance(time.Minute)
		runDue(t, r, 1)
		if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 2 || handled() != 1 {
			t.Fatalf("after a completion: %+v, %d writes kept", s, handled())
		}
		clk.Advance(time.Hour)
		runDue(t, r, 0)
	})
}

func TestPermanentErrorKillsJobAtOnce(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil)
		runs := 0
		long := strings.Repeat("é", 3000) // last_error is cut, on a character boundary
		r.Handle("payout.submit", func(context.Context, job.Job) error {
			runs++
			return fmt.Errorf("submit: %w", job.Permanent(errors.New("account closed "+long)))
		})
		id := enqueue(t, d, clk.Now(), "payout.submit", nil)
		runDue(t, r, 1)
		s := stateOf(t, d, id)
		if s.Status != "dead" || s.Attempts != 1 || !strings.HasPrefix(s.LastError.String, "submit: account closed éé") {
			t.Fatalf("state %+v", s)
		}
		if n := len(s.LastError.String); n > 2010 || !strings.HasSuffix(s.LastError.String, "é…") {
			t.Fatalf("last_error not truncated cleanly (%d bytes)", n)
		}
		clk.Advance(24 * time.Hour)
		runDue(t, r, 0)
		if runs != 1 {
			t.Fatalf("ran %d times", runs)
		}
		if job.Permanent(nil) != nil {
			t.Fatal("Permanent(nil) != nil")
		}
	})
}

func TestJobOutOfAttemptsIsDead(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil, job.WithBackoff(func(int) time.Duration { return time.Minute }))
		r.Handle("message.deliver", func(_ context.Context, j job.Job) error {
			return fmt.Errorf("smtp refused (attempt %d)", j.Attempts)
		})
		id := enqueue(t, d, clk.Now(), "message.deliver", nil, job.MaxAttempts(2))
		runDue(t, r, 1)
		clk.Advance(time.Minute)
		runDue(t, r, 1)
		s := stateOf(t, d, id)
		if s.Status != "dead" || s.Attempts != 2 || s.LastError.String != "smtp refused (attempt 2)" {
			t.Fatalf("state %+v", s)
		}
		clk.Advance(time.Hour)
		runDue(t, r, 0)

		if _, err := db.InTx(context.Background(), d, func(tx *db.Tx) (uuid.UUID, error) {
			return job.Enqueue(context.Background(), tx, "x", nil, job.MaxAttempts(0))
		}); err == nil {
			t.Fatal("MaxAttempts(0) accepted")
		}
	})
}

func TestPanicCountsAsFailure(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil)
		r.Handle("bad", func(context.Context, job.Job) error { panic("nil map") })
		id := enqueue(t, d, clk.Now(), "bad", nil)
		runDue(t, r, 1)
		if s := stateOf(t, d, id); s.Status != "pending" || s.Attempts != 1 || s.LastError.String != "panic: nil map" {
			t.Fatalf("state %+v", s)
		}
	})
}

func TestRolledBackEnqueueNeverRuns(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ran := false
		r := job.NewRunner(d, clk, nil)
		r.Handle("k", func(context.Context, job.Job) error { ran = true; return nil })
		rollback := errors.New("rollback")
		err := d.Tx(context.Background(), func(tx *db.Tx) error {
			if _, err := job.Enqueue(context.Background(), tx, "k", nil); err != nil {
				return err
			}
			return rollback
		})
		if !errors.Is(err, rollback) {
			t.Fatal(err)
		}
		clk.Advance(time.Hour)
		runDue(t, r, 0)
		if ran {
			t.Fatal("rolled-back job ran")
		}
	})
}

func TestUnhandledKindsAndFutureJobsWait(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil)
		runDue(t, r, 0) // no handlers at all
		r.Handle("known", func(context.Context, job.Job) error { return nil })
		other := enqueue(t, d, clk.Now(), "unknown", nil)
		later := enqueue(t, d, clk.Now(), "known", nil, job.RunAt(t0.Add(time.Hour)))
		runDue(t, r, 0)
		if s := stateOf(t, d, other); s.Status != "pending" || s.Attempts != 0 {
			t.Fatalf("unknown kind touched: %+v", s)
		}
		clk.Advance(time.Hour)
		runDue(t, r, 1)
		if s := stateOf(t, d, later); s.Status != "done" {
			t.Fatalf("delayed job: %+v", s)
		}
		if s := stateOf(t, d, other); s.Status != "pending" || s.Attempts != 0 {
			t.Fatalf("unknown kind touched: %+v", s)
		}
	})
}

// blocker is a handler whose first attempt waits to be released and then
// fails; later attempts succeed.
type blocker struct {
	started, release chan struct{}
	mu               sync.Mutex
	seen             []int
}

func newBlocker() *blocker {
	return &blocker{started: make(chan struct{}), release: make(chan struct{})}
}

func (b *blocker) handle(_ context.Context, j job.Job) error {
	b.mu.Lock()
	b.seen = append(b.seen, j.Attempts)
	b.mu.Unlock()
	if j.Attempts == 1 {
		close(b.started)
		<-b.release
		return errors.New("too late")
	}
	return nil
}

func TestExpiredLeaseIsClaimedAgain(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		b := newBlocker()
		stuck := job.NewRunner(d, clk, nil, job.WithLease(time.Minute))
		stuck.Handle("k", b.handle)
		other := job.NewRunner(d, clk, nil, job.WithLease(time.Minute))
		other.Handle("k", b.handle)
		id := enqueue(t, d, clk.Now(), "k", nil)

		done := make(chan error, 1)
		go func() { _, err := stuck.RunDue(context.Background()); done <- err }()
		<-b.started
		runDue(t, other, 0) // leased
		clk.Advance(61 * time.Second)
		runDue(t, other, 1)
		if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 2 {
			t.Fatalf("after second claim: %+v", s)
		}

		// The first run's late failure must not overwrite the second run's success.
		close(b.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 2 || s.LastError.Valid {
			t.Fatalf("after stale outcome: %+v", s)
		}
		if !slices.Equal(b.seen, []int{1, 2}) {
			t.Fatalf("attempts seen %v", b.seen)
		}
	})
}

func TestExpiredLeaseOnLastAttemptIsDead(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		b := newBlocker()
		stuck := job.NewRunner(d, clk, nil, job.WithLease(time.Minute))
		stuck.Handle("k", b.handle)
		other := job.NewRunner(d, clk, nil, job.WithLease(time.Minute))
		other.Handle("k", b.handle)
		id := enqueue(t, d, clk.Now(), "k", nil, job.MaxAttempts(1))

		done := make(chan error, 1)
		go func() { _, err := stuck.RunDue(context.Background()); done <- err }()
		<-b.started
		clk.Advance(61 * time.Second)
		runDue(t, other, 0)
		s := stateOf(t, d, id)
		if s.Status != "dead" || s.Attempts != 1 || !strings.Contains(s.LastError.String, "lease expired") {
			t.Fatalf("state %+v", s)
		}
		close(b.release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if s := stateOf(t, d, id); s.Status != "dead" {
			t.Fatalf("state %+v", s)
		}
	})
}

func TestSeveralRunnersRunEachJobOnce(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		const jobs, runners = 40, 4
		var ids []uuid.UUID
		for i := range jobs {
			ids = append(ids, enqueue(t, d, clk.Now(), "k", i))
		}
		var (
			mu   sync.Mutex
			runs = map[uuid.UUID]int{}
		)
		var wg sync.WaitGroup
		for range runners {
			r := job.NewRunner(d, clk, nil, job.WithBatchSize(3))
			r.Handle("k", func(_ context.Context, j job.Job) error {
				mu.Lock()
				runs[j.ID]++
				mu.Unlock()
				time.Sleep(time.Millisecond)
				return nil
			})
			wg.Go(func() {
				// Once a claim finds nothing, every job is taken: jobs that
				// succeed never become due again.
				for {
					n, err := r.RunDue(context.Background())
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						return
					}
				}
			})
		}
		wg.Wait()
		for _, id := range ids {
			if runs[id] != 1 {
				t.Fatalf("job %s ran %d times", id, runs[id])
			}
			if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 1 {
				t.Fatalf("job %s: %+v", id, s)
			}
		}
	})
}

func TestRunWakesOnNotifyAndFinishesJobsOnCancel(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil, job.WithPollInterval(time.Hour), job.WithShutdownGrace(time.Minute))
		ran := make(chan string, 10)
		started, release := make(chan struct{}), make(chan struct{})
		var handlerCtxErr error
		r.Handle("quick", func(_ context.Context, j job.Job) error {
			var p string
			_ = json.Unmarshal(j.Payload, &p)
			ran <- p
			return nil
		})
		r.Handle("slow", func(ctx context.Context, j job.Job) error {
			close(started)
			<-release
			handlerCtxErr = ctx.Err()
			return nil
		})
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			r.Run(ctx)
			close(stopped)
		}()

		for _, p := range []string{"one", "two"} {
			time.Sleep(20 * time.Millisecond) // let Run settle into waiting, so only Notify can wake it
			enqueue(t, d, clk.Now(), "quick", p)
			r.Notify()
			select {
			case got := <-ran:
				if got != p {
					t.Fatalf("ran %q, want %q", got, p)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Notify did not wake Run")
			}
		}

		id := enqueue(t, d, clk.Now(), "slow", nil)
		r.Notify()
		select {
		case <-started:
		case <-time.After(3 * time.Second):
			t.Fatal("slow job did not start")
		}
		cancel()
		select {
		case <-stopped:
			t.Fatal("Run returned while a job was running")
		case <-time.After(100 * time.Millisecond):
		}
		close(release)
		select {
		case <-stopped:
		case <-time.After(3 * time.Second):
			t.Fatal("Run did not stop")
		}
		if handlerCtxErr != nil {
			t.Fatalf("handler context cancelled within the grace: %v", handlerCtxErr)
		}
		if s := stateOf(t, d, id); s.Status != "done" {
			t.Fatalf("slow job: %+v", s)
		}
		r.Notify() // never blocks
		r.Notify()
	})
}

func TestRunCancelsStuckHandlersAfterGrace(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		r := job.NewRunner(d, clk, nil, job.WithShutdownGrace(50*time.Millisecond))
		started := make(chan struct{})
		r.Handle("stuck", func(ctx context.Context, j job.Job) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
		id := enqueue(t, d, clk.Now(), "stuck", nil)
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			r.Run(ctx)
			close(stopped)
		}()
		select {
		case <-started:
		case <-time.After(3 * time.Second):
			t.Fatal("job did not start")
		}
		cancel()
		select {
		case <-stopped:
		case <-time.After(3 * time.Second):
			t.Fatal("Run did not stop after the grace")
		}
		// The interrupted attempt is recorded as a failure to retry.
		if s := stateOf(t, d, id); s.Status != "pending" || s.Attempts != 1 || s.LastError.String != context.Canceled.Error() {
			t.Fatalf("state %+v", s)
		}
	})
}

// A job enqueued in a committed db.Tx starts at once, with no poll and no
// Notify: on PostgreSQL even in another instance sharing the database.
func TestCommittedEnqueueWakesRunnersEverywhere(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.Migrated(t)
			clk := clock.NewManual(t0)
			d := dbtest.Open(t, dsn, db.WithClock(clk))
			runnerDB := d
			if e.Name == "postgres" {
				runnerDB = dbtest.Open(t, dsn, db.WithClock(clk)) // another instance
			}
			r := job.NewRunner(runnerDB, clk, nil, job.WithPollInterval(time.Hour))
			ran := make(chan string, 100) // never blocks a handler, however many ran
			r.Handle("quick", func(_ context.Context, j job.Job) error {
				var p string
				_ = json.Unmarshal(j.Payload, &p)
				ran <- p
				return nil
			})
			ctx, cancel := context.WithCancel(context.Background())
			stopped := make(chan struct{})
			go func() { r.Run(ctx); close(stopped) }()
			defer func() { cancel(); <-stopped }()

			// The first claim finds nothing; the runner then waits an hour
			// unless woken. Another instance's listener connects in the
			// background, so enqueue until a job runs.
			deadline := time.After(10 * time.Second)
			for {
				err := d.Tx(context.Background(), func(tx *db.Tx) error {
					_, err := job.Enqueue(context.Background(), tx, "quick", "now")
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				select {
				case got := <-ran:
					if got != "now" {
						t.Fatalf("ran %q", got)
					}
					return
				case <-time.After(500 * time.Millisecond):
					continue
				case <-deadline:
				}
				break
			}
			t.Fatal("the committed job waited for the poll")
		})
	}
}

func TestJobsWithOneFairKeyTakeTurns(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		var (
			mu  sync.Mutex
			ran []string
		)
		record := func(_ context.Context, j job.Job) error {
			var p struct{ Name string }
			if err := json.Unmarshal(j.Payload, &p); err != nil {
				return err
			}
			mu.Lock()
			ran = append(ran, p.Name)
			mu.Unlock()
			return nil
		}
		r := job.NewRunner(d, clk, nil)
		r.Handle("k", record)
		for i := range 5 {
			enqueue(t, d, clk.Now().Add(time.Duration(i)*time.Second), "k", map[string]string{"name": fmt.Sprint("a", i)}, job.FairKey("org-a"))
		}
		enqueue(t, d, clk.Now().Add(10*time.Second), "k", map[string]string{"name": "b0"}, job.FairKey("org-b"))
		enqueue(t, d, clk.Now().Add(11*time.Second), "k", map[string]string{"name": "plain"})
		clk.Advance(time.Minute)

		// One batch holds one job of each key, however many a key queued.
		runDue(t, r, 3)
		slices.Sort(ran)
		if !slices.Equal(ran, []string{"a0", "b0", "plain"}) {
			t.Fatalf("first batch ran %v", ran)
		}
		for i := 1; i < 5; i++ {
			ran = nil
			runDue(t, r, 1)
			if want := fmt.Sprint("a", i); !slices.Equal(ran, []string{want}) {
				t.Fatalf("batch %d ran %v, want [%s]", i+1, ran, want)
			}
		}
	})
}

func TestAKeysRunningJobHoldsItsTurnOnEveryRunner(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		started, release := make(chan struct{}), make(chan struct{})
		handle := func(_ context.Context, j job.Job) error {
			if string(j.Payload) == `"slow"` {
				close(started)
				<-release
			}
			return nil
		}
		busy := job.NewRunner(d, clk, nil)
		busy.Handle("k", handle)
		other := job.NewRunner(d, clk, nil)
		other.Handle("k", handle)
		first := enqueue(t, d, clk.Now(), "k", "slow", job.FairKey("org-a"))
		second := enqueue(t, d, clk.Now().Add(time.Second), "k", "quick", job.FairKey("org-a"))
		elsewhere := enqueue(t, d, clk.Now().Add(2*time.Second), "k", "quick", job.FairKey("org-b"))
		clk.Advance(5 * time.Second)

		done := make(chan error, 1)
		go func() { _, err := busy.RunDue(context.Background()); done <- err }()
		<-started
		// While org-a's first job runs on busy, no runner starts its second.
		if _, err := other.RunDue(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := stateOf(t, d, second); s.Status != "pending" {
			t.Fatalf("second job of the busy key: %+v", s)
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for _, id := range []uuid.UUID{first, elsewhere} {
			if s := stateOf(t, d, id); s.Status != "done" {
				t.Fatalf("job %s: %+v", id, s)
			}
		}
		runDue(t, other, 1)
		if s := stateOf(t, d, second); s.Status != "done" {
			t.Fatalf("second job once its turn came: %+v", s)
		}
	})
}

func TestHandlerSeesHowOftenItsLeaseExpired(t *testing.T) {
	each(t, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		var (
			mu   sync.Mutex
			seen []int
		)
		saw := func() int { mu.Lock(); defer mu.Unlock(); return len(seen) }
		hang := make(chan struct{})
		defer close(hang)
		dying := func(_ context.Context, j job.Job) error {
			mu.Lock()
			seen = append(seen, j.LeaseExpiries)
			mu.Unlock()
			if j.Attempts < 3 {
				<-hang // never reports back, like a process that died
			}
			return nil
		}
		r := job.NewRunner(d, clk, nil, job.WithLease(time.Minute))
		r.Handle("k", dying)
		id := enqueue(t, d, clk.Now(), "k", nil)
		for i := range 2 {
			go func() { _, _ = r.RunDue(context.Background()) }()
			waitFor(t, func() bool { return saw() > i })
			clk.Advance(61 * time.Second)
		}
		runDue(t, r, 1)
		if s := stateOf(t, d, id); s.Status != "done" || s.Attempts != 3 {
			t.Fatalf("state %+v", s)
		}
		if !slices.Equal(seen, []int{0, 1, 2}) {
			t.Fatalf("lease expiries seen %v, want [0 1 2]", seen)
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
