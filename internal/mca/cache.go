package mca

import (
	"time"

	"github.com/strongroom/strongroom/internal/platform/watched"
)

// Topic is notified by every transaction that changes an organization's
// currency rows (a request, a submission, a partner webhook), so every
// instance's cache of those rows empties as it commits.
const Topic = "currency-accounts"

// The cache of listed rows keeps the currency rows of recently listed
// organizations, so a program polling its list does not read them on every
// request (the read was a third of the CPU of a key-authenticated list). It
// holds rows only: who may list, and the organization's status the entries
// show, are decided on every request as before. A change is seen by the
// very next list, on every instance: every write of a currency row
// notifies Topic (move), which empties it as the write commits.
const (
	// rowsLifetime bounds how long rows are kept at all. Freshness comes
	// from the notifications; this only caps the cost of a bug there.
	rowsLifetime = time.Minute
	// rowsCapacity bounds the memory: past it the cache starts again empty.
	rowsCapacity = 10_000
)

// rowsCache returns the service's cache of listed rows by organization id,
// made on first use. The rows it holds are shared by the requests that read
// them, so nothing may change them once kept.
func (s *Service) rowsCache() *watched.Cache[map[string]row] {
	s.cacheOnce.Do(func() { s.cache = watched.New[map[string]row](s.DB, rowsLifetime, rowsCapacity, Topic) })
	return s.cache
}
