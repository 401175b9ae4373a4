package extract

import (
	"fmt"
	"math/big"
	"strings"
	"unicode"
)

// The embedded XML of a PDF is what a program wrote; the page is what the
// person reads and pays. Most of the time they agree. When they do not (a
// template that embeds another invoice's XML, an amount the XML computes
// differently, dates a year off) neither is to be trusted: the person pays
// what the bill says, and a wrong value is worse than an empty one.
//
// reconcile compares, field by field, the values read from the XML with
// those the text rules read from the same PDF's page, and only with the
// values the text rules were sure of (readText fills a field only above its
// confidence bar). A field the page does not show, or shows in a way the
// rules are unsure of, keeps the XML's value: an absent reading is not a
// disagreement (the text layer misses letter-spaced or split values). Where
// the page surely prints a different value, the field is left empty, not
// given the page's value nor the XML's, and its name is listed in
// Result.Conflicts with a warning carrying both values, so a person fills it
// from the document.
//
// The fields compared are those a payment depends on and the text rules
// read with few errors: invoice number (spaces, case and the kind of dash
// ignored), issue and due dates, amount payable (as decimals), currency and
// IBAN (with its BIC when both differ). The supplier's name is not
// compared: the legal name in the XML and the trading name on the
// letterhead legitimately differ, and a name does not send money elsewhere.
// Two consequences follow the comparison:
//   - a due date earlier than the issue date the page shows is a
//     disagreement too (the XML's dates are off);
//   - a payment reference that only repeats the XML's invoice number goes
//     with that number when the page shows another one.
//
// It uses the text pass readPDF already makes to complete a MINIMUM or
// BASIC WL document, so it costs no second reading of the file.
func reconcile(r *Result, page Fields) (conflicts map[string]bool) {
	f := &r.Fields
	conflicts = map[string]bool{}
	clash := func(name, label, xml, shown string) {
		conflicts[name] = true
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s: the embedded XML says %q, the page shows %q; left empty for a person to read", label, truncate(xml, 60), truncate(shown, 60)))
	}
	xmlNumber := f.InvoiceNumber
	if f.InvoiceNumber != "" && page.InvoiceNumber != "" && compactFold(f.InvoiceNumber) != compactFold(page.InvoiceNumber) {
		clash("invoice_number", "invoice number", f.InvoiceNumber, page.InvoiceNumber)
		f.InvoiceNumber = ""
	}
	if !f.IssueDate.IsZero() && !page.IssueDate.IsZero() && f.IssueDate != page.IssueDate {
		clash("issue_date", "issue date", f.IssueDate.String(), page.IssueDate.String())
		f.IssueDate = Date{}
	}
	if !f.DueDate.IsZero() {
		switch {
		case !page.DueDate.IsZero() && f.DueDate != page.DueDate:
			clash("due_date", "due date", f.DueDate.String(), page.DueDate.String())
			f.DueDate = Date{}
		case !page.IssueDate.IsZero() && before(f.DueDate, page.IssueDate):
			clash("due_date", "due date", f.DueDate.String(), "an issue date of "+page.IssueDate.String())
			f.DueDate = Date{}
		}
	}
	if f.AmountDue != "" && page.AmountDue != "" && !sameDecimal(f.AmountDue, page.AmountDue) {
		clash("amount_due", "amount due", f.AmountDue, page.AmountDue)
		f.AmountDue = ""
	}
	if f.Currency != "" && page.Currency != "" && f.Currency != page.Currency {
		clash("currency", "currency", f.Currency, page.Currency)
		f.Currency = ""
	}
	if f.IBAN != "" && page.IBAN != "" && compactFold(f.IBAN) != compactFold(page.IBAN) {
		clash("iban", "IBAN", f.IBAN, page.IBAN)
		f.IBAN = ""
		if f.BIC != "" && page.BIC != "" && compactFold(f.BIC) != compactFold(page.BIC) {
			// The BIC names the bank of the account that was dropped.
			clash("bic", "BIC", f.BIC, page.BIC)
			f.BIC = ""
		}
	}
	if conflicts["invoice_number"] && f.RemittanceReference != "" && compactFold(f.RemittanceReference) == compactFold(xmlNumber) {
		clash("remittance_reference", "payment reference", f.RemittanceReference, page.InvoiceNumber)
		f.RemittanceReference = ""
	}
	for name := range conflicts {
		r.Conflicts = append(r.Conflicts, name)
	}
	return conflicts
}

// compactFold is s without white space, case folded, any dash a hyphen:
// "re – 2020/508" and "RE-2020/508" are the same invoice number.
func compactFold(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return -1
		case unicode.Is(unicode.Pd, r):
			return '-'
		}
		return r
	}, s))
}

// sameDecimal reports whether two decimal strings are the same number
// ("406.8" and "406.80"); a string that is not a decimal is compared as
// text.
func sameDecimal(a, b string) bool {
	x, okx := new(big.Rat).SetString(a)
	y, oky := new(big.Rat).SetString(b)
	if !okx || !oky {
		return a == b
	}
	return x.Cmp(y) == 0
}

// before reports whether a is an earlier day than b.
func before(a, b Date) bool {
	if a.Year != b.Year {
		return a.Year < b.Year
	}
	if a.Month != b.Month {
		return a.Month < b.Month
	}
	return a.Day < b.Day
}
