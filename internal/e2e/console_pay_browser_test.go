package e2e_test

// The payment walk in the console: an owner funds the organization, sets up
// the sandbox approving app, pays a new supplier, approves the payment with
// the match code entered in the sandbox panel's inbox, settles it, and sees
// the balances follow, all in a real browser.

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/strongroom/strongroom/internal/apitest"
)

// payNote is the payment's internal note: text from outside, shown as text.
const payNote = "<img src=x onerror=alert(1)> January maintenance"

func TestConsolePayWalk(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	const email = "ada@console-pay.test"
	org, secret := consoleOrg(t, s, email)
	b := newBrowser(t, s)

	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.signInByMouse(email, secret)
	b.waitText("#balances-title", "Balances")
	b.run("mark the page", chromedp.Evaluate(`window.__marker = "same page"; 0`, nil))

	// The sandbox panel asks for its token once; a wrong one is refused.
	b.openPage("sandbox", "#token-form")
	b.check("the sandbox token form")
	b.typeInto("#sandbox-token", "not-the-token")
	b.click(`#token-form button[type="submit"]`)
	b.waitText("#token-form [role=alert]", "did not accept this sandbox token")
	b.typeInto("#sandbox-token", sbx)
	b.click(`#token-form button[type="submit"]`)
	b.within("the sandbox tools", chromedp.WaitVisible("#sandbox-tools", chromedp.ByID))
	var stored struct {
		Token string `json:"token"`
		Local int    `json:"local"`
		Type  string `json:"type"`
	}
	b.run("read the storage", chromedp.Evaluate(`({token: sessionStorage.getItem("strongroom.sandbox-token") || "", local: localStorage.length,
		type: document.querySelector("#sandbox-token").type})`, &stored))
	if stored.Token != sbx || stored.Local != 0 || stored.Type != "password" {
		t.Fatalf("the sandbox token: in sessionStorage %t, localStorage %d entries, input type %q; want sessionStorage only, a password input",
			stored.Token == sbx, stored.Local, stored.Type)
	}
	b.waitText("#inbox-empty", "Nothing waits for your approval")
	b.check("the sandbox panel")

	// Funds, and the approving app.
	b.typeInto("#deposit-amount", "1000.00")
	b.click(`#deposit-form button[type="submit"]`)
	b.waitText("#deposit-result", "Deposited €1,000.00")
	b.click("#app-setup")
	b.waitText("#app-result", "Your sandbox approving app is set up")
	b.check("the sandbox panel after a deposit")

	// A new supplier and a payment to them.
	b.openPage("payments", "#payments-empty")
	b.check("the empty payments page")
	b.click("#new-payment")
	b.within("the new contact's fields", chromedp.WaitVisible("#new-contact", chromedp.ByID))
	b.check("the new payment form")
	b.typeInto("#contact-name", "Müller Maschinenbau GmbH")
	b.typeInto("#contact-iban", "DE89 3704 0044 0532 0130 01") // a wrong check digit
	b.typeInto("#contact-swift", "COBADEFFXXX")
	b.typeInto("#pay-amount", "100.00")
	b.typeInto("#pay-reference", "Invoice 2026-118")
	b.typeInto("#pay-notes", payNote)
	b.click(`#payment-form button[type="submit"]`)
	b.within("the IBAN's error", chromedp.WaitVisible(`#contact-iban[aria-invalid="true"] + .field-error`, chromedp.ByQuery))
	b.check("the new payment form with an error")
	b.typeInto("#contact-iban", "DE89 3704 0044 0532 0130 00")
	b.click(`#payment-form button[type="submit"]`)
	b.within("the quote", chromedp.WaitVisible("#quote", chromedp.ByID))
	b.waitText("#quote-source", "€100.00")
	b.waitText("#quote-fee", "€1.00")
	b.waitText("#quote-total", "€101.00")
	b.waitText("#quote-to", "Müller Maschinenbau GmbH")
	b.check("the quote")
	b.click("#quote-confirm")
	b.waitText("#payments-rows", "awaiting approval")
	b.waitText("#payments-rows", "Müller Maschinenbau GmbH")
	b.check("the payments page with a payment awaiting approval")

	// Approve: the console shows the match code and waits for the app.
	b.click(`#approvals-table button[data-action="approve"]`)
	b.waitText("#approval-box", "Open your approving app and enter this code")
	matchCode := b.textOf("#approval-code")
	if !regexp.MustCompile(`^[0-9]{3}$`).MatchString(matchCode) {
		t.Fatalf("the match code shown is %q, want three digits", matchCode)
	}
	b.check("the payments page showing the match code")

	// The sandbox panel's inbox has the challenge; a wrong code is refused
	// with the envelope's message, the right one approves.
	const item = `#inbox li[data-kind="payment_approval"]`
	b.openPage("sandbox", item+` input[name="match_code"]`)
	b.waitText(item+" .inbox-what", "Müller Maschinenbau GmbH")
	b.typeInto(item+` input[name="match_code"]`, otherDigits(matchCode))
	b.click(item + ` button[type="submit"]`)
	if msg := b.textOf(item + " .form-error"); !strings.Contains(strings.ToLower(msg), "code") {
		t.Fatalf("a wrong match code shows %q, want the envelope's message about the code", msg)
	}
	b.typeInto(item+` input[name="match_code"]`, matchCode)
	b.run("show the whole challenge", chromedp.Evaluate(`document.querySelector(`+strconv.Quote(item)+`).scrollIntoView({block: "end"}); 0`, nil))
	b.within("the error clears as the code is typed", chromedp.WaitNotVisible(item+" .form-error", chromedp.ByQuery))
	b.capture("console-sandbox-approving-app")
	b.check("the approving app's inbox")
	const panelEUR = `#sbx-balances tr[data-currency="EUR"] td[data-field="available"]`
	b.waitText(panelEUR, "€1,000.00")
	b.click(item + ` button[type="submit"]`)
	b.waitText(item+" .outcome", "Approved")
	// The approval moved the money: the panel's balance follows, live.
	b.waitText(panelEUR, "€899.00")
	b.check("the approving app's inbox after approving")

	// Back on the payments page the wait has ended: approved, processing.
	b.openPage("payments", "#payments-table")
	b.waitText("#approval-outcome", "Approved")
	b.waitText(`#payments-rows td[data-field="status"]`, "processing")
	b.waitText("#approvals", "Nothing waits for your approval")
	b.check("the payments page after the approval")

	// The payment's page: its details and history.
	b.click(`#payments-rows a`)
	b.within("the payment's page", chromedp.WaitVisible("#detail-body", chromedp.ByID))
	b.waitText("#payments-title", "Payment to Müller Maschinenbau GmbH")
	b.waitText("#detail-history", "Created; awaiting approval")
	b.waitText("#detail-history", "Approved")
	b.waitText("#detail-history", "processing")
	b.waitText("#detail-facts", payNote) // the note is text, not markup
	var images int
	b.run("count images", chromedp.Evaluate(`document.querySelectorAll("#page img").length`, &images))
	if images != 0 {
		t.Fatalf("the internal note was rendered as markup (%d <img> elements)", images)
	}
	b.check("the payment's page")

	b.openPage("balances", `#balances-rows tr[data-currency="EUR"]`)
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€899.00")

	// The rail settles it, in the panel.
	b.openPage("sandbox", "#settle-payment")
	b.waitText("#settle-payment", "Müller Maschinenbau GmbH")
	b.click(`#settle-form button[type="submit"]`)
	b.waitText("#settle-result", "completed")
	b.check("the sandbox panel after settling")

	b.openPage("payments", "#payments-table")
	b.waitText(`#payments-rows td[data-field="status"]`, "completed")

	// A payment the balance cannot cover: approving it shows the envelope's
	// message; it is rejected with a reason instead.
	b.click("#new-payment")
	b.typeInto("#pay-amount", "5000.00")
	b.typeInto("#pay-reference", "Invoice 2026-119")
	b.click(`#payment-form button[type="submit"]`)
	b.waitText("#quote-total", "€5,012.50")
	b.click("#quote-confirm")
	b.click(`#approvals-table button[data-action="approve"]`)
	b.within("the refusal", chromedp.WaitVisible(`#approval-outcome[data-result="error"]`, chromedp.ByQuery))
	advance(t, s, 30*time.Second) // the browser's sign-in spent the code of this time step
	var approvalID string
	b.run("the approval's id", chromedp.AttributeValue(`#approvals-table button[data-action="approve"]`, "data-approval-id", &approvalID, nil, chromedp.ByQuery))
	var refusal apitest.ErrorBody
	s.Post(t, "/api/v1/approvals/"+approvalID+"/approve", signInFully(t, s, email, secret), nil).Decode(t, &refusal)
	if got := b.textOf("#approval-outcome"); refusal.Error.Type != "insufficient_funds" || got != refusal.Error.Message {
		t.Fatalf("approving shows %q; the service answers %s %q", got, refusal.Error.Type, refusal.Error.Message)
	}
	b.check("the payments page with a refused approval")
	b.click("#approval-close")
	b.click(`#approvals-table button[data-action="reject"]`)
	b.typeInto("#reject-reason", "Too much for one invoice")
	b.check("the rejection form")
	b.click(`#reject-form button[type="submit"]`)
	b.waitText("#payments-rows", "rejected")
	b.waitText("#approvals", "Nothing waits for your approval")

	// A payment its creator cancels from its page.
	b.click("#new-payment")
	b.typeInto("#pay-amount", "10.00")
	b.typeInto("#pay-reference", "Invoice 2026-120")
	b.click(`#payment-form button[type="submit"]`)
	b.waitText("#quote-total", "€11.00")
	b.click("#quote-confirm")
	b.waitText("#payments-rows tr:first-child", "awaiting approval")
	// Its approval is drawn above the list (after the row: the row comes
	// with the payment's event), so the row is clicked once it has moved.
	b.waitText("#approvals-table", "€11.00")
	b.click("#payments-rows tr:first-child a")
	b.click("#detail-cancel")
	b.waitText("#detail-status", "cancelled")
	b.waitText("#detail-history", "Cancelled")
	b.check("a cancelled payment's page")

	// The list by status: the completed payment alone; no approved one.
	b.openPage("payments", "#payments-table")
	filter := func(status, ready string) {
		b.within("filter by "+status,
			chromedp.Evaluate(`(() => { const s = document.querySelector("#payments-status"); s.value = `+strconv.Quote(status)+`; s.dispatchEvent(new Event("change")); return 0; })()`, nil),
			chromedp.Poll(ready, nil, chromedp.WithPollingTimeout(browserWait)))
	}
	filter("completed", `document.querySelectorAll("#payments-rows tr").length === 1 && !document.querySelector("#payments-table").hidden`)
	b.waitText(`#payments-rows td[data-field="status"]`, "completed")
	b.check("the payments page filtered by status")
	filter("approved", `!document.querySelector("#payments-none").hidden && document.querySelector("#payments-table").hidden`)
	filter("", `document.querySelectorAll("#payments-rows tr").length === 3`)
	b.waitText("#payments-rows tr:first-child", "cancelled")

	// The balances page follows the money without reloading.
	b.openPage("balances", `#balances-rows tr[data-currency="EUR"]`)
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€899.00")
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="pending"]`, "€0.00")
	b.waitText("#live", "Live")
	deposit(t, s, org, "EUR", "1.00")
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€900.00")
	var marker string
	b.run("read the marker", chromedp.Evaluate(`window.__marker || ""`, &marker))
	if marker != "same page" {
		t.Fatal("the console reloaded during the walk")
	}
	b.check("the balances page at the end")

	// Forgetting the token asks for it again.
	b.openPage("sandbox", "#sandbox-tools")
	b.click("#forget-token")
	b.within("the token form again", chromedp.WaitVisible("#token-form", chromedp.ByID))
	b.run("read the storage", chromedp.Evaluate(`({token: sessionStorage.getItem("strongroom.sandbox-token") || "", local: localStorage.length, type: "password"})`, &stored))
	if stored.Token != "" {
		t.Fatal("the sandbox token is still in sessionStorage after Forget token")
	}
}
