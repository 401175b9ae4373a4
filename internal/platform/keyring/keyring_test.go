package keyring_test

import (
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/keyring"
)

func mustKeyring(t *testing.T, root string) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New([]byte(root))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestNewRefusesShortSecrets(t *testing.T) {
	if _, err := keyring.New([]byte("too short")); err == nil {
		t.Fatal("want an error for a 9-byte root secret")
	}
}

func TestHashIsKeyedAndPurposeBound(t *testing.T) {
	a := mustKeyring(t, strings.Repeat("a", 32))
	b := mustKeyring(t, strings.Repeat("b", 32))
	h := a.Hash("session", "token")
	if h != a.Hash("session", "token") {
		t.Fatal("hash is not deterministic")
	}
	if h == b.Hash("session", "token") || h == a.Hash("api_key", "token") || h == a.Hash("session", "token2") {
		t.Fatal("hash must change with the root secret, the purpose and the value")
	}
	if !keyring.Equal(h, a.Hash("session", "token")) || keyring.Equal(h, b.Hash("session", "token")) {
		t.Fatal("Equal disagrees with string equality")
	}
}

func TestSealRoundTripsAndDetectsTampering(t *testing.T) {
	k := mustKeyring(t, strings.Repeat("k", 40))
	sealed, err := k.Seal("totp", []byte("JBSWY3DPEHPK3PXP"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(sealed, "JBSWY3DPEHPK3PXP") {
		t.Fatal("sealed text contains the plaintext")
	}
	plain, err := k.Open("totp", sealed)
	if err != nil || string(plain) != "JBSWY3DPEHPK3PXP" {
		t.Fatalf("Open = %q, %v", plain, err)
	}
	if _, err := k.Open("other", sealed); err == nil {
		t.Fatal("opened under another purpose")
	}
	other := mustKeyring(t, strings.Repeat("o", 40))
	if _, err := other.Open("totp", sealed); err == nil {
		t.Fatal("opened under another root secret")
	}
	// Every character altered to every other, the last one included: its
	// spare bits must not be ignored.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for i := range sealed {
		for _, c := range alphabet {
			if rune(sealed[i]) == c {
				continue
			}
			tampered := sealed[:i] + string(c) + sealed[i+1:]
			if _, err := k.Open("totp", tampered); err == nil {
				t.Fatalf("opened text altered at %d (%q)", i, tampered)
			}
		}
	}
}

func TestRandomTokenLengthAndUniqueness(t *testing.T) {
	a, b := keyring.RandomToken(32), keyring.RandomToken(32)
	if len(a) != 43 || a == b {
		t.Fatalf("tokens %q %q: want 43 base64url characters and distinct values", a, b)
	}
}
