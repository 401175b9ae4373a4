// Package keyring derives every key Strongroom uses from the one root secret:
// keyed hashes of tokens, cursor signatures and sealed (encrypted) fields.
// Each use names its purpose, so a key for one purpose is useless for another.
package keyring

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// MinRootSecret is the shortest root secret accepted, in bytes.
const MinRootSecret = 32

// Keyring holds the root secret.
type Keyring struct {
	root    []byte
	derived sync.Map // purpose → []byte, so hot paths (every API-key request) skip HKDF
}

// New returns a keyring over root, which must hold at least MinRootSecret bytes.
func New(root []byte) (*Keyring, error) {
	if len(root) < MinRootSecret {
		return nil, fmt.Errorf("the root secret must be at least %d bytes", MinRootSecret)
	}
	return &Keyring{root: append([]byte(nil), root...)}, nil
}

// Key derives a 32-byte key for purpose (HKDF-SHA-256).
func (k *Keyring) Key(purpose string) []byte {
	if key, ok := k.derived.Load(purpose); ok {
		return key.([]byte)
	}
	key, err := hkdf.Key(sha256.New, k.root, nil, "strongroom/"+purpose, 32)
	if err != nil {
		panic(err) // only for lengths hkdf cannot produce; 32 always works
	}
	k.derived.Store(purpose, key)
	return key
}

// Hash returns the hex HMAC-SHA-256 of value under purpose's key: how tokens
// and secrets are stored, so a database leak does not reveal them.
func (k *Keyring) Hash(purpose, value string) string {
	m := hmac.New(sha256.New, k.Key(purpose))
	m.Write([]byte(value))
	return hex.EncodeToString(m.Sum(nil))
}

// Equal compares two hashes in constant time.
func Equal(a, b string) bool { return hmac.Equal([]byte(a), []byte(b)) }

// Seal encrypts plaintext under purpose's key (AES-256-GCM) and returns base64url text.
func (k *Keyring) Seal(purpose string, plaintext []byte) (string, error) {
	aead, err := k.aead(purpose)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return sealedText.EncodeToString(aead.Seal(nonce, nonce, plaintext, []byte(purpose))), nil
}

// sealedText decodes strictly: the last character of unpadded base64 carries
// spare bits, and a lenient decoder would open a text altered there.
var sealedText = base64.RawURLEncoding.Strict()

// ErrUnsealable means sealed text was altered or sealed under another key or purpose.
var ErrUnsealable = errors.New("keyring: sealed value cannot be opened")

// Open decrypts what Seal produced for the same purpose.
func (k *Keyring) Open(purpose, sealed string) ([]byte, error) {
	aead, err := k.aead(purpose)
	if err != nil {
		return nil, err
	}
	raw, err := sealedText.DecodeString(sealed)
	if err != nil || len(raw) < aead.NonceSize() {
		return nil, ErrUnsealable
	}
	plain, err := aead.Open(nil, raw[:aead.NonceSize()], raw[aead.NonceSize():], []byte(purpose))
	if err != nil {
		return nil, ErrUnsealable
	}
	return plain, nil
}

func (k *Keyring) aead(purpose string) (cipher.AEAD, error) {
	block, err := aes.NewCipher(k.Key("seal/" + purpose))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// RandomToken returns n random bytes as base64url text (n = 32 gives 256 bits).
func RandomToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
