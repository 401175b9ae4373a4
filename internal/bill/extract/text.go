package extract

import (
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// The text rules read a PDF that has no structured data. They look for a
// label ("Invoice number", "Rechnungsdatum", "Total TTC", …) and take the
// value after it in the same cell, in the next cell of the line, or in the
// cell below the label (tables with a header row). Labels are tried in order
// of how specific they are, and every value must parse as what it claims to
// be (a date, an amount, a valid IBAN) before it is taken.

// ref is where a label was found.
type ref struct{ li, ci int }

// doc is the text of a PDF with the state the rules share.
type doc struct {
	lines []line
	buyer map[ref]bool // cells inside the buyer's address block
	w     warnings
}

func readText(lines []line) Result {
	d := &doc{lines: lines}
	d.markBuyer()
	var f Fields

	f.CreditNote = d.isCreditNote()
	f.InvoiceNumber = d.first(invoiceNumberLabels, parseInvoiceNumber)

	amountRaw, amountCur := d.amount()
	f.Currency = d.currency(amountCur)
	if amountRaw != "" {
		setAmount(amountRaw, f.Currency, &f, &d.w)
	}

	// 01/02/2026 is 1 February everywhere but in the US; the currency is
	// the best hint of where the invoice comes from.
	dayFirst := f.Currency != "USD"
	dateParser := func(s string) string {
		if dt, ok := findDate(s, dayFirst); ok {
			return dt.String()
		}
		return ""
	}
	f.DueDate, _ = isoDate(d.first(dueDateLabels, dateParser))
	f.IssueDate, _ = isoDate(d.firstWhere(issueDateLabels, dateParser, func(c string) bool {
		return !otherDateLabel.MatchString(c) && !matchAny(dueDateLabels, c)
	}))
	if f.DueDate.IsZero() && !f.IssueDate.IsZero() {
		if days, ok := d.paymentTermDays(); ok {
			t := time.Date(f.IssueDate.Year, f.IssueDate.Month, f.IssueDate.Day+days, 0, 0, 0, 0, time.UTC)
			f.DueDate = Date{t.Year(), t.Month(), t.Day()}
			d.w.add("due date computed from the payment terms (%d days)", days)
		}
	}

	f.SupplierName = d.supplierName()
	f.SupplierTaxID = d.firstSupplier(vatLabels, parseVATID)
	if f.SupplierTaxID == "" {
		f.SupplierTaxID = d.firstSupplier(taxIDLabels, parseTaxNumber)
	}

	f.IBAN = d.iban()
	f.BIC = d.first(bicLabels, func(s string) string {
		for _, tok := range strings.Fields(s) {
			tok = strings.Trim(tok, ".,;:()")
			if bankdetails.CheckBIC(tok) == nil {
				return tok
			}
		}
		return ""
	})
	f.SortCode = d.first(sortCodeLabels, func(s string) string { return sortCodeRe.FindString(s) })
	f.SortCode = strings.NewReplacer("-", "", " ", "").Replace(f.SortCode)
	f.AccountNumber = d.first(accountLabels, parseAccountNumber)
	f.ABACode = d.first(abaLabels, func(s string) string {
		for _, m := range nineDigits.FindAllString(s, -1) {
			if bankdetails.CheckABA(m) == nil {
				return m
			}
		}
		return ""
	})
	f.AccountHolderName = d.first(holderLabels, func(s string) string {
		if v := clean(s); hasLetter(v) && !strings.ContainsAny(v, "0123456789@") && len(v) <= 70 {
			return v
		}
		return ""
	})
	if f.IBAN == "" && f.AccountNumber == "" {
		f.AccountHolderName = "" // a holder without an account says nothing
	}
	f.RemittanceReference = d.firstWhere(referenceLabels, parseReference, func(c string) bool { return !notPaymentRef.MatchString(c) })
	return Result{Format: FormatPDFText, Fields: f, Warnings: d.w}
}

// ---------------------------------------------------------------------------
// Labels

func re(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + s) }

var (
	invoiceNumberLabels = []*regexp.Regexp{
		re(`\b(?:invoice|bill|credit[\s-]*note|rechnung|gutschrift|facture|avoir|factuur|creditnota|fattura|factura)\s*(?:number|num(?:ber|[ée]ro)?\.?|no\.?|nr\.?|n[°º]|#|id)\s*[:.#]?`),
		re(`\b(?:rechnungs|gutschrifts|beleg)[\s-]*(?:nummer|nr\.?)\s*[:.]?`),
		re(`\b(?:factuurnummer|n[°º]\s*(?:de\s*)?(?:la\s*)?facture|num[ée]ro\s*de\s*facture|n[°º]\s*d'avoir)\s*[:.]?`),
		re(`\bn[°º]\.?\s*(?:de\s*)?(?:factura|fattura|facture|invoice)\b\s*[:.]?|\bn[úu]mero\s*de\s*factura\s*[:.]?`),
		re(`^(?:tax\s+)?(?:invoice|rechnung|facture|factuur)\s*[:#]?`),
	}
	issueDateLabels = []*regexp.Regexp{
		re(`\b(?:invoice|bill)\s*date\b|\bdate\s*of\s*(?:issue|invoice)\b|\bissue\s*date\b|\bdate\s*issued\b|\btax\s*point\b`),
		re(`\b(?:rechnungs|ausstellungs|beleg)datum\b|\bdate\s*(?:de\s*(?:la\s*)?facture|d'[ée]mission|de\s*facturation)\b|\bfactuurdatum\b|\bfecha\s*(?:de\s*)?(?:emisi[oó]n|factura)\b`),
		re(`^(?:date|datum|fecha|data|issued(?:\s*on)?)\b`),
	}
	// otherDateLabel keeps "Delivery date" or "Order date" from passing for the
	// issue date through the generic "date" label.
	otherDateLabel = re(`deliver|delivery|order|supply|service|period|liefer|leistung|bestell|livraison|commande|levering|due|échéance|f[äa]llig`)
	dueDateLabels  = []*regexp.Regexp{
		re(`\bdue\s*date\b|\bdate\s*due\b|\bpayment\s*due(?:\s*date)?\b|\bdue\s*(?:by|on)\b|\bpay(?:able)?\s*by\b|\bplease\s*pay\s*by\b`),
		re(`\bf[äa]lligkeit(?:sdatum)?\b|\bf[äa]llig\s*(?:am|bis)?\b|\bzahlbar\s*bis(?:\s*zum)?\b|\bzahlungsziel\b`),
		re(`\bdate\s*d'[ée]ch[ée]ance\b|[ée]ch[ée]ance\b|\b[àa]\s*(?:payer|r[ée]gler)\s*avant\s*le\b|\bvervaldatum\b|\bte\s*betalen\s*v[oó][oó]r\b|\bfecha\s*de\s*vencimiento\b`),
		re(`^due\b`),
	}
	amountLabels = [][]*regexp.Regexp{
		{re(`\b(?:total\s*amount\s*due|amount\s*due|balance\s*due|total\s*due|amount\s*payable|total\s*payable|total\s*to\s*pay|please\s*pay)\b|\bzahlbetrag\b|\bzu\s*zahlen(?:der\s*betrag)?\b|\boffener\s*betrag\b|\bnet\s*[àa]\s*payer\b|\bmontant\s*d[ûu]\b|\breste\s*[àa]\s*payer\b|\bmontant\s*[àa]\s*payer\b|\b(?:totaal\s*)?te\s*betalen\b|\b(?:importe|total)\s*a\s*pagar\b|\bimporto\s*da\s*pagare\b`)},
		{re(`\bgesamtbetrag\b|\brechnungsbetrag\b|\bendbetrag\b|\bbruttobetrag\b|\bgesamtsumme\b|\btotal\s*ttc\b|\bmontant\s*ttc\b|\btotal\s*\(?incl(?:\.|uding)?\s*(?:vat|tax)\)?|\binvoice\s*total\b|\bgrand\s*total\b|\btotaalbedrag\b|\btotaal\s*incl\.?\s*btw\b|\btotal\s*amount\b|\bcredit\s*total\b`)},
		{re(`\btotal\b|\bsumme\b|\btotaal\b`)},
	}
	// notFinalTotal marks sub-totals and tax totals, which the generic
	// "total" label would otherwise take.
	notFinalTotal = re(`sub-?\s*total|zwischensumme|netto|nettobetrag|total\s*(?:excl|net|ht|hors|vat|tax|tva|btw|mwst|before)|\bht\b|excl\.?|exkl|tva\s*\d|mwst|ust\.|vat\s*\d|\bbtw\b|total\s*\w*\s*(?:items|quantity|qty|hours|pages)|discount|rabatt`)
	vatLabels     = []*regexp.Regexp{
		re(`\bmwst\.?-?\s*(?:nr|nummer)\.?|\bmwst-?id\b`),
		re(`\bvat\s*(?:reg(?:istration|\.)?\s*)?(?:no\.?|number|id|#|reg\.?)?\s*[:.]?|\bust-?\s*id(?:-?nr)?\.?|\bust\.?\s*-?\s*id\.?\s*-?\s*nr\.?|\bumsatzsteuer-?\s*(?:identifikationsnummer|id(?:-?nr\.?)?)\b|\buid(?:-?nr\.?)?\b|\bn[°º]\s*(?:de\s*)?tva(?:\s*intracom(?:munautaire)?)?|\btva\s*intracom(?:munautaire)?|\bnum[ée]ro\s*de\s*tva|\bbtw(?:-?\s*(?:nummer|nr\.?|id))?\b|\bp\.?\s*iva\b|\bnif\b|\bcif\b|\bmoms(?:reg)?(?:\.?\s*nr\.?)?\b`),
	}
	taxIDLabels = []*regexp.Regexp{
		re(`\bsteuer-?\s*(?:nummer|nr\.?)|\bst\.?-?\s*nr\.?|\btax\s*(?:id|number|no\.?)|\bein\b|\btin\b|\bsiret\b|\bsiren\b|\babn\b|\bkvk(?:-?nummer)?\b`),
	}
	bicLabels       = []*regexp.Regexp{re(`\b(?:bic|swift)(?:\s*/\s*(?:bic|swift))?(?:[\s-]*code)?\b\s*[:.]?`)}
	sortCodeLabels  = []*regexp.Regexp{re(`\bsort[\s-]*code\b\s*[:.]?|\bs/c\b`)}
	accountLabels   = []*regexp.Regexp{re(`\b(?:bank\s*)?account\s*(?:number|no\.?|nr\.?|#)\s*[:.]?|\bacc(?:ount|t)?\.?\s*no\.?\s*[:.]?|\ba/c(?:\s*no\.?)?\s*[:.]?|\bkonto(?:nummer|-?\s*nr\.?)\s*[:.]?|\bnum[ée]ro\s*de\s*compte\b|\brekeningnummer\b`), re(`\baccount\s*:?`)}
	holderLabels    = []*regexp.Regexp{re(`\baccount\s*(?:name|holder)\s*[:.]?|\bbeneficiary(?:\s*name)?\s*[:.]?|\bkontoinhaber(?:in)?\s*[:.]?|\btitulaire(?:\s*du\s*compte)?\s*[:.]?|\bten\s*name\s*van\s*[:.]?`)}
	abaLabels       = []*regexp.Regexp{re(`\b(?:aba\s*)?routing(?:\s*(?:number|no\.?|#|transit\s*number))?\b|\baba\b|\brtn\b`)}
	referenceLabels = []*regexp.Regexp{
		re(`\b(?:payment|remittance)\s*ref(?:erence)?\.?\b\s*[:.]?|\bplease\s*(?:quote|use)(?:\s*(?:the\s*)?(?:reference|ref\.?))?\s*:?|\bverwendungszweck\b\s*:?|\bzahlungsreferenz\b\s*:?|\br[ée]f[ée]rence\s*(?:de\s*)?(?:paiement|virement)\s*:?|\bbetalingskenmerk\b\s*:?|\bbetalingsreferentie\b\s*:?`),
		re(`^(?:reference|ref\.?|referenz|r[ée]f[ée]rence|kenmerk)\s*:`),
	}
	notPaymentRef = re(`\b(?:your|our|order|customer|purchase|po|ihre|unsere|bestell|kunden|votre|commande|client|uw|klant|order)\b`)
	buyerLabels   = re(`^(?:bill(?:ed)?\s*to|invoice\s*to|invoiced\s*to|sold\s*to|ship\s*to|deliver\s*to|customer|client|buyer|rechnungsempf[äa]nger|rechnungsadresse|kunde|lieferadresse|an|factur[ée]\s*[àa]|adresse\s*de\s*facturation|destinataire|klant|factuuradres|cliente|to)\b\s*:?`)
	notBuyerLabel = re(`^\S+\s*(?:no|number|nr|id|ref|#|nummer|reference|code)\b`)
	supplierLabel = re(`^(?:from|supplier|seller|vendor|issued\s*by|payee|lieferant|verk[äa]ufer|rechnungssteller|fournisseur|vendeur|[ée]metteur|leverancier|afzender)\b\s*:?`)
	legalForm     = re(`\b(?:ltd|limited|gmbh|ag|kg|ohg|ug|e\.\s?k|se|s\.?a\.?s\.?|s\.?a\.?r\.?l\.?|s\.?a\.?|sàrl|eurl|b\.?v\.?|n\.?v\.?|inc|llc|llp|plc|oy|ab|a/s|aps|as|s\.?l\.?|s\.?p\.?a\.?|s\.?r\.?l\.?|corp(?:oration)?|pty|pte)\b\.?`)
	titleWords    = re(`^(?:tax\s*)?(?:invoice|rechnung|facture|factuur|credit\s*note|gutschrift|avoir|creditnota|page|seite|date|datum)\b`)
	creditTitle   = re(`^(?:credit\s*note|gutschrift|rechnungskorrektur|avoir|facture\s*d'avoir|creditnota|creditfactuur|nota\s*de\s*cr[ée]dito)\b`)
	termsRe       = re(`(?:\bnet\s*|\bwithin\s*|\binnerhalb\s*(?:von\s*)?|\bsous\s*|\b[àa]\s*|\bbinnen\s*|\bpayable\s*in\s*)(\d{1,3})\s*(?:days|tagen?|jours|dagen)\b|\bnet\s*(\d{1,3})\b|\b(\d{1,3})\s*(?:days|tage|jours|dagen)\s*net`)
	sortCodeRe    = regexp.MustCompile(`\b\d{2}[- ]?\d{2}[- ]?\d{2}\b`)
	nineDigits    = regexp.MustCompile(`\b\d{9}\b`)
)

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, r := range res {
		if r.MatchString(s) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Finding values

// candidates yields, for a label at (li, ci) ending at byte end of the cell
// text, the places its value may be: the rest of the cell, the next cells of
// the line, and the cell below the label in the next two lines.
func (d *doc) candidates(li, ci, end int) []string {
	l := d.lines[li]
	var out []string
	if rest := trimValue(l.cells[ci].text[end:]); rest != "" {
		out = append(out, rest)
	}
	if ci+1 < len(l.cells) {
		out = append(out, strings.Join(cellTexts(l.cells[ci+1:]), "   "))
	}
	lab := l.cells[ci]
	for k := li + 1; k < len(d.lines) && k <= li+2; k++ {
		if d.lines[k].page != l.page {
			break
		}
		for _, c := range d.lines[k].cells {
			if c.x0 < lab.x1+5 && c.x1 > lab.x0-5 {
				out = append(out, c.text)
				break
			}
		}
	}
	return out
}

func cellTexts(cs []cell) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.text
	}
	return out
}

func trimValue(s string) string {
	return strings.TrimSpace(strings.TrimLeft(s, " :.#-–"))
}

// first returns the first value that parse accepts, trying the labels in
// order and the lines top to bottom for each.
func (d *doc) first(labels []*regexp.Regexp, parse func(string) string) string {
	return d.firstWhere(labels, parse, nil)
}

// firstWhere is first restricted to label cells ok accepts (nil: all).
func (d *doc) firstWhere(labels []*regexp.Regexp, parse func(string) string, ok func(cellText string) bool) string {
	return d.find(labels, parse, ok, false)
}

// firstSupplier is firstWhere that also skips labels inside the buyer's
// address block, for facts about the supplier (its VAT number).
func (d *doc) firstSupplier(labels []*regexp.Regexp, parse func(string) string) string {
	return d.find(labels, parse, nil, true)
}

func (d *doc) find(labels []*regexp.Regexp, parse func(string) string, ok func(cellText string) bool, skipBuyer bool) string {
	for _, lab := range labels {
		for li, l := range d.lines {
			for ci, c := range l.cells {
				loc := lab.FindStringIndex(c.text)
				if loc == nil || ok != nil && !ok(c.text) {
					continue
				}
				if skipBuyer && d.buyer[ref{li, ci}] {
					continue
				}
				for _, v := range d.candidates(li, ci, loc[1]) {
					if p := parse(v); p != "" {
						return p
					}
				}
			}
		}
	}
	return ""
}

// markBuyer marks the cells of the buyer's address block: the cell of a
// "Bill to" / "Rechnungsempfänger" label and the cells below it in the same
// column for the next six lines, so that neither the buyer's name nor its VAT
// number is taken for the supplier's.
func (d *doc) markBuyer() {
	d.buyer = map[ref]bool{}
	for li, l := range d.lines {
		for ci, c := range l.cells {
			if !buyerLabels.MatchString(c.text) || notBuyerLabel.MatchString(c.text) {
				continue
			}
			d.buyer[ref{li, ci}] = true
			for k := li + 1; k < len(d.lines) && k <= li+6 && d.lines[k].page == l.page; k++ {
				for cj, c2 := range d.lines[k].cells {
					if c2.x0 < c.x0+40 && c2.x1 > c.x0-5 {
						d.buyer[ref{k, cj}] = true
					}
				}
			}
		}
	}
}

func (d *doc) isCreditNote() bool {
	for li, l := range d.lines {
		if li >= 15 {
			break
		}
		for _, c := range l.cells {
			if creditTitle.MatchString(c.text) {
				return true
			}
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Field parsers

var invoiceNumberRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9\-/._]{0,40}`)

func parseInvoiceNumber(s string) string {
	for _, tok := range strings.Fields(s) {
		tok = strings.TrimRight(invoiceNumberRe.FindString(tok), "._-/")
		if tok == "" || !strings.ContainsAny(tok, "0123456789") {
			continue
		}
		if _, ok := findDate(tok, true); ok {
			continue // a date next to the label, not the number
		}
		return tok
	}
	return ""
}

// swissUIDRe is the Swiss enterprise number that serves as VAT number
// ("CHE-123.456.789 MWST"); the suffix is not part of the identifier.
var swissUIDRe = regexp.MustCompile(`\bCHE[-\s]?(\d{3})\.?(\d{3})\.?(\d{3})\b`)

var euVATRe = regexp.MustCompile(`\b(?:[A-Z]{2}|EL|XI|CHE)[\s-]?[0-9A-Z][0-9A-Z .-]{6,16}[0-9A-Z]\b`)

// parseVATID takes a VAT number written with its country prefix, the form
// EU and UK invoices must print, spaces and dots removed.
func parseVATID(s string) string {
	if m := swissUIDRe.FindStringSubmatch(s); m != nil {
		return "CHE" + m[1] + m[2] + m[3]
	}
	for _, m := range euVATRe.FindAllString(s, -1) {
		v := strings.NewReplacer(" ", "", ".", "", "-", "").Replace(m)
		if len(v) >= 8 && len(v) <= 16 && strings.ContainsAny(v[2:], "0123456789") && allDigitsOrUpper(v) {
			return v
		}
	}
	return ""
}

func allDigitsOrUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigitASCII(s[i]) && !isUpperASCII(s[i]) {
			return false
		}
	}
	return true
}

var taxNumberRe = regexp.MustCompile(`\d[\d/ .-]{4,18}\d`)

func parseTaxNumber(s string) string {
	return strings.TrimSpace(taxNumberRe.FindString(s))
}

var accountRe = regexp.MustCompile(`\b\d[\d -]{4,20}\d\b`)

func parseAccountNumber(s string) string {
	m := accountRe.FindString(s)
	v := strings.NewReplacer(" ", "", "-", "").Replace(m)
	if len(v) < 6 || len(v) > 17 {
		return ""
	}
	return v
}

// parseReference takes the first word with a digit in it: a reference is
// one token ("RE-2026-0117", "+++045/6789/12318+++"), and what follows the
// label is often the rest of a sentence ("… as the payment reference").
func parseReference(s string) string {
	for _, tok := range strings.Fields(s) {
		tok = strings.TrimRight(tok, ".,;:)")
		if strings.ContainsAny(tok, "0123456789") && len(tok) <= 35 {
			return tok
		}
	}
	return ""
}

// iban returns the first valid IBAN on the page, preferring one next to an
// "IBAN" label. IBANs are printed in groups of four; the candidate is
// compacted and every length an IBAN can have is tried, because a word after
// the IBAN ("BIC") would otherwise be glued on.
func (d *doc) iban() string {
	var labelled, any string
	for _, l := range d.lines {
		s := l.String()
		for _, m := range ibanCandidateRe.FindAllStringIndex(s, -1) {
			cand := strings.ToUpper(compact(s[m[0]:m[1]]))
			found := ""
			for n := min(len(cand), 34); n >= 15; n-- {
				if bankdetails.CheckIBAN(cand[:n]) == nil {
					found = cand[:n]
					break
				}
			}
			isLabelled := strings.Contains(strings.ToUpper(s[max(0, m[0]-12):m[0]]), "IBAN")
			if found == "" {
				if isLabelled {
					d.w.add("IBAN %s does not pass the IBAN check; not taken", truncate(s[m[0]:m[1]], 40))
				}
				continue
			}
			if isLabelled && labelled == "" {
				labelled = found
			}
			if any == "" {
				any = found
			}
		}
	}
	if labelled != "" {
		return labelled
	}
	return any
}

var ibanCandidateRe = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?:[ \x{00a0}]?[A-Z0-9]){11,32}`)

// supplierName: a "From:"/"Lieferant:" label, else the top-most cell outside
// the buyer block that ends in a legal form (Ltd, GmbH, SAS, …), else the
// largest-font cell among the first lines that is not a document title.
func (d *doc) supplierName() string {
	if v := d.firstWhere([]*regexp.Regexp{supplierLabel}, func(s string) string {
		if v := clean(s); v != "" && !strings.ContainsAny(v[:1], "0123456789") {
			return v
		}
		return ""
	}, nil); v != "" {
		return v
	}
	for li, l := range d.lines {
		if l.page != 1 {
			break
		}
		for ci, c := range l.cells {
			if d.buyer[ref{li, ci}] || strings.ContainsAny(c.text, "@:") || titleWords.MatchString(c.text) {
				continue
			}
			if name := legalName(c.text); name != "" {
				return name
			}
		}
	}
	best, bestSize := "", 0.0
	for li, l := range d.lines {
		if li >= 8 || l.page != 1 {
			break
		}
		for ci, c := range l.cells {
			if d.buyer[ref{li, ci}] || titleWords.MatchString(c.text) || !hasLetter(c.text) || strings.ContainsAny(c.text, "@:") {
				continue
			}
			if c.size > bestSize {
				best, bestSize = clean(c.text), c.size
			}
		}
	}
	if best != "" {
		d.w.add("supplier name guessed from the letterhead")
	}
	return best
}

// legalName returns the company name in s when a legal form (Ltd, GmbH,
// SARL, …) ends it or ends one of its "·" or "|" separated parts. A legal
// form in the middle of running text ("… as the reference") does not count.
func legalName(s string) string {
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '·' || r == '|' || r == '•' }) {
		part = strings.TrimSpace(part)
		locs := legalForm.FindAllStringIndex(part, -1)
		if len(locs) == 0 {
			continue
		}
		loc := locs[len(locs)-1]
		if loc[0] == 0 || strings.TrimSpace(part[loc[1]:]) != "" {
			continue
		}
		if v := clean(part); len(v) >= 3 && hasLetter(part[:loc[0]]) {
			return v
		}
	}
	return ""
}

func hasLetter(s string) bool {
	for _, r := range s {
		if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r > 127 {
			return true
		}
	}
	return false
}

func (d *doc) paymentTermDays() (int, bool) {
	for _, l := range d.lines {
		if m := termsRe.FindStringSubmatch(l.String()); m != nil {
			for _, g := range m[1:] {
				if g != "" {
					if n := atoi(g); n > 0 && n <= 365 {
						return n, true
					}
				}
			}
		}
	}
	return 0, false
}

// ---------------------------------------------------------------------------
// Amounts and currency

// moneyRe finds an amount with an optional currency before or after it.
// Thousands separators may be ',', '.', ' ', '\” or a thin/no-break space;
// the decimal separator '.' or ','. Group 1/6: currency code or symbol before
// or after; group 2: minus sign or '('; group 3: integer part; group 4: the
// decimal separator and fraction; group 5 a trailing '%'.
var moneyRe = regexp.MustCompile(`(?:([A-Z]{3}|US\$|CA\$|C\$|A\$|AU\$|NZ\$|HK\$|S\$|[€£$¥]|Fr\.)\s?)?([-−(])?\s?(\d{1,3}(?:[ .,'’\x{00a0}\x{202f}]\d{3})+|\d+)([.,]\d{1,3})?(?:\s?(%))?(?:\s?([A-Z]{3}\b|[€£$¥]|Fr\.))?`)

// amount returns the raw decimal of the amount due and the currency written
// next to it, trying the labels from the most specific; with the generic
// "total" label the last such line wins, as the grand total closes the table.
func (d *doc) amount() (raw, cur string) {
	for tier, labels := range amountLabels {
		var lastRaw, lastCur string
		for li, l := range d.lines {
			for ci, c := range l.cells {
				loc := matchLoc(labels, c.text)
				if loc == nil || notFinalTotal.MatchString(c.text) {
					continue
				}
				// Only the same line: a total's value is never far below
				// its label, and the next line is often another total.
				cands := d.candidates(li, ci, loc[1])
				for _, v := range cands[:min(2, len(cands))] {
					if r, cu, ok := lastAmount(v); ok {
						if tier < 2 {
							return r, cu
						}
						lastRaw, lastCur = r, cu
						break
					}
				}
			}
		}
		if lastRaw != "" {
			return lastRaw, lastCur
		}
	}
	return "", ""
}

func matchLoc(res []*regexp.Regexp, s string) []int {
	for _, r := range res {
		if loc := r.FindStringIndex(s); loc != nil {
			return loc
		}
	}
	return nil
}

// lastAmount returns the last amount in s that is not a percentage, as a
// plain decimal ("1234.50", "-12.00"), and its currency if written with it.
func lastAmount(s string) (raw, cur string, ok bool) {
	var found bool
	for _, m := range moneyRe.FindAllStringSubmatch(s, -1) {
		if m[5] != "" {
			continue
		}
		intPart, frac := m[3], m[4]
		// A lone separator followed by exactly three digits ("1.234",
		// "€1,234") is a thousands separator: that reading is right for
		// every currency but the few with three decimals (KWD, BHD, …),
		// which are rare on the bills this reads.
		if len(frac) == 4 && len(intPart) <= 3 && !strings.ContainsAny(intPart, ".,' ’\u00a0\u202f") {
			intPart, frac = intPart+frac[1:], ""
		}
		digits := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, intPart)
		v := digits
		if frac != "" {
			v += "." + frac[1:]
		}
		if m[2] != "" {
			v = "-" + v
		}
		c := symbolCurrency(m[1])
		if c == "" {
			c = symbolCurrency(m[6])
		}
		raw, cur, found = v, c, true
	}
	return raw, cur, found
}

// symbolCurrency maps a symbol or code written next to an amount to ISO 4217.
func symbolCurrency(s string) string {
	switch s {
	case "":
		return ""
	case "€":
		return "EUR"
	case "£":
		return "GBP"
	case "$", "US$":
		return "USD"
	case "CA$", "C$":
		return "CAD"
	case "A$", "AU$":
		return "AUD"
	case "NZ$":
		return "NZD"
	case "HK$":
		return "HKD"
	case "S$":
		return "SGD"
	case "¥":
		return "JPY"
	case "Fr.":
		return "CHF"
	}
	if money.IsCurrency(s) {
		return s
	}
	return ""
}

// commonCurrencies are the codes trusted anywhere in the text: a three-letter
// word elsewhere ("ALL", "TOP", "CUP") is too often not a currency.
var commonCurrencies = []string{"EUR", "GBP", "USD", "CHF", "SEK", "NOK", "DKK", "PLN", "CZK", "HUF", "RON", "BGN", "CAD", "AUD", "NZD", "JPY", "SGD", "HKD"}

var codeRe = regexp.MustCompile(`\b[A-Z]{3}\b`)
var symbolRe = regexp.MustCompile(`US\$|CA\$|A\$|NZ\$|HK\$|S\$|[€£$¥]`)

// currency is the code written next to the amount due, else the most
// frequent common code or symbol in the document.
func (d *doc) currency(nearAmount string) string {
	if nearAmount != "" {
		return nearAmount
	}
	count := map[string]int{}
	for _, l := range d.lines {
		s := l.String()
		for _, m := range codeRe.FindAllString(s, -1) {
			for _, c := range commonCurrencies {
				if m == c {
					count[c]++
				}
			}
		}
		for _, m := range symbolRe.FindAllString(s, -1) {
			count[symbolCurrency(m)]++
		}
	}
	best, n := "", 0
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if count[k] > n {
			best, n = k, count[k]
		}
	}
	return best
}

// ---------------------------------------------------------------------------
// Dates

var monthNames = map[string]int{}

func init() {
	for m, names := range [12]string{
		"january jan jänner januar janvier janv januari enero",
		"february feb februar février fevrier févr fevr februari febrero",
		"march mar märz maerz mrz mars maart marzo",
		"april apr avril abril",
		"may mai mei mayo",
		"june jun juni juin junio",
		"july jul juli juillet juil julio",
		"august aug août aout augustus agosto",
		"september sep sept septembre septiembre",
		"october oct oktober okt octobre octubre",
		"november nov novembre noviembre",
		"december dec dezember dez décembre decembre déc dic diciembre",
	} {
		for _, n := range strings.Fields(names) {
			monthNames[n] = m + 1
		}
	}
	var names []string
	for n := range monthNames {
		names = append(names, regexp.QuoteMeta(n))
	}
	// Longest first, so "juillet" is not read as "jul".
	sort.Slice(names, func(i, j int) bool {
		return len(names[i]) > len(names[j]) || len(names[i]) == len(names[j]) && names[i] < names[j]
	})
	alt := strings.Join(names, "|")
	dayMonthYear = re(`\b(\d{1,2})(?:st|nd|rd|th)?\.?\s*(` + alt + `)\.?,?\s*(\d{4})\b`)
	monthDayYear = re(`\b(` + alt + `)\.?\s*(\d{1,2})(?:st|nd|rd|th)?,?\s*(\d{4})\b`)
}

var (
	isoDateRe    = regexp.MustCompile(`\b(\d{4})-(\d{1,2})-(\d{1,2})\b`)
	numDateRe    = regexp.MustCompile(`\b(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})\b`)
	dayMonthYear *regexp.Regexp
	monthDayYear *regexp.Regexp
)

// findDate returns the first date in s, in any of the forms invoices print:
// 2026-01-31, 31.01.2026, 31/01/2026 (01/31/2026 when dayFirst is false or
// the first number cannot be a month), 31 January 2026, 31. Januar 2026,
// January 31, 2026. Two-digit years are 20xx.
func findDate(s string, dayFirst bool) (Date, bool) {
	type hit struct {
		at int
		d  Date
	}
	var hits []hit
	if m := isoDateRe.FindStringSubmatchIndex(s); m != nil {
		if d, ok := makeDate(atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]]), atoi(s[m[6]:m[7]])); ok {
			hits = append(hits, hit{m[0], d})
		}
	}
	if m := numDateRe.FindStringSubmatchIndex(s); m != nil {
		a, b, y := atoi(s[m[2]:m[3]]), atoi(s[m[4]:m[5]]), atoi(s[m[6]:m[7]])
		if m[7]-m[6] == 2 {
			y += 2000
		}
		day, mon := a, b
		if !dayFirst && a <= 12 || b > 12 {
			day, mon = b, a
		}
		if d, ok := makeDate(y, mon, day); ok {
			hits = append(hits, hit{m[0], d})
		}
	}
	if m := dayMonthYear.FindStringSubmatchIndex(s); m != nil {
		if d, ok := makeDate(atoi(s[m[6]:m[7]]), monthNames[strings.ToLower(s[m[4]:m[5]])], atoi(s[m[2]:m[3]])); ok {
			hits = append(hits, hit{m[0], d})
		}
	}
	if m := monthDayYear.FindStringSubmatchIndex(s); m != nil {
		if d, ok := makeDate(atoi(s[m[6]:m[7]]), monthNames[strings.ToLower(s[m[2]:m[3]])], atoi(s[m[4]:m[5]])); ok {
			hits = append(hits, hit{m[0], d})
		}
	}
	if len(hits) == 0 {
		return Date{}, false
	}
	sort.Slice(hits, func(i, j int) bool { return hits[i].at < hits[j].at })
	return hits[0].d, true
}
