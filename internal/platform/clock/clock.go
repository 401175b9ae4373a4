// Package clock supplies the time to domain code. Every time rule reads an
// injected Clock, so the sandbox's manual clock drives sessions, tokens,
// quotes and expiries alike.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current time, always in UTC.
type Clock interface {
	Now() time.Time
}

// System is the real clock.
type System struct{}

// Now returns the current UTC time at microsecond precision, the precision both databases keep.
func (System) Now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

// Manual is a clock that stands still except when advanced.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual returns a manual clock reading start (in UTC).
func NewManual(start time.Time) *Manual { return &Manual{now: start.UTC()} }

// Now returns the clock's current reading.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d (d must not be negative) and returns the new time.
func (m *Manual) Advance(d time.Duration) time.Time {
	if d < 0 {
		panic("clock: negative advance")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
	return m.now
}
