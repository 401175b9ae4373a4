package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Card spending (docs/api.md, Cards): what purchases
// and refunds do to the limit, the balance and the feed, in which order
// declines are decided, and that concurrency never spends past a limit or a balance.

// deposit funds org with amt of currency in the sandbox.
func deposit(t *testing.T, s *apitest.Server, org, currency, amt string) {
	t.Helper()
	ok[*api.SandboxDepositResponse](t, http.StatusCreated)(sandboxClient(t, s).API().SandboxDepositWithResponse(t.Context(), uuidOf(t, org), nil,
		api.SandboxDeposit{Currency: currency, Amount: amt}))
}

func authorizationsPath(cardID string) string {
	return "/api/v1/sandbox/cards/" + cardID + "/authorizations"
}

const merchant = "Blue Bottle Coffee"

// authorize asks the card network's question: may this card pay amount?
func authorize(t *testing.T, s *apitest.Server, cardID, amt, currency, channel, kind string) api.SandboxCardAuthorizationResult {
	t.Helper()
	var a api.SandboxCardAuthorizationResult
	s.Post(t, authorizationsPath(cardID), sbx, map[string]any{"amount": amt, "currency": currency, "merchant": merchant,
		"channel": channel, "kind": kind}).ExpectStatus(t, 200).Decode(t, &a)
	return a
}

func purchase(t *testing.T, s *apitest.Server, cardID, amt string) api.SandboxCardAuthorizationResult {
	t.Helper()
	return authorize(t, s, cardID, amt, "USD", "online", "purchase")
}

func expectDecline(t *testing.T, a api.SandboxCardAuthorizationResult, reason string) {
	t.Helper()
	if a.Approved || a.DeclineReason == nil || string(*a.DeclineReason) != reason || a.Transaction != nil {
		t.Fatalf("authorization %+v (reason %q), want declined for %s with no transaction", a, deref(a.DeclineReason), reason)
	}
}

// expectApproved checks an approved authorization and its feed row: total in
// USD, direction out for a purchase and in for a refund.
func expectApproved(t *testing.T, a api.SandboxCardAuthorizationResult, direction, usd string) api.Transaction {
	t.Helper()
	if !a.Approved || a.DeclineReason != nil || a.Transaction == nil {
		t.Fatalf("authorization approved %v, reason %q, transaction %v; want approved", a.Approved, deref(a.DeclineReason), a.Transaction)
	}
	tx := *a.Transaction
	description := "Card payment to " + merchant
	if direction == "in" {
		description = "Card refund from " + merchant
	}
	if tx.Type != "card_transaction" || tx.Effect == nil || string(tx.Effect.Direction) != direction || tx.Effect.Total != usd ||
		tx.Effect.Currency != "USD" || tx.Description != description {
		t.Fatalf("transaction %+v effect %+v; want card_transaction %s %s USD %q", tx, tx.Effect, direction, usd, description)
	}
	return tx
}

// cardFeed is the card_transaction rows of org's feed, newest first.
func cardFeed(t *testing.T, s *apitest.Server, token, org string) []api.Transaction {
	t.Helper()
	var page api.TransactionPage
	s.Get(t, "/api/v1/organizations/"+org+"/transactions?limit=100", token).ExpectStatus(t, 200).Decode(t, &page)
	if page.HasMore {
		t.Fatal("the feed has more than one page")
	}
	var out []api.Transaction
	for _, x := range page.Data {
		if x.Type == "card_transaction" {
			out = append(out, x)
		}
	}
	return out
}

func usdAvailable(t *testing.T, s *apitest.Server, token, org string) string {
	t.Helper()
	av, _ := balance(t, s, token, org, "USD")
	if av == "" {
		return "0.00" // no USD balance yet
	}
	return av
}

func expectSpent(t *testing.T, s *apitest.Server, token, cardID, spent, utilization string) api.Card {
	t.Helper()
	c := getCard(t, s, token, cardID)
	if c.Limit.SpentThisMonth != spent || c.Limit.Utilization != utilization {
		t.Fatalf("spent_this_month %s, utilization %s; want %s and %s", c.Limit.SpentThisMonth, c.Limit.Utilization, spent, utilization)
	}
	return c
}

func TestCardSpendingFollowsPurchasesAndRefunds(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "1000.00")
	c := cardFor(t, s, o.id, o.owner.id, 200)
	tok := o.owner.token

	var txs []api.Transaction
	txs = append(txs, expectApproved(t, purchase(t, s, c.Id.String(), "50.00"), "out", "50.00"))
	expectSpent(t, s, tok, c.Id.String(), "50.00", "25")
	// A euro purchase is converted at the sandbox rate (1 EUR = 1.0834 USD).
	txs = append(txs, expectApproved(t, authorize(t, s, c.Id.String(), "10.00", "EUR", "online", "purchase"), "out", "10.83"))
	expectSpent(t, s, tok, c.Id.String(), "60.83", "30")
	txs = append(txs, expectApproved(t, authorize(t, s, c.Id.String(), "20.00", "USD", "online", "refund"), "in", "20.00"))
	expectSpent(t, s, tok, c.Id.String(), "40.83", "20")
	// 25.00 EUR is 27.085 USD: half a cent rounds away from zero.
	txs = append(txs, expectApproved(t, authorize(t, s, c.Id.String(), "25.00", "EUR", "wallet", "purchase"), "out", "27.09"))
	expectSpent(t, s, tok, c.Id.String(), "67.92", "34")
	if got := usdAvailable(t, s, tok, o.id); got != "932.08" {
		t.Fatalf("USD available %s, want 932.08", got)
	}
	feed := cardFeed(t, s, tok, o.id)
	if len(feed) != 4 {
		t.Fatalf("%d card rows in the feed, want 4", len(feed))
	}
	for i, row := range feed {
		want := txs[len(txs)-1-i]
		if row.Id != want.Id || row.Effect == nil || row.Effect.Total != want.Effect.Total || row.Effect.Direction != want.Effect.Direction {
			t.Fatalf("feed row %d = %+v, want %+v newest first", i, row, want)
		}
	}
	s.Get(t, "/api/v1/organizations/"+o.id+"/transactions/"+txs[0].Id.String(), tok).ExpectStatus(t, 200)

	// Utilization follows the limit; a purchase may take spending to the limit exactly, not a cent past it.
	var patched api.Card
	patchCard(t, s, tok, c.Id.String(), map[string]any{"monthly_limit": 100}).ExpectStatus(t, 200).Decode(t, &patched)
	if patched.Limit.SpentThisMonth != "67.92" || patched.Limit.Utilization != "68" {
		t.Fatalf("after lowering the limit: %+v", patched.Limit)
	}
	expectDecline(t, purchase(t, s, c.Id.String(), "32.09"), "limit_exceeded")
	expectApproved(t, purchase(t, s, c.Id.String(), "32.08"), "out", "32.08")
	expectSpent(t, s, tok, c.Id.String(), "100.00", "100")
	expectDecline(t, purchase(t, s, c.Id.String(), "0.01"), "limit_exceeded")
	// A refund is never declined for the limit, but never returns more than the month's
	// purchases (120.00 bought, 20.00 refunded already).
	expectDecline(t, authorize(t, s, c.Id.String(), "100.01", "USD", "online", "refund"), "refund_exceeds_purchases")
	expectApproved(t, authorize(t, s, c.Id.String(), "100.00", "USD", "online", "refund"), "in", "100.00")
	expectSpent(t, s, tok, c.Id.String(), "0.00", "0")
	patchCard(t, s, tok, c.Id.String(), map[string]any{"monthly_limit": 0}).ExpectStatus(t, 200).Decode(t, &patched)
	if patched.Limit.Utilization != "0" {
		t.Fatalf("utilization with a limit of 0: %q", patched.Limit.Utilization)
	}
	expectDecline(t, purchase(t, s, c.Id.String(), "0.01"), "limit_exceeded")
	if got := usdAvailable(t, s, tok, o.id); got != "1000.00" {
		t.Fatalf("USD available %s, want 1000.00", got)
	}
	if n := len(cardFeed(t, s, tok, o.id)); n != 6 {
		t.Fatalf("%d card rows, want 6 (declines add none)", n)
	}

	// Utilization rounds half up to a whole percent; each card has its own spending.
	c2 := cardFor(t, s, o.id, o.owner.id, 200)
	expectApproved(t, purchase(t, s, c2.Id.String(), "1.00"), "out", "1.00")
	expectSpent(t, s, tok, c2.Id.String(), "1.00", "1") // 0.5 %
	expectApproved(t, purchase(t, s, c2.Id.String(), "2.00"), "out", "2.00")
	expectSpent(t, s, tok, c2.Id.String(), "3.00", "2") // 1.5 %
	expectApproved(t, authorize(t, s, c2.Id.String(), "1000", "JPY", "online", "purchase"), "out", "6.69")
	expectSpent(t, s, tok, c2.Id.String(), "9.69", "5") // 4.845 %
	expectSpent(t, s, tok, c.Id.String(), "0.00", "0")
}

// TestCardRefundsNeverExceedTheMonthsPurchases: refunds on a card in a
// month never add up to more than its purchases that month, so a refund
// creates no money: one that would is declined refund_exceeds_purchases and
// moves nothing. A refund in a foreign currency counts at its US-dollar value.
func TestCardRefundsNeverExceedTheMonthsPurchases(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	tok := o.owner.token
	deposit(t, s, o.id, "USD", "1000.00")
	c := cardFor(t, s, o.id, o.owner.id, 100)
	other := cardFor(t, s, o.id, o.owner.id, 100)

	// Nothing bought this month: nothing to refund, on any channel.
	expectDecline(t, authorize(t, s, c.Id.String(), "0.01", "USD", "online", "refund"), "refund_exceeds_purchases")
	expectDecline(t, authorize(t, s, c.Id.String(), "30.00", "USD", "wallet", "refund"), "refund_exceeds_purchases")
	expectApproved(t, purchase(t, s, c.Id.String(), "50.00"), "out", "50.00")
	expectApproved(t, authorize(t, s, c.Id.String(), "30.00", "USD", "online", "refund"), "in", "30.00")
	expectSpent(t, s, tok, c.Id.String(), "20.00", "20")
	// 20.00 of the purchases is left to refund: 18.47 EUR is 20.01 USD.
	expectDecline(t, authorize(t, s, c.Id.String(), "20.01", "USD", "online", "refund"), "refund_exceeds_purchases")
	expectDecline(t, authorize(t, s, c.Id.String(), "18.47", "EUR", "online", "refund"), "refund_exceeds_purchases")
	// Another card's purchases are not this card's.
	expectApproved(t, purchase(t, s, other.Id.String(), "60.00"), "out", "60.00")
	expectDecline(t, authorize(t, s, c.Id.String(), "20.01", "USD", "online", "refund"), "refund_exceeds_purchases")
	expectApproved(t, authorize(t, s, c.Id.String(), "20.00", "USD", "online", "refund"), "in", "20.00")
	expectSpent(t, s, tok, c.Id.String(), "0.00", "0")
	expectDecline(t, authorize(t, s, c.Id.String(), "0.01", "USD", "online", "refund"), "refund_exceeds_purchases")
	// Later purchases open room for refunds again, and the limit is whole.
	expectApproved(t, purchase(t, s, c.Id.String(), "100.00"), "out", "100.00")
	expectSpent(t, s, tok, c.Id.String(), "100.00", "100")
	if got := usdAvailable(t, s, tok, o.id); got != "840.00" {
		t.Fatalf("USD available %s, want 840.00 (declined refunds move nothing)", got)
	}
	if n := len(cardFeed(t, s, tok, o.id)); n != 5 {
		t.Fatalf("%d card rows, want 5 (declines add none)", n)
	}

	// A new month has no purchases yet: last month's are not refunded against it.
	start := now(t, s).UTC()
	advance(t, s, time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC).Sub(start))
	o.owner.signInAgain(t, s)
	expectDecline(t, authorize(t, s, c.Id.String(), "10.00", "USD", "online", "refund"), "refund_exceeds_purchases")
	expectApproved(t, purchase(t, s, c.Id.String(), "10.00"), "out", "10.00")
	expectApproved(t, authorize(t, s, c.Id.String(), "10.00", "USD", "online", "refund"), "in", "10.00")
	expectSpent(t, s, o.owner.token, c.Id.String(), "0.00", "0")
}

func TestCardAuthorizationRequestsAreChecked(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	c := cardFor(t, s, o.id, o.owner.id, 200)
	good := map[string]any{"amount": "1.00", "currency": "USD", "merchant": merchant, "channel": "online"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for key, val := range good {
			m[key] = val
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, bad := range []struct {
		field string
		value any
	}{
		{"amount", "0"}, {"amount", "0.00"}, {"amount", "-5.00"}, {"amount", "ten"}, {"amount", 5}, {"amount", nil},
		{"amount", "1234567890123456.00"},
		{"currency", "BTC"}, {"currency", "usd"}, {"currency", nil},
		{"merchant", ""}, {"merchant", strings.Repeat("m", 101)}, {"merchant", nil},
		{"channel", "mail"}, {"channel", nil},
		{"kind", "chargeback"},
	} {
		expectInvalidField(t, s.Post(t, authorizationsPath(c.Id.String()), sbx, with(bad.field, bad.value)), bad.field)
	}
	s.Post(t, authorizationsPath(uuid.NewString()), sbx, good).ExpectError(t, 404, "not_found")
	// kind defaults to purchase; the largest amount is only over the limit.
	expectApproved(t, authorize(t, s, c.Id.String(), "1.00", "USD", "online", "purchase"), "out", "1.00")
	var a api.SandboxCardAuthorizationResult
	s.Post(t, authorizationsPath(c.Id.String()), sbx, with("amount", "999999999999999.99")).ExpectStatus(t, 200).Decode(t, &a)
	expectDecline(t, a, "limit_exceeded")
	s.Post(t, authorizationsPath(c.Id.String()), sbx, good).ExpectStatus(t, 200).Decode(t, &a)
	expectApproved(t, a, "out", "1.00")
	expectSpent(t, s, o.owner.token, c.Id.String(), "2.00", "1")
	if got := usdAvailable(t, s, o.owner.token, o.id); got != "98.00" {
		t.Fatalf("USD available %s, want 98.00", got)
	}
}

// TestCardSpendingResetsAtTheMonthBoundary: spending counts the current UTC
// calendar month of the service clock; it resets at the first instant of the
// next month, not a second before.
func TestCardSpendingResetsAtTheMonthBoundary(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "1000.00")
	c := cardFor(t, s, o.id, o.owner.id, 100)
	start := now(t, s).UTC()
	boundary := time.Date(start.Year(), start.Month()+1, 1, 0, 0, 0, 0, time.UTC)
	if boundary.Sub(start) < 10*time.Minute {
		boundary = boundary.AddDate(0, 1, 0)
	}
	advanceTo := func(at time.Time) {
		t.Helper()
		if got := advance(t, s, at.Sub(now(t, s))); !got.Equal(at) {
			t.Fatalf("clock at %v, want %v", got, at)
		}
	}
	expectApproved(t, purchase(t, s, c.Id.String(), "30.00"), "out", "30.00")

	advanceTo(boundary.Add(-5 * time.Minute))
	o.owner.signInAgain(t, s) // the session idled out
	expectSpent(t, s, o.owner.token, c.Id.String(), "30.00", "30")
	expectApproved(t, purchase(t, s, c.Id.String(), "20.00"), "out", "20.00")
	advanceTo(boundary.Add(-time.Second))
	expectSpent(t, s, o.owner.token, c.Id.String(), "50.00", "50")
	expectApproved(t, purchase(t, s, c.Id.String(), "40.00"), "out", "40.00")
	expectDecline(t, purchase(t, s, c.Id.String(), "10.01"), "limit_exceeded")
	expectSpent(t, s, o.owner.token, c.Id.String(), "90.00", "90")

	advanceTo(boundary)
	expectSpent(t, s, o.owner.token, c.Id.String(), "0.00", "0")
	// The whole limit is there again.
	expectApproved(t, purchase(t, s, c.Id.String(), "100.00"), "out", "100.00")
	expectSpent(t, s, o.owner.token, c.Id.String(), "100.00", "100")
	expectApproved(t, authorize(t, s, c.Id.String(), "10.00", "USD", "online", "refund"), "in", "10.00")
	expectSpent(t, s, o.owner.token, c.Id.String(), "90.00", "90")
	if got := usdAvailable(t, s, o.owner.token, o.id); got != "820.00" {
		t.Fatalf("USD available %s, want 820.00", got)
	}
}

// TestCardDeclineReasonsComeInContractOrder builds situations where several
// reasons to decline hold at once; the first in the order of docs/api.md,
// Cards, wins,
// and no decline moves money or adds a feed row.
func TestCardDeclineReasonsComeInContractOrder(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	tok := o.owner.token
	c := cardFor(t, s, o.id, o.owner.id, 100) // no physical card, no USD
	decline := func(amt, currency, channel, kind, reason string) {
		t.Helper()
		expectDecline(t, authorize(t, s, c.Id.String(), amt, currency, channel, kind), reason)
	}

	// Inactive and frozen, with no physical card, over the limit and without funds.
	cardAction(t, s, tok, c.Id.String(), "freeze")
	setCardStatus(t, s, c.Id.String(), "inactive")
	decline("500.00", "USD", "terminal", "purchase", "card_inactive")
	decline("5.00", "USD", "online", "refund", "card_inactive")
	// Frozen, with the rest still true.
	if !setCardStatus(t, s, c.Id.String(), "active").Frozen {
		cardAction(t, s, tok, c.Id.String(), "freeze")
	}
	decline("500.00", "USD", "terminal", "purchase", "card_frozen")
	decline("500.00", "USD", "atm", "purchase", "card_frozen")
	decline("5.00", "USD", "online", "refund", "card_frozen")
	// Terminals and ATMs need an active physical card before the limit counts.
	cardAction(t, s, tok, c.Id.String(), "unfreeze")
	decline("500.00", "USD", "terminal", "purchase", "physical_card_not_active")
	decline("500.00", "USD", "atm", "purchase", "physical_card_not_active")
	// Online and in wallets the limit comes before the money.
	decline("500.00", "USD", "online", "purchase", "limit_exceeded")
	decline("100.01", "USD", "wallet", "purchase", "limit_exceeded")
	decline("92.31", "EUR", "online", "purchase", "limit_exceeded")     // 100.01 USD
	decline("92.30", "EUR", "online", "purchase", "insufficient_funds") // 100.00 USD: within the limit
	decline("50.00", "USD", "online", "purchase", "insufficient_funds")

	if got := usdAvailable(t, s, tok, o.id); got != "0.00" {
		t.Fatalf("declines moved money: USD available %s", got)
	}
	if rows := cardFeed(t, s, tok, o.id); len(rows) != 0 {
		t.Fatalf("declines added feed rows: %+v", rows)
	}
	expectSpent(t, s, tok, c.Id.String(), "0.00", "0")

	deposit(t, s, o.id, "USD", "40.00")
	decline("40.01", "USD", "online", "purchase", "insufficient_funds")
	expectApproved(t, purchase(t, s, c.Id.String(), "40.00"), "out", "40.00")
	if got := usdAvailable(t, s, tok, o.id); got != "0.00" {
		t.Fatalf("USD available %s after spending it all", got)
	}

	// With the physical card active, terminals reach the limit and funds checks.
	activate(t, s, tok, c.Id.String(), orderAndShip(t, s, tok, c.Id.String())).ExpectStatus(t, 200)
	decline("60.01", "USD", "terminal", "purchase", "limit_exceeded")
	decline("30.00", "USD", "atm", "purchase", "insufficient_funds")
	deposit(t, s, o.id, "USD", "100.00")
	expectApproved(t, authorize(t, s, c.Id.String(), "30.00", "USD", "terminal", "purchase"), "out", "30.00")
	expectSpent(t, s, tok, c.Id.String(), "70.00", "70")
	// A refund is declined for neither limit nor funds.
	patchCard(t, s, tok, c.Id.String(), map[string]any{"monthly_limit": 0}).ExpectStatus(t, 200)
	expectApproved(t, authorize(t, s, c.Id.String(), "5.00", "USD", "terminal", "refund"), "in", "5.00")
	expectSpent(t, s, tok, c.Id.String(), "65.00", "0")
	if got := usdAvailable(t, s, tok, o.id); got != "75.00" {
		t.Fatalf("USD available %s, want 75.00", got)
	}
	if rows := cardFeed(t, s, tok, o.id); len(rows) != 3 {
		t.Fatalf("%d card rows, want 3", len(rows))
	}
}

// oneShot asks for a connection of its own that closes after the response.
// Concurrent calls send it so that the client leaves no dialed, never-used
// connection behind, which would hold up the server's graceful stop.
var oneShot = map[string]string{"Connection": "close"}

// concurrently runs n authorizations at once and counts approvals and decline reasons.
func concurrently(t *testing.T, s *apitest.Server, n int, body func(i int) (cardID string, req map[string]any)) map[string]int {
	t.Helper()
	return answersAtOnce(t, s, n, func(i int) apitest.Request {
		cardID, req := body(i)
		return apitest.Request{Method: "POST", Path: authorizationsPath(cardID), Bearer: sbx, Body: req}
	}, func(_ int, r *apitest.Response) string {
		if r.Status != 200 {
			return fmt.Sprintf("status %d", r.Status)
		}
		var a api.SandboxCardAuthorizationResult
		r.Decode(t, &a)
		if !a.Approved {
			return deref(a.DeclineReason)
		}
		return "approved"
	})
}

// answersAtOnce sends n requests at the same moment, each on a connection
// of its own, and counts the answers by what key makes of them.
func answersAtOnce(t *testing.T, s *apitest.Server, n int, req func(i int) apitest.Request, key func(i int, r *apitest.Response) string) map[string]int {
	t.Helper()
	var (
		wg  sync.WaitGroup
		mu  sync.Mutex
		out = map[string]int{}
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rq := req(i)
			rq.Header = oneShot
			k := key(i, s.Do(t, rq))
			mu.Lock()
			out[k]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// byStatus keys an answer by its status code.
func byStatus(_ int, r *apitest.Response) string { return fmt.Sprint(r.Status) }

// TestCardConcurrentPurchasesStayWithinTheLimit: thirty purchases of 7.00 at
// once on a card with a limit of 100: exactly fourteen fit.
func TestCardConcurrentPurchasesStayWithinTheLimit(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "1000.00")
	c := cardFor(t, s, o.id, o.owner.id, 100)
	got := concurrently(t, s, 30, func(int) (string, map[string]any) {
		return c.Id.String(), map[string]any{"amount": "7.00", "currency": "USD", "merchant": merchant, "channel": "online"}
	})
	if got["approved"] != 14 || got["limit_exceeded"] != 16 {
		t.Fatalf("answers %v, want 14 approved and 16 limit_exceeded", got)
	}
	expectSpent(t, s, o.owner.token, c.Id.String(), "98.00", "98")
	if av := usdAvailable(t, s, o.owner.token, o.id); av != "902.00" {
		t.Fatalf("USD available %s, want 902.00", av)
	}
	if rows := cardFeed(t, s, o.owner.token, o.id); len(rows) != 14 {
		t.Fatalf("%d card rows, want 14", len(rows))
	}
}

// TestCardConcurrentPurchasesNeverOverdraw: thirty purchases of 3.00 at once
// across five cards with room to spare, against 50.00 USD: exactly sixteen
// are paid, and the balance ends at 2.00, never below zero.
func TestCardConcurrentPurchasesNeverOverdraw(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "50.00")
	var cards []api.Card
	for range 5 {
		cards = append(cards, cardFor(t, s, o.id, o.owner.id, 1000))
	}
	got := concurrently(t, s, 30, func(i int) (string, map[string]any) {
		return cards[i%len(cards)].Id.String(), map[string]any{"amount": "3.00", "currency": "USD", "merchant": merchant, "channel": "online"}
	})
	if got["approved"] != 16 || got["insufficient_funds"] != 14 {
		t.Fatalf("answers %v, want 16 approved and 14 insufficient_funds", got)
	}
	if av := usdAvailable(t, s, o.owner.token, o.id); av != "2.00" {
		t.Fatalf("USD available %s, want 2.00", av)
	}
	spent := 0
	for _, c := range cards {
		var cents int
		var whole, frac int
		fmt.Sscanf(getCard(t, s, o.owner.token, c.Id.String()).Limit.SpentThisMonth, "%d.%d", &whole, &frac)
		cents = whole*100 + frac
		spent += cents
	}
	if spent != 4800 {
		t.Fatalf("the cards spent %d cents together, want 4800", spent)
	}
	if rows := cardFeed(t, s, o.owner.token, o.id); len(rows) != 16 {
		t.Fatalf("%d card rows, want 16", len(rows))
	}
}
