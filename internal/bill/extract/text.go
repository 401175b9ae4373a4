package extract

import (
	"math"
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
	buyer map[ref]bool // cells inside the buyer's (or recipient's) address block
	// monthFirst is true when the page's slash dates are written
	// month/day/year (US style): one of them has a day over 12 in second
	// place, or the currency is USD and none says otherwise.
	monthFirst bool
	conf       map[string]float64 // confidence of the scored fields read
	w          warnings
}

// confident is the bar a value's confidence must reach to be filled: the
// rules leave a field empty rather than guess, since a person pays what
// the bill says.
const confident = 0.5

// sure records the confidence of a field's reading and reports whether it
// reaches the bar. Fields read by one unambiguous rule (a check digit, a
// labelled VAT number) are not scored: they are sure or absent.
func (d *doc) sure(field string, conf float64) bool {
	if d.conf == nil {
		d.conf = map[string]float64{}
	}
	d.conf[field] = conf
	return conf >= confident
}

func readText(lines []line) Result {
	d := &doc{lines: lines}
	d.markBuyer()
	var f Fields

	f.CreditNote = d.isCreditNote()
	amountRaw, amountCur, amountConf := d.amount()
	if !d.sure("amount_due", amountConf) {
		amountRaw, amountCur = "", ""
	}
	if amountCur != "" && !money.IsCurrency(amountCur) {
		// An amount in a currency that cannot be paid (DEM) is not taken,
		// nor is a currency guessed for it.
		d.w.add("amount in %s, not a currency a bill can be paid in; not taken", amountCur)
		amountRaw = ""
	} else {
		f.Currency = d.currency(amountCur)
	}
	if amountRaw != "" {
		setAmount(amountRaw, f.Currency, &f, &d.w)
	}
	d.monthFirst = d.slashMonthFirst(f.Currency == "USD")

	number, at, numberConf := d.invoiceNumber()
	if d.sure("invoice_number", numberConf) {
		f.InvoiceNumber = number
	}
	dateParser := func(s string) string {
		if dt, ok := findDate(s, !d.monthFirst); ok {
			return dt.String()
		}
		return ""
	}
	f.DueDate = d.dueDate(dateParser)
	// "Rechnung Nr. 471102 vom 05.03.2018": the date that follows the
	// number is the issue date.
	if at != nil && f.InvoiceNumber != "" {
		if m := datedRe.FindStringIndex(at.rest); m != nil {
			rest := at.rest[m[1]:]
			if strings.TrimSpace(rest) == "" && at.next != "" {
				rest = at.next // a title wrapped after "vom"
			}
			f.IssueDate, _ = isoDate(dateParser(rest))
			d.sure("issue_date", 0.9)
		}
	}
	if f.IssueDate.IsZero() {
		// A label that names the invoice's date is sure; a bare "Date" less so.
		for i, lab := range issueDateLabels {
			f.IssueDate, _ = isoDate(d.firstWhere([]*regexp.Regexp{lab}, dateParser, func(c string) bool {
				return !otherDateLabel.MatchString(c) && !matchAny(dueDateLabels, c)
			}))
			if !f.IssueDate.IsZero() {
				if !d.sure("issue_date", []float64{0.85, 0.85, 0.6}[i]) {
					f.IssueDate = Date{}
				}
				break
			}
		}
	}
	if f.DueDate.IsZero() && !f.IssueDate.IsZero() {
		if days, ok := d.paymentTermDays(); ok {
			t := time.Date(f.IssueDate.Year, f.IssueDate.Month, f.IssueDate.Day+days, 0, 0, 0, 0, time.UTC)
			f.DueDate = Date{t.Year(), t.Month(), t.Day()}
			d.w.add("due date computed from the payment terms (%d days)", days)
			d.sure("due_date", 0.6)
		}
	}
	if !f.DueDate.IsZero() && !f.IssueDate.IsZero() && f.DueDate.String() < f.IssueDate.String() {
		f.DueDate = Date{} // a due date before the issue date is a misreading
	}

	if name, conf := d.supplierName(); d.sure("supplier_name", conf) {
		f.SupplierName = name
	}
	f.SupplierTaxID = d.firstSupplier(vatLabels, parseVATID)
	if f.SupplierTaxID == "" {
		f.SupplierTaxID = d.firstSupplier(taxIDLabels, parseTaxNumber)
	}

	if !d.directDebit() {
		d.bankDetails(&f)
	} else {
		d.w.add("the page says the amount is collected by direct debit; its account is the payer's, not taken")
	}
	f.RemittanceReference = d.firstWhere(referenceLabels, parseReference, func(c string) bool { return !notPaymentRef.MatchString(c) })
	return Result{Format: FormatPDFText, Fields: f, Warnings: d.w}
}

// dueDate reads the date after a due-date label. Payment terms that also
// grant a discount for early payment ("netto bis 04.04.2018, 3% Skonto bis
// 15.03.2018") name two dates for two amounts: no due date is taken from
// them.
func (d *doc) dueDate(parse func(string) string) Date {
	for _, lab := range dueDateLabels {
		for li, l := range d.lines {
			for ci, c := range l.cells {
				loc := lab.FindStringIndex(c.text)
				if loc == nil || d.discountTerms(li) {
					continue
				}
				for _, v := range d.candidates(li, ci, loc[1]) {
					if p := parse(v); p != "" {
						dt, _ := isoDate(p)
						return dt
					}
				}
			}
		}
	}
	return Date{}
}

// discountTerms reports whether line li or the next one grants a discount
// for early payment.
func (d *doc) discountTerms(li int) bool {
	for k := li; k < len(d.lines) && k <= li+1; k++ {
		if notDueDate.MatchString(d.lines[k].String()) {
			return true
		}
	}
	return false
}

// bankDetails fills the payee's account: the IBAN (the one next to an
// "IBAN" label first), the BIC printed with that IBAN, and only on a page
// without any IBAN a domestic account number, sort code or routing number.
func (d *doc) bankDetails(f *Fields) {
	var at int
	f.IBAN, at = d.iban()
	if f.IBAN != "" {
		f.BIC = d.bicNear(at, f.IBAN)
	}
	// A domestic account number is looked for on a page without IBANs,
	// and on a British one, which prints sort code and account number
	// beside the IBAN (elsewhere a "Kontonr." next to the IBAN is the same
	// account in an older form, or another one).
	if d.anyIBANShape() && !strings.HasPrefix(f.IBAN, "GB") {
		return
	}
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
	if f.BIC == "" && f.AccountNumber != "" {
		f.BIC = d.first(bicLabels, parseBIC)
	}
	f.AccountHolderName = d.first(holderLabels, func(s string) string {
		if v := clean(s); hasLetter(v) && !strings.ContainsAny(v, "0123456789@") && len(v) <= 70 {
			return v
		}
		return ""
	})
	if f.AccountNumber == "" {
		f.AccountHolderName = "" // a holder without an account says nothing
	}
}

func parseBIC(s string) string {
	for _, tok := range strings.Fields(s) {
		tok = strings.Trim(tok, ".,;:()")
		if bankdetails.CheckBIC(tok) == nil {
			return tok
		}
	}
	return ""
}

// directDebitRe is wording that says the amount will be collected from the
// payer's account: the bank details printed then are the payer's.
var directDebitRe = re(`lastschrift|einzug|eingezogen|abbuch|direct\s*debit|prélèvement|prelevement|domiciliëring|domiciliering|incasso|adeudo|domiciliaci[oó]n|addebito|mandat|mandate|gläubiger-?id|creditor\s*id`)

func (d *doc) directDebit() bool {
	for _, l := range d.lines {
		if directDebitRe.MatchString(l.String()) {
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// Labels

func re(s string) *regexp.Regexp { return regexp.MustCompile(`(?i)` + s) }

var (
	// invoiceNumberLabels name the document's own number: a word for the
	// document (any German compound ending in -rechnung too:
	// "Handelsrechnung", "Rechnungskorrektur") and then a word for number.
	// Order, customer and delivery numbers never match.
	invoiceNumberLabels = []*regexp.Regexp{
		re(`(?:\b|[a-zäöü])(?:rechnung|gutschrift|korrektur|invoice|credit\s*note|facture|avoir|factuur|creditnota|fattura|factura|nota\s*di\s*credito)s?(?:\s*\(\d{3}\))?[\s-]*(?:number|num(?:ber|[ée]ro)?\.?|no\.?|nr\.?|nummer|n[°º]\.?|#|id)(?:\s|[:.#]|$)`),
		// A title with words between the document and its number:
		// "Rechnung des Versicherers (575) Nr. 01.234.567.8-2018-1".
		re(`^\S*(?:rechnung|invoice|facture|factura|fattura|factuur|gutschrift|avoir)\S*(?:\s+[^\s\d:]+){1,3}?(?:\s*\(\d{3}\))?\s*(?:nr\.?|no\.?|n[°º]\.?|nummer|number|#)(?:\s|[:.#]|$)`),
		re(`\b(?:factuurnummer|rechnungsnummer|gutschriftsnummer|belegnummer|beleg-?nr\.?|n[°º]\s*(?:de\s*)?(?:la\s*)?(?:facture|factura|fattura|avoir)|num[ée]ro\s*de\s*(?:la\s*)?facture|n[úu]mero\s*de\s*factura|numero\s*(?:di\s*)?fattura|factuur\s*nr\.?)\s*[:.]?`),
	}
	// titleNumberLabel is the document's title with the number in it
	// ("Invoice FA-2017-0008", "Facture F-12"), read only near the top of
	// the first page and only from the same cell.
	titleNumberLabel = re(`^(?:tax\s+)?(?:invoice|rechnung|facture|factuur|factura|fattura|avoir|credit\s*note|gutschrift|rechnungskorrektur|creditnota)\s*[:#]?\s*`)
	// notInvoiceNumber marks label cells about another document's number.
	notInvoiceNumber = re(`order|bestell|auftrag|kunde|customer|client|liefer|deliver|livraison|commande|pedido|ordine|klant|bestelling|li[ée]e|related|bezug|original|urspr[üu]ng|corrig|référence|reference`)
	// datedRe follows the invoice number when the issue date comes with it.
	datedRe = re(`^\s*(?:vom|von|du|del|van|of|dated|from|issued\s*(?:at|on)|datum|date|le|d\.)\s*:?\s*`)

	issueDateLabels = []*regexp.Regexp{
		re(`\b(?:invoice|bill)\s*date\b|\bdate\s*of\s*(?:issue|invoice)\b|\bissue\s*date\b|\bdate\s*issued\b|\btax\s*point\b|\bissued\s*(?:on|at)\b`),
		re(`(?:rechnungs|ausstellungs|beleg|gutschrifts)-?\s?datum\b|\bdatum\s*(?:der\s*)?rechnung\b|\bdate\s*(?:de\s*(?:la\s*)?facture|d'[ée]mission|de\s*facturation|de\s*l'avoir)\b|\bfactuurdatum\b|\bfecha\s*(?:de\s*)?(?:emisi[oó]n|(?:la\s*)?factura|expedici[oó]n)\b|\bdata\s*(?:di\s*)?(?:emissione|(?:della\s*)?fattura)\b`),
		re(`^(?:date|datum|fecha|data|issued(?:\s*on)?)\b\s*:?`),
	}
	// otherDateLabel keeps "Delivery date" or "Order date" from passing for the
	// issue date through the generic "date" label.
	otherDateLabel = re(`deliver|delivery|order|supply|service|period|liefer|leistung|bestell|livraison|commande|levering|due|échéance|[ée]ch[ée]ance|f[äa]llig|vencimiento|scadenza|druck|print|version|stylesheet|valid|g[üu]ltig|mandat|zahl|paid|pay`)
	dueDateLabels  = []*regexp.Regexp{
		re(`\bdue\s*date\b|\bdate\s*due\b|\bpayment\s*due(?:\s*date)?\b|\bdue\s*(?:by|on)\b|\bpay(?:able)?\s*by\b|\bplease\s*pay\s*by\b|\bremit\s*(?:until|by)\b`),
		re(`\bf[äa]lligkeit(?:sdatum)?\b|\bf[äa]llig\s*(?:am|bis)?\b|\bzahlbar\s*(?:bis|sp[äa]testens)(?:\s*(?:zum|am))?\b|\bzahlungsziel\b|\b[üu]berweisen\s*sie\s*(?:bitte\s*)?bis(?:\s*zum)?\b|\bbitte\s*bis(?:\s*zum)?\b`),
		re(`\bdate\s*d'[ée]ch[ée]ance\b|[ée]ch[ée]ance\b|\b[àa]\s*(?:payer|r[ée]gler)\s*avant\s*le\b|\bvervaldatum\b|\bvervaldag\b|\bte\s*betalen\s*v[oó][oó]r\b|\bfecha\s*de\s*vencimiento\b|\bvencimiento\b|\bdata\s*(?:di\s*)?scadenza\b|\bscadenza\b`),
		re(`^due\b`),
	}
	// notDueDate marks a discount date ("Skonto bis 15.03."), which looks
	// like a due date but is not the one the amount is due on.
	notDueDate = re(`skonto|discount|escompte|korting|descuento|sconto`)

	// Amount labels by what they name: the amount payable, the gross
	// (tax-inclusive) total, a generic total, the net total, the tax total
	// and prepayments.
	payableLabels = []*regexp.Regexp{re(`\b(?:total\s*amount\s*due|amount\s*due|balance\s*due|total\s*due|due\s*payable|amount\s*payable|total\s*payable|total\s*to\s*pay|please\s*pay|amount\s*to\s*pay|residual|balance|remaining)\b|zahlbetrag\b|\bzu\s*zahlen(?:der\s*betrag)?\b|\boffener\s*betrag\b|\brestbetrag\b|\bforderungsbetrag\b|\bnet\s*[àa]\s*payer\b|\bmontant\s*d[ûu]\b|\breste\s*[àa]\s*payer\b|\bmontant\s*[àa]\s*payer\b|\bsolde\b|\b(?:totaal\s*)?te\s*betalen\b|\bopenstaand\s*bedrag\b|\b(?:importe|total)\s*a\s*pagar\b|\bimporto\s*da\s*pagare\b|\bnetto\s*a\s*pagare\b|\btotale\s*da\s*pagare\b`)}
	grossLabels   = []*regexp.Regexp{re(`^brutto\b|\bgesamtbetrag\b|\bsumme\s*brutto\b|\brechnungssumme\s*brutto\b|\bbrutto\s*(?:gesamt|summe)\b|\brechnungsbetrag\b|\bendbetrag\b|\bbruttobetrag\b|\bbruttosumme\b|\bgesamtsumme\b|\brechnungssumme\s*(?:inkl|mit)|\btotal\s*ttc\b|\bmontant\s*ttc\b|\btotal\s*\(?incl(?:\.|uding)?\s*(?:vat|tax)\)?|\binvoice\s*total\b|\bgrand\s*total\b|\btotaalbedrag\b|\btotaal\s*incl\.?\s*btw\b|\btotal\s*amount\b|\bcredit\s*total\b|\bimporte\s*total\b|\btotal\s*factura\b|\btotale\s*(?:fattura|documento)\b|\bimporto\s*totale\b`)}
	totalLabels   = []*regexp.Regexp{re(`\btotal\b|\bsumme\b|\btotaal\b|\btotale\b`)}
	netLabels     = []*regexp.Regexp{re(`^netto\b|\bnet\s*total\b|\btotal\s*(?:net|excl|before\s*tax|ht)\b|\bsubtotal\b|\bnettobetrag\b|\bnettosumme\b|\brechnungssumme\s*ohne\b|\bsumme\s*netto\b|\bgesamt\s*netto\b|\btotal\s*hors\s*taxes?\b|\bmontant\s*ht\b|\btotaal\s*excl|\bbase\s*imponible\b|\bimponibile\b|\btotalbefore\s*tax\b`)}
	taxLabels     = []*regexp.Regexp{re(`\b(?:vat|tax)\s*(?:total|amount)\b|\btotal\s*(?:vat|tax(?:es)?|tva|btw|iva)\b|\bust\.?\s*gesamt\b|\bsteuerbetrag\b|\bumsatzsteuer\s*gesamt|\bmwst\.?\s*(?:betrag|gesamt)\b|\bmontant\s*tva\b|\btotal\s*tva\b|\bbtw\s*bedrag\b|\bcuota\s*iva\b|\btotale\s*iva\b`)}
	prepaidLabels = []*regexp.Regexp{re(`\bprepaid\b|\bprepayments?\b|\bamount\s*paid\b|\bpaid\s*amount\b|\badvance\s*payment\b|\banzahlung(?:en)?\b|\bbereits\s*(?:bezahlt|gezahlt)\b|\bacompte\b|\bd[ée]j[àa]\s*pay[ée]\b|\bvooruitbetaling\b|\breeds\s*betaald\b|\banticipo\b|\bacconto\b`)}
	// notFinalTotal marks sub-totals and tax totals, which the generic
	// "total" label would otherwise take.
	notFinalTotal = re(`sub-?\s*total|zwischensumme|netto|nettobetrag|total\s*(?:excl|net|ht|hors|vat|tax|tva|btw|mwst|before)|totalbefore|\bht\b|excl\.?|exkl|ohne|tva\s*\d|mwst|ust\.|vat\s*\d|\bvat\b|\btax\b|steuer|\bbtw\b|\biva\b|total\s*\w*\s*(?:items|quantity|qty|hours|pages)|discount|rabatt|zuschl[äa]g|abschl[äa]g|remise|positionssumme|warenwert|anzahl|menge|weight|gewicht`)
	vatLabels     = []*regexp.Regexp{
		re(`\bmwst\.?-?\s*(?:nr|nummer)\.?|\bmwst-?id\b`),
		re(`\bvat\s*(?:reg(?:istration|\.)?\s*)?(?:no\.?|number|id|#|reg\.?)?\s*[:.]?|\bust-?\s*id(?:-?nr)?\.?|\bust\.?\s*-?\s*id\.?\s*-?\s*nr\.?|\bust\.?-?\s*ident(?:ifikations)?-?\s*nr\.?|\bumsatzsteuer-?\s*(?:identifikationsnummer|id(?:-?nr\.?)?)\b|\buid(?:-?nr\.?)?\b|\bn[°º]\s*(?:de\s*)?tva(?:\s*intracom(?:munautaire)?)?|\btva\s*intracom(?:munautaire)?|\btva\s*:|\bnum[ée]ro\s*de\s*tva|\bbtw(?:-?\s*(?:nummer|nr\.?|id))?\b|\bp\.?\s*iva\b|\bpartita\s*iva\b|\bnif\b|\bcif\b|\bmoms(?:reg)?(?:\.?\s*nr\.?)?\b`),
	}
	taxIDLabels = []*regexp.Regexp{
		re(`\bsteuer-?\s*(?:nummer|nr\.?)|\bst\.?-?\s*nr\.?|\btax\s*(?:id|number|no\.?)|(?-i:\bEIN\b)|\btin\b|\babn\b`),
	}
	// notSupplierFact marks a label about the buyer ("Customer VAT number").
	notSupplierFact = re(`customer|client|kunde|buyer|acheteur|k[äa]ufer|destinataire|klant|afnemer|cliente|comprador|acquirente|empf[äa]nger`)
	bicLabels       = []*regexp.Regexp{re(`\b(?:bic|swift)(?:\s*/\s*(?:bic|swift))?(?:[\s-]*code)?\b\s*[:.]?`)}
	sortCodeLabels  = []*regexp.Regexp{re(`\bsort[\s-]*code\b\s*[:.]?|\bs/c\b`)}
	accountLabels   = []*regexp.Regexp{re(`\b(?:bank\s*)?account\s*(?:number|no\.?|nr\.?|#)\s*[:.]?|\bacc(?:ount|t)?\.?\s*no\.?\s*[:.]?|\ba/c(?:\s*no\.?)?\s*[:.]?|\bkonto(?:nummer|-?\s*nr\.?)\s*[:.]?|\bnum[ée]ro\s*de\s*compte\b|\brekeningnummer\b`), re(`\baccount\s*:?`)}
	holderLabels    = []*regexp.Regexp{re(`\baccount\s*(?:name|holder)\s*[:.]?|\bbeneficiary(?:\s*name)?\s*[:.]?|\bkontoinhaber(?:in)?\s*[:.]?|\btitulaire(?:\s*du\s*compte)?\s*[:.]?|\bten\s*name\s*van\s*[:.]?`)}
	abaLabels       = []*regexp.Regexp{re(`\b(?:aba\s*)?routing(?:\s*(?:number|no\.?|#|transit\s*number))?\b|\baba\b|\brtn\b`)}
	referenceLabels = []*regexp.Regexp{
		re(`\b(?:payment|remittance)\s*ref(?:erence)?\.?\b\s*[:.]?|\bplease\s*(?:quote|use)(?:\s*(?:the\s*)?(?:reference|ref\.?))?\s*:?|\bverwendungszweck\b\s*:?|\bzahlungsreferenz\b\s*:?|\br[ée]f[ée]rence\s*(?:de\s*)?(?:paiement|virement)\s*:?|\bbetalingskenmerk\b\s*:?|\bbetalingsreferentie\b\s*:?|\bcausale\b\s*:?`),
		re(`^(?:reference|ref\.?|referenz|r[ée]f[ée]rence|kenmerk)\s*:`),
	}
	notPaymentRef = re(`\b(?:your|our|order|customer|purchase|po|ihre|unsere|bestell|kunden|votre|commande|client|uw|klant|order)\b`)
	// buyerLabels head the buyer's or recipient's address block, whose
	// names and numbers are never the supplier's.
	buyerLabels   = re(`^(?:bill(?:ed)?\s*to|invoice\s*to|invoiced\s*to|sold\s*to|ship\s*to|deliver(?:ed)?\s*to|delivery\s*address|shipping\s*address|customer|client|buyer|recipient|rechnungsempf[äa]nger|rechnungsadresse|rechnungsanschrift|lieferanschrift|kunde|k[äa]ufer|leistungsempf[äa]nger|warenempf[äa]nger|abweichende[rs]?\s*(?:rechnungs|waren|liefer)\w*|lieferadresse|an|factur[ée]\s*[àa]|adresse\s*de\s*(?:facturation|livraison)|livr[ée]\s*[àa]|destinataire|acheteur|klant|koper|afnemer|factuuradres|afleveradres|cliente|destinatario|comprador|acquirente|committente|to)(?:[\s:/]|$)`)
	notBuyerLabel = re(`^\S+\s*(?:no|number|nr|id|ref|#|nummer|reference|code|vat|tva|btw|ust)\b`)
	// supplierLabel heads the supplier's block; it is the whole cell ("Verkäufer:")
	// or is followed by a colon, so that a name such as "Lieferant GmbH" is
	// not read as a label.
	supplierLabel = re(`^(?:from|supplier|seller|vendor|issued\s*by|lieferant|verk[äa]ufer|rechnungssteller|rechnungsersteller|rechnungsaussteller|leistungserbringer|auftragnehmer|fournisseur|vendeur|prestataire|[ée]metteur|leverancier|verkoper|afzender|proveedor|vendedor|emisor|fornitore|venditore|cedente|prestatore)\s*(?::|$)`)
	legalForm     = re(`\b(?:ltd|limited|gmbh|mbh|ag|a\.\s?g|kg|ohg|ug|gbr|e\.\s?v|e\.\s?k|se|s\.?a\.?s\.?|s\.?a\.?r\.?l\.?|s\.?a\.?|sàrl|eurl|b\.?v\.?|n\.?v\.?|inc|llc|llp|plc|oy|ab|a/s|aps|as|s\.?l\.?|s\.?p\.?a\.?|s\.?r\.?l\.?|corp(?:oration)?|pty|pte)\b\.?`)
	titleWords    = re(`^(?:tax\s*)?(?:invoice|rechnung|facture|factuur|credit\s*note|gutschrift|avoir|creditnota|page|seite|date|datum)\b`)
	creditTitle   = re(`^(?:credit\s*note|gutschrift|avoir|facture\s*d'avoir|creditnota|creditfactuur|nota\s*de\s*cr[ée]dito|nota\s*di\s*credito)\b`)
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
				if skipBuyer && (d.buyer[ref{li, ci}] || notSupplierFact.MatchString(c.text[:loc[0]])) {
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
// column, up to eight lines and until a gap of more than two lines or
// another block's label, so that neither the buyer's name nor its VAT
// number is taken for the supplier's.
func (d *doc) markBuyer() {
	d.buyer = map[ref]bool{}
	for li, l := range d.lines {
		for ci, c := range l.cells {
			if !buyerLabels.MatchString(c.text) || notBuyerLabel.MatchString(c.text) {
				continue
			}
			d.buyer[ref{li, ci}] = true
			prevY := l.y
			for k := li + 1; k < len(d.lines) && k <= li+8 && d.lines[k].page == l.page; k++ {
				if prevY-d.lines[k].y > 3*c.size {
					break
				}
				stop := false
				for cj, c2 := range d.lines[k].cells {
					if c2.x0 < c.x0+40 && c2.x1 > c.x0-5 {
						if supplierLabel.MatchString(c2.text) || buyerLabels.MatchString(c2.text) && !notBuyerLabel.MatchString(c2.text) {
							stop = true
							break
						}
						d.buyer[ref{k, cj}] = true
						prevY = d.lines[k].y
						continue
					}
					// A form-like block ("Name:  Kunden AG") has its
					// values in a column to the right of its labels.
					if cj > 0 && d.buyer[ref{k, cj - 1}] && strings.HasSuffix(d.lines[k].cells[cj-1].text, ":") {
						d.buyer[ref{k, cj}] = true
					}
				}
				if stop {
					break
				}
			}
		}
	}
}

// isCreditNote reports whether the title near the top says credit note. A
// German "Gutschrift" that says it is a self-billed invoice ("Gutschrift
// (selbst ausgestellte Rechnung)") is an invoice the buyer wrote, not a
// credit.
func (d *doc) isCreditNote() bool {
	for li, l := range d.lines {
		if li >= 15 {
			break
		}
		for _, c := range l.cells {
			if creditTitle.MatchString(c.text) && !selfBilled.MatchString(l.String()) {
				return true
			}
		}
	}
	return false
}

var selfBilled = re(`selbst\s*ausgestellt|self[\s-]*bill|autofactur|zelffactur|autofattur`)

// ---------------------------------------------------------------------------
// Field parsers

var (
	invoiceNumberRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9\-/._]{0,40}`)
	// amountShape is a number with a decimal part ("1.163,40", "1,163"),
	// which a label's neighbour can be but an invoice number is not taken as.
	amountShape = regexp.MustCompile(`^\d{1,3}(?:[.,]\d{3})*[.,]\d{1,2}$|^\d{1,3}[.,]\d{3}$`)
	// creditorIDShape is a SEPA creditor identifier ("DE98ZZZ09999999999"),
	// whose business code is ZZZ when none is assigned.
	creditorIDShape = regexp.MustCompile(`^[A-Z]{2}\d{2}ZZZ`)
)

// parseInvoiceNumber takes the first word after the label that can be an
// invoice number: it has a digit, is at least three characters, and is not
// a date, an amount, an IBAN or a creditor id.
func parseInvoiceNumber(s string) string {
	for i, tok := range strings.Fields(s) {
		if i >= 3 {
			break // the number follows its label closely
		}
		tok = strings.TrimRight(invoiceNumberRe.FindString(tok), "._-/")
		if tok == "" || !strings.ContainsAny(tok, "0123456789") {
			if hasLetter(tok) && len(tok) > 3 {
				return "" // a word: the label was followed by text, not a number
			}
			continue
		}
		if len(tok) < 3 || amountShape.MatchString(tok) || creditorIDShape.MatchString(tok) || bankdetails.CheckIBAN(tok) == nil {
			return ""
		}
		if _, ok := findDate(tok, true); ok {
			continue // a date next to the label, not the number
		}
		return tok
	}
	return ""
}

// numberAt is where the invoice number was read: the text after it in its
// cell, where the issue date often follows ("… vom 05.03.2018").
type numberAt struct {
	rest string
	next string // the line below's first cell, when it starts in the same column
}

// nextBelow returns the text of the first cell of the line below line li
// when it starts where c starts (a wrapped title), else "".
func (d *doc) nextBelow(li int, c cell) string {
	if li+1 >= len(d.lines) || d.lines[li+1].page != d.lines[li].page || d.lines[li].y-d.lines[li+1].y > 2*c.size {
		return ""
	}
	if n := d.lines[li+1].cells[0]; math.Abs(n.x0-c.x0) < 2 {
		return n.text
	}
	return ""
}

// invoiceNumber reads the document's number from an explicit label, else
// from the title near the top of the first page ("Invoice FA-2017-0008").
// Two labels that give different numbers leave it empty.
func (d *doc) invoiceNumber() (string, *numberAt, float64) {
	var found string
	var at *numberAt
	conf := 0.0
	for _, lab := range invoiceNumberLabels {
		for li, l := range d.lines {
			for ci, c := range l.cells {
				loc := lab.FindStringIndex(c.text)
				if loc == nil || notInvoiceNumber.MatchString(c.text[:loc[0]]) || d.buyer[ref{li, ci}] {
					continue
				}
				for k, v := range d.candidates(li, ci, loc[1]) {
					n := parseInvoiceNumber(v)
					if n == "" {
						continue
					}
					if found != "" && n != found {
						d.w.add("two invoice numbers on the page (%s, %s); none taken", found, n)
						return "", nil, 0
					}
					if found == "" {
						found = n
						// Beside the label is surer than below it.
						beside := 0
						if trimValue(c.text[loc[1]:]) != "" {
							beside++
						}
						if ci+1 < len(l.cells) {
							beside++
						}
						conf = 0.75
						if k < beside {
							conf = 0.9
						}
						if k == 0 {
							rest := trimValue(c.text[loc[1]:])
							if i := strings.Index(rest, n); i >= 0 {
								at = &numberAt{rest: rest[i+len(n):], next: d.nextBelow(li, c)}
							}
						}
					}
					break
				}
			}
		}
		if found != "" {
			return found, at, conf
		}
	}
	for li, l := range d.lines {
		if li >= 15 || l.page != 1 {
			break
		}
		for _, c := range l.cells {
			loc := titleNumberLabel.FindStringIndex(c.text)
			if loc == nil {
				continue
			}
			rest := c.text[loc[1]:]
			if n := parseInvoiceNumber(rest); n != "" && (hasLetter(n) || len(n) >= 4) {
				i := strings.Index(rest, n)
				return n, &numberAt{rest: rest[i+len(n):], next: d.nextBelow(li, c)}, 0.7
			}
		}
	}
	return "", nil, 0
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

// parseTaxNumber takes a national tax number ("201/113/40209",
// "12 345 678 901"): eight digits at least, and not a date.
func parseTaxNumber(s string) string {
	v := strings.TrimSpace(taxNumberRe.FindString(s))
	digits := 0
	for i := 0; i < len(v); i++ {
		if isDigitASCII(v[i]) {
			digits++
		}
	}
	if digits < 8 {
		return ""
	}
	if _, ok := findDate(v, true); ok {
		return ""
	}
	return v
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

// parseReference takes the value after the label when it is short and
// has a digit ("Rechnung 181301674"), else the first word with a digit in
// it: a reference is one token ("RE-2026-0117", "+++045/6789/12318+++"),
// and what follows the label is often the rest of a sentence ("… as the
// payment reference").
func parseReference(s string) string {
	s = trimValue(s)
	if v := clean(s); len(v) <= 35 && strings.ContainsAny(v, "0123456789") && len(strings.Fields(v)) <= 3 {
		return strings.TrimRight(v, ".,;:)")
	}
	for _, tok := range strings.Fields(s) {
		tok = strings.TrimRight(tok, ".,;:)")
		if strings.ContainsAny(tok, "0123456789") && len(tok) <= 35 {
			return tok
		}
	}
	return ""
}

// iban returns the payee's IBAN and the line it is on: the one next to an
// "IBAN" label, else the only valid IBAN on the page. Two different
// labelled IBANs, or two unlabelled ones, leave it empty: the page then
// names several accounts and the rules cannot tell which one to pay.
func (d *doc) iban() (string, int) {
	var labelled, any []string
	var labelledAt, anyAt int
	for li, l := range d.lines {
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
			if isLabelled && !containsName(labelled, found) {
				labelled = append(labelled, found)
				labelledAt = li
			}
			if !containsName(any, found) {
				any = append(any, found)
				anyAt = li
			}
		}
	}
	switch {
	case len(labelled) == 1:
		return labelled[0], labelledAt
	case len(labelled) == 0 && len(any) == 1:
		return any[0], anyAt
	case len(any) > 1:
		d.w.add("several IBANs on the page; none taken")
	}
	return "", -1
}

// bicNear returns the BIC printed with the IBAN on line at: on the same
// line or the two next to it, of the IBAN's country.
func (d *doc) bicNear(at int, iban string) string {
	if at < 0 {
		return ""
	}
	var found []string
	for k := max(0, at-2); k < len(d.lines) && k <= at+2; k++ {
		for _, tok := range strings.FieldsFunc(d.lines[k].String(), func(r rune) bool {
			return r == ' ' || r == ':' || r == ',' || r == ';' || r == '(' || r == ')' || r == '/'
		}) {
			tok = strings.Trim(tok, ".")
			if len(tok) != 8 && len(tok) != 11 || bankdetails.CheckBIC(tok) != nil || tok[4:6] != iban[:2] {
				continue
			}
			if !containsName(found, tok) {
				found = append(found, tok)
			}
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return ""
}

// anyIBANShape reports whether something shaped like an IBAN is on the page:
// then a domestic account number is not looked for.
func (d *doc) anyIBANShape() bool {
	for _, l := range d.lines {
		s := l.String()
		if ibanCandidateRe.MatchString(s) || strings.Contains(strings.ToUpper(s), "IBAN") {
			return true
		}
	}
	return false
}

var ibanCandidateRe = regexp.MustCompile(`\b[A-Z]{2}\d{2}(?:[ \x{00a0}]?[A-Z0-9]){11,32}`)

// supplierName reads the supplier's name from the sender's block: the
// block under a "Verkäufer:" / "Seller:" / "From:" label, else a company
// name (one that ends in a legal form such as GmbH, Ltd or SARL) outside the
// buyer's block that the page prints twice (letterhead and footer) or just
// above the supplier's VAT number. Nothing else is guessed: a slogan, a
// heading or the recipient's window are never taken.
func (d *doc) supplierName() (string, float64) {
	if v := d.labelledSupplier(); v != "" {
		return v, 0.9
	}
	count := map[string]int{}
	first := map[string]int{}
	var order []string
	for li, l := range d.lines {
		for ci, c := range l.cells {
			if d.buyer[ref{li, ci}] || strings.ContainsAny(c.text, "@:") || titleWords.MatchString(c.text) {
				continue
			}
			for _, name := range legalNames(c.text) {
				if count[name] == 0 {
					first[name] = li
					order = append(order, name)
				}
				count[name]++
			}
		}
	}
	var best []string
	for _, name := range order {
		if count[name] >= 2 || d.nearSupplierFact(first[name]) {
			best = append(best, name)
		}
	}
	if len(best) == 1 {
		return best[0], 0.75
	}
	if len(best) == 0 {
		if v := d.letterhead(); v != "" {
			return v, 0.6
		}
	}
	return "", 0
}

// letterhead returns the name at the head of the first page: the top line,
// in a font at least 1.3 times the page's usual size and the largest of
// the first lines, with the sender's address (a line with digits and no
// label) right under it in the same column. A title ("INVOICE") is never
// it.
func (d *doc) letterhead() string {
	var sizes []float64
	for _, l := range d.lines {
		if l.page != 1 {
			break
		}
		for _, c := range l.cells {
			sizes = append(sizes, c.size)
		}
	}
	if len(sizes) < 5 {
		return ""
	}
	sort.Float64s(sizes)
	median := sizes[len(sizes)/2]
	var top *cell
	topLine := -1
	for li := 0; li < len(d.lines) && li < 5 && d.lines[li].page == 1; li++ {
		for ci, c := range d.lines[li].cells {
			if titleWords.MatchString(c.text) || titleNumberLabel.MatchString(c.text) || d.buyer[ref{li, ci}] {
				continue
			}
			if top == nil || c.size > top.size+0.5 {
				top, topLine = &d.lines[li].cells[ci], li
			}
		}
	}
	if top == nil || topLine > 1 || top.size < 1.3*median || !nameLine(top.text) || len(strings.Fields(top.text)) > 6 {
		return ""
	}
	if k := topLine + 1; k < len(d.lines) && d.lines[k].page == 1 && d.lines[topLine].y-d.lines[k].y < 3*top.size {
		for _, c := range d.lines[k].cells {
			if math.Abs(c.x0-top.x0) < 10 && strings.ContainsAny(c.text, "0123456789") && !strings.Contains(c.text, ":") {
				d.w.add("supplier name read from the letterhead")
				return clean(top.text)
			}
		}
	}
	return ""
}

// labelledSupplier reads the name in the block under a supplier label.
func (d *doc) labelledSupplier() string {
	for li, l := range d.lines {
		for ci, c := range l.cells {
			loc := supplierLabel.FindStringIndex(c.text)
			if loc == nil || d.buyer[ref{li, ci}] {
				continue
			}
			if rest := trimValue(c.text[loc[1]:]); rest != "" {
				if nameLine(rest) {
					return clean(rest)
				}
				continue
			}
			prevY := l.y
			for k := li + 1; k < len(d.lines) && k <= li+6 && d.lines[k].page == l.page; k++ {
				if prevY-d.lines[k].y > 3*c.size {
					break
				}
				prevY = d.lines[k].y
				// A form-like block: "Name:" and the name in the next cell.
				if cs := d.lines[k].cells; len(cs) >= 2 && nameLabel.MatchString(cs[0].text) && cs[0].x0 < c.x0+40 {
					if !nameLine(cs[1].text) {
						break
					}
					name := cs[1].text
					// The name's first line may stand alone in the value
					// column just above ("MVM Musterhafter" / "Name:
					// Versicherungsverein Musterstadt a.G.").
					if p := d.lines[k-1].cells; k-1 > li && len(p) == 1 && math.Abs(p[0].x0-cs[1].x0) < 2 && nameLine(p[0].text) {
						name = p[0].text + " " + name
					}
					return clean(name)
				}
				var below *cell
				for cj := range d.lines[k].cells {
					c2 := d.lines[k].cells[cj]
					if c2.x0 < c.x0+40 && c2.x1 > c.x0-5 {
						below = &d.lines[k].cells[cj]
						break
					}
				}
				if below == nil {
					continue
				}
				prevY = d.lines[k].y
				if !nameLine(below.text) {
					if hasLetter(below.text) && !strings.Contains(below.text, ":") && !idLine.MatchString(below.text) {
						break // an address line: the name was not where expected
					}
					continue
				}
				name := below.text
				// A name set on two lines ("MVM Musterhafter" /
				// "Versicherungsverein Musterstadt a.G.") continues when
				// only the second line ends in a legal form.
				if legalName(name) == "" && k+1 < len(d.lines) && d.lines[k+1].page == l.page {
					for _, c3 := range d.lines[k+1].cells {
						if c3.x0 < c.x0+40 && c3.x1 > c.x0-5 && nameLine(c3.text) && legalName(c3.text) != "" {
							name += " " + c3.text
						}
					}
				}
				return clean(name)
			}
		}
	}
	return ""
}

// nameLabel labels the name in a form-like party block.
var nameLabel = re(`^(?:name|firma|company|raison\s*sociale|nom|naam|nombre|denominazione|ragione\s*sociale)\s*:?$`)

// idLine is a line of a party block that carries an identifier, not the
// name ("GLN 4000001123452", "Lief-Nr: 549910").
var idLine = re(`^(?:nummer|number|nr\.?|no\.?|gln|globale|global|lief|kd|kunden|id|tel|fax|phone|e-?mail|www|http|ust|vat|tva|btw|steuer|tax|iban|bic|siret|siren|hrb|hra)\b`)

// nameLine reports whether s can be a party's name: letters, no digits, no
// colon, no e-mail or web address, not an identifier line.
func nameLine(s string) bool {
	s = strings.TrimSpace(s)
	return hasLetter(s) && len(s) >= 3 && len(s) <= 100 && !strings.ContainsAny(s, "0123456789:@") &&
		!idLine.MatchString(s) && !titleWords.MatchString(s) && !buyerLabels.MatchString(s)
}

// nearSupplierFact reports whether a supplier's identifier (VAT number, tax
// number, register entry, managing director) is printed within six lines
// below line li, outside the buyer's block.
func (d *doc) nearSupplierFact(li int) bool {
	for k := li; k < len(d.lines) && k <= li+6 && d.lines[k].page == d.lines[li].page; k++ {
		for ci, c := range d.lines[k].cells {
			if d.buyer[ref{k, ci}] || notSupplierFact.MatchString(c.text) {
				continue
			}
			if matchAny(vatLabels, c.text) && parseVATID(c.text) != "" || supplierFactRe.MatchString(c.text) ||
				matchAny(taxIDLabels, c.text) && parseTaxNumber(c.text) != "" {
				return true
			}
		}
	}
	return false
}

var supplierFactRe = re(`gesch[äa]ftsf[üu]hr|handelsregister|\bhrb\b|\bhra\b|amtsgericht|registergericht|managing\s*director|company\s*(?:reg|no|number)|registered\s*in|\bsiret\b|\brcs\b|capital\s*(?:social|de)|\bkvk\b`)

// legalNames returns the company names in a cell: the cell, or each of its
// parts separated by "·", "●", "|" or "•", that ends in a legal form.
func legalNames(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == '·' || r == '|' || r == '•' || r == '●' }) {
		if v := legalName(part); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// legalName returns s, trimmed, when a legal form (Ltd, GmbH, SARL, …)
// ends it and letters precede it. A legal form in the middle of running
// text ("… as the reference") does not count.
func legalName(s string) string {
	part := strings.TrimSpace(s)
	locs := legalForm.FindAllStringIndex(part, -1)
	if len(locs) == 0 {
		return ""
	}
	loc := locs[len(locs)-1]
	if loc[0] == 0 || strings.TrimSpace(part[loc[1]:]) != "" || strings.ContainsAny(part, "0123456789@:") {
		return ""
	}
	if v := clean(part); len(v) >= 3 && hasLetter(part[:loc[0]]) {
		return v
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
	for li, l := range d.lines {
		if d.discountTerms(li) || li > 0 && d.discountTerms(li-1) {
			continue
		}
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

// amountHit is a labelled amount: its line, raw decimal and currency.
type amountHit struct {
	li       int
	raw, cur string
}

// grossNot marks a gross-looking label that names something else
// ("Gesamtbetrag der Zuschläge", "Gesamtbetrag ohne USt.").
const grossNotPat = `ohne|excl|exkl|netto|\bht\b|zuschl[äa]g|abschl[äa]g|rabatt|discount|remise|position|warenwert|steuer|(?:ust|vat|tax|mwst|tva|btw|iva)\.?\s*(?:gesamt|total|betrag|amount)`

var grossNot = re(grossNotPat)

// payableNot marks a balance that is not this invoice's amount payable
// ("Previous balance", "Saldovortrag").
var payableNot = re(grossNotPat + `|previous|opening|forward|brought|carried|vortrag|[üu]bertrag|vorheriger|pr[ée]c[ée]dent|report|vorig|anterior|precedente`)

// labelledAmounts returns the amounts next to labels: in the label's cell
// after it, in the cells to its right on the same line, or in the cell just
// below it when the label's line is not a table's header row (whose values
// below are line items, not totals).
func (d *doc) labelledAmounts(labels []*regexp.Regexp, not *regexp.Regexp) []amountHit {
	var out []amountHit
	for li, l := range d.lines {
		for ci, c := range l.cells {
			loc := matchLoc(labels, c.text)
			if loc == nil || not != nil && not.MatchString(c.text) {
				continue
			}
			var cands []string
			if rest := trimValue(c.text[loc[1]:]); rest != "" {
				cands = append(cands, rest)
			}
			if ci+1 < len(l.cells) {
				cands = append(cands, strings.Join(cellTexts(l.cells[ci+1:]), "   "))
			}
			if len(cands) == 0 && len(l.cells) <= 2 && li+1 < len(d.lines) && d.lines[li+1].page == l.page {
				for _, c2 := range d.lines[li+1].cells {
					if c2.x0 < c.x1+5 && c2.x1 > c.x0-5 {
						cands = append(cands, c2.text)
						break
					}
				}
			}
			for _, v := range cands {
				if r, cu, ok := amountIn(v); ok {
					if cu == "" {
						// "Total amount (DEM)", "Steuerbetrag in | EUR | 56,87"
						if m := labelCurrencyRe.FindStringSubmatch(c.text[loc[0]:] + "   " + v); m != nil {
							cu = m[1] + m[2]
						}
					}
					out = append(out, amountHit{li, r, cu})
					break
				}
			}
		}
	}
	return out
}

// labelCurrencyRe finds a currency code written with a total's label:
// in parentheses or after "in".
var labelCurrencyRe = regexp.MustCompile(`\(([A-Z]{3})\)|(?:\bin|^|   )\s*([A-Z]{3})\s`)

// amountIn is lastAmount restricted to what can be a total: a number with
// decimals or a currency written with it, never a bare year or count.
func amountIn(s string) (raw, cur string, ok bool) {
	raw, cur, ok = lastAmount(s)
	if !ok {
		return "", "", false
	}
	if !strings.Contains(raw, ".") && cur == "" {
		return "", "", false
	}
	return raw, cur, true
}

// milli is a raw decimal in thousandths, for the checks between totals.
func milli(raw string) (int64, bool) {
	neg := strings.HasPrefix(raw, "-")
	intPart, frac, _ := strings.Cut(strings.TrimPrefix(raw, "-"), ".")
	if len(intPart) > 15 || len(frac) > 3 || !allDigits(intPart) || !allDigits(frac) {
		return 0, false
	}
	for len(frac) < 3 {
		frac += "0"
	}
	v := int64(atoi(intPart))*1000 + int64(atoi(frac))
	if len(intPart) > 9 {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// lastHit is the bottom-most hit (totals close the table), ok false when
// there is none.
func lastHit(h []amountHit) (amountHit, bool) {
	if len(h) == 0 {
		return amountHit{}, false
	}
	return h[len(h)-1], true
}

// amount returns the raw decimal of the amount payable and the currency
// written next to it. The amount payable ("Zahlbetrag", "Amount due", "Net
// à payer") is preferred; a gross total ("Gesamtbetrag", "Total TTC") or a
// final "Total" stands in only when no prepayment is printed. Whatever is
// printed of net, tax, gross and prepaid must agree with the choice (net +
// tax = gross, gross − prepaid = payable); when it does not, or two amounts
// payable differ, the amount is left empty.
func (d *doc) amount() (raw, cur string, conf float64) {
	payable := d.labelledAmounts(payableLabels, payableNot)
	gross, hasGross := lastHit(d.labelledAmounts(grossLabels, grossNot))
	net, hasNet := lastHit(d.labelledAmounts(netLabels, nil))
	tax, hasTax := lastHit(d.labelledAmounts(taxLabels, nil))
	prepaid, hasPrepaid := lastHit(d.labelledAmounts(prepaidLabels, nil))
	val := func(h amountHit) int64 { v, _ := milli(h.raw); return v }
	// A prepayment is printed as a deduction ("-50,00") or not.
	paid := func() int64 {
		if v := val(prepaid); v < 0 {
			return -v
		}
		return val(prepaid)
	}
	sums := func(total amountHit) bool { return hasNet && hasTax && val(net)+val(tax) == val(total) }
	if len(payable) > 0 {
		p := payable[len(payable)-1]
		for _, h := range payable {
			if val(h) != val(p) {
				d.w.add("two different amounts payable on the page; none taken")
				return "", "", 0
			}
		}
		if hasTax && val(p) == val(tax) && val(tax) != 0 {
			return "", "", 0 // the tax total taken for the payable
		}
		switch {
		case hasGross && hasPrepaid && val(gross)-paid() == val(p),
			hasGross && !hasPrepaid && val(gross) == val(p),
			!hasGross && !hasPrepaid && sums(p):
			return p.raw, p.cur, 0.95
		case hasGross && hasPrepaid:
			d.w.add("amount payable %s does not match the total %s less the prepaid %s; not taken", p.raw, gross.raw, prepaid.raw)
			return "", "", 0
		case hasGross && val(p) > val(gross):
			return "", "", 0 // more than the gross: a misreading
		case hasGross && val(p) > 0:
			// Below the gross with no prepayment printed: a deduction
			// the page does not show.
			return p.raw, p.cur, 0.6
		case hasGross:
			return "", "", 0 // nothing payable against a gross: a misreading
		}
		return p.raw, p.cur, 0.8
	}
	if hasPrepaid && val(prepaid) != 0 {
		d.w.add("a prepayment is printed but no amount payable; amount not taken")
		return "", "", 0
	}
	if hasGross {
		switch {
		case sums(gross):
			return gross.raw, gross.cur, 0.85
		case hasNet && hasTax:
			return "", "", 0 // net + tax is not the gross
		}
		return gross.raw, gross.cur, 0.7
	}
	totals := d.labelledAmounts(totalLabels, notFinalTotal)
	total, ok := lastHit(totals)
	if !ok || hasTax && val(total) == val(tax) {
		return "", "", 0
	}
	switch {
	case sums(total):
		return total.raw, total.cur, 0.75
	case hasNet && hasTax:
		return "", "", 0
	}
	// A final total is the largest of the totals printed.
	for _, h := range totals {
		if val(h) > val(total) {
			return "", "", 0
		}
	}
	return total.raw, total.cur, 0.55
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

// slashMonthFirst decides how the page writes slash dates: month first
// when one of them can only be read so (11/17/2017), day first when one can
// only be read that way (17/11/2017), else month first only on a USD
// invoice.
func (d *doc) slashMonthFirst(usd bool) bool {
	var dayFirst, monthFirst bool
	for _, l := range d.lines {
		for _, m := range slashDateRe.FindAllStringSubmatch(l.String(), -1) {
			a, b := atoi(m[1]), atoi(m[2])
			switch {
			case a > 12 && b <= 12:
				dayFirst = true
			case b > 12 && a <= 12:
				monthFirst = true
			}
		}
	}
	switch {
	case monthFirst && !dayFirst:
		return true
	case dayFirst:
		return false
	}
	return usd
}

var slashDateRe = regexp.MustCompile(`\b(\d{1,2})/(\d{1,2})/(\d{4}|\d{2})\b`)

var monthNames = map[string]int{}

func init() {
	for m, names := range [12]string{
		"january jan jänner januar janvier janv januari enero ene gennaio genn",
		"february feb februar feber février fevrier févr fevr februari febrero febbraio",
		"march mar märz maerz mrz mars maart marzo",
		"april apr avril abril aprile",
		"may mai mei mayo maggio mag",
		"june jun juni juin junio giugno giu",
		"july jul juli juillet juil julio luglio lug",
		"august aug août aout augustus agosto ago",
		"september sep sept septembre septiembre settembre set",
		"october oct oktober okt octobre octubre ottobre ott",
		"november nov novembre noviembre",
		"december dec dezember dez décembre decembre déc dic diciembre dicembre",
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
	dayMonthYear = re(`\b(\d{1,2})(?:st|nd|rd|th|er|º|°)?\.?\s*(?:de\s+)?(` + alt + `)\.?,?\s*(?:de\s+)?(\d{4})\b`)
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
