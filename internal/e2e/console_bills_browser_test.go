package e2e_test

// The bills, expenses and invoices pages of the console in a real browser:
// a bookkeeper uploads invoices (file input and drop), watches them being
// read live, checks the fields the text rules read (marked), corrects one
// and pays the bill; a supplier name that is markup stays text; expenses
// and invoices are created from their pages.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/strongroom/strongroom/internal/apitest"
)

// billsFromTextMark is what the bill page says next to a field the text rules read.
const billsFromTextMark = "Read from the page text — check it"

// billsToken is the session the console signed in with, for the test's own
// API calls as the same person.
func billsToken(b *browser) string {
	b.t.Helper()
	var token string
	b.run("read the session", chromedp.Evaluate(`sessionStorage.getItem("strongroom.session") || ""`, &token))
	if token == "" {
		b.t.Fatal("no session in sessionStorage")
	}
	return token
}

// billsGo shows the console page at hash (a same-document navigation).
func billsGo(b *browser, hash, ready string) {
	b.t.Helper()
	b.within("open "+hash,
		chromedp.Evaluate(fmt.Sprintf(`location.hash = %q; 0`, hash), nil),
		chromedp.WaitVisible(ready, chromedp.ByQuery),
	)
}

// billsDrop drops a file named name holding data on the element sel, as a
// person dragging it from their desktop would: dragenter, dragover, drop,
// with a DataTransfer carrying the file.
func billsDrop(b *browser, sel, name, mimeType string, data []byte) {
	b.t.Helper()
	bytesJSON, _ := json.Marshal(data) // base64
	script := fmt.Sprintf(`(() => {
		const raw = atob(%s);
		const bytes = new Uint8Array(raw.length);
		for (let i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
		const dt = new DataTransfer();
		dt.items.add(new File([bytes], %q, {type: %q}));
		const zone = document.querySelector(%q);
		for (const type of ["dragenter", "dragover", "drop"]) {
			zone.dispatchEvent(new DragEvent(type, {dataTransfer: dt, bubbles: true, cancelable: true}));
		}
		return true;
	})()`, bytesJSON, name, mimeType, sel)
	var ok bool
	b.run("drop "+name, chromedp.Evaluate(script, &ok))
}

// billsWaitCount waits until exactly n elements match sel.
func billsWaitCount(b *browser, sel string, n int) {
	b.t.Helper()
	deadline := time.Now().Add(browserWait)
	for got := billsCount(b, sel); got != n; got = billsCount(b, sel) {
		if time.Now().After(deadline) {
			b.t.Fatalf("%d elements match %s, want %d", got, sel, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// billsCount is the number of elements matching sel.
func billsCount(b *browser, sel string) int {
	b.t.Helper()
	var n int
	b.run("count "+sel, chromedp.Evaluate(fmt.Sprintf(`document.querySelectorAll(%q).length`, sel), &n))
	return n
}

func billsCorpusPath(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A bookkeeper uploads bills by the file input and by dropping a file,
// sees each read live, opens a bill read by text rules, finds each field
// the rules read marked, corrects one, and pays the bill: the payment then
// waits for approval on the payments page.
func TestConsoleBillsUploadAndCheck(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org, secret := consoleOrg(t, s, "bea@console-bills.test")
	deposit(t, s, org, "GBP", "5000.00")
	b := newBrowser(t, s)

	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.signInByMouse("bea@console-bills.test", secret)
	b.within("the bills page", chromedp.Click(`nav a[data-view="bills"]`, chromedp.ByQuery), chromedp.WaitVisible("#bills-drop", chromedp.ByID))
	b.within("the empty state", chromedp.WaitVisible("#bills-empty", chromedp.ByID))
	b.waitText("#live", "Live")
	b.axe("the empty bills page")
	b.run("mark the page", chromedp.Evaluate(`window.__marker = "same page"; 0`, nil))
	token := billsToken(b)

	// By the file input (labelled, reachable by keyboard): an XML e-invoice.
	b.within("choose a file", chromedp.SetUploadFiles("#bills-file", []string{billsCorpusPath(t, "ubl-be-invoice.xml")}, chromedp.ByID))
	b.waitText(`#bills-uploads li[data-state="done"]`, "ubl-be-invoice.xml")
	b.waitText("#bills-rows", "Atelier Verhaegen BV")
	b.waitText("#bills-rows", "BE-2026-000318")
	b.waitText("#bills-rows", "€1,234.63")

	// By a drop on the drop zone: a CII e-invoice; and a file that is no
	// invoice, refused with the envelope's message.
	cii := corpusFile(t, "cii-de-xrechnung.xml")
	billsDrop(b, "#bills-drop", "cii-de-xrechnung.xml", "application/xml", cii)
	b.waitText(`#bills-uploads li[data-state="done"]`, "cii-de-xrechnung.xml")
	var ciiWant map[string]any
	if err := json.Unmarshal(corpusFile(t, "cii-de-xrechnung.json"), &ciiWant); err != nil {
		t.Fatal(err)
	}
	b.waitText("#bills-rows", ciiWant["fields"].(map[string]any)["supplier_name"].(string))
	notInvoice := []byte("These are my notes, not an invoice.\n")
	billsDrop(b, "#bills-drop", "notes.txt", "text/plain", notInvoice)
	var refused map[string]map[string]any
	uploadBill(t, s, token, org, "file", "notes.txt", "text/plain", notInvoice).ExpectStatus(t, 422).Decode(t, &refused)
	b.waitText(`#bills-uploads li[data-state="failed"]`, "Not uploaded: "+refused["error"]["message"].(string))
	if n := billsCount(b, `#bills-uploads progress`); n != 0 {
		t.Fatalf("%d progress bars left after the uploads ended", n)
	}
	b.axe("the bills page after uploads")

	// A bill uploaded elsewhere (another tab, the API) appears and is read
	// live: the list was not reloaded.
	pdf := uploadCorpus(t, s, token, org, "text-gb-invoice.pdf")
	pdfRow := fmt.Sprintf(`#bills-rows tr[data-bill="%s"]`, pdf.Id)
	b.waitText(pdfRow, "Harbour Lane Print Ltd")
	b.waitText(pdfRow, "£1,578.00")
	b.waitText(pdfRow, "fields to check")
	var marker string
	b.run("read the marker", chromedp.Evaluate(`window.__marker || ""`, &marker))
	if marker != "same page" {
		t.Fatal("the page reloaded to show the bill")
	}
	var align string
	b.run("the alignment", chromedp.Evaluate(fmt.Sprintf(`getComputedStyle(document.querySelector('%s td[data-field="amount"]')).textAlign`, pdfRow), &align))
	if align != "right" {
		t.Fatalf("the amount is aligned %q, want right", align)
	}

	// The filters: search narrows the list.
	b.within("search", chromedp.SendKeys("#bills-search", "harbour", chromedp.ByID), chromedp.Click(`#bills-filters button[type="submit"]`, chromedp.ByQuery))
	b.waitText("#bills-rows", "Harbour Lane")
	billsWaitCount(b, "#bills-rows tr", 1)

	// The bill read by text rules: each field they read is marked, with
	// words, and the mark describes its input.
	read := extracted(t, s, token, pdf.Id.String())
	var fromText []string
	for _, f := range read.Extraction.FromText {
		fromText = append(fromText, string(f))
	}
	if len(fromText) == 0 || !slices.Contains(fromText, "supplier_name") {
		t.Fatalf("text-gb-invoice.pdf from_text = %v, want supplier_name among them", fromText)
	}
	b.within("open the bill", chromedp.Click(pdfRow+" a", chromedp.ByQuery), chromedp.WaitVisible("#bill-body", chromedp.ByID))
	b.waitText("#bill-extraction", "fields were read from the page text")
	b.waitText("#bill-supplier", "Harbour Lane Print Ltd")
	checkMarks := func(want []string) {
		t.Helper()
		var got struct {
			Marks     []string          `json:"marks"`
			Texts     []string          `json:"texts"`
			Described map[string]string `json:"described"`
		}
		b.run("read the marks", chromedp.Evaluate(`(() => {
			const marks = [...document.querySelectorAll("#bill-form .check-mark")];
			const described = {};
			for (const input of document.querySelectorAll("#bill-form input[name]")) described[input.name] = input.getAttribute("aria-describedby") || "";
			return {marks: marks.map(m => m.id.replace("bill-mark-", "")), texts: marks.map(m => m.textContent), described};
		})()`, &got))
		slices.Sort(got.Marks)
		want = slices.Sorted(slices.Values(want))
		if !slices.Equal(got.Marks, want) {
			t.Fatalf("fields marked %v, want exactly from_text %v", got.Marks, want)
		}
		for _, text := range got.Texts {
			if text != billsFromTextMark {
				t.Fatalf("a mark says %q, want %q", text, billsFromTextMark)
			}
		}
		for name, ids := range got.Described {
			marked := slices.Contains(strings.Fields(ids), "bill-mark-"+name)
			if marked != slices.Contains(want, name) {
				t.Fatalf("input %s aria-describedby %q; marked in from_text: %t", name, ids, slices.Contains(want, name))
			}
		}
	}
	checkMarks(fromText)
	b.axe("a bill to check")
	b.run("scroll to the fields", chromedp.Evaluate(`document.querySelector(".bill-head").scrollIntoView({block: "start"}); 0`, nil))
	b.capture("console-bill-check")

	// Correct the supplier's name and save: the field leaves from_text and
	// loses its mark.
	b.within("correct the supplier",
		chromedp.SetValue("#bill-f-supplier_name", "Harbour Lane Print Limite", chromedp.ByID),
		chromedp.SendKeys("#bill-f-supplier_name", "d", chromedp.ByID),
		chromedp.Click("#bill-save", chromedp.ByID),
	)
	b.waitText("#bill-saved", "Saved.")
	saved := getBill(t, s, token, pdf.Id.String())
	if saved.SupplierName == nil || *saved.SupplierName != "Harbour Lane Print Limited" {
		t.Fatalf("supplier_name after saving = %q", str(saved.SupplierName))
	}
	checkMarks(slices.DeleteFunc(slices.Clone(fromText), func(f string) bool { return f == "supplier_name" }))
	b.waitText("#bill-supplier", "Harbour Lane Print Limited")

	// Pay it: a quote for exactly the bill's amount, then a payment awaiting
	// approval, followed on the payments page.
	b.within("choose the reason", chromedp.WaitVisible("#bill-pay", chromedp.ByID), chromedp.SetValue("#bill-pay-reason", "PYR002", chromedp.ByID),
		chromedp.Click("#bill-quote", chromedp.ByID), chromedp.WaitVisible("#bill-quote-box", chromedp.ByID))
	b.waitText("#bill-quote-receive", "£1,578.00")
	b.axe("the price of the bill's payment")
	b.within("send for approval", chromedp.Click("#bill-execute", chromedp.ByID), chromedp.WaitVisible("#bill-payment", chromedp.ByID))
	paying := getBill(t, s, token, pdf.Id.String())
	if paying.Status != "payment_requested" || paying.FiatOutgoingId == nil {
		t.Fatalf("bill after paying: status %s, payment %v", paying.Status, paying.FiatOutgoingId)
	}
	var href string
	b.run("the payment link", chromedp.AttributeValue("#bill-payment-link", "href", &href, nil, chromedp.ByID))
	if href != "#/payments/"+paying.FiatOutgoingId.String() {
		t.Fatalf("the payment link goes to %q, want #/payments/%s", href, paying.FiatOutgoingId)
	}
	b.waitText("#bill-status", "payment requested")
	var disabled bool
	b.run("the fields", chromedp.Evaluate(`document.getElementById("bill-fields").disabled`, &disabled))
	if !disabled {
		t.Fatal("the fields of a bill whose payment is requested can still be changed")
	}

	// A credit note is shown as such and offers no payment.
	note := uploadCorpus(t, s, token, org, "ubl-se-creditnote.xml")
	extracted(t, s, token, note.Id.String())
	billsGo(b, "#/bills/"+note.Id.String(), "#bill-body")
	b.within("the credit note", chromedp.WaitVisible("#bill-credit-note", chromedp.ByID))
	b.waitText("#bill-doctype", "Credit note, not payable")
	if n := billsCount(b, "#bill-pay:not([hidden])"); n != 0 {
		t.Fatal("a credit note offers to pay it")
	}
	b.axe("a credit note")
	b.noCSPViolations("the bills pages")
}

// A supplier name that is markup is shown as the text it is, in the list
// and on the bill: no element is made from it, no script runs, no dialog
// opens, and the policy is never violated. The expenses and invoices pages
// are walked too: an expense recorded with a receipt, an invoice created
// and sent.
func TestConsoleBillsSupplierNameIsText(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org, secret := consoleOrg(t, s, "hal@console-bills-text.test")
	b := newBrowser(t, s)
	var dialogs sync.Mutex
	var opened []string
	chromedp.ListenTarget(b.ctx, func(ev any) {
		if d, ok := ev.(*cdppage.EventJavascriptDialogOpening); ok {
			dialogs.Lock()
			opened = append(opened, string(d.Type)+": "+d.Message)
			dialogs.Unlock()
			go func() { _ = chromedp.Run(b.ctx, cdppage.HandleJavaScriptDialog(false)) }()
		}
	})

	const hostile = `<img src=x onerror=alert(1)>`
	xml := string(corpusFile(t, "ubl-be-invoice.xml"))
	escaped := strings.NewReplacer("<", "&lt;", ">", "&gt;").Replace(hostile)
	xml = strings.ReplaceAll(xml, "Atelier Verhaegen BV", escaped)
	xml = strings.ReplaceAll(xml, "<cbc:Name>Atelier Verhaegen</cbc:Name>", "<cbc:Name>"+escaped+"</cbc:Name>")

	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.signInByMouse("hal@console-bills-text.test", secret)
	token := billsToken(b)
	var bill struct {
		ID string `json:"id"`
	}
	uploadBill(t, s, token, org, "file", "hostile.xml", "application/xml", []byte(xml)).ExpectStatus(t, 201).Decode(t, &bill)
	read := extracted(t, s, token, bill.ID)
	if read.SupplierName == nil || *read.SupplierName != hostile {
		t.Fatalf("supplier_name read = %q, want %q", str(read.SupplierName), hostile)
	}

	noMarkup := func(where, sel string) {
		t.Helper()
		var got struct {
			Text     string `json:"text"`
			Elements int    `json:"elements"`
			Images   int    `json:"images"`
		}
		b.run("read "+sel, chromedp.Evaluate(fmt.Sprintf(`(() => {
			const el = document.querySelector(%q);
			return {text: el.textContent, elements: el.childElementCount, images: document.querySelectorAll("img").length};
		})()`, sel), &got))
		if got.Text != hostile || got.Elements != 0 || got.Images != 0 {
			t.Fatalf("%s: text %q with %d elements, %d images on the page; want exactly %q as text and no image", where, got.Text, got.Elements, got.Images, hostile)
		}
	}
	billsGo(b, "#/bills", "#bills-table")
	row := fmt.Sprintf(`#bills-rows tr[data-bill="%s"] a`, bill.ID)
	b.waitText(row, hostile)
	noMarkup("the bills list", row)
	b.axe("the bills list with a markup supplier")
	b.within("open the bill", chromedp.Click(row, chromedp.ByQuery), chromedp.WaitVisible("#bill-body", chromedp.ByID))
	b.waitText("#bill-supplier", hostile)
	noMarkup("the bill page", "#bill-supplier")
	var value string
	b.run("the supplier field", chromedp.Value("#bill-f-supplier_name", &value, chromedp.ByID))
	if value != hostile {
		t.Fatalf("the supplier field holds %q, want %q", value, hostile)
	}
	b.axe("the bill with a markup supplier")
	b.noCSPViolations("the bill with a markup supplier")

	// Expenses: the empty list, then an expense recorded, with a receipt
	// uploaded with progress.
	b.within("the expenses page", chromedp.Click(`nav a[data-view="expenses"]`, chromedp.ByQuery), chromedp.WaitVisible("#expenses-empty", chromedp.ByID))
	b.axe("the empty expenses page")
	b.within("record an expense",
		chromedp.Click("#expense-new summary", chromedp.ByQuery),
		chromedp.WaitVisible("#expense-new-business", chromedp.ByID),
		chromedp.SendKeys("#expense-new-business", "Café <b>Bleu</b>", chromedp.ByID),
		chromedp.SetValue("#expense-new-category", "meals", chromedp.ByID),
		chromedp.SetValue("#expense-new-date", "2026-11-20", chromedp.ByID),
		chromedp.SendKeys("#expense-new-amount", "42.50", chromedp.ByID),
		chromedp.SendKeys("#expense-new-currency", "EUR", chromedp.ByID),
	)
	b.axe("the new expense form")
	b.within("save the expense", chromedp.Click("#expense-create", chromedp.ByID), chromedp.WaitVisible("#expense-body", chromedp.ByID))
	b.waitText("#expense-business", "Café <b>Bleu</b>")
	b.waitText("#expense-totals", "€42.50")
	b.within("add a receipt", chromedp.SetUploadFiles("#expense-receipt-file", []string{billsCorpusPath(t, "unreadable-photo.png")}, chromedp.ByID))
	b.waitText("#expense-receipts", "unreadable-photo.png")
	b.waitText("#expense-uploads", "Added.")
	b.within("submit the expense", chromedp.Click(`#expense-moves button.primary`, chromedp.ByQuery))
	b.waitText("#expense-status", "submitted")
	b.axe("an expense")
	b.noCSPViolations("the expenses pages")

	// Invoices: a customer added, an invoice created as a draft and sent.
	b.within("the invoices page", chromedp.Click(`nav a[data-view="invoices"]`, chromedp.ByQuery), chromedp.WaitVisible("#invoices-empty", chromedp.ByID))
	b.axe("the empty invoices page")
	b.within("add a customer",
		chromedp.Click("#invoice-new summary", chromedp.ByQuery),
		chromedp.WaitVisible("#customer-name", chromedp.ByID),
		chromedp.SendKeys("#customer-name", "Globex <i>Corp</i>", chromedp.ByID),
		chromedp.SendKeys("#customer-email", "ap@globex.test", chromedp.ByID),
		chromedp.Click("#customer-create", chromedp.ByID),
	)
	b.waitText("#invoice-customer", "Globex <i>Corp</i>")
	b.within("write the invoice",
		chromedp.SetValue("#invoice-currency", "USD", chromedp.ByID),
		chromedp.SendKeys("#invoice-line-1-description", "Consulting, November", chromedp.ByID),
		chromedp.SendKeys("#invoice-line-1-price", "1200.00", chromedp.ByID),
		chromedp.SetValue("#invoice-line-1-quantity", "2", chromedp.ByID),
		chromedp.SetValue("#invoice-line-1-tax_percentage", "10", chromedp.ByID),
	)
	b.axe("the new invoice form")
	b.within("create the invoice", chromedp.Click("#invoice-create", chromedp.ByID), chromedp.WaitVisible("#invoice-body", chromedp.ByID))
	b.waitText("#invoice-customer-name", "Globex <i>Corp</i>")
	b.waitText("#invoice-due-amount", "$2,640.00")
	b.waitText("#invoice-state", "draft")
	b.within("send it", chromedp.Click(`#invoice-moves button[data-action="send"]`, chromedp.ByQuery))
	b.waitText("#invoice-state", "sent")
	b.axe("a sent invoice")
	billsGo(b, "#/invoices", "#invoices-table")
	b.waitText("#invoices-rows", "$2,640.00")
	b.axe("the invoices list")
	b.noCSPViolations("the invoices pages")

	dialogs.Lock()
	defer dialogs.Unlock()
	if len(opened) > 0 {
		t.Fatalf("dialogs opened: %v", opened)
	}
}
