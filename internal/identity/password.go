package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters for a 2-core server: 19 MiB and two passes (OWASP's
// baseline). Each hash runs on one core, and hashing admits one per core at
// a time, so a burst of sign-ins queues instead of holding 19 MiB each.
// Measured cost: bench/RESULTS.md.
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
	// maxArgonMemoryKiB refuses a stored hash that would make one check
	// take more than 256 MiB.
	maxArgonMemoryKiB = 256 * 1024
)

// hashing holds a slot per argon2id computation under way: one per core,
// since more would only share the cores while each holds its memory.
var hashing = make(chan struct{}, runtime.GOMAXPROCS(0))

// idKey is argon2.IDKey; tests replace it to count concurrent hashes.
var idKey = argon2.IDKey

// deriveKey runs argon2id once a slot is free.
func deriveKey(password string, salt []byte, time, memoryKiB uint32, threads uint8, keyLen uint32) []byte {
	hashing <- struct{}{}
	defer func() { <-hashing }()
	return idKey([]byte(password), salt, time, memoryKiB, threads, keyLen)
}

// HashPassword returns a PHC-format argon2id hash of password with a fresh salt.
func HashPassword(password string) string {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		panic(err)
	}
	key := deriveKey(password, salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key))
}

var errBadHash = errors.New("identity: malformed password hash")

// CheckPassword reports whether password matches the PHC hash, using the
// parameters recorded in the hash so old hashes keep working after a change.
func CheckPassword(hash, password string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var version int
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false, errBadHash
	}
	var memory, time uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &memory, &time, &threads); err != nil || memory > maxArgonMemoryKiB {
		return false, errBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got := deriveKey(password, salt, time, memory, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
