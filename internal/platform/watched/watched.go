// Package watched is a small in-process cache kept fresh by the database's
// notifications: every transaction that changes what an entry was read from
// notifies one of the cache's topics, and that empties the cache of every
// instance as it commits (db.DB.Watch). A read that began before an
// emptying is not kept, and nothing is kept while notifications may be
// missed (db.DB.NotificationsLive), so an entry is never staler than a
// notification in flight.
package watched

import (
	"sync"
	"time"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// Cache keeps values of type V by string key for at most a lifetime, and
// at most capacity of them (past it, it starts again empty).
type Cache[V any] struct {
	db       *db.DB
	lifetime time.Duration
	capacity int

	mu      sync.RWMutex
	epoch   uint64
	entries map[string]entry[V]
}

type entry[V any] struct {
	value  V
	readAt time.Time
}

// New returns a cache over d emptied by every commit that notifies one of
// topics. lifetime bounds how long a value is kept at all: freshness comes
// from the notifications, the lifetime only caps the cost of a missing one.
func New[V any](d *db.DB, lifetime time.Duration, capacity int, topics ...string) *Cache[V] {
	c := &Cache[V]{db: d, lifetime: lifetime, capacity: capacity, entries: map[string]entry[V]{}}
	for _, t := range topics {
		d.Watch(t, c.Empty)
	}
	return c
}

// Get returns the value kept for key if it was read less than the
// lifetime before now.
func (c *Cache[V]) Get(key string, now time.Time) (V, bool) {
	c.mu.RLock()
	e, ok := c.entries[key]
	c.mu.RUnlock()
	if !ok || now.Before(e.readAt) || now.Sub(e.readAt) >= c.lifetime {
		var zero V
		return zero, false
	}
	return e.value, true
}

// Begin is called before reading a value from the database: the epoch it
// returns lets Put refuse what an emptying made stale meanwhile.
func (c *Cache[V]) Begin() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// Put keeps value, read at now since Begin returned epoch, unless the
// cache was emptied since or notifications may be missed now.
func (c *Cache[V]) Put(epoch uint64, key string, value V, now time.Time) {
	if !c.db.NotificationsLive() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if len(c.entries) >= c.capacity {
		clear(c.entries)
	}
	c.entries[key] = entry[V]{value: value, readAt: now}
}

// Update changes the value kept for key, if one is, keeping when it was
// read: for what this instance itself wrote since (a last-use time).
func (c *Cache[V]) Update(key string, change func(V) V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[key]; ok {
		e.value = change(e.value)
		c.entries[key] = e
	}
}

// Forget drops the value kept for key.
func (c *Cache[V]) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, key)
}

// Empty forgets everything and makes reads in flight unkeepable.
func (c *Cache[V]) Empty() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.entries)
}
