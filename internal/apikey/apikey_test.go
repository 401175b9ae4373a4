package apikey_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var start = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// env is one test's database, clock, service and organization with its owner.
type env struct {
	d     *db.DB
	clk   *clock.Manual
	svc   *apikey.Service
	org   organization.Organization
	owner actor.Actor
}

func eachEnv(t *testing.T, test func(t *testing.T, e *env)) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		org, owner := fixture.Member(t, d, organization.Owner)
		svc := &apikey.Service{DB: d, Clock: clk, Keys: fixture.Keys(t), Env: "test"}
		test(t, &env{d: d, clk: clk, svc: svc, org: org, owner: owner})
	})
}

// create, update and rotate run a change as internal/flow/confirming does,
// with the person present: the service's checks, then the change (the
// step-up between them has tests of its own).
func create(ctx context.Context, s *apikey.Service, a actor.Actor, orgID uuid.UUID, r apikey.CreateRequest) (apikey.Key, string, error) {
	c, err := s.CheckCreate(ctx, a, orgID, r)
	if err != nil {
		return apikey.Key{}, "", err
	}
	return s.Create(ctx, c)
}

func update(ctx context.Context, s *apikey.Service, a actor.Actor, orgID, id uuid.UUID, r apikey.UpdateRequest) (apikey.Key, error) {
	c, err := s.CheckUpdate(ctx, a, orgID, id, r)
	if err != nil {
		return apikey.Key{}, err
	}
	return s.Update(ctx, c)
}

func rotate(ctx context.Context, s *apikey.Service, a actor.Actor, orgID, id uuid.UUID) (apikey.Key, string, error) {
	c, err := s.CheckRotate(ctx, a, orgID, id)
	if err != nil {
		return apikey.Key{}, "", err
	}
	return s.Rotate(ctx, c)
}

func request(name string, role organization.Role, scopes ...string) apikey.CreateRequest {
	if scopes == nil {
		scopes = []string{}
	}
	return apikey.CreateRequest{Request: apikey.Request{Name: &name, Role: &role, Scopes: &scopes}}
}

// create makes a balances:read member key as the owner.
func (e *env) create(t *testing.T) (apikey.Key, string) {
	t.Helper()
	k, secret, err := create(context.Background(), e.svc, e.owner, e.org.ID, request("reporting", organization.Member, "balances:read"))
	if err != nil {
		t.Fatal(err)
	}
	return k, secret
}

// authenticates reports whether secret authenticates now, failing the test
// on any answer but success or invalid_api_key.
func (e *env) authenticates(t *testing.T, secret string) bool {
	t.Helper()
	a, err := e.svc.Authenticate(context.Background(), secret)
	switch {
	case err == nil:
		return a.Key != nil
	case apierr.Is(err, apierr.InvalidAPIKey):
		return false
	}
	t.Fatalf("authenticate: %v", err)
	return false
}

func want(t *testing.T, what string, err error, typ apierr.Type) {
	t.Helper()
	if (typ == "" && err != nil) || (typ != "" && !apierr.Is(err, typ)) {
		t.Errorf("%s: %v; want %q", what, err, typ)
	}
}

// TestParseToken is the key format (docs/api.md, API keys).
func TestParseToken(t *testing.T) {
	lookup, secret := "abcd1234", strings.Repeat("aZ9", 14)+"x"
	for _, tc := range []struct {
		name, token string
		ok          bool
	}{
		{"well formed", "sr_test_" + lookup + "_" + secret, true},
		{"live", "sr_live_" + lookup + "_" + secret, true},
		{"other prefix", "sk_test_" + lookup + "_" + secret, false},
		{"no environment", "sr__" + lookup + "_" + secret, false},
		{"extra part", "sr_test_" + lookup + "_" + secret + "_x", false},
		{"missing part", "sr_test_" + lookup + secret, false},
		{"short lookup", "sr_test_abcd123_" + secret, false},
		{"capital in lookup", "sr_test_Abcd1234_" + secret, false},
		{"short secret", "sr_test_" + lookup + "_" + secret[1:], false},
		{"long secret", "sr_test_" + lookup + "_" + secret + "a", false},
		{"symbol in secret", "sr_test_" + lookup + "_" + secret[1:] + "-", false},
		{"not UTF-8 in lookup", "sr_test_abcd12\xff\xfe_" + secret, false},
		{"empty", "", false},
	} {
		tok, ok := apikey.ParseToken(tc.token)
		if ok != tc.ok {
			t.Errorf("%s: ok = %v; want %v", tc.name, ok, tc.ok)
			continue
		}
		if ok && (tok.Lookup != lookup || tok.Secret != secret || tok.String() != tc.token) {
			t.Errorf("%s: parsed %+v, printed %q", tc.name, tok, tok.String())
		}
	}
}

// TestGrantRules: only owners and admins create keys, a key's role is
// never above its creator's nor an owner, and no scope is above the key's
// role.
func TestGrantRules(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		creators := map[organization.Role]actor.Actor{
			organization.Owner:  e.owner,
			organization.Admin:  fixture.Join(t, e.d, e.org.ID, "admin@acme.test", organization.Admin),
			organization.Member: fixture.Join(t, e.d, e.org.ID, "member@acme.test", organization.Member),
		}
		for _, tc := range []struct {
			creator, role organization.Role
			scopes        []string
			want          apierr.Type
		}{
			{organization.Owner, organization.Admin, []string{"refunds:write", "balances:read"}, ""},
			{organization.Owner, organization.Member, []string{"balances:read"}, ""},
			{organization.Owner, organization.Owner, nil, apierr.InvalidRequest},
			{organization.Admin, organization.Admin, []string{"webhooks:manage"}, ""},
			{organization.Admin, organization.Owner, nil, apierr.RoleExceedsCreator},
			{organization.Admin, organization.Member, []string{"refunds:write"}, apierr.Forbidden},
			{organization.Owner, organization.Member, []string{"webhooks:manage"}, apierr.Forbidden},
			{organization.Member, organization.Member, []string{"balances:read"}, apierr.Forbidden},
		} {
			k, _, err := create(ctx, e.svc, creators[tc.creator], e.org.ID, request("k", tc.role, tc.scopes...))
			want(t, fmt.Sprintf("%s creating a %s key with %v", tc.creator, tc.role, tc.scopes), err, tc.want)
			if err == nil && (k.Role != tc.role || k.Environment != "test" || len(k.Scopes) != len(tc.scopes)) {
				t.Errorf("%s creating a %s key: got %+v", tc.creator, tc.role, k)
			}
		}
		// Raising a key above its changer's role is refused the same way.
		k, _, err := create(ctx, e.svc, e.owner, e.org.ID, request("k", organization.Member))
		if err != nil {
			t.Fatal(err)
		}
		owner := organization.Owner
		_, err = update(ctx, e.svc, creators[organization.Admin], e.org.ID, k.ID, apikey.UpdateRequest{Request: apikey.Request{Role: &owner}})
		want(t, "admin raising a key to owner", err, apierr.RoleExceedsCreator)
		// To a member a key id is not found, whatever the operation.
		_, err = e.svc.Revoke(ctx, creators[organization.Member], e.org.ID, k.ID)
		want(t, "member revoking", err, apierr.NotFound)
		_, _, err = rotate(ctx, e.svc, creators[organization.Member], e.org.ID, k.ID)
		want(t, "member rotating", err, apierr.NotFound)
	})
}

// TestRotationKeepsTwoSecretsForADay: after a rotation the previous secret
// works for 24 hours and only the two latest work, on the manual clock.
func TestRotationKeepsTwoSecretsForADay(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		k, first := e.create(t)
		_, second, err := rotate(ctx, e.svc, e.owner, e.org.ID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		t1, _ := apikey.ParseToken(first)
		t2, _ := apikey.ParseToken(second)
		if t1.Lookup != t2.Lookup || t1.Secret == t2.Secret {
			t.Fatalf("rotation gave %q after %q: want the same lookup and a new secret", second, first)
		}
		for _, step := range []struct {
			advance      time.Duration
			first, newer bool
		}{
			{0, true, true},
			{apikey.RotationOverlap - time.Second, true, true},
			{time.Second, false, true}, // 24 hours after the rotation
		} {
			e.clk.Advance(step.advance)
			if got := e.authenticates(t, first); got != step.first {
				t.Errorf("%v after rotating: old secret works = %v; want %v", e.clk.Now().Sub(start), got, step.first)
			}
			if got := e.authenticates(t, second); got != step.newer {
				t.Errorf("%v after rotating: new secret works = %v; want %v", e.clk.Now().Sub(start), got, step.newer)
			}
		}
		// Rotating twice within a day: only the two latest secrets work.
		_, third, err := rotate(ctx, e.svc, e.owner, e.org.ID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		_, fourth, err := rotate(ctx, e.svc, e.owner, e.org.ID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		for secret, works := range map[string]bool{second: false, third: true, fourth: true} {
			if got := e.authenticates(t, secret); got != works {
				t.Errorf("after two rotations, %q works = %v; want %v", secret, got, works)
			}
		}
	})
}

// TestRevokedKeyIsRefused: a revoked key stops at once and cannot
// change; revoking again returns it unchanged.
func TestRevokedKeyIsRefused(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		k, secret := e.create(t)
		if !e.authenticates(t, secret) {
			t.Fatal("a new key does not authenticate")
		}
		revoked, err := e.svc.Revoke(ctx, e.owner, e.org.ID, k.ID)
		if err != nil || revoked.RevokedAt == nil || !revoked.RevokedAt.Equal(start) {
			t.Fatalf("revoke = %+v, %v; want revoked at %v", revoked, err, start)
		}
		if e.authenticates(t, secret) {
			t.Error("a revoked key authenticates")
		}
		_, _, err = rotate(ctx, e.svc, e.owner, e.org.ID, k.ID)
		want(t, "rotating a revoked key", err, apierr.APIKeyRevoked)
		name := "again"
		_, err = update(ctx, e.svc, e.owner, e.org.ID, k.ID, apikey.UpdateRequest{Request: apikey.Request{Name: &name}})
		want(t, "updating a revoked key", err, apierr.APIKeyRevoked)
		e.clk.Advance(time.Hour)
		again, err := e.svc.Revoke(ctx, e.owner, e.org.ID, k.ID)
		if err != nil || !again.RevokedAt.Equal(start) {
			t.Errorf("revoking again = %+v, %v; want unchanged", again, err)
		}
	})
}

// TestFiftyActiveKeysAtMost: the 51st active key is refused; revoking one
// makes room.
func TestFiftyActiveKeysAtMost(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		var first apikey.Key
		for i := range apikey.MaxActive {
			k, _ := e.create(t)
			if i == 0 {
				first = k
			}
		}
		_, _, err := create(ctx, e.svc, e.owner, e.org.ID, request("one more", organization.Member))
		want(t, "the 51st key", err, apierr.APIKeyLimitReached)
		if _, err := e.svc.Revoke(ctx, e.owner, e.org.ID, first.ID); err != nil {
			t.Fatal(err)
		}
		_, _, err = create(ctx, e.svc, e.owner, e.org.ID, request("one more", organization.Member))
		want(t, "a key after revoking one", err, "")
	})
}

// TestAuthenticate: what a key sent as a bearer resolves to, and when it is
// refused (environment, organization status, a ban for good).
func TestAuthenticate(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		k, secret := e.create(t)
		a, err := e.svc.Authenticate(ctx, secret)
		if err != nil || a.Key.ID != k.ID || a.Key.OrganizationID != e.org.ID || a.Key.Role != "member" || !a.Key.HasScope("balances:read") || a.UserID != uuid.Nil {
			t.Fatalf("authenticate = %+v, %v", a, err)
		}
		tok, _ := apikey.ParseToken(secret)
		wrong := tok
		wrong.Secret = strings.Repeat("A", 43)
		live := tok
		live.Env = "live"
		for name, bearer := range map[string]string{"wrong secret": wrong.String(), "other environment": live.String(), "malformed": "sr_test_x"} {
			_, err := e.svc.Authenticate(ctx, bearer)
			want(t, name, err, apierr.InvalidAPIKey)
		}
		setStatus := func(s organization.Status) {
			t.Helper()
			if _, err := db.InTx(ctx, e.d, func(tx *db.Tx) (organization.Organization, error) {
				return organization.SetStatus(ctx, tx, e.org.ID, s)
			}); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range []organization.Status{organization.Paused, organization.Deleted} {
			setStatus(s)
			_, err := e.svc.Authenticate(ctx, secret)
			want(t, string(s), err, apierr.OrganizationUnavailable)
		}
		// A ban revokes every key, and lifting it restores none.
		setStatus(organization.Active)
		if err := e.d.Tx(ctx, func(tx *db.Tx) error { return apikey.RevokeAll(ctx, tx, e.org.ID) }); err != nil {
			t.Fatal(err)
		}
		_, err = e.svc.Authenticate(ctx, secret)
		want(t, "after the ban", err, apierr.InvalidAPIKey)
	})
}

// TestLastUsedIsWrittenOnceAMinute: reading with a key stays a read, but
// last_used_at follows within a minute.
func TestLastUsedIsWrittenOnceAMinute(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		_, secret := e.create(t)
		lastUsed := func() time.Time {
			t.Helper()
			keys, err := e.svc.List(ctx, e.owner, e.org.ID, page.Request{Limit: 1})
			if err != nil || len(keys) != 1 || keys[0].LastUsedAt == nil {
				t.Fatalf("list = %+v, %v", keys, err)
			}
			return *keys[0].LastUsedAt
		}
		for _, step := range []struct {
			advance time.Duration
			want    time.Duration
		}{{0, 0}, {59 * time.Second, 0}, {time.Second, time.Minute}} {
			e.clk.Advance(step.advance)
			if !e.authenticates(t, secret) {
				t.Fatal("the key does not authenticate")
			}
			if got := lastUsed(); !got.Equal(start.Add(step.want)) {
				t.Errorf("at %v: last used %v; want %v", e.clk.Now().Sub(start), got, start.Add(step.want))
			}
		}
	})
}
