package identity

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/argon2"
)

// Thirty-two sign-ins at once hash one per core at a time, so argon2id's
// 19 MiB per hash stays bounded by the cores, not by the callers.
func TestPasswordHashesRunOnePerCoreAtATime(t *testing.T) {
	hash := HashPassword("correct horse battery")
	var active, peak atomic.Int32
	idKey = func(password, salt []byte, passes, memoryKiB uint32, threads uint8, keyLen uint32) []byte {
		n := active.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(2 * time.Millisecond) // long enough for the others to pile up
		active.Add(-1)
		return argon2.IDKey(password, salt, 1, 8, 1, keyLen)
	}
	// Two slots, as on the two-core server, whatever this machine has: with
	// as many cores as callers the bound could not show.
	cores := hashing
	hashing = make(chan struct{}, 2)
	t.Cleanup(func() { idKey, hashing = argon2.IDKey, cores })

	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() { _, _ = CheckPassword(hash, "wrong horse battery") })
	}
	wg.Wait()
	if got, limit := peak.Load(), int32(cap(hashing)); got > limit {
		t.Fatalf("%d hashes ran at once, want at most %d (one per core)", got, limit)
	}
}

func TestPasswordHashWithOutsizedMemoryIsRefused(t *testing.T) {
	if _, err := CheckPassword("$argon2id$v=19$m=4194304,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2V5a2U", "x"); err == nil {
		t.Fatal("a hash asking for 4 GiB was computed")
	}
}
