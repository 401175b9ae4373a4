package extract

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Payment means a document states (Fields.PaymentMeans), the values of the
// bill's payment_means.
const (
	MeansCreditTransfer = "credit_transfer"
	MeansDirectDebit    = "direct_debit"
	MeansCard           = "card"
	MeansOther          = "other"
)

// meansCodes maps the UNTDID 4461 payment means codes (BT-81) to the bill's
// payment means. Credit transfers: 30 credit transfer, 31 debit transfer
// (German issuers, ZUGFeRD 1.0 among them, use it for "Überweisung"), 42
// payment to bank account, 58 SEPA credit transfer. Direct debits: 49 direct
// debit, 59 SEPA direct debit. Cards: 48 bank card, 54 credit card, 55 debit
// card. Everything else a code list names (cash, cheque, clearing between
// partners, standing agreement, online payment service, …) is "other".
var meansCodes = map[string]string{
	"30": MeansCreditTransfer, "31": MeansCreditTransfer, "42": MeansCreditTransfer, "58": MeansCreditTransfer,
	"49": MeansDirectDebit, "59": MeansDirectDebit,
	"48": MeansCard, "54": MeansCard, "55": MeansCard,
	"1": MeansOther, "10": MeansOther, "20": MeansOther, "21": MeansOther, "23": MeansOther, "57": MeansOther,
	"60": MeansOther, "68": MeansOther, "70": MeansOther, "74": MeansOther, "75": MeansOther, "76": MeansOther,
	"77": MeansOther, "78": MeansOther, "91": MeansOther, "92": MeansOther, "93": MeansOther, "94": MeansOther,
	"95": MeansOther, "96": MeansOther, "97": MeansOther, "ZZZ": MeansOther,
}

// PaymentMeansOfCode maps a UNTDID 4461 payment means code ("58", " 59 ") to
// one of the Means constants; "" when the code is empty or not one the list
// names.
func PaymentMeansOfCode(code string) string {
	return meansCodes[strings.ToUpper(strings.TrimSpace(code))]
}

// meansOf decides the payment means of a document from its payment means
// groups (BG-16) in document order: codes[i] and whether group i names a
// payee account. A document that offers a transfer to the supplier's
// account is paid by transfer, whatever else it offers; otherwise a direct
// debit wins whenever one is stated (an account then printed is the buyer's
// mandate, and taking it as the payee's is the costly mistake); otherwise the
// first known code decides.
func meansOf(codes []string, payee []bool) string {
	first, debit := "", false
	for i, c := range codes {
		m := PaymentMeansOfCode(c)
		if m == MeansCreditTransfer && i < len(payee) && payee[i] {
			return m
		}
		debit = debit || m == MeansDirectDebit
		if first == "" {
			first = m
		}
	}
	if debit {
		return MeansDirectDebit
	}
	return first
}

// maxMeansText bounds the text PaymentMeansOfText looks at.
const maxMeansText = 64 << 10

// Wording that states how an invoice is paid, lower case, matched at word
// starts, in English, German, French, Dutch, Spanish and Italian.
//   - mandateWords name a direct debit being run (the mandate, the creditor
//     id, "per Lastschrift"): decisive;
//   - collectedWords say the amount will be taken ("wird abgebucht"), by
//     direct debit unless a card is named ("wird über Ihre Kreditkarte
//     abgebucht");
//   - weakDebitWords only name the method, as an offer does ("Einfacher ist
//     es, wenn Sie uns ein SEPA-Lastschriftmandat erteilen"), and decide
//     only when nothing else is said.
var (
	mandateWords = []string{
		"bankeinzug", "per lastschrift", "per sepa-lastschrift", "per sepa lastschrift", "mittels lastschrift",
		"durch lastschrift", "via lastschrift", "im lastschriftverfahren", "mandatsreferenz", "mandats-referenz",
		"gläubiger-id", "gläubiger-identifikationsnummer", "glaeubiger-id", "gläubiger id",
		"by direct debit", "mandate reference", "creditor identifier", "par prélèvement",
		"référence unique de mandat", "via automatische incasso", "machtigingskenmerk", "incassant id",
		"mediante adeudo", "por domiciliación", "tramite addebito",
	}
	collectedWords = []string{
		"eingezogen", "abgebucht", "buchen wir", "ziehen wir", "will be debited", "will be collected",
		"we will debit", "sera prélevé", "sera prélevée", "wordt afgeschreven", "wordt geïncasseerd",
		"se cargará en", "verrà addebitato",
	}
	weakDebitWords = []string{
		"lastschrift", "direct debit", "prélèvement", "prelevement", "domiciliëring", "domiciliering",
		"incasso", "adeudo directo", "domiciliación", "domiciliacion", "addebito diretto", "addebito sepa",
	}
	transferWords = []string{
		"bank transfer", "credit transfer", "wire transfer", "please transfer", "please remit", "remit to",
		"überweisung", "überweisen", "ueberweisen", "zahlbar", "virement", "à régler", "overschrijving",
		"overmaken", "gelieve te betalen", "transferencia", "bonifico",
	}
	cardWords = []string{
		"kreditkarte", "credit card", "creditcard", "debit card", "mastercard", "visa card", "carte bancaire",
		"carte de crédit", "carte bleue", "paid by card", "charged to your card", "tarjeta de crédito",
		"carta di credito",
	}
	noTransferWords = []string{"nicht überweisen", "keine überweisung", "no transfer", "no need to transfer", "ne pas virer"}
)

// PaymentMeansOfText reads the payment means a page states in words: a
// direct debit ("Der Betrag wird per SEPA-Lastschrift eingezogen",
// "Mandatsreferenz", "collected by direct debit", "par prélèvement",
// "automatische incasso", "mediante adeudo"), a card ("wird über Ihre
// Kreditkarte abgebucht"), or a transfer ("Bitte überweisen Sie", "bank
// transfer", "virement", "overschrijving"). It answers "" unless one reading
// clearly wins: card and transfer wording together decide nothing, and a
// mere mention of direct debit counts only when nothing else is said. Only
// the first 64 KiB of text are looked at.
func PaymentMeansOfText(text string) string {
	if len(text) > maxMeansText {
		text = text[:maxMeansText]
	}
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	if hasWord(t, mandateWords) {
		return MeansDirectDebit
	}
	card := hasWord(t, cardWords)
	transfer := hasWord(t, transferWords) && !hasWord(t, noTransferWords)
	switch {
	case card && !transfer:
		return MeansCard
	case card:
		return ""
	case hasWord(t, collectedWords):
		return MeansDirectDebit
	case transfer:
		return MeansCreditTransfer
	case hasWord(t, weakDebitWords):
		return MeansDirectDebit
	}
	return ""
}

// hasWord reports whether one of words occurs in t starting at a word
// boundary ("incasso" in "automatische incasso", not in "fincasso").
func hasWord(t string, words []string) bool {
	for _, w := range words {
		for i := 0; i+len(w) <= len(t); {
			j := strings.Index(t[i:], w)
			if j < 0 {
				break
			}
			at := i + j
			if at == 0 || !isWordRune(lastRune(t[:at])) {
				return true
			}
			i = at + 1
		}
	}
	return false
}

func lastRune(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(s)
	return r
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
