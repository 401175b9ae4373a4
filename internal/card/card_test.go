package card_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/sandbox"
)

// testDay is late on the last day of a month, so a test can cross into the next.
var testDay = time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)

func newService(t testing.TB, d *db.DB) *card.Service {
	keys := fixture.Keys(t)
	return &card.Service{DB: d, Keys: keys, Issuer: sandbox.Issuer{DB: d, Keys: keys}, Rates: sandbox.Rates{}}
}

// authorize decides r for card id as a merchant's request is decided:
// priced first, then decided in a transaction of its own (the flow that
// files purchases as expenses, internal/flow/cardspend, has its own tests).
func authorize(s *card.Service, id uuid.UUID, r card.AuthorizationRequest) (card.Decision, error) {
	ctx := context.Background()
	p, err := s.Price(ctx, id, r)
	if err != nil {
		return card.Decision{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (card.Decision, error) { return s.Decide(ctx, tx, p) })
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

func refund(amount string) card.AuthorizationRequest {
	r := purchase(amount)
	kind := "refund"
	r.Kind = &kind
	return r
}

func TestWeakPINsAreRefused(t *testing.T) {
	for pin, ok := range map[string]bool{
		"2580": true, "1357": true, "0912": true, "1243": true,
		"1111": false, "0000": false, "1234": false, "0123": false, "6789": false, "9876": false, "3210": false,
		// Runs wrap around from 9 to 0 and back.
		"7890": false, "8901": false, "9012": false, "0987": false, "1098": false, "2109": false,
		"7891": true, "9013": true, "0986": true, "1097": true,
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
			dec, err := authorize(s, id, r)
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
		org, owner := fixture.Member(t, d, organization.Owner)
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
		org, owner := fixture.Member(t, d, organization.Owner)
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
		org, owner := fixture.Member(t, d, organization.Owner)
		fund(t, d, org.ID, "1000.00")
		c := issue(t, s, org.ID, &owner.UserID, 100)
		spent := func() int64 {
			got, err := s.Get(context.Background(), owner, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			return got.SpentThisMonth
		}
		if dec, err := authorize(s, c.ID, purchase("90.00")); err != nil || !dec.Approved {
			t.Fatalf("%+v %v", dec, err)
		}
		clk.Advance(time.Hour - time.Second) // 23:59:59 on the 31st
		if dec, _ := authorize(s, c.ID, purchase("20.00")); dec.Approved || spent() != 9000 {
			t.Fatalf("before midnight: %+v, spent %d", dec, spent())
		}
		clk.Advance(time.Second) // 1 February 00:00:00 UTC
		if spent() != 0 {
			t.Fatalf("spent %d cents at the start of the month", spent())
		}
		if dec, err := authorize(s, c.ID, purchase("20.00")); err != nil || !dec.Approved || spent() != 2000 {
			t.Fatalf("after midnight: %+v %v, spent %d", dec, err, spent())
		}
		// A refund lowers this month's spending, down to zero: January's
		// purchase is not refunded against February's.
		if dec, err := authorize(s, c.ID, refund("20.01")); err != nil || dec.Approved || *dec.DeclineReason != card.DeclineRefundExceedsPurchases {
			t.Fatalf("refund over the month's purchases: %+v %v", dec, err)
		}
		if dec, err := authorize(s, c.ID, refund("20.00")); err != nil || !dec.Approved || spent() != 0 {
			t.Fatalf("refund: %+v %v, spent %d", dec, err, spent())
		}
	})
}

// Refunds sent at once on one card never add up to more than its purchases
// this month: the card's row is locked, so they are decided one after
// another, and no refund creates money; on both engines.
func TestConcurrentRefundsNeverExceedTheMonthsPurchases(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		s := newService(t, d)
		org, owner := fixture.Member(t, d, organization.Owner)
		fund(t, d, org.ID, "100.00")
		c := issue(t, s, org.ID, &owner.UserID, 1000)
		for _, amount := range []string{"40.00", "25.00"} {
			if dec, err := authorize(s, c.ID, purchase(amount)); err != nil || !dec.Approved {
				t.Fatalf("purchase: %+v %v", dec, err)
			}
		}
		ids := make([]uuid.UUID, 12)
		for i := range ids {
			ids[i] = c.ID
		}
		outcomes := authorizeAtOnce(t, s, ids, refund("10.00")) // 65.00 bought: six refunds of 10.00 fit
		if outcomes["approved"] != 6 || outcomes[card.DeclineRefundExceedsPurchases] != 6 {
			t.Fatalf("outcomes %v; want 6 approved and 6 over the purchases", outcomes)
		}
		got, err := s.Get(context.Background(), owner, c.ID)
		if err != nil || got.SpentThisMonth != 500 {
			t.Fatalf("card after: spent %d cents, %v; want 500", got.SpentThisMonth, err)
		}
		if bal, err := ledger.AvailableBalance(context.Background(), d.Reader(), org.ID, "USD"); err != nil || bal != 10000-500 {
			t.Fatalf("balance %d, %v; want 9500", bal, err)
		}
		if err := ledger.CheckInvariants(context.Background(), d.Reader()); err != nil {
			t.Fatal(err)
		}
	})
}

// The activation code is made when the physical card is ordered and kept
// only as a keyed hash: not in any column in the clear, not the card's last
// four digits, and handed over once, when the sandbox ships the card.
// Activation takes that code and nothing else; on both engines.
func TestActivationCodeComesWithTheLetterOnly(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		s := newService(t, d)
		org, owner := fixture.Member(t, d, organization.Owner)
		c := issue(t, s, org.ID, &owner.UserID, 100)
		if _, err := s.OrderPhysical(ctx, owner, c.ID, card.OrderRequest{ShippingAddress: &card.Address{
			Line1: "1 Market Street", City: "San Francisco", PostalCode: "94105", CountryCode: "US"}}); err != nil {
			t.Fatal(err)
		}
		shipped, err := s.Ship(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		code := shipped.ActivationCode
		if len(code) != 6 || (card.ActivateRequest{ActivationCode: code}).Validate() != nil || shipped.Card.Physical.State != card.PhysicalAwaitingActivation {
			t.Fatalf("shipped: %+v", shipped)
		}
		// Nothing in the database holds the code in the clear.
		var hash string
		if err := d.Reader().QueryRowContext(ctx, `SELECT activation_code_hash FROM cards WHERE id = $1`, c.ID).Scan(&hash); err != nil {
			t.Fatal(err)
		}
		if len(hash) != 64 || strings.Contains(hash, code) {
			t.Fatalf("stored %q for code %s: want a keyed hash", hash, code)
		}
		var letters int
		if err := d.Reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM sandbox_card_letters`).Scan(&letters); err != nil || letters != 0 {
			t.Fatalf("%d letters kept after shipping, %v", letters, err)
		}
		// The last four digits, padded to six, and any other code are wrong.
		for _, wrong := range []string{"00" + c.LastFour, c.LastFour + "00", otherCode(code)} {
			if wrong == code {
				continue
			}
			if _, err := s.Activate(ctx, owner, c.ID, card.ActivateRequest{ActivationCode: wrong}); !apierr.Is(err, apierr.InvalidCode) {
				t.Fatalf("activating with %s: %v, want invalid_code", wrong, err)
			}
		}
		got, err := s.Activate(ctx, owner, c.ID, card.ActivateRequest{ActivationCode: code})
		if err != nil || got.Physical.State != card.PhysicalActive {
			t.Fatalf("activating with the letter's code: %+v %v", got.Physical, err)
		}
		// The code is spent with the activation.
		var left *string
		if err := d.Reader().QueryRowContext(ctx, `SELECT activation_code_hash FROM cards WHERE id = $1`, c.ID).Scan(&left); err != nil || left != nil {
			t.Fatalf("after activation the card keeps %v, %v", left, err)
		}
	})
}

func otherCode(code string) string {
	b := []byte(code)
	for i := range b {
		b[i] = '0' + (b[i]-'0'+5)%10
	}
	return string(b)
}

// A member sees only their own cards; another organization's card is not found.
func TestMembersSeeOnlyTheirOwnCards(t *testing.T) {
	fixture.Each(t, testDay, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		ctx := context.Background()
		s := newService(t, d)
		org, owner := fixture.Member(t, d, organization.Owner)
		member := fixture.Join(t, d, org.ID, "bo@acme.test", organization.Member)
		mine := issue(t, s, org.ID, &member.UserID, 10)
		theirs := issue(t, s, org.ID, &owner.UserID, 10)
		cs, err := s.List(ctx, member, org.ID, card.ListFilter{}, page.Request{Limit: 50})
		if err != nil || len(cs) != 1 || cs[0].ID != mine.ID {
			t.Fatalf("member's list: %+v, %v", cs, err)
		}
		if _, err := s.Get(ctx, member, theirs.ID); !apierr.Is(err, apierr.NotFound) {
			t.Fatalf("member gets another's card: %v", err)
		}
		other := fixture.Organization(t, d, "Globex")
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
			d := dbtest.Open(b, e.Migrated(b), db.WithClock(clock.NewManual(testDay)))
			s := newService(b, d)
			org, owner := fixture.Member(b, d, organization.Owner)
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
					dec, err := authorize(s, id, purchase("0.01"))
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
