package mca_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var cacheStart = time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)

// rowReads counts the statements that read an organization's currency rows.
func rowReads(t *testing.T) *atomic.Int64 {
	return dbtest.CountQueries(t, "FROM currency_accounts WHERE organization_id")
}

// stateOf lists the organization's accounts and returns currency's state.
func stateOf(t *testing.T, svc *mca.Service, a actor.Actor, orgID uuid.UUID, currency string) string {
	t.Helper()
	entries, err := svc.List(context.Background(), a, orgID)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Currency == currency {
			return e.State
		}
	}
	t.Fatalf("%s is not listed: %+v", currency, entries)
	return ""
}

// TestListedRowsAreReadOnce: a program polling its list does not read its
// rows on every request, yet every change to a currency account (a
// request, the partner's activation) is seen by the very next list.
func TestListedRowsAreReadOnce(t *testing.T) {
	fixture.Each(t, cacheStart, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		org, owner := fixture.Member(t, d, organization.Owner)
		svc := &mca.Service{DB: d, Currencies: []string{"EUR", "JPY"}, Partner: sandbox.NewPartner()}
		if got := stateOf(t, svc, owner, org.ID, "EUR"); got != mca.Available {
			t.Fatalf("EUR is %s before any request; want available", got)
		}
		dbtest.WaitLive(t, d)
		reads := rowReads(t)
		for range 3 {
			if got := stateOf(t, svc, owner, org.ID, "EUR"); got != mca.Available {
				t.Fatalf("EUR is %s; want available", got)
			}
		}
		if n := reads.Load(); n > 1 {
			t.Errorf("three lists read the rows %d times; want them kept after the first", n)
		}

		if _, err := svc.Request(ctx, owner, org.ID, mca.RequestBody{Currencies: []string{"EUR"}}); err != nil {
			t.Fatal(err)
		}
		requested := stateOf(t, svc, owner, org.ID, "EUR")
		if requested == mca.Available {
			t.Fatal("the list after a request still shows EUR available")
		}
		if requested == mca.Active {
			t.Fatal("the sandbox partner activated EUR at once; the test needs a change still to come")
		}
		clk.Advance(time.Second) // kept rows are still fresh: only the notification empties them
		if err := svc.Activated(ctx, mca.Webhook{OrganizationID: org.ID, Currency: "EUR", Event: "account.activated"}); err != nil {
			t.Fatal(err)
		}
		if got := stateOf(t, svc, owner, org.ID, "EUR"); got != mca.Active {
			t.Errorf("the list after the partner's activation shows EUR %s; want active", got)
		}
	})
}

// TestListedRowsReachEveryInstance: two servers on one PostgreSQL
// database; what one changes, the other lists as soon as the notification
// arrives, though it kept the rows from before.
func TestListedRowsReachEveryInstance(t *testing.T) {
	ctx := context.Background()
	clk := clock.NewManual(cacheStart)
	dsn := dbtest.MigratedPostgresDSN(t) // skips without PostgreSQL: SQLite has one process
	one := dbtest.Open(t, dsn, db.WithClock(clk))
	two := dbtest.Open(t, dsn, db.WithClock(clk))
	org, owner := fixture.Member(t, one, organization.Owner)
	svcOne := &mca.Service{DB: one, Currencies: []string{"EUR", "JPY"}, Partner: sandbox.NewPartner()}
	svcTwo := &mca.Service{DB: two, Currencies: []string{"EUR", "JPY"}, Partner: sandbox.NewPartner()}

	kept := func(currency, want string) {
		t.Helper()
		if got := stateOf(t, svcTwo, owner, org.ID, currency); got != want {
			t.Fatalf("the other instance lists %s %s; want %s", currency, got, want)
		}
		dbtest.WaitLive(t, two)
		reads := rowReads(t)
		stateOf(t, svcTwo, owner, org.ID, currency)
		if got := stateOf(t, svcTwo, owner, org.ID, currency); got != want || reads.Load() > 1 {
			t.Fatalf("the other instance does not keep the rows: %s, %d reads", got, reads.Load())
		}
	}
	eventually := func(what, currency string, changed func(string) bool) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(2 * time.Millisecond) {
			got := stateOf(t, svcTwo, owner, org.ID, currency)
			if changed(got) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: the other instance still lists %s %s", what, currency, got)
			}
		}
	}

	kept("EUR", mca.Available)
	if _, err := svcOne.Request(ctx, owner, org.ID, mca.RequestBody{Currencies: []string{"EUR"}}); err != nil {
		t.Fatal(err)
	}
	eventually("a request", "EUR", func(s string) bool { return s != mca.Available })

	kept("JPY", mca.Available)
	if err := svcOne.Activated(ctx, mca.Webhook{OrganizationID: org.ID, Currency: "JPY", Event: "account.activated"}); err != nil {
		t.Fatal(err)
	}
	eventually("the partner's activation", "JPY", func(s string) bool { return s == mca.Active })
}
