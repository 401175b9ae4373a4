package db_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// collided is how a statement of a transaction PostgreSQL aborted reaches
// the caller: a *pgconn.PgError, wrapped by the code it passed through.
func collided(code string) error {
	return fmt.Errorf("payment: lock: %w", &pgconn.PgError{Severity: "ERROR", Code: code, Message: "collided"})
}

func TestRetryableIsASerializationFailureOrADeadlock(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{collided("40P01"), true},
		{collided("40001"), true},
		{&pgconn.PgError{Code: "40P01"}, true},
		{collided("23505"), false},                                // a unique violation happens again
		{collided("40002"), false},                                // an integrity constraint violation at commit
		{errors.New("deadlock detected (SQLSTATE 40P01)"), false}, // the code, never the message text
		{nil, false},
	} {
		if got := db.Retryable(c.err); got != c.want {
			t.Errorf("Retryable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}

func TestStoreInTxRetryRunsACollidedTransactionOnceMore(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		// The first run collides after its write; the second commits. The
		// first run's write and after-commit hook are gone with it.
		runs, hooks, before := 0, 0, db.Retried()
		id, err := db.InTxRetry(ctx, d, func(tx *db.Tx) (uuid.UUID, error) {
			runs++
			id := uuid.New()
			if err := insertOrg(ctx, tx, id, "active"); err != nil {
				return id, err
			}
			tx.AfterCommit(func() { hooks++ })
			if runs == 1 {
				return id, collided("40P01")
			}
			return id, nil
		})
		if err != nil || runs != 2 || hooks != 1 || countOrgs(t, d) != 1 {
			t.Fatalf("InTxRetry = %v, %v after %d runs; %d hooks ran, %d organizations; want the second run's alone", id, err, runs, hooks, countOrgs(t, d))
		}
		if n := db.Retried() - before; n != 1 {
			t.Fatalf("Retried counted %d, want 1", n)
		}

		// A second collision is the answer: one more run, not a loop.
		runs = 0
		err = d.TxRetry(ctx, func(tx *db.Tx) error {
			runs++
			if err := insertOrg(ctx, tx, uuid.New(), "active"); err != nil {
				return err
			}
			tx.AfterCommit(func() { hooks++ })
			return collided("40001")
		})
		if !db.Retryable(err) || runs != 2 || hooks != 1 || countOrgs(t, d) != 1 {
			t.Fatalf("TxRetry = %v after %d runs, %d hooks, %d organizations; want the serialization failure after two runs, nothing kept", err, runs, hooks, countOrgs(t, d))
		}

		// Any other failure is answered at once.
		for _, failure := range []error{errors.New("refused"), collided("23505")} {
			runs = 0
			err = d.TxRetry(ctx, func(tx *db.Tx) error {
				runs++
				return failure
			})
			if !errors.Is(err, failure) || runs != 1 {
				t.Fatalf("TxRetry = %v after %d runs; want %v after one", err, runs, failure)
			}
		}

		// A caller that went away is not kept waiting for another run.
		cancelled, cancel := context.WithCancel(ctx)
		runs = 0
		_, err = db.Retry(cancelled, func() (int, error) {
			runs++
			cancel()
			return 0, collided("40P01")
		})
		if !db.Retryable(err) || runs != 1 {
			t.Fatalf("Retry after the caller's cancel = %v after %d runs, want no second run", err, runs)
		}
	})
}

// Two transactions that lock two rows in opposite orders deadlock on
// PostgreSQL: one of them is aborted (40P01) and, run again, commits.
func TestStoreTxRetryCommitsBothSidesOfARealDeadlock(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedPostgresDSN(t))
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()
	for _, id := range []uuid.UUID{a, b} {
		if err := insertOrg(ctx, ownTx{d.Reader(), d}, id, "active"); err != nil {
			t.Fatal(err)
		}
	}
	// Each side takes its first row, waits until the other holds its own,
	// then asks for the other's: a deadlock on the first runs. A run again
	// does not wait, so it queues behind the surviving side and commits.
	var held sync.WaitGroup
	held.Add(2)
	var runs atomic.Int32
	side := func(first, second uuid.UUID, name string) error {
		run := 0
		return d.TxRetry(ctx, func(tx *db.Tx) error {
			run++
			runs.Add(1)
			lock := `UPDATE organizations SET name = $2 WHERE id = $1`
			if _, err := tx.ExecContext(ctx, lock, first, name); err != nil {
				return err
			}
			if run == 1 {
				held.Done()
				held.Wait()
			}
			_, err := tx.ExecContext(ctx, lock, second, name)
			return err
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- side(a, b, "one") }()
	go func() { errs <- side(b, a, "two") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a side failed: %v", err)
		}
	}
	if n := runs.Load(); n != 3 {
		t.Fatalf("%d runs, want 3: one side deadlocked once and ran again", n)
	}
}
