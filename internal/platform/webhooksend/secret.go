// Package webhooksend sends webhooks the Standard Webhooks 1.0 way: the
// signing secret and its text form, the signature headers, the checks on an
// endpoint's URL, and the outbound HTTP client that makes one delivery
// attempt (docs/api.md, Receiving webhooks).
//
// It knows no business: which events go where, retries and the deliveries
// log belong to the webhook feature, which calls Sender.Send for each attempt.
package webhooksend

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// SecretPrefix starts the text form of a signing secret.
const SecretPrefix = "whsec_"

// SecretSize is the number of random bytes in a secret NewSecret makes.
const SecretSize = 32

// The key lengths ParseSecret accepts: the Standard Webhooks range.
const (
	minSecretSize = 24
	maxSecretSize = 64
)

// Secret is an endpoint's signing key. Its text form ("whsec_" and the
// standard base64 of the key) is what the endpoint's owner is shown once and
// what a receiver gives the Standard Webhooks library. String and LogValue
// never print the key; Reveal does.
type Secret struct {
	key []byte
}

// NewSecret makes a secret of SecretSize random bytes.
func NewSecret() (Secret, error) {
	key := make([]byte, SecretSize)
	if _, err := rand.Read(key); err != nil {
		return Secret{}, fmt.Errorf("webhooksend: reading random bytes: %w", err)
	}
	return Secret{key: key}, nil
}

// ParseSecret reads the text form of a secret: "whsec_" and the standard
// base64 (padded) of a key of 24 to 64 bytes. The message of its error never
// repeats the input.
func ParseSecret(s string) (Secret, error) {
	rest, ok := strings.CutPrefix(s, SecretPrefix)
	if !ok {
		return Secret{}, errors.New("a webhook secret starts with " + SecretPrefix)
	}
	if len(rest) > base64.StdEncoding.EncodedLen(maxSecretSize) {
		return Secret{}, errors.New("the webhook secret is too long")
	}
	key, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil {
		return Secret{}, errors.New("a webhook secret is " + SecretPrefix + " followed by standard base64")
	}
	if len(key) < minSecretSize || len(key) > maxSecretSize {
		return Secret{}, fmt.Errorf("a webhook secret's key is %d to %d bytes, not %d", minSecretSize, maxSecretSize, len(key))
	}
	return Secret{key: key}, nil
}

// IsZero reports whether s holds no key (the zero Secret, which cannot sign).
func (s Secret) IsZero() bool { return len(s.key) == 0 }

// Reveal returns the text form: "whsec_" and the standard base64 of the key.
func (s Secret) Reveal() string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// Equal reports whether s and o hold the same key.
func (s Secret) Equal(o Secret) bool { return string(s.key) == string(o.key) }

// String hides the key, so a secret printed by mistake does not leak.
func (s Secret) String() string { return SecretPrefix + "[redacted]" }

// LogValue hides the key from slog.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }
