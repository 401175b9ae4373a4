package db_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// orgExists reads through the read pool, as a later request would.
func orgExists(t *testing.T, d *db.DB, id uuid.UUID) bool {
	t.Helper()
	var n int
	if err := d.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM organizations WHERE id = $1`, id).Scan(&n); err != nil {
		t.Error(err)
	}
	return n == 1
}

// SQLite commits the transactions queued for its writer together: each
// still stands or falls alone, and none returns before its work is
// committed.
func TestStoreQueuedTransactionsCommitTogetherAndFailAlone(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedSQLiteDSN(t))
	ctx := context.Background()
	// A read connection is open and the insert prepared before the writer is
	// held, so neither waits for the group below.
	countOrgs(t, d)
	if err := d.Tx(ctx, func(tx *db.Tx) error { return insertOrg(ctx, tx, uuid.New(), "active") }); err != nil {
		t.Fatal(err)
	}

	// Hold the writer until every transaction below is queued behind it, so
	// that they share one group.
	release, holding := make(chan struct{}), make(chan struct{})
	holder := uuid.New()
	var holderErr error
	holderCommitted, holderChecked := make(chan bool, 1), make(chan struct{})
	go func() {
		holderErr = d.Tx(ctx, func(tx *db.Tx) error {
			close(holding)
			<-release
			return insertOrg(ctx, tx, holder, "active")
		})
		holderCommitted <- orgExists(t, d, holder)
		close(holderChecked)
	}()
	<-holding

	const n = 24
	type outcome struct {
		id        uuid.UUID
		err       error
		panicked  any
		committed bool // seen by the read pool as soon as d.Tx returned
	}
	refused := errors.New("refused")
	outcomes := make([]outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			o := &outcomes[i]
			o.id = uuid.New()
			txCtx, cancel := context.WithCancel(ctx)
			defer cancel()
			defer func() {
				o.panicked = recover()
				o.committed = orgExists(t, d, o.id)
			}()
			o.err = d.Tx(txCtx, func(tx *db.Tx) error {
				if i == 0 {
					// Give the first transaction time to return early, as
					// it must not: the group's commit waits for this one.
					select {
					case <-holderChecked:
					case <-time.After(200 * time.Millisecond):
					}
				}
				if err := insertOrg(ctx, tx, o.id, "active"); err != nil {
					return err
				}
				switch i % 4 {
				case 1:
					return refused
				case 2:
					panic("boom")
				case 3:
					// The caller gives up mid-transaction: its statements
					// still run, and nobody else's work is interrupted.
					cancel()
					return insertOrg(txCtx, tx, uuid.New(), "active")
				}
				return nil
			})
		})
	}
	for deadline := time.Now().Add(10 * time.Second); d.QueuedWriters() < n; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions queued, want %d", d.QueuedWriters(), n)
		}
	}
	close(release)
	wg.Wait()
	// The first of the group waited for the others to run and commit.
	if !<-holderCommitted || holderErr != nil {
		t.Errorf("the first transaction returned %v before its work was committed", holderErr)
	}

	for i, o := range outcomes {
		switch i % 4 {
		case 0, 3:
			if o.err != nil || o.panicked != nil || !o.committed {
				t.Errorf("transaction %d: err %v, panic %v, committed %v; want committed", i, o.err, o.panicked, o.committed)
			}
		case 1:
			if !errors.Is(o.err, refused) || o.committed {
				t.Errorf("refused transaction %d: err %v, committed %v", i, o.err, o.committed)
			}
		case 2:
			if o.panicked != "boom" || o.committed {
				t.Errorf("panicking transaction %d: panic %v, committed %v", i, o.panicked, o.committed)
			}
		}
	}
	// The first two, the twelve that succeeded and the six extra rows of the
	// cancelled ones.
	if got, want := countOrgs(t, d), 2+n/2+n/4; got != want {
		t.Fatalf("%d organizations, want %d", got, want)
	}
}

// A transaction whose caller has already gone does nothing.
func TestStoreTxOfACancelledCallerDoesNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		err := d.Tx(ctx, func(tx *db.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) || ran {
			t.Fatalf("Tx = %v, ran %v; want context.Canceled without running", err, ran)
		}
	})
}
