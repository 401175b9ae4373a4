package dbtest

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// WaitLive waits, 10 s at most, until every committed notification reaches
// this process through d: on PostgreSQL the listening connection opens on
// the first Subscribe or Watch, so a test of a cache waits for it before
// counting on an emptying.
func WaitLive(t testing.TB, d *db.DB) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !d.NotificationsLive(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("notifications never became live")
		}
	}
}

// CountQueries counts, until t ends, the statements run whose text
// contains part.
func CountQueries(t testing.TB, part string) *atomic.Int64 {
	t.Helper()
	n := &atomic.Int64{}
	t.Cleanup(db.ObserveQueries(func(query string, _ []any) {
		if strings.Contains(query, part) {
			n.Add(1)
		}
	}))
	return n
}
