package apikey

import (
	"sync"
	"time"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Topic is notified by every transaction that changes what authenticating
// a key reads (its secrets, role, scopes or revocation), so every
// instance's cache of credentials empties as it commits.
const Topic = "api-keys"

const (
	// cacheLifetime bounds how long credentials are kept at all. Freshness
	// comes from the notifications; this only caps the cost of a bug there.
	cacheLifetime = time.Minute
	// cacheCapacity bounds the memory: past it the cache starts again empty.
	cacheCapacity = 10_000
)

// credentialCache keeps the credentials of recently authenticated keys, so
// a program's requests do not each read its key and organization (the read
// was a quarter of the CPU of a key-authenticated list). It never decides
// anything itself: the secret, revocation, rotation overlap and
// organization status are checked on every request against what it holds.
//
// Staleness is what must not happen (revocation stops a key at once, on
// every instance): every change to a key notifies Topic, every change of an
// organization's status organization.StatusTopic, and either empties the
// cache of every instance as it commits (db.DB.Watch). A read that began
// before an emptying is not kept (epoch), and nothing is kept while
// notifications may be missed (db.DB.NotificationsLive).
type credentialCache struct {
	db      *db.DB
	mu      sync.RWMutex
	epoch   uint64
	entries map[string]cachedCredentials
}

type cachedCredentials struct {
	credentials
	readAt time.Time
}

func newCredentialCache(d *db.DB) *credentialCache {
	c := &credentialCache{db: d, entries: map[string]cachedCredentials{}}
	d.Watch(Topic, c.empty)
	d.Watch(organization.StatusTopic, c.empty)
	return c
}

// get returns the credentials of the key with lookup if they were read
// less than cacheLifetime before now.
func (c *credentialCache) get(lookup string, now time.Time) (credentials, bool) {
	c.mu.RLock()
	e, ok := c.entries[lookup]
	c.mu.RUnlock()
	if !ok || now.Before(e.readAt) || now.Sub(e.readAt) >= cacheLifetime {
		return credentials{}, false
	}
	return e.credentials, true
}

// begin is called before reading credentials from the database: the epoch
// it returns lets put refuse what an emptying made stale meanwhile.
func (c *credentialCache) begin() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.epoch
}

// put keeps credentials read since begin returned epoch, unless the cache
// was emptied since or notifications may be missed now.
func (c *credentialCache) put(epoch uint64, lookup string, cr credentials, now time.Time) {
	if !c.db.NotificationsLive() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.epoch != epoch {
		return
	}
	if len(c.entries) >= cacheCapacity {
		clear(c.entries)
	}
	c.entries[lookup] = cachedCredentials{credentials: cr, readAt: now}
}

// touched records a write of the key's last use, so the next requests of
// the minute do not write it again.
func (c *credentialCache) touched(lookup string, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[lookup]; ok {
		e.lastUsedAt = &at
		c.entries[lookup] = e
	}
}

// empty forgets everything and makes reads in flight unkeepable.
func (c *credentialCache) empty() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.epoch++
	clear(c.entries)
}
