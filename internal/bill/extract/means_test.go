package extract_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// TestPaymentMeansCodes: UNTDID 4461 codes map to the bill's payment means;
// an unknown or empty code says nothing.
func TestPaymentMeansCodes(t *testing.T) {
	for code, want := range map[string]string{
		"30": extract.MeansCreditTransfer, "31": extract.MeansCreditTransfer, "42": extract.MeansCreditTransfer,
		" 58 ": extract.MeansCreditTransfer, "49": extract.MeansDirectDebit, "59": extract.MeansDirectDebit,
		"48": extract.MeansCard, "54": extract.MeansCard, "55": extract.MeansCard,
		"10": extract.MeansOther, "20": extract.MeansOther, "97": extract.MeansOther, "zzz": extract.MeansOther,
		"": "", "999": "", "VAT": "",
	} {
		if got := extract.PaymentMeansOfCode(code); got != want {
			t.Errorf("PaymentMeansOfCode(%q) = %q, want %q", code, got, want)
		}
	}
}

// TestPaymentMeansOfText: the page's wording decides only when one reading
// clearly wins.
func TestPaymentMeansOfText(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"Der Rechnungsbetrag wird am 25.03. per SEPA-Lastschrift von Ihrem Konto eingezogen.", extract.MeansDirectDebit},
		{"Mandatsreferenz: M-1234  Gläubiger-ID: DE98ZZZ09999999999", extract.MeansDirectDebit},
		{"Zahlungsart: Bankeinzug", extract.MeansDirectDebit},
		{"The amount will be collected by direct debit from your account on 3 May.", extract.MeansDirectDebit},
		{"Le montant sera prélevé sur votre compte. Référence unique de mandat : RUM-88", extract.MeansDirectDebit},
		{"Het bedrag wordt via automatische incasso van uw rekening afgeschreven.", extract.MeansDirectDebit},
		{"El importe se cobrará mediante adeudo directo SEPA.", extract.MeansDirectDebit},
		{"L'importo verrà addebitato sul vostro conto tramite addebito diretto SEPA.", extract.MeansDirectDebit},
		{"Der Rechnungsbetrag wird über Ihre MasterCard-Kreditkarte abgebucht.", extract.MeansCard},
		{"Bitte überweisen Sie den Betrag bis zum 04.07.2015 auf unser Konto.", extract.MeansCreditTransfer},
		{"Please remit by bank transfer to the account below.", extract.MeansCreditTransfer},
		{"Merci de régler par virement.", extract.MeansCreditTransfer},
		{"Gelieve het bedrag over te maken; overschrijving naar IBAN NL91ABNA0417164300.", extract.MeansCreditTransfer},
		// An offer of a mandate is not a direct debit; the transfer asked for is.
		{"Bitte überweisen Sie den Betrag. Einfacher ist es, wenn Sie uns ein SEPA-Lastschriftmandat erteilen.", extract.MeansCreditTransfer},
		// Card and transfer wording together decide nothing; neither does silence.
		{"Paid by credit card. Bank transfer details for future orders: ...", ""},
		{"Rechnung Nr. 4711 vom 05.03.2013", ""},
		{"Fincassos", ""}, // a word that merely contains "incasso"
	} {
		if got := extract.PaymentMeansOfText(c.text); got != c.want {
			t.Errorf("PaymentMeansOfText(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	// Bounded: wording after the first 64 KiB is not looked at.
	long := strings.Repeat("x ", 40<<10) + "per Lastschrift eingezogen"
	if got := extract.PaymentMeansOfText(long); got != "" {
		t.Errorf("wording past the bound read: %q", got)
	}
}

// TestXMLEncodingDeclarations: a declaration that names UTF-8 in another
// spelling is read as UTF-8; ISO-8859-1 is decoded; a label no registry
// knows is refused.
func TestXMLEncodingDeclarations(t *testing.T) {
	doc := func(enc, name string) []byte {
		return []byte(`<?xml version="1.0" encoding="` + enc + `"?>` + string(ubl("EUR", "10.00",
			`<cac:AccountingSupplierParty><cac:Party><cac:PartyLegalEntity><cbc:RegistrationName>`+name+
				`</cbc:RegistrationName></cac:PartyLegalEntity></cac:Party></cac:AccountingSupplierParty>`))[len(`<?xml version="1.0"?>`):])
	}
	for _, enc := range []string{"UTF-8", "utf-8", "UTF-8-W/O-BOM", "utf8", "UTF_8", "UTF-8 (without BOM)"} {
		res, err := extract.Read(doc(enc, "Größl GmbH"))
		if err != nil || res.Fields.SupplierName != "Größl GmbH" {
			t.Errorf("encoding %q: %v, supplier %q", enc, err, res.Fields.SupplierName)
		}
	}
	latin1 := doc("ISO-8859-1", "Gr\xf6\xdfl GmbH")
	if res, err := extract.Read(latin1); err != nil || res.Fields.SupplierName != "Größl GmbH" {
		t.Errorf("ISO-8859-1: %v, supplier %q", err, res.Fields.SupplierName)
	}
	for _, enc := range []string{"x-made-up", "UTF-80", "utf-16-w/o-bom"} {
		if _, err := extract.Read(doc(enc, "Größl GmbH")); !errors.Is(err, extract.ErrUnreadable) {
			t.Errorf("encoding %q: %v, want ErrUnreadable", enc, err)
		}
	}
}

// TestNoPayeeAccountOnADirectDebit: whatever account a direct-debit
// document carries is the buyer's; a document that also offers a transfer
// to the supplier's account keeps that account and says credit_transfer.
func TestNoPayeeAccountOnADirectDebit(t *testing.T) {
	pm := func(code, payee string) string {
		s := `<cac:PaymentMeans><cbc:PaymentMeansCode>` + code + `</cbc:PaymentMeansCode>`
		if payee != "" {
			s += `<cac:PayeeFinancialAccount><cbc:ID>` + payee + `</cbc:ID><cbc:Name>Holder</cbc:Name></cac:PayeeFinancialAccount>`
		}
		return s + `<cac:PaymentMandate><cac:PayerFinancialAccount><cbc:ID>DE75512108001245126199</cbc:ID></cac:PayerFinancialAccount></cac:PaymentMandate></cac:PaymentMeans>`
	}
	for _, c := range []struct {
		name, extra, means, iban string
	}{
		{"direct debit alone", pm("59", ""), extract.MeansDirectDebit, ""},
		{"direct debit with the buyer's account as payee", pm("49", "DE75512108001245126199"), extract.MeansDirectDebit, ""},
		{"direct debit, then a transfer to the supplier", pm("59", "") + pm("58", "DE89370400440532013000"), extract.MeansCreditTransfer, "DE89370400440532013000"},
		{"card", pm("54", ""), extract.MeansCard, ""},
		{"cash", pm("10", ""), extract.MeansOther, ""},
	} {
		res, err := extract.Read(ubl("EUR", "10.00", c.extra))
		if err != nil {
			t.Fatal(err)
		}
		f := res.Fields
		if f.PaymentMeans != c.means || f.IBAN != c.iban || c.iban == "" && (f.AccountHolderName != "" || f.AccountNumber != "") {
			t.Errorf("%s: means %q iban %q holder %q account %q; want %q %q", c.name, f.PaymentMeans, f.IBAN, f.AccountHolderName, f.AccountNumber, c.means, c.iban)
		}
		if len(res.FromText) != 0 {
			t.Errorf("%s: from_text %q on an XML invoice", c.name, res.FromText)
		}
	}
}

// TestRemittanceIsThePaymentReference: BT-83 comes from the payment
// reference only, never from the buyer reference or an order reference.
func TestRemittanceIsThePaymentReference(t *testing.T) {
	withBuyerRef := ubl("EUR", "10.00", `<cbc:BuyerReference>KD-40021</cbc:BuyerReference>
 <cac:OrderReference><cbc:ID>PO-99</cbc:ID></cac:OrderReference>`)
	if res, err := extract.Read(withBuyerRef); err != nil || res.Fields.RemittanceReference != "" {
		t.Errorf("UBL without PaymentID: %v, remittance %q, want empty", err, res.Fields.RemittanceReference)
	}
	withPaymentID := ubl("EUR", "10.00", `<cbc:BuyerReference>KD-40021</cbc:BuyerReference>
 <cac:PaymentMeans><cbc:PaymentMeansCode>58</cbc:PaymentMeansCode><cbc:PaymentID>RF18539007547034</cbc:PaymentID></cac:PaymentMeans>`)
	if res, err := extract.Read(withPaymentID); err != nil || res.Fields.RemittanceReference != "RF18539007547034" {
		t.Errorf("UBL with PaymentID: %v, remittance %q", err, res.Fields.RemittanceReference)
	}
}
