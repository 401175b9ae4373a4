package identity_test

import (
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/identity"
)

func TestPasswordHashRoundTrip(t *testing.T) {
	h := identity.HashPassword("correct horse battery")
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q does not record the argon2id parameters", h)
	}
	if h == identity.HashPassword("correct horse battery") {
		t.Fatal("two hashes of one password are equal: the salt is not random")
	}
	for pw, want := range map[string]bool{"correct horse battery": true, "correct horse batterY": false, "": false} {
		if ok, err := identity.CheckPassword(h, pw); err != nil || ok != want {
			t.Errorf("CheckPassword(%q) = %v, %v; want %v", pw, ok, err, want)
		}
	}
	if _, err := identity.CheckPassword("$2a$10$bcrypt", "x"); err == nil {
		t.Error("a foreign hash format was accepted")
	}
}

// BenchmarkHashPassword measures the cost of one argon2id hash (the bulk of a
// sign-in): go test -bench HashPassword ./internal/identity/
func BenchmarkHashPassword(b *testing.B) {
	for b.Loop() {
		identity.HashPassword("correct horse battery")
	}
}
