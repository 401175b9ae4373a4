package apikey_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// keyReads counts the statements that read api_keys until t ends.
func keyReads(t *testing.T) *atomic.Int64 {
	return dbtest.CountQueries(t, "FROM api_keys WHERE lookup")
}

// TestCredentialsAreReadOnce: a program's requests do not each read its
// key, yet a change to the key is seen by the very next request.
func TestCredentialsAreReadOnce(t *testing.T) {
	eachEnv(t, func(t *testing.T, e *env) {
		ctx := context.Background()
		k, secret := e.create(t)
		if !e.authenticates(t, secret) { // opens the listening connection on PostgreSQL
			t.Fatal("a new key does not authenticate")
		}
		dbtest.WaitLive(t, e.d)
		reads := keyReads(t)
		for range 3 {
			if !e.authenticates(t, secret) {
				t.Fatal("the key stopped authenticating")
			}
		}
		if n := reads.Load(); n > 1 {
			t.Errorf("three requests read the key %d times; want it kept after the first", n)
		}
		// A change of role is seen at once.
		admin := organization.Admin
		if _, err := update(ctx, e.svc, e.owner, e.org.ID, k.ID, apikey.UpdateRequest{Request: apikey.Request{Role: &admin}}); err != nil {
			t.Fatal(err)
		}
		if a, err := e.svc.Authenticate(ctx, secret); err != nil || a.Key.Role != "admin" {
			t.Errorf("after the update: %+v, %v; want role admin", a.Key, err)
		}
		// A wrong secret is refused though the key is kept.
		tok, _ := apikey.ParseToken(secret)
		tok.Secret = strings.Repeat("B", len(tok.Secret))
		if e.authenticates(t, tok.String()) {
			t.Error("a wrong secret authenticates a kept key")
		}
		// So is a key kept longer than the overlap of a rotation allows.
		_, rotated, err := rotate(ctx, e.svc, e.owner, e.org.ID, k.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !e.authenticates(t, rotated) || !e.authenticates(t, secret) {
			t.Fatal("after a rotation both secrets should work")
		}
		e.clk.Advance(apikey.RotationOverlap)
		if e.authenticates(t, secret) {
			t.Error("the previous secret works after the overlap")
		}
	})
}

// TestChangesReachEveryInstance: two servers on one PostgreSQL database;
// what one revokes or pauses, the other refuses as soon as the
// notification arrives, even though it kept the key's credentials.
func TestChangesReachEveryInstance(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(start)
	dsn := dbtest.MigratedPostgresDSN(t) // skips without PostgreSQL: SQLite has one process
	one := dbtest.Open(t, dsn, db.WithClock(clk))
	two := dbtest.Open(t, dsn, db.WithClock(clk))
	org, owner := fixture.Member(t, one, organization.Owner)
	svcOne := &apikey.Service{DB: one, Clock: clk, Keys: fixture.Keys(t), Env: "test"}
	svcTwo := &apikey.Service{DB: two, Clock: clk, Keys: fixture.Keys(t), Env: "test"}
	eventually := func(what string, typ apierr.Type, secret string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			_, err := svcTwo.Authenticate(ctx, secret)
			if apierr.Is(err, typ) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other instance still answers %v; want %s", what, err, typ)
			}
		}
	}
	kept := func(secret string) {
		t.Helper()
		if _, err := svcTwo.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		dbtest.WaitLive(t, two)
		reads := keyReads(t)
		if _, err := svcTwo.Authenticate(ctx, secret); err != nil {
			t.Fatal(err)
		}
		if _, err := svcTwo.Authenticate(ctx, secret); err != nil || reads.Load() > 1 {
			t.Fatalf("the other instance does not keep the key: %v, %d reads", err, reads.Load())
		}
	}

	_, secretA, err := create(ctx, svcOne, owner, org.ID, request("a", organization.Member, "balances:read"))
	if err != nil {
		t.Fatal(err)
	}
	kept(secretA)
	if _, err := db.InTx(ctx, one, func(tx *db.Tx) (organization.Organization, error) {
		return organization.SetStatus(ctx, tx, org.ID, organization.Paused)
	}); err != nil {
		t.Fatal(err)
	}
	eventually("pausing the organization", apierr.OrganizationUnavailable, secretA)
	if _, err := db.InTx(ctx, one, func(tx *db.Tx) (organization.Organization, error) {
		return organization.SetStatus(ctx, tx, org.ID, organization.Active)
	}); err != nil {
		t.Fatal(err)
	}

	k, secretB, err := create(ctx, svcOne, owner, org.ID, request("b", organization.Member, "balances:read"))
	if err != nil {
		t.Fatal(err)
	}
	kept(secretB)
	if _, err := svcOne.Revoke(ctx, owner, org.ID, k.ID); err != nil {
		t.Fatal(err)
	}
	eventually("revoking the key", apierr.InvalidAPIKey, secretB)
}
