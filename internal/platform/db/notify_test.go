package db_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// TestWatchIsCalledOnCommit: a watcher runs once the notifying transaction
// commits, before its caller goes on, and never for a rollback.
func TestWatchIsCalledOnCommit(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		var calls atomic.Int64
		stop := d.Watch("keys", func() { calls.Add(1) })
		defer stop()
		waitLive(t, d, true)
		before := calls.Load()
		_ = d.Tx(ctx, func(tx *db.Tx) error {
			tx.Notify("keys")
			return errors.New("roll back")
		})
		if err := d.Tx(ctx, func(tx *db.Tx) error { tx.Notify("other"); return nil }); err != nil {
			t.Fatal(err)
		}
		if n := calls.Load(); n != before {
			t.Fatalf("watcher called %d times by a rollback and another topic", n-before)
		}
		if err := d.Tx(ctx, func(tx *db.Tx) error { tx.Notify("keys"); return nil }); err != nil {
			t.Fatal(err)
		}
		if calls.Load() == before {
			t.Fatal("the watcher was not called when the transaction returned")
		}
	})
}

// TestLostListenerCallsWatchers: while PostgreSQL's listening connection is
// down notifications are missed, so the watchers are called (their caches
// empty), NotificationsLive is false, and both again once it is back.
func TestLostListenerCallsWatchers(t *testing.T) {
	dsn := dbtest.MigratedPostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	app := "notify-test-" + hex.EncodeToString(b[:])
	q := u.Query()
	q.Set("application_name", app)
	u.RawQuery = q.Encode()
	d := dbtest.Open(t, u.String())
	var calls atomic.Int64
	defer d.Watch("keys", func() { calls.Add(1) })()
	waitLive(t, d, true)
	before := calls.Load()
	var ended int
	if err := d.Reader().QueryRowContext(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1 AND query LIKE 'LISTEN%'`, app).Scan(&ended); err != nil || ended != 1 {
		t.Fatalf("ended %d listening connections, %v; want 1", ended, err)
	}
	waitLive(t, d, false)
	if calls.Load() == before {
		t.Error("watchers not called when the listening connection was lost")
	}
	lost := calls.Load()
	waitLive(t, d, true)
	if calls.Load() == lost {
		t.Error("watchers not called when the listening connection came back")
	}
}

func waitLive(t *testing.T, d *db.DB, live bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); d.NotificationsLive() != live; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("NotificationsLive stayed %v", !live)
		}
	}
}
