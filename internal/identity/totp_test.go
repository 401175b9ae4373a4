package identity_test

import (
	"encoding/base32"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/identity"
)

// RFC 6238 appendix B vectors for SHA-1 (the 8-digit codes' last six digits,
// since authenticator apps use six).
func TestMatchTOTPRFC6238Vectors(t *testing.T) {
	secret := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString([]byte("12345678901234567890"))
	vectors := []struct {
		unix int64
		code string
	}{
		{59, "287082"},
		{1111111109, "081804"},
		{1111111111, "050471"},
		{1234567890, "005924"},
		{2000000000, "279037"},
		{20000000000, "353130"},
	}
	for _, v := range vectors {
		now := time.Unix(v.unix, 0)
		step, ok := identity.MatchTOTP(secret, v.code, now)
		if !ok || step != v.unix/30 {
			t.Errorf("at %d: code %s matched=%v step=%d, want step %d", v.unix, v.code, ok, step, v.unix/30)
		}
		// One step of skew either way is accepted, two are not.
		if _, ok := identity.MatchTOTP(secret, v.code, now.Add(30*time.Second)); !ok {
			t.Errorf("at %d: code refused 30 s later", v.unix)
		}
		if _, ok := identity.MatchTOTP(secret, v.code, now.Add(-30*time.Second)); !ok {
			t.Errorf("at %d: code refused 30 s earlier", v.unix)
		}
		if _, ok := identity.MatchTOTP(secret, v.code, now.Add(61*time.Second)); ok {
			t.Errorf("at %d: code accepted two steps later", v.unix)
		}
	}
	if _, ok := identity.MatchTOTP(secret, "28708", time.Unix(59, 0)); ok {
		t.Error("a five-digit prefix matched")
	}
}
