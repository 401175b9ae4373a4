package extract

import (
	"regexp"
	"strings"

	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// maxAmountDigits bounds the integer digits of an amount, as money.Parse does,
// so a result always fits a money.Amount.
const maxAmountDigits = money.MaxIntegerDigits

// normalizeAmount turns a decimal (optional sign, digits, optional "."
// fraction: the xs:decimal form both UBL and CII use) into a string at the
// currency's precision, rounding half up when the file carries more decimals
// than the currency has (a warning says so). neg reports a leading "-". ok is
// false when raw is not such a decimal or is too large.
func normalizeAmount(raw, currency string, w *warnings) (amount string, neg, ok bool) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return "", false, false
	}
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	intPart, frac, found := strings.Cut(s, ".")
	if intPart == "" && frac == "" || !allDigits(intPart) || !allDigits(frac) || strings.Contains(frac, ".") || !found && frac != "" {
		w.add("amount %q is not a decimal number", truncate(raw, 40))
		return "", false, false
	}
	// Without a known currency two decimals are the common case; Read has
	// already warned about an unknown code.
	digits, known := money.Digits(currency)
	if !known {
		digits = 2
	}
	intPart = strings.TrimLeft(intPart, "0")
	if len(intPart) > maxAmountDigits {
		w.add("amount %q is too large", truncate(raw, 40))
		return "", false, false
	}
	if len(frac) > digits {
		roundUp := frac[digits] >= '5'
		if strings.TrimRight(frac[digits:], "0") != "" {
			w.add("amount %s has more decimals than %s allows (%d); rounded half up", truncate(raw, 40), currencyOr(currency), digits)
		}
		frac = frac[:digits]
		if roundUp {
			intPart, frac = increment(intPart, frac)
		}
	}
	for len(frac) < digits {
		frac += "0"
	}
	if intPart == "" {
		intPart = "0"
	}
	if len(intPart) > maxAmountDigits {
		w.add("amount %q is too large", truncate(raw, 40))
		return "", false, false
	}
	if strings.Trim(intPart+frac, "0") == "" {
		neg = false // "-0.00" is zero, not a credit
	}
	if digits == 0 {
		return intPart, neg, true
	}
	return intPart + "." + frac, neg, true
}

func currencyOr(c string) string {
	if c == "" {
		return "the currency"
	}
	return c
}

// increment adds one unit in the last place of intPart.frac.
func increment(intPart, frac string) (string, string) {
	b := []byte(intPart + frac)
	i := len(b) - 1
	for ; i >= 0; i-- {
		if b[i] == '9' {
			b[i] = '0'
			continue
		}
		b[i]++
		break
	}
	if i < 0 {
		b = append([]byte{'1'}, b...)
	}
	n := len(b) - len(frac)
	return string(b[:n]), string(b[n:])
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// isoDate reads YYYY-MM-DD, ignoring what follows the tenth character: an
// xs:date may carry a zone ("2026-01-31Z", "2026-01-31+01:00") and some
// issuers write a full dateTime.
func isoDate(s string) (Date, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || s[4] != '-' || s[7] != '-' || !allDigits(s[:4]) || !allDigits(s[5:7]) || !allDigits(s[8:10]) {
		return Date{}, false
	}
	if len(s) > 10 && !strings.ContainsRune("Z+-T ", rune(s[10])) {
		return Date{}, false
	}
	return makeDate(atoi(s[:4]), atoi(s[5:7]), atoi(s[8:10]))
}

// basicDate reads YYYYMMDD (UN/CEFACT date format 102).
func basicDate(s string) (Date, bool) {
	s = strings.TrimSpace(s)
	if len(s) != 8 || !allDigits(s) {
		return Date{}, false
	}
	return makeDate(atoi(s[:4]), atoi(s[4:6]), atoi(s[6:8]))
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s) && i < 9; i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// compact removes white space and the separators people print inside bank
// numbers ("12-34-56", "1234 5678", "1234.5678") and upper-cases letters.
func compact(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || r == '-' || r == '.' || r == '/' || r == '\u00a0' || r == '\t':
		case r >= 'a' && r <= 'z':
			b.WriteRune(r - 'a' + 'A')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// looksLikeIBAN is true for two letters then two digits, the shape of every
// IBAN, so a failed check can be reported instead of the value being taken
// as a plain account number.
func looksLikeIBAN(s string) bool {
	return len(s) >= 15 && len(s) <= 34 && isUpperASCII(s[0]) && isUpperASCII(s[1]) && isDigitASCII(s[2]) && isDigitASCII(s[3])
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }
func isDigitASCII(c byte) bool { return c >= '0' && c <= '9' }

// account is one payee account as a payment means states it.
type account struct {
	id string // BT-84 as written
	// proprietary is a CII ProprietaryID given beside an IBANID: the same
	// account under its national number, taken as the account number.
	proprietary string
	branch      string // BT-86 as written: a BIC, or (in UK and US UBL files) a sort code or routing number
	holder      string // BT-85
	credit      bool   // the payment means is a credit transfer
	ibanID      bool   // CII IBANID: the issuer says the id is an IBAN
}

// accountFields classifies the account identifiers into f. An IBAN is taken
// only when its check digits hold; a value shaped like an IBAN whose check
// fails is dropped with a warning rather than passed off as an account
// number. The branch identifier becomes the BIC when it is a valid BIC, the
// sort code when it is six digits, the ABA code when it is nine digits with a
// good check digit.
func accountFields(a account, f *Fields, w *warnings) {
	id := compact(a.id)
	switch {
	case id == "":
	case bankdetails.CheckIBAN(id) == nil:
		f.IBAN = id
	case looksLikeIBAN(id) || a.ibanID:
		w.add("IBAN %s does not pass the IBAN check; not taken", truncate(a.id, 40))
	case accountNumberOK(id):
		f.AccountNumber = id
	default:
		w.add("account number %q is not 4 to 34 letters or digits; not taken", truncate(a.id, 40))
	}
	if p := compact(a.proprietary); p != "" && f.IBAN != "" && f.AccountNumber == "" {
		if accountNumberOK(p) {
			f.AccountNumber = p
		} else {
			w.add("account number %q is not 4 to 34 letters or digits; not taken", truncate(a.proprietary, 40))
		}
	}
	branch := compact(a.branch)
	switch {
	case branch == "":
	case bankdetails.CheckBIC(branch) == nil:
		f.BIC = branch
	case len(branch) == 6 && allDigits(branch):
		f.SortCode = branch
	case len(branch) == 9 && allDigits(branch):
		if bankdetails.CheckABA(branch) == nil {
			f.ABACode = branch
		} else {
			w.add("routing number %s does not pass the ABA check; not taken", branch)
		}
	default:
		w.add("BIC %q is not a valid BIC; not taken", truncate(a.branch, 40))
	}
	if h := strings.TrimSpace(a.holder); h != "" && (f.IBAN != "" || f.AccountNumber != "") {
		f.AccountHolderName = truncate(h, 140)
	}
}

func accountNumberOK(s string) bool {
	if len(s) < 4 || len(s) > 34 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isUpperASCII(s[i]) && !isDigitASCII(s[i]) {
			return false
		}
	}
	return true
}

// pickAccount chooses the payment means to take bank details from: the first
// credit transfer with a valid IBAN, else the first one that has an account
// at all (a direct-debit mandate's account is the buyer's and never appears
// here, see the callers).
func pickAccount(accts []account, w *warnings) (account, bool) {
	for i, a := range accts {
		if id := compact(a.id); (looksLikeIBAN(id) || a.ibanID && id != "") && bankdetails.CheckIBAN(id) != nil {
			w.add("IBAN %s of payment means %d does not pass the IBAN check; skipped", truncate(a.id, 40), i+1)
		}
	}
	for _, a := range accts {
		if a.credit && bankdetails.CheckIBAN(compact(a.id)) == nil {
			return a, true
		}
	}
	for _, a := range accts {
		if compact(a.id) != "" {
			return a, true
		}
	}
	return account{}, false
}

// creditTransferCodes are the UNTDID 4461 payment means codes under which
// the payee's account is the one to pay into: 30 credit transfer, 31 debit
// transfer (used by some issuers for the same), 42 payment to bank account,
// 58 SEPA credit transfer. An empty code is treated as a transfer too, since
// the account is then all there is.
var creditTransferCodes = map[string]bool{"30": true, "31": true, "42": true, "58": true, "": true}

// creditNoteTypes are the UNTDID 1001 document types EN 16931 lists as credit
// notes (BT-3).
var creditNoteTypes = map[string]bool{
	"81": true, "83": true, "261": true, "262": true, "296": true, "308": true,
	"381": true, "396": true, "420": true, "458": true, "532": true,
}

// setAmount stores the amount due; a negative amount due means the supplier
// owes the buyer, i.e. a credit, which the bill models as a positive amount
// with CreditNote set.
func setAmount(raw, currency string, f *Fields, w *warnings) {
	amt, neg, ok := normalizeAmount(raw, currency, w)
	if !ok {
		return
	}
	f.AmountDue = amt
	if neg {
		f.CreditNote = true
		w.add("amount due is negative; kept positive and marked as a credit note")
	}
}

// setCurrency takes an ISO 4217 code when money knows it (a bill's currency
// must be one to be paid), warning otherwise; amounts then keep 2 decimals.
func setCurrency(code string, f *Fields, w *warnings) {
	code = strings.ToUpper(strings.TrimSpace(code))
	if code == "" {
		return
	}
	if !money.IsCurrency(code) {
		w.add("currency %q is not a supported ISO 4217 code; not taken", truncate(code, 10))
		return
	}
	f.Currency = code
}

// partyName is a party's name as a person would write it on a payment: a
// name element spread over several lines whose other lines only carry an
// identifier ("GLN 4333741000005", "Lief-Nr: 549910") keeps the lines that
// name the party.
func partyName(raw string) string {
	lines := strings.Split(raw, "\n")
	if len(lines) > 1 && len(lines) <= 16 {
		var kept []string
		for _, l := range lines {
			if !identifierLine.MatchString(strings.TrimSpace(l)) {
				kept = append(kept, l)
			}
		}
		if len(kept) > 0 {
			return clean(strings.Join(kept, " "))
		}
	}
	return clean(raw)
}

// identifierLine is a line holding only an identifier: a GLN, ILN or EAN,
// or a short label ending in a number word ("Lief-Nr", "Kundennummer",
// "Supplier no.", "N° fournisseur") followed by digits.
var identifierLine = regexp.MustCompile(`(?i)^(?:(?:GLN|ILN|EAN|GTIN|DUNS)|[\p{L}°][\p{L}°.\- ]{0,30}?(?:nr|no|nummer|number|num|n°|id))\.?\s*[:#]?\s*[0-9][0-9 ./\-]{2,40}$`)

// clean trims a free-text value and bounds it to what a bill column holds.
func clean(s string) string {
	return truncate(strings.Join(strings.Fields(s), " "), 140)
}
