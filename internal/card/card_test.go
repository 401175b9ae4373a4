package card_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// testDay is late on the last day of a month, so a test can cross into the next.
var testDay = time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)

func newService(t testing.TB, d *db.DB) *card.Service {
	keys := fixture.Keys(t)
	return &card.Service{DB: d, Keys: keys, Issuer: card.SandboxIssuer{DB: d, Keys: keys}, Rates: payment.SandboxRates{}, Guard: fixture.Present{}}
}

// fund deposits USD into orgID's available balance.
func fund(t testing.TB, d *db.DB, orgID uuid.UUID, amount string) {
	t.Helper()
	a, err := money.Parse(amount, "USD")
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.InTx(context.Background(), d, func(tx *db.Tx) (uuid.UUID, error) {
		return ledger.Post(context.Background(), tx, ledger.Entry{OrganizationID: &orgID, Kind: "deposit", Description: "test",
			Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(orgID, "USD", ledger.World), Amount: -a.Minor},
				{Account: ledger.OrgAccount(orgID, "USD", ledger.Available), Amount: a.Minor},
			}})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func issue(t testing.TB, s *card.Service, orgID uuid.UUID, holder *uuid.UUID, limit int64) card.Card {
	t.Helper()
	r := card.IssueRequest{MonthlyLimit: &limit}
	if holder != nil {
		id := holder.String()
		r.UserID = &id
	}
	c, err := s.Issue(context.Background(), orgID, r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func purchase(amount string) card.AuthorizationRequest {
	return card.AuthorizationRequest{Amount: amount, Currency: "USD", Merchant: "Corner Shop", Channel: "online"}
}

func TestWeakPINsAreRefused(t *testing.T) {
	for pin, ok := range map[string]bool{
		"2580": true, "1357": true, "0912": true, "1243": true,
		"1111": false, "0000": false, "1234": false, "0123": false, "6789": false, "9876": false, "3210": false,
		"123": false, "12345": false, "12a4": false, "": false, "١٢٣٤": false,
	} {
		err := card.PINRequest{PIN: pin}.Validate()
		if (err == nil) != ok {
			t.Errorf("PIN %q: %v, want accepted=%v", pin, err, ok)
		}
	}
}

func TestUtilizationRoundsHalfUpToWholePercent(t *testing.T) {
	for _, c := range []struct {
		limit, spent int64
		want         int64
	}{
		{100, 0, 0}, {100, 49, 0}, {100, 50, 1}, {100, 149, 1}, {100, 150, 2}, {100, 10000, 100},
		{3, 150, 50}, {3, 100, 33}, {0, 0, 0}, {1_000_000, 1_000_000 * 100, 100},
	} {
		got := card.Card{MonthlyLimit: c.limit, SpentThisMonth: c.spent}.Utilization()
		if got != c.want {
			t.Errorf("limit %d spent %d cents: %d%%, want %d%%", c.limit, c.spent, got, c.want)
		}
	}
}

// authorizeAtOnce asks r of every card in ids at the same time and counts
// the outcomes: "approved" or the decline reason.
func authorizeAtOnce(t *testing.T, s *card.Service, ids []uuid.UUID, r card.AuthorizationRequest) map[string]int {
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec, err := s.Authorize(context.Background(), id, r)
			if err != nil {
				t.Error(err)
				return
			}
			outcome := "approved"
			if !dec.Approved {
				outcome = *dec.DeclineReason
			}
			mu.Lock()
			outcomes[outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return outcomes
}

// Concurrent purchases on one card are decided one after another: exactly
// as many are approved as the limit holds, and what is spent, debited and
// in the feed agree; on both engines.
func TestConcurrentPurchasesNeverPassTheLimit(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		s := newService(t, d)
		org, owner := fixture.Member(t, d, testDay, organization.Owner)
		fund(t, d, org.ID, "10000.00")
		c := issue(t, s, org.ID, &owner.UserID, 100) // 100 USD: seven purchases of 13.00 fit
		ids := make([]uuid.UUID, 20)
		for i := range ids {
			ids[i] = c.ID
		}
		outcomes := authorizeAtOnce(t, s, ids, purchase("13.00"))
		if outcomes["approved"] != 7 || outcomes[card.DeclineLimitExceeded] != 13 {
			t.Fatalf("outcomes %v; want 7 approved and 13 over the limit", outcomes)
		}
		got, err := s.Get(context.Background(), owner, c.ID)
		if err != nil || got.SpentThisMonth != 9100 || got.Utilization() != 91 {
			t.Fatalf("card after: spent %d cents, %d%%, %v; want 9100 and 91", got.SpentThisMonth, got.Utilization(), err)
		}
		if bal, err := ledger.AvailableBalance(context.Background(), d.Reader(), org.ID, "USD"); err != nil || bal != 1_000_000-9100 {
			t.Fatalf("balance %d, %v", bal, err)
		}
	})
}

// Concurrent purchases on many cards of one organization never spend money
// it does not have: the ledger declines what the balance cannot cover.
func TestConcurrentPurchasesAcrossCardsNeverOverdraw(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		s := newService(t, d)
		org, owner := fixture.Member(t, d, testDay, organization.Owner)
		fund(t, d, org.ID, "50.00")
		ids := make([]uuid.UUID, 12)
		for i := range ids {
			ids[i] = issue(t, s, org.ID, &owner.UserID, 1000).ID
		}
		outcomes := authorizeAtOnce(t, s, ids, purchase("10.00"))
		if outcomes["approved"] != 5 || outcomes[card.DeclineInsufficientFunds] != 7 {
			t.Fatalf("outcomes %v; want 5 approved and 7 short of funds", outcomes)
		}
		if bal, err := ledger.AvailableBalance(context.Background(), d.Reader(), org.ID, "USD"); err != nil || bal != 0 {
			t.Fatalf("balance %d, %v; want 0", bal, err)
		}
		if err := ledger.CheckInvariants(context.Background(), d.Reader()); err != nil {
			t.Fatal(err)
		}
	})
}

// Spending counts the current UTC calendar month of the service clock: it
// starts again at the first instant of the next month, not before.
func TestSpendingStartsAgainEachUTCMonth(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		s := newService(t, d)
		org, owner := fixture.Member(t, d, testDay, organization.Owner)
		fund(t, d, org.ID, "1000.00")
		c := issue(t, s, org.ID, &owner.UserID, 100)
		spent := func() int64 {
			got, err := s.Get(context.Background(), owner, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.SpentThisMonth
		}
		if dec, err := s.Authorize(context.Background(), c.ID, purchase("90.00")); err != nil || !dec.Approved {
			t.Fatalf("%+v %v", dec, err)
		}
		clk.Advance(time.Hour - time.Second) // 23:59:59 on the 31st
		if dec, _ := s.Authorize(context.Background(), c.ID, purchase("20.00")); dec.Approved || spent() != 9000 {
			t.Fatalf("before midnight: %+v, spent %d", dec, spent())
		}
		clk.Advance(time.Second) // 1 February 00:00:00 UTC
		if spent() != 0 {
			t.Fatalf("spent %d cents at the start of the month", spent())
		}
		if dec, err := s.Authorize(context.Background(), c.ID, purchase("20.00")); err != nil || !dec.Approved || spent() != 2000 {
			t.Fatalf("after midnight: %+v %v, spent %d", dec, err, spent())
		}
		// A refund lowers this month's spending, never below zero.
		refund := purchase("50.00")
		kind := "refund"
		refund.Kind = &kind
		if dec, err := s.Authorize(context.Background(), c.ID, refund); err != nil || !dec.Approved || spent() != 0 {
			t.Fatalf("refund: %+v %v, spent %d", dec, err, spent())
		}
	})
}

// A member sees only their own cards; another organization's card is not found.
func TestMembersSeeOnlyTheirOwnCards(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		s := newService(t, d)
		org, owner := fixture.Member(t, d, testDay, organization.Owner)
		member := fixture.Join(t, d, testDay, org.ID, "bo@acme.test", organization.Member)
		mine := issue(t, s, org.ID, &member.UserID, 10)
		theirs := issue(t, s, org.ID, &owner.UserID, 10)
		cs, err := s.List(ctx, member, org.ID, card.ListFilter{}, page.Request{Limit: 50})
		if err != nil || len(cs) != 1 || cs[0].ID != mine.ID {
			t.Fatalf("member's list: %+v, %v", cs, err)
		}
		if _, err := s.Get(ctx, member, theirs.ID); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("member gets another's card: %v", err)
		}
		other := fixture.Organization(t, d, testDay, "Globex")
		foreign := issue(t, s, other.ID, nil, 10)
		if _, err := s.Get(ctx, owner, foreign.ID); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("owner gets another organization's card: %v", err)
		}
		if _, err := s.Freeze(ctx, owner, foreign.ID); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("owner freezes another organization's card: %v", err)
		}
	})
}

// benchmarkAuthorize measures approved purchases per second over cards
// cards of one organization, several at once.
func benchmarkAuthorize(b *testing.B, cards int) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name, func(b *testing.B) {
			d := dbtest.Open(b, e.DSN(b), db.WithClock(clock.NewManual(testDay)))
			s := newService(b, d)
			org, owner := fixture.Member(b, d, testDay, organization.Owner)
			fund(b, d, org.ID, "100000000.00")
			ids := make([]uuid.UUID, cards)
			for i := range ids {
				ids[i] = issue(b, s, org.ID, &owner.UserID, card.MaxMonthlyLimit).ID
			}
			var next atomic.Int64
			b.SetParallelism(4)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					id := ids[int(next.Add(1))%cards]
					dec, err := s.Authorize(context.Background(), id, purchase("0.01"))
					if err != nil || !dec.Approved {
						b.Error(fmt.Sprint(dec, err))
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "authorizations/s")
		})
	}
}

func BenchmarkAuthorizeOneCard(b *testing.B)   { benchmarkAuthorize(b, 1) }
func BenchmarkAuthorizeManyCards(b *testing.B) { benchmarkAuthorize(b, 64) }
