package onboarding_test

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/sandbox"
)

var start = time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)

func TestOptionIDsAreFixedAndUnique(t *testing.T) {
	s := &onboarding.Service{}
	p := s.Personal()
	seen := map[uuid.UUID]string{}
	for name, list := range map[string][]onboarding.Option{
		"monthly_volumes": p.MonthlyVolumes, "occupations": p.Occupations, "purposes": p.Purposes, "source_of_funds": p.SourceOfFunds,
	} {
		if len(list) == 0 {
			t.Errorf("%s is empty", name)
		}
		values := map[string]bool{}
		for _, o := range list {
			if o.ID.Version() != 5 {
				t.Errorf("%s/%s: id %s is not a UUIDv5", name, o.Value, o.ID)
			}
			if prev, dup := seen[o.ID]; dup {
				t.Errorf("%s/%s: id %s also used by %s", name, o.Value, o.ID, prev)
			}
			seen[o.ID] = name + "/" + o.Value
			if values[o.Value] || o.Label == "" {
				t.Errorf("%s/%s: value repeated or label empty", name, o.Value)
			}
			values[o.Value] = true
		}
	}
	// Clients keep the ids: this one must never change.
	if got := p.MonthlyVolumes[0].ID; got != uuid.NewSHA1(uuid.MustParse("6f0a3b2e-5c1d-4e8f-9a7b-2d4c6e8f0a1b"), []byte("personal/monthly_volumes/under_10k")) {
		t.Errorf("monthly_volumes/under_10k id = %s, changed", got)
	}
}

// register creates an organization that requires an acknowledgement, with
// an owner, an admin and a member.
func register(t *testing.T, d *db.DB) (organization.Organization, map[organization.Role]actor.Actor) {
	t.Helper()
	org := fixture.Organization(t, d, "Acme")
	if err := d.Tx(context.Background(), func(tx *db.Tx) error { return onboarding.Register(context.Background(), tx, org.ID, true) }); err != nil {
		t.Fatal(err)
	}
	people := map[organization.Role]actor.Actor{}
	for _, r := range organization.Roles {
		people[r] = fixture.Join(t, d, org.ID, string(r)+"@acme.test", r)
	}
	return org, people
}

func TestAcknowledgementRules(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		s := &onboarding.Service{DB: d}
		org, people := register(t, d)
		outsider := fixture.Join(t, d, fixture.Organization(t, d, "Other").ID, "eve@other.test", organization.Owner)

		a, err := s.Acknowledgement(ctx, people[organization.Owner], org.ID)
		if err != nil || !a.Required || a.AcknowledgedAt != nil {
			t.Fatalf("before: %+v, %v", a, err)
		}
		if _, err := s.Acknowledge(ctx, people[organization.Member], org.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("member: %v, want forbidden", err)
		}
		if _, err := s.Acknowledgement(ctx, people[organization.Member], org.ID); !apierr.Is(err, apierr.Forbidden) {
			t.Errorf("member reads: %v, want forbidden", err)
		}
		if _, err := s.Acknowledge(ctx, outsider, org.ID); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("outsider: %v, want not_found", err)
		}
		first, err := s.Acknowledge(ctx, people[organization.Admin], org.ID)
		if err != nil || first.AcknowledgedAt == nil || !first.AcknowledgedAt.Equal(start) {
			t.Fatalf("first: %+v, %v", first, err)
		}
		clk.Advance(time.Hour)
		again, err := s.Acknowledge(ctx, people[organization.Owner], org.ID)
		if err != nil || !again.AcknowledgedAt.Equal(start) {
			t.Errorf("again: %+v, %v; want the first time kept", again, err)
		}

		// An organization created before acknowledgements existed requires none.
		old := fixture.Organization(t, d, "Old")
		owner := fixture.Join(t, d, old.ID, "old@old.test", organization.Owner)
		a, err = s.Acknowledgement(ctx, owner, old.ID)
		if err != nil || a.Required || a.AcknowledgedAt != nil {
			t.Errorf("old organization: %+v, %v", a, err)
		}
		if a, err = s.Acknowledge(ctx, owner, old.ID); err != nil || a.AcknowledgedAt == nil {
			t.Errorf("old organization acknowledges: %+v, %v", a, err)
		}

		// A paused organization cannot record one.
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			_, err := organization.SetStatus(ctx, tx, old.ID, organization.Paused)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Acknowledge(ctx, owner, old.ID); !apierr.Is(err, apierr.OrganizationUnavailable) {
			t.Errorf("paused: %v, want organization_unavailable", err)
		}
	})
}

func TestConcurrentAcknowledgementsKeepOneTime(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		s := &onboarding.Service{DB: d}
		org, people := register(t, d)
		const n = 8
		times := make([]time.Time, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				clk.Advance(time.Second) // each transaction may read another time
				a, err := s.Acknowledge(context.Background(), people[organization.Owner], org.ID)
				if err != nil {
					t.Error(err)
					return
				}
				times[i] = *a.AcknowledgedAt
			})
		}
		wg.Wait()
		for _, at := range times[1:] {
			if !at.Equal(times[0]) {
				t.Fatalf("times = %v, want one", times)
			}
		}
	})
}

func TestIdentityCheckMovesFromNotStarted(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		s := &onboarding.Service{DB: d, Provider: sandbox.IdentityProvider{Keys: fixture.Keys(t)}}
		org, person := fixture.Member(t, d, organization.Member)
		check := func(want string) {
			t.Helper()
			c, err := onboarding.CheckOf(ctx, d.Reader(), person.UserID)
			if err != nil || c.Status != want || (want == onboarding.NotStarted) != (c.UpdatedAt == nil) {
				t.Fatalf("check = %+v, %v; want %s", c, err, want)
			}
		}
		check(onboarding.NotStarted)
		if _, err := s.AccessToken(ctx, person, onboarding.AccessTokenRequest{OrganizationID: &org.ID}); err != nil {
			t.Fatal(err)
		}
		check(onboarding.Pending)
		if _, err := s.Decide(ctx, person.UserID, onboarding.Decision{Status: onboarding.Approved}); err != nil {
			t.Fatal(err)
		}
		check(onboarding.Approved)
		// Another token does not reopen a decided check.
		if _, err := s.AccessToken(ctx, person, onboarding.AccessTokenRequest{}); err != nil {
			t.Fatal(err)
		}
		check(onboarding.Approved)

		stranger := uuid.New()
		if _, err := s.AccessToken(ctx, person, onboarding.AccessTokenRequest{OrganizationID: &stranger}); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("unknown organization: %v, want not_found", err)
		}
		if _, err := s.Decide(ctx, stranger, onboarding.Decision{Status: onboarding.Rejected}); !apierr.Is(err, apierr.NotFound) {
			t.Errorf("unknown user: %v, want not_found", err)
		}
		if _, err := s.Decide(ctx, person.UserID, onboarding.Decision{Status: onboarding.Pending}); !apierr.Is(err, apierr.InvalidRequest) {
			t.Errorf("pending as a decision: %v, want invalid_request", err)
		}
		live := &onboarding.Service{DB: d}
		if _, err := live.AccessToken(ctx, person, onboarding.AccessTokenRequest{}); !apierr.Is(err, apierr.ServiceUnavailable) {
			t.Errorf("no provider: %v, want service_unavailable", err)
		}
	})
}

func TestALinkDecidesOnce(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		ctx := context.Background()
		provider := sandbox.IdentityProvider{Keys: fixture.Keys(t)}
		s := &onboarding.Service{DB: d, Provider: provider}
		_, person := fixture.Member(t, d, organization.Member)
		link := func() onboarding.VerifiedToken {
			t.Helper()
			tok, err := s.AccessToken(ctx, person, onboarding.AccessTokenRequest{})
			if err != nil {
				t.Fatal(err)
			}
			v, err := provider.Verify(tok.Token, clk.Now())
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		first := link()
		decided, err := s.DecideByLink(ctx, first, onboarding.Decision{Status: onboarding.Approved})
		if err != nil || decided.Status != onboarding.Approved {
			t.Fatalf("first decision: %+v, %v", decided, err)
		}
		clk.Advance(time.Minute)
		for _, status := range []string{onboarding.Rejected, onboarding.Approved} {
			if _, err := s.DecideByLink(ctx, first, onboarding.Decision{Status: status}); !apierr.Is(err, apierr.Conflict) || !onboarding.IsLinkSpent(err) {
				t.Fatalf("the link deciding %s again: %v, want conflict", status, err)
			}
		}
		if c, err := onboarding.CheckOf(ctx, d.Reader(), person.UserID); err != nil || c.Status != onboarding.Approved || !c.UpdatedAt.Equal(decided.UpdatedAt.UTC()) {
			t.Fatalf("after the refused decisions: %+v, %v; want approved at %s", c, err, decided.UpdatedAt)
		}
		// A newer link decides again, once.
		if c, err := s.DecideByLink(ctx, link(), onboarding.Decision{Status: onboarding.Rejected}); err != nil || c.Status != onboarding.Rejected {
			t.Fatalf("a new link: %+v, %v", c, err)
		}

		// Two decisions racing on one link: one is recorded.
		racing := link()
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for i, status := range []string{onboarding.Approved, onboarding.Rejected} {
			wg.Go(func() { _, errs[i] = s.DecideByLink(ctx, racing, onboarding.Decision{Status: status}) })
		}
		wg.Wait()
		if (errs[0] == nil) == (errs[1] == nil) || !onboarding.IsLinkSpent(cmp.Or(errs[0], errs[1])) {
			t.Fatalf("racing decisions: %v, want one decided and one refused as spent", errs)
		}
		want := onboarding.Approved
		if errs[0] != nil {
			want = onboarding.Rejected
		}
		if c, _ := onboarding.CheckOf(ctx, d.Reader(), person.UserID); c.Status != want {
			t.Fatalf("after the race: %s, want %s (the decision that was recorded)", c.Status, want)
		}
	})
}
