package db_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

func countOrgs(t *testing.T, d *db.DB) int {
	t.Helper()
	var n int
	if err := d.Reader().QueryRowContext(context.Background(), `SELECT count(*) FROM organizations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestStoreTxCarriesTheClockReadAtBegin(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
			clk := clock.NewManual(start)
			d := dbtest.Open(t, e.Migrated(t), db.WithClock(clk))
			got, err := db.InTx(context.Background(), d, func(tx *db.Tx) (time.Time, error) {
				clk.Advance(time.Hour) // time moving on mid-transaction does not reach it
				return tx.Now(), nil
			})
			if err != nil || !got.Equal(start) {
				t.Fatalf("Now = %v, %v; want %v", got, err, start)
			}
		})
	}
}

func TestStoreInTxCommitsOrRollsBackAndRunsAfterCommit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		var ran []string
		id, err := db.InTx(ctx, d, func(tx *db.Tx) (uuid.UUID, error) {
			id := uuid.New()
			tx.AfterCommit(func() { ran = append(ran, "first") })
			tx.AfterCommit(func() { ran = append(ran, "second") })
			return id, insertOrg(ctx, tx, id, "active")
		})
		if err != nil || id == uuid.Nil || countOrgs(t, d) != 1 {
			t.Fatalf("InTx = %v, %v; %d organizations", id, err, countOrgs(t, d))
		}
		if len(ran) != 2 || ran[0] != "first" || ran[1] != "second" {
			t.Fatalf("after-commit hooks ran %v", ran)
		}

		refused := errors.New("refused")
		id, err = db.InTx(ctx, d, func(tx *db.Tx) (uuid.UUID, error) {
			tx.AfterCommit(func() { ran = append(ran, "rolled back") })
			id := uuid.New()
			if err := insertOrg(ctx, tx, id, "active"); err != nil {
				return id, err
			}
			return id, refused
		})
		if !errors.Is(err, refused) || id != uuid.Nil {
			t.Fatalf("InTx = %v, %v; want the zero value and the error", id, err)
		}
		if countOrgs(t, d) != 1 || len(ran) != 2 {
			t.Fatalf("a rolled-back transaction left %d organizations and hooks %v", countOrgs(t, d), ran)
		}
	})
}

func TestStoreSavepointUndoesOnlyItsOwnWork(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		refused := errors.New("refused")
		err := d.Tx(ctx, func(tx *db.Tx) error {
			if err := insertOrg(ctx, tx, uuid.New(), "active"); err != nil {
				return err
			}
			err := tx.Savepoint(ctx, func() error {
				if err := insertOrg(ctx, tx, uuid.New(), "active"); err != nil {
					return err
				}
				return refused
			})
			if !errors.Is(err, refused) {
				t.Errorf("Savepoint = %v, want fn's error", err)
			}
			// A second savepoint in the same transaction keeps its work.
			return tx.Savepoint(ctx, func() error { return insertOrg(ctx, tx, uuid.New(), "active") })
		})
		if err != nil {
			t.Fatal(err)
		}
		if n := countOrgs(t, d); n != 2 {
			t.Fatalf("%d organizations; want 2 (the savepoint's refused insert undone)", n)
		}
	})
}

func TestStoreNotifyWakesSubscribersOnlyAfterCommit(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.Migrated(t)
			d := dbtest.Open(t, dsn)
			ctx := context.Background()
			wake, cancel := d.Subscribe("jobs")
			defer cancel()
			others, cancelOthers := d.Subscribe("events")
			defer cancelOthers()

			_ = d.Tx(ctx, func(tx *db.Tx) error {
				tx.Notify("jobs")
				return errors.New("roll back")
			})
			select {
			case <-wake:
				t.Fatal("woken by a transaction that rolled back")
			case <-time.After(200 * time.Millisecond):
			}

			if err := d.Tx(ctx, func(tx *db.Tx) error { tx.Notify("jobs"); return nil }); err != nil {
				t.Fatal(err)
			}
			select {
			case <-wake:
			case <-time.After(5 * time.Second):
				t.Fatal("not woken after commit")
			}
			select {
			case <-others:
				t.Fatal("a subscriber of another topic was woken")
			default:
			}

			if e.Name != "postgres" {
				return
			}
			// Another instance on the same database hears it through LISTEN.
			other := dbtest.Open(t, dsn)
			remote, cancelRemote := other.Subscribe("jobs")
			defer cancelRemote()
			deadline := time.After(10 * time.Second)
			for {
				// The listener connects in the background: notify until it hears.
				if err := d.Tx(ctx, func(tx *db.Tx) error { tx.Notify("jobs"); return nil }); err != nil {
					t.Fatal(err)
				}
				select {
				case <-remote:
					return
				case <-deadline:
					t.Fatal("the other instance was not woken")
				case <-time.After(100 * time.Millisecond):
				}
			}
		})
	}
}

// SQLite transactions reuse statements prepared on the single write
// connection; what runs through them is still part of the transaction.
func TestStoreCachedStatementsRunInsideTheTransaction(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedSQLiteDSN(t))
	ctx := context.Background()
	const count = `SELECT count(*) FROM organizations`
	inTx := func(fn func(tx *db.Tx) error) error { return d.Tx(ctx, fn) }

	if err := inTx(func(tx *db.Tx) error { return insertOrg(ctx, tx, uuid.New(), "active") }); err != nil {
		t.Fatal(err)
	}
	if !d.HoldsWriteStatement(insertStatement) {
		t.Fatal("the insert was not prepared for the next transaction")
	}
	refused := errors.New("refused")
	err := inTx(func(tx *db.Tx) error {
		if err := insertOrg(ctx, tx, uuid.New(), "active"); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRowContext(ctx, count).Scan(&n); err != nil || n != 2 {
			t.Errorf("inside the transaction: %d organizations, %v; want 2", n, err)
		}
		return refused
	})
	if !errors.Is(err, refused) || countOrgs(t, d) != 1 {
		t.Fatalf("rolled back = %v; %d organizations, want 1", err, countOrgs(t, d))
	}
	// A failing statement leaves the cached one usable.
	id := uuid.New()
	for range 2 {
		_ = inTx(func(tx *db.Tx) error { return insertOrg(ctx, tx, id, "active") })
	}
	if err := inTx(func(tx *db.Tx) error { return insertOrg(ctx, tx, id, "active") }); !db.IsConstraint(err, "organizations_pkey") {
		t.Fatalf("duplicate insert = %v, want the primary key's violation", err)
	}
	if countOrgs(t, d) != 2 {
		t.Fatalf("%d organizations, want 2", countOrgs(t, d))
	}
}
