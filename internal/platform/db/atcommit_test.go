package db_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

const queueOrg = `INSERT INTO organizations (id, name, status, inserted_at, updated_at)`

func orgNames(t *testing.T, d *db.DB) []string {
	t.Helper()
	names, err := db.QueryAll(context.Background(), d.Reader(), func(r db.Scanner) (string, error) {
		var s string
		return s, r.Scan(&s)
	}, `SELECT name FROM organizations ORDER BY inserted_at, name`)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestInsertAtCommitWritesQueuedRowsWithTheCommit: rows queued for commit
// are written when the transaction commits, in the order queued, and not
// before (the transaction does not see them); rows queued inside a
// savepoint that rolls back are dropped with it; a transaction that rolls
// back writes none; a queued row the database refuses fails the commit and
// the transaction's other work with it.
func TestInsertAtCommitWritesQueuedRowsWithTheCommit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
		queue := func(tx *db.Tx, name string, minute int) {
			tx.InsertAtCommit(queueOrg, uuid.New(), name, "active", at.Add(time.Duration(minute)*time.Minute), at)
		}
		err := d.Tx(ctx, func(tx *db.Tx) error {
			queue(tx, "a", 1)
			queue(tx, "b", 2)
			var seen int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM organizations`).Scan(&seen); err != nil || seen != 0 {
				return fmt.Errorf("before commit the transaction sees %d organizations (%v), want 0", seen, err)
			}
			_ = tx.Savepoint(ctx, func() error {
				queue(tx, "dropped with its savepoint", 3)
				return errors.New("refused")
			})
			return tx.Savepoint(ctx, func() error {
				queue(tx, "c", 4)
				return nil
			})
		})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(orgNames(t, d)); got != "[a b c]" {
			t.Fatalf("after commit: %s, want [a b c]", got)
		}

		_ = d.Tx(ctx, func(tx *db.Tx) error {
			queue(tx, "rolled back", 5)
			return errors.New("refused")
		})
		taken := uuid.New()
		err = d.Tx(ctx, func(tx *db.Tx) error {
			if err := insertOrg(ctx, tx, uuid.New(), "active"); err != nil {
				return err
			}
			tx.InsertAtCommit(queueOrg, taken, "d", "active", at, at)
			tx.InsertAtCommit(queueOrg, taken, "d again", "active", at, at) // the same key: refused
			return nil
		})
		if err == nil {
			t.Fatal("a refused queued row committed")
		}
		if got := fmt.Sprint(orgNames(t, d)); got != "[a b c]" {
			t.Fatalf("after a rollback and a refused commit: %s, want [a b c]", got)
		}
	})
}

// TestInsertAtCommitSendsNotifications: a transaction that queued rows and
// notified wakes its subscribers once it commits, in this process and, on
// PostgreSQL, in another instance (there the notification travels in the
// queued insert's statement).
func TestInsertAtCommitSendsNotifications(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			dsn := e.Migrated(t)
			d := dbtest.Open(t, dsn)
			var other *db.DB
			if d.Dialect() == db.Postgres {
				other = dbtest.Open(t, dsn)
			}
			at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
			woken, stop := d.Subscribe("queued")
			defer stop()
			wokenThere := make(<-chan struct{})
			if other != nil {
				var stopThere func()
				wokenThere, stopThere = other.Subscribe("queued")
				defer stopThere()
				dbtest.WaitLive(t, other)
			}
			err := d.Tx(ctx, func(tx *db.Tx) error {
				tx.InsertAtCommit(queueOrg, uuid.New(), "e", "active", at, at)
				tx.Notify("queued")
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for name, ch := range map[string]<-chan struct{}{"this instance": woken, "the other instance": wokenThere} {
				if name == "the other instance" && other == nil {
					continue
				}
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatalf("no notification in %s after the commit", name)
				}
			}
		})
	}
}

// TestInsertsAtCommitShareOneStatementOnPostgres: rows queued for several
// tables are written at commit, a row referring to one queued before it
// included; on PostgreSQL all of them and the notification are one
// statement (one round trip), on SQLite one statement a table.
func TestInsertsAtCommitShareOneStatementOnPostgres(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
		org := uuid.New()
		inserts := dbtest.CountQueries(t, "INSERT INTO")
		err := d.Tx(ctx, func(tx *db.Tx) error {
			tx.InsertAtCommit(queueOrg, org, "parent", "active", at, at)
			for _, kind := range []string{"available", "pending"} {
				tx.InsertAtCommit(`INSERT INTO ledger_accounts (id, organization_id, currency, kind, balance, inserted_at)`,
					uuid.New(), org, "EUR", kind, 0, at)
			}
			tx.Notify("queued")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(2)
		if d.Dialect() == db.Postgres {
			want = 1
		}
		if n := inserts.Load(); n != want {
			t.Errorf("%d statements for the queued rows of two tables; want %d", n, want)
		}
		var accounts int
		if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM ledger_accounts WHERE organization_id = $1`, org).Scan(&accounts); err != nil || accounts != 2 {
			t.Fatalf("%d accounts of the queued organization (%v); want 2", accounts, err)
		}
	})
}
