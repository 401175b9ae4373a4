package apikey

import (
	"time"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/watched"
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

// newCredentialCache returns the cache of the credentials of recently
// authenticated keys, so a program's requests do not each read its key and
// organization (the read was a quarter of the CPU of a key-authenticated
// list). It never decides anything itself: the secret, revocation, rotation
// overlap and organization status are checked on every request against
// what it holds.
//
// Staleness is what must not happen (revocation stops a key at once, on
// every instance): every change to a key notifies Topic, every change of an
// organization's status organization.StatusTopic, and either empties the
// cache of every instance as it commits (see package watched).
func newCredentialCache(d *db.DB) *watched.Cache[credentials] {
	return watched.New[credentials](d, cacheLifetime, cacheCapacity, Topic, organization.StatusTopic)
}
