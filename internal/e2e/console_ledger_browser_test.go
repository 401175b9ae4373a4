package e2e_test

// The console's money pages in a real browser: the transactions feed with
// its filters, live rows and statement download, the cards page (freeze,
// unfreeze, the monthly limit) and the payment requests page (accept,
// decline), each state checked with axe and the page's policy.

import (
	"bytes"
	"encoding/csv"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// ledgerWaitFile waits until dir holds name, complete (Chromium writes a
// download beside it and renames it when done), and returns its bytes.
func ledgerWaitFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			return b
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			entries, _ := os.ReadDir(dir)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("no download %s in %s (it holds %v)", name, dir, names)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// ledgerRequest proposes amount EUR to contact as a program would, through the sandbox.
func ledgerRequest(t *testing.T, s *apitest.Server, org, contact, amount, reference string) api.PaymentRequest {
	t.Helper()
	var r api.PaymentRequest
	s.Post(t, "/api/v1/sandbox/organizations/"+org+"/payment-requests", sbx, map[string]any{
		"payment_contact_id": contact, "amount": amount, "currency": "EUR", "reference": reference, "reason": "PYR001",
	}).ExpectStatus(t, http.StatusCreated).Decode(t, &r)
	return r
}

// An owner with money and a card walks the money pages: the deposit in the
// feed, filtered out and back, a second deposit arriving live; a CSV
// statement downloaded and read; the card frozen, unfrozen and its limit
// changed (and refused when out of range); a program's payment requests,
// one declined with a reason, one accepted into a payment to approve.
func TestConsoleLedgerFeedStatementAndCards(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	const email = "ada@console-ledger.test"
	o := createOrg(t, s, email)
	org, secret, owner := o.Organization.Id.String(), *o.Owner.TotpSecret, o.Owner.UserId.String()
	token := signInFully(t, s, email, secret)
	deposit(t, s, org, "EUR", "1500.00")
	deposit(t, s, org, "USD", "25000.00")
	card := cardFor(t, s, org, owner, 1000)
	contact := ok[*api.CreatePaymentContactResponse](t, 201)(s.Client(t, token).API().CreatePaymentContactWithResponse(t.Context(), uuidOf(t, org), nil,
		api.PaymentContactCreation{Name: "Müller Maschinenbau GmbH", Currency: "EUR", Rail: api.RailFiat,
			Iban: ptr("DE89 3704 0044 0532 0130 00"), SwiftCode: ptr("COBADEFFXXX")})).JSON201.Id.String()

	b := newBrowser(t, s)
	downloads := t.TempDir()
	b.run("open the console", chromedp.Navigate(s.URL+"/console/"),
		cdpbrowser.SetDownloadBehavior(cdpbrowser.SetDownloadBehaviorBehaviorAllow).WithDownloadPath(downloads))
	b.signInByMouse(email, secret)

	// The dashboard: balances with their rows, and the way to the feed.
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€1,500.00")
	b.waitText(`#balances-rows tr[data-currency="USD"] td[data-field="available"]`, "$25,000.00")
	b.waitText("#live", "Live")
	b.check("the dashboard")
	b.capture("console-dashboard")
	b.click(`a[href="#/transactions"]:not([data-view])`)

	// The deposit, money in by sign and by text.
	b.waitText("#tx-rows", "Deposit")
	first := `#tx-rows tr[data-type="deposit"][data-currency="EUR"]`
	b.waitText(first, "+€1,500.00")
	b.waitText(first+` td[data-field="direction"]`, "Money in")
	b.waitText("#live", "Live")
	b.check("the transactions feed")
	var align string
	b.run("the alignment", chromedp.Evaluate(`getComputedStyle(document.querySelector('#tx-rows td[data-field="amount"]')).textAlign`, &align))
	if align != "right" {
		t.Fatalf("amounts are aligned %q, want right", align)
	}

	// Only card rows: the deposits go, and the empty state says what to do.
	b.click(`#tx-types input[value="card_transaction"]`)
	b.click(`#tx-filter button[type="submit"]`)
	b.waitText("#tx-empty", "No transactions match these filters")
	b.within("no rows", chromedp.WaitNotPresent(first, chromedp.ByQuery))
	b.check("the feed filtered to nothing")
	// Dates the wrong way round: the envelope's message, next to the field.
	b.run("set the dates", chromedp.SetValue("#tx-date-start", "2026-12-02", chromedp.ByID), chromedp.SetValue("#tx-date-end", "2026-12-01", chromedp.ByID))
	b.click(`#tx-filter button[type="submit"]`)
	var refused apitest.ErrorBody
	s.Get(t, orgPath(org, "/transactions?date_start=2026-12-02&date_end=2026-12-01&type=card_transaction"), token).ExpectStatus(t, 400).Decode(t, &refused)
	b.waitText("#tx-filter-error", refused.Error.Message)
	b.check("the feed's filter refused")
	b.click("#tx-empty-clear")
	b.waitText(first, "+€1,500.00")
	var ticked bool
	b.run("the filter form", chromedp.Evaluate(`document.querySelector('#tx-types input[value="card_transaction"]').checked`, &ticked))
	if ticked {
		t.Fatal("clearing the filters left a type ticked")
	}

	// A second deposit comes in at the top without a reload.
	b.run("mark the page", chromedp.Evaluate(`window.__marker = "same page"; 0`, nil))
	deposit(t, s, org, "EUR", "250.00")
	b.waitText(`#tx-rows tr:first-child td[data-field="amount"]`, "+€250.00")
	var marker string
	var count int
	b.run("read the page", chromedp.Evaluate(`window.__marker || ""`, &marker), chromedp.Evaluate(`document.querySelectorAll("#tx-rows tr").length`, &count))
	if marker != "same page" || count != 3 {
		t.Fatalf("after a live deposit: marker %q, %d rows; want the same page with 3 rows", marker, count)
	}
	b.check("the feed with a live row")

	// The statement: a refused period shows the envelope's message...
	today := day(now(t, s))
	b.run("a period the wrong way round", chromedp.SetValue("#statement-currency", "EUR", chromedp.ByID),
		chromedp.SetValue("#statement-from", today, chromedp.ByID), chromedp.SetValue("#statement-to", "2020-01-01", chromedp.ByID))
	b.click("#statement-download")
	s.Get(t, orgPath(org, "/statements?currency=EUR&from="+today+"&to=2020-01-01&format=csv"), token).ExpectStatus(t, 400).Decode(t, &refused)
	b.waitText("#statement-error", refused.Error.Message)
	b.check("a statement refused")
	// ...and a right one downloads as CSV: the header, the two deposits in
	// booking order, each with the balance after it, from an opening of
	// nothing to the closing balance of the JSON statement.
	b.run("today", chromedp.SetValue("#statement-to", today, chromedp.ByID), chromedp.SetValue("#statement-format", "csv", chromedp.ByID))
	b.click("#statement-download")
	name := "statement-EUR-" + today + "-" + today + ".csv"
	b.waitText("#statement-status", "Downloaded "+name)
	records, err := csv.NewReader(bytes.NewReader(ledgerWaitFile(t, downloads, name))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var js statementBody
	s.Get(t, orgPath(org, "/statements?currency=EUR&from="+today+"&to="+today), token).ExpectStatus(t, 200).Decode(t, &js)
	wantHeader := []string{"transaction_id", "booked_at", "amount", "balance_after", "type", "description", "counterparty", "reference"}
	if len(records) != 3 || !slices.Equal(records[0], wantHeader) ||
		records[1][2] != "1500.00" || records[1][3] != "1500.00" || records[1][4] != "deposit" ||
		records[2][2] != "250.00" || records[2][3] != "1750.00" || records[2][4] != "deposit" ||
		js.OpeningBalance != "0.00" || js.ClosingBalance != records[2][3] || records[1][0] != js.Entries[0].TransactionID {
		t.Fatalf("the CSV statement %q, the JSON statement %+v", records, js)
	}
	b.check("a statement downloaded")

	// Cards: the owner's card, with its limit and what was spent.
	b.run("the cards page", chromedp.Navigate(s.URL+"/console/#/cards"))
	row := `#cards-rows tr[data-id="` + card.Id.String() + `"]`
	b.waitText(row, "•••• "+card.LastFour)
	b.waitText(row+` td[data-field="limit"]`, "$1,000.00")
	b.waitText(row+` td[data-field="spent"]`, "$0.00")
	b.waitText("#live", "Live")
	b.check("the cards page")

	b.click(row + ` button[data-action="freeze"]`)
	b.waitText(row+` td[data-field="status"]`, "frozen")
	b.waitText("#cards-notice", "is frozen")
	if c := getCard(t, s, token, card.Id.String()); !c.Frozen || c.Status != "active" {
		t.Fatalf("after freezing in the console the card is frozen=%t, status %s", c.Frozen, c.Status)
	}
	b.check("a frozen card")
	b.click(row + ` button[data-action="unfreeze"]`)
	b.waitText(row+` td[data-field="status"]`, "active")
	if c := getCard(t, s, token, card.Id.String()); c.Frozen {
		t.Fatal("after unfreezing in the console the card is still frozen")
	}

	// The limit: a value out of range is refused next to the field, with
	// the envelope's detail; a good one is saved.
	b.click(row + ` button[data-action-limit]`)
	b.within("the limit dialog", chromedp.WaitVisible("#card-limit-amount", chromedp.ByID))
	b.run("too much", chromedp.SetValue("#card-limit-amount", "2000000", chromedp.ByID))
	b.click("#card-limit-save")
	b.waitText("#card-limit-form .field-error", "must be a whole number of US dollars from 0 to 1000000.")
	b.waitText("#card-limit-error", "monthly_limit")
	b.check("a limit refused")
	b.run("a good limit", chromedp.SetValue("#card-limit-amount", "2500", chromedp.ByID))
	b.click("#card-limit-save")
	b.waitText(row+` td[data-field="limit"]`, "$2,500.00")
	b.within("the dialog closes", chromedp.WaitNotVisible("#card-limit", chromedp.ByID))
	if c := getCard(t, s, token, card.Id.String()); c.Limit.MonthlyLimit != 2500 {
		t.Fatalf("the limit is %d after saving 2500", c.Limit.MonthlyLimit)
	}
	// The issuer's change arrives live.
	setCardStatus(t, s, card.Id.String(), "inactive")
	b.waitText(row+` td[data-field="status"]`, "inactive")
	b.within("no freeze on an inactive card", chromedp.WaitNotPresent(row+` button[data-action]`, chromedp.ByQuery))
	b.check("an inactive card")

	// Payment requests: one waiting when the page opens, one arriving live.
	declined := ledgerRequest(t, s, org, contact, "120.00", "PO 2026-0417")
	b.run("the requests page", chromedp.Navigate(s.URL+"/console/#/requests"))
	prow := func(id string) string { return `#pr-rows tr[data-id="` + id + `"]` }
	b.waitText(prow(declined.Id.String()), "PO 2026-0417")
	b.waitText(prow(declined.Id.String()), "Sandbox")
	b.waitText(prow(declined.Id.String())+` td[data-field="amount"]`, "€120.00")
	b.waitText("#live", "Live")
	b.check("the payment requests page")
	accepted := ledgerRequest(t, s, org, contact, "80.00", "PO 2026-0418")
	b.waitText(`#pr-rows tr:first-child`, "PO 2026-0418")

	// Decline: a reason is required (the envelope says so), then given.
	b.click(prow(declined.Id.String()) + ` button:not(.primary)`)
	b.within("the decline dialog", chromedp.WaitVisible("#pr-decline-reason", chromedp.ByID))
	b.click("#pr-decline-submit")
	b.within("the reason is asked for", chromedp.WaitVisible("#pr-decline-form .field-error", chromedp.ByQuery))
	b.check("a decline without a reason")
	b.run("the reason", chromedp.SendKeys("#pr-decline-reason", "Paid by card already.", chromedp.ByID))
	b.click("#pr-decline-submit")
	b.waitText(prow(declined.Id.String())+` td[data-field="status"]`, "declined")
	b.waitText(prow(declined.Id.String())+` td[data-field="status"]`, "Paid by card already.")
	var got api.PaymentRequest
	s.Get(t, requestsPath(org, "/"+declined.Id.String()), token).ExpectStatus(t, 200).Decode(t, &got)
	if got.Status != "declined" || str(got.DeclineReason) != "Paid by card already." {
		t.Fatalf("after declining in the console: %s, reason %q", got.Status, str(got.DeclineReason))
	}
	b.check("a declined request")

	// Accept: a payment in the owner's name, to approve on the payments page.
	b.click(prow(accepted.Id.String()) + ` button.primary`)
	b.waitText("#pr-notice", "now awaits approval")
	s.Get(t, requestsPath(org, "/"+accepted.Id.String()), token).ExpectStatus(t, 200).Decode(t, &got)
	if got.Status != "accepted" || got.PaymentId == nil {
		t.Fatalf("after accepting in the console: %s, payment %v", got.Status, got.PaymentId)
	}
	var href string
	b.run("the link", chromedp.AttributeValue(`#pr-notice a`, "href", &href, nil, chromedp.ByQuery))
	if href != "#/payments/"+got.PaymentId.String() {
		t.Fatalf("the accepted request links to %q, want the payment %s", href, got.PaymentId)
	}
	b.waitText(prow(accepted.Id.String()), "Approve the payment")
	b.check("an accepted request")

	// A long feed comes a page at a time: fifty rows, then the rest on
	// "Load more", oldest last, each row once.
	for range 50 {
		deposit(t, s, org, "EUR", "1.00")
	}
	b.run("the feed again", chromedp.Navigate(s.URL+"/console/#/transactions"))
	b.within("a first page", chromedp.WaitVisible("#tx-more", chromedp.ByID))
	rows := func() (n int, last string) {
		b.run("count the rows", chromedp.Evaluate(`document.querySelectorAll("#tx-rows tr").length`, &n),
			chromedp.Evaluate(`document.querySelector("#tx-rows tr:last-child td[data-field=amount]").textContent`, &last))
		return n, last
	}
	if n, _ := rows(); n != 50 {
		t.Fatalf("the first page shows %d rows, want 50", n)
	}
	b.check("a long feed")
	b.click("#tx-more")
	b.within("the last page", chromedp.WaitNotVisible("#tx-more", chromedp.ByID))
	if n, last := rows(); n != 53 || last != "+€1,500.00" {
		t.Fatalf("after Load more: %d rows, the last %q; want 53, the first deposit last", n, last)
	}
}
