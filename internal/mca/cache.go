package mca

import (
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Topic is notified by every transaction that changes an organization's
// currency rows (a request, a submission, a partner webhook), so every
// instance's cache of those rows empties as it commits.
const Topic = "currency-accounts"

const (
	// rowsLifetime bounds how long rows are kept at all. Freshness comes
	// from the notifications; this only caps the cost of a bug there.
	rowsLifetime = time.Minute
	// rowsCapacity bounds the memory: past it the cache starts again empty.
	rowsCapacity = 10_000
)

// rowsCache keeps the currency rows of recently listed organizations, so a
// program polling its list does not read them on every request (the read
// was a third of the CPU of a key-authenticated list). It holds rows only:
// who may list, and the organization's status the entries show, are
// decided on every request as before.
//
// Staleness is what must not happen (a change is seen by the very next
// list, on every instance): every write of a currency row notifies Topic,
// which empties the cache of every instance as it commits (db.DB.Watch). A
// read that began before an emptying is not kept (epoch), and nothing is
// kept while notifications may be missed (db.DB.NotificationsLive).
type rowsCache struct {
	db      *db.DB
	mu      sync.RWMutex
	epoch   uint64
	entries map[uuid.UUID]cachedRows
}

// cachedRows are an organization's rows by currency; they are shared by the
// requests that read them, so nothing may change them once kept.
type cachedRows struct {
	rows   map[string]row
	readAt time.Time
}

func newRowsCache(d *db.DB) *rowsCache {
	c := &rowsCache{db: d, entries: map[uuid.UUID]cachedRows{}}
	d.Watch(Topic, c.empty)
	return c
}

// get returns the organization's rows if they were read less than
// rowsLifetime before now.
func (c *rowsCache) get(orgID uuid.UUID, now time.Time) (map[string]row, bool) {
	c.mu.RLock()
	e, ok := c.entries[orgID]
	c.mu.RUnlock()
	if !ok || now.Before(e.readAt) || now.Sub(e.readAt) >= rowsLifetime {
		return nil, false
	}
	return e.rows, true
}

// begin is called before reading rows from the database: the epoch it
// returns lets put refuse what an emptying made stale meanwhile.
func (c *rowsCache) begin() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// put keeps rows read since begin returned epoch, unless the cache was
// emptied since or notifications may be missed now.
func (c *rowsCache) put(epoch uint64, orgID uuid.UUID, rs map[string]row, now time.Time) {
	if !c.db.NotificationsLive() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if len(c.entries) >= rowsCapacity {
		clear(c.entries)
	}
	c.entries[orgID] = cachedRows{rows: rs, readAt: now}
}

// empty forgets everything and makes reads in flight unkeepable.
func (c *rowsCache) empty() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.entries)
}
