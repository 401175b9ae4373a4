package watched_test

import (
	"context"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/watched"
)

// TestCacheKeepsWhatNoCommitChanged: a value is kept for its lifetime; a
// commit that notifies one of the cache's topics empties it, and a value
// read before that emptying is not kept; past its capacity it starts again.
func TestCacheKeepsWhatNoCommitChanged(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		c := watched.New[string](d, time.Minute, 2, "things")
		dbtest.WaitLive(t, d)
		now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
		c.Put(c.Begin(), "a", "A", now)
		if v, ok := c.Get("a", now.Add(59*time.Second)); !ok || v != "A" {
			t.Fatalf("Get within the lifetime = %q, %v", v, ok)
		}
		if _, ok := c.Get("a", now.Add(time.Minute)); ok {
			t.Fatal("kept past its lifetime")
		}
		c.Update("a", func(v string) string { return v + "!" })
		if v, _ := c.Get("a", now); v != "A!" {
			t.Fatalf("after Update: %q", v)
		}

		epoch := c.Begin() // a read begins …
		if err := d.Tx(ctx, func(tx *db.Tx) error { tx.Notify("things"); return nil }); err != nil {
			t.Fatal(err)
		}
		if _, ok := c.Get("a", now); ok {
			t.Fatal("kept after a commit notified its topic")
		}
		c.Put(epoch, "b", "stale", now) // … and ends after the emptying
		if _, ok := c.Get("b", now); ok {
			t.Fatal("kept a value read before the emptying")
		}

		c.Put(c.Begin(), "a", "A", now)
		c.Put(c.Begin(), "b", "B", now)
		c.Put(c.Begin(), "c", "C", now) // past the capacity of two: starts again
		if _, ok := c.Get("a", now); ok {
			t.Fatal("kept more than its capacity")
		}
		if v, ok := c.Get("c", now); !ok || v != "C" {
			t.Fatalf("the newest value after starting again = %q, %v", v, ok)
		}
		c.Forget("c")
		if _, ok := c.Get("c", now); ok {
			t.Fatal("kept a forgotten value")
		}
	})
}
