package mca_test

import (
	"context"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/sandbox"
)

func TestWebhookKeepsTheFailedHistory(t *testing.T) {
	fixture.Each(t, time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC), func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		org, actor := fixture.Member(t, d, organization.Owner)
		svc := &mca.Service{DB: d, Currencies: []string{"EUR", "JPY"}, Partner: sandbox.NewPartner()}
		res, err := svc.Request(ctx, actor, org.ID, mca.RequestBody{Currencies: []string{"JPY"}})
		if err != nil || res.Outcomes[0].Result != mca.OutcomeFailed {
			t.Fatalf("request = %+v, %v", res, err)
		}
		clk.Advance(time.Hour)
		if err := svc.Activated(ctx, mca.Webhook{OrganizationID: org.ID, Currency: "JPY", Event: "account.activated"}); err != nil {
			t.Fatal(err)
		}
		hist, err := svc.HistoryOf(ctx, org.ID, "JPY")
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) != 2 || hist[0].From != mca.Available || hist[0].To != mca.Failed || hist[1].From != mca.Failed || hist[1].To != mca.Active {
			t.Fatalf("history = %+v, want available→failed then failed→active", hist)
		}
		// Each change is stamped with its transaction's time, read from the clock.
		if !hist[1].At.Equal(hist[0].At.Add(time.Hour)) {
			t.Errorf("activation at %v, failure at %v: want an hour apart", hist[1].At, hist[0].At)
		}
		entries, err := svc.List(ctx, actor, org.ID)
		if err != nil || entries[1].State != mca.Active {
			t.Fatalf("list = %+v, %v", entries, err)
		}
	})
}
