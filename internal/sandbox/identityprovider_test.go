package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

// The identity provider's tokens verify until their expiry, with their
// organization, and never altered or signed with another key.
func TestIdentityTokens(t *testing.T) {
	p := sandbox.IdentityProvider{Keys: fixture.Keys(t)}
	user, org := uuid.New(), uuid.New()
	tok, err := p.AccessToken(context.Background(), user, &org, start)
	if err != nil {
		t.Fatal(err)
	}
	if tok.WebSDKLink != "/sandbox/kyc?token="+tok.Token {
		t.Errorf("link %q", tok.WebSDKLink)
	}
	v, err := p.Verify(tok.Token, start.Add(onboarding.TokenLifetime-time.Second))
	if err != nil || v.UserID != user || v.OrganizationID == nil || *v.OrganizationID != org {
		t.Fatalf("verify: %+v, %v", v, err)
	}
	if _, err := p.Verify(tok.Token, start.Add(onboarding.TokenLifetime)); err == nil {
		t.Error("a token at its expiry was accepted")
	}
	parts := strings.Split(tok.Token, ".")
	altered := parts[0] + "." + parts[1] + "." + strings.Map(func(r rune) rune {
		if r == 'A' {
			return 'B'
		}
		return 'A'
	}, parts[2])
	if _, err := p.Verify(altered, start); err == nil {
		t.Error("an altered token was accepted")
	}
	other, _ := sandbox.IdentityProvider{Keys: otherKeys(t)}.AccessToken(context.Background(), user, nil, start)
	if _, err := p.Verify(other.Token, start); err == nil {
		t.Error("a token of another key was accepted")
	}
	noOrg, _ := p.AccessToken(context.Background(), user, nil, start)
	if v, err := p.Verify(noOrg.Token, start); err != nil || v.OrganizationID != nil {
		t.Errorf("without an organization: %+v, %v", v, err)
	}
}

func otherKeys(t *testing.T) *keyring.Keyring {
	t.Helper()
	k, err := keyring.New([]byte(strings.Repeat("o", 32)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
