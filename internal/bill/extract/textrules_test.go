package extract

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// page builds the lines of one page from rows of cells: each row is a y
// position and cells "x|text" (font size 10, or "x|text|size").
type row struct {
	y     float64
	cells []string
}

func page(rows ...row) []line {
	var out []line
	for _, r := range rows {
		l := line{page: 1, y: r.y}
		for _, c := range r.cells {
			parts := strings.Split(c, "|")
			size := 10.0
			if len(parts) == 3 {
				size = float64(atoi(parts[2]))
			}
			x := float64(atoi(parts[0]))
			l.cells = append(l.cells, cell{x0: x, x1: x + 0.5*size*float64(utf8.RuneCountInString(parts[1])), size: size, text: parts[1]})
		}
		out = append(out, l)
	}
	return out
}

// TestTextRulesLanguages reads one small invoice per language through the
// text rules: labels paired with the value to their right or below, month
// names, the amount payable and the supplier's block.
func TestTextRulesLanguages(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []line
		want  map[string]string
	}{
		{"en", page(
			row{800, []string{"50|Northwind Traders Ltd|18", "420|INVOICE|20"}},
			row{780, []string{"50|4 Harbour Road, Bristol BS1 4XX"}},
			row{768, []string{"50|VAT Reg No: GB 123 4567 82"}},
			row{720, []string{"50|Bill to:", "300|Invoice No.", "390|Invoice Date", "480|Due Date"}},
			row{706, []string{"50|Contoso Ltd", "300|NW-2044", "390|19 April 2014", "480|19 May 2014"}},
			row{600, []string{"380|Subtotal", "480|£100.00"}},
			row{586, []string{"380|VAT total", "480|£20.00"}},
			row{572, []string{"380|Total", "480|£120.00"}},
			row{558, []string{"380|Amount paid", "480|£20.00"}},
			row{544, []string{"380|Balance due", "480|£100.00"}},
		), map[string]string{"invoice_number": "NW-2044", "issue_date": "2014-04-19", "due_date": "2014-05-19",
			"amount_due": "100.00", "currency": "GBP", "supplier_name": "Northwind Traders Ltd", "supplier_tax_id": "GB123456782"}},
		{"de", page(
			row{800, []string{"50|Verkäufer:"}},
			row{788, []string{"50|Nummer: 549910"}},
			row{776, []string{"50|Müller Maschinenbau GmbH"}},
			row{764, []string{"50|Industriestraße 4"}},
			row{752, []string{"50|USt-IdNr.: DE123456789"}},
			row{720, []string{"50|Rechnungsempfänger:"}},
			row{708, []string{"50|Kunden AG"}},
			row{650, []string{"50|Handelsrechnung Nr. RE-2014-77 vom 24. Januar 2014|15"}},
			row{630, []string{"50|Kundennummer: 4711", "300|Bestellnummer: B-99"}},
			row{500, []string{"300|Nettobetrag", "480|1.000,00 €"}},
			row{488, []string{"300|USt. 19 %", "480|190,00 €"}},
			row{476, []string{"300|Bruttosumme", "480|1.190,00 €"}},
			row{464, []string{"300|Zahlbetrag", "480|1.190,00 €"}},
			row{430, []string{"50|Zahlbar bis 07.02.2014 ohne Abzug."}},
		), map[string]string{"invoice_number": "RE-2014-77", "issue_date": "2014-01-24", "due_date": "2014-02-07",
			"amount_due": "1190.00", "currency": "EUR", "supplier_name": "Müller Maschinenbau GmbH", "supplier_tax_id": "DE123456789"}},
		{"fr", page(
			row{800, []string{"50|Fournisseur :"}},
			row{788, []string{"50|Boulangerie Dupont SARL"}},
			row{776, []string{"50|12 rue des Lilas, 69003 Lyon"}},
			row{720, []string{"50|Facture n° : F2026-0042", "330|Facturé à :"}},
			row{706, []string{"50|Date de facture : 1er février 2026", "330|Client Démo SAS"}},
			row{692, []string{"50|Date d'échéance : 3 mars 2026"}},
			row{560, []string{"380|Total HT", "490|850,00 €"}},
			row{546, []string{"380|Total TVA", "490|170,00 €"}},
			row{532, []string{"380|Total TTC", "490|1 020,00 €"}},
			row{518, []string{"380|Net à payer", "490|1 020,00 €"}},
		), map[string]string{"invoice_number": "F2026-0042", "issue_date": "2026-02-01", "due_date": "2026-03-03",
			"amount_due": "1020.00", "currency": "EUR", "supplier_name": "Boulangerie Dupont SARL"}},
		{"nl", page(
			row{800, []string{"50|Leverancier:"}},
			row{788, []string{"50|Bakkerij Jansen B.V."}},
			row{776, []string{"50|Dorpsstraat 1, 1234 AB Utrecht"}},
			row{720, []string{"50|Factuurnummer: 2026-118"}},
			row{706, []string{"50|Factuurdatum: 5 mei 2026"}},
			row{692, []string{"50|Vervaldatum: 4 juni 2026"}},
			row{560, []string{"380|Totaal excl. BTW", "490|€ 100,00"}},
			row{546, []string{"380|BTW 21%", "490|€ 21,00"}},
			row{532, []string{"380|Te betalen", "490|€ 121,00"}},
		), map[string]string{"invoice_number": "2026-118", "issue_date": "2026-05-05", "due_date": "2026-06-04",
			"amount_due": "121.00", "currency": "EUR", "supplier_name": "Bakkerij Jansen B.V."}},
		{"es", page(
			row{800, []string{"50|Talleres Ibarra S.L.|16"}},
			row{780, []string{"50|Polígono Asua, Nave 7, 48950 Erandio"}},
			row{768, []string{"50|CIF: ESB95123456"}},
			row{720, []string{"50|Cliente:", "330|Nº Factura: 2026/00123"}},
			row{706, []string{"50|Comprador Demo S.L.", "330|Fecha de emisión: 19 de abril de 2014"}},
			row{692, []string{"330|Fecha de vencimiento: 19/05/2014"}},
			row{560, []string{"380|Base imponible", "490|100,00 €"}},
			row{546, []string{"380|Cuota IVA", "490|21,00 €"}},
			row{532, []string{"380|Total a pagar", "490|121,00 €"}},
		), map[string]string{"invoice_number": "2026/00123", "issue_date": "2014-04-19", "due_date": "2014-05-19",
			"amount_due": "121.00", "currency": "EUR", "supplier_name": "Talleres Ibarra S.L.", "supplier_tax_id": "ESB95123456"}},
		{"it", page(
			row{800, []string{"50|Fornitore:"}},
			row{788, []string{"50|Rossi Forniture S.r.l."}},
			row{776, []string{"50|Via Roma 1, 20121 Milano"}},
			row{764, []string{"50|Partita IVA: IT12345678901"}},
			row{720, []string{"50|Fattura n. 2026/15"}},
			row{706, []string{"50|Data fattura: 12 marzo 2026"}},
			row{692, []string{"50|Scadenza: 11 aprile 2026"}},
			row{560, []string{"380|Imponibile", "490|100,00 €"}},
			row{546, []string{"380|Totale IVA", "490|22,00 €"}},
			row{532, []string{"380|Totale da pagare", "490|122,00 €"}},
		), map[string]string{"invoice_number": "2026/15", "issue_date": "2026-03-12", "due_date": "2026-04-11",
			"amount_due": "122.00", "currency": "EUR", "supplier_name": "Rossi Forniture S.r.l.", "supplier_tax_id": "IT12345678901"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := readText(c.lines)
			got := textFieldMap(res.Fields)
			for k, want := range c.want {
				if got[k] != want {
					t.Errorf("%s = %q, want %q (warnings %q)", k, got[k], want, res.Warnings)
				}
			}
		})
	}
}

// TestTextRulesRefuse holds the cases where a wrong value is within reach
// and the rules must leave the field empty (or take the right one).
func TestTextRulesRefuse(t *testing.T) {
	for _, c := range []struct {
		name  string
		lines []line
		field string
		want  string
	}{
		{"order number is not the invoice number", page(
			row{700, []string{"50|Bestellnummer: 4500012345"}},
			row{680, []string{"50|Kundennummer: 10020"}},
			row{660, []string{"50|Lieferschein Nr. 8800"}},
		), "invoice_number", ""},
		{"two invoice numbers", page(
			row{700, []string{"50|Invoice number: A-100"}},
			row{680, []string{"50|Invoice no. B-200"}},
		), "invoice_number", ""},
		{"related invoice on a credit note", page(
			row{720, []string{"50|Avoir AV-2017-0005|19"}},
			row{526, []string{"34|Facture liée", "155|FA-2017-0010"}},
		), "invoice_number", "AV-2017-0005"},
		{"an amount beside the label is not a number", page(
			row{700, []string{"50|Rechnungsnummer", "200|1.163,40"}},
		), "invoice_number", ""},
		{"the tax total is not the amount", page(
			row{500, []string{"300|Net total", "480|496.00 €"}},
			row{480, []string{"300|VAT total: 75.04 €"}},
		), "amount_due", ""},
		{"a year is not the amount", page(
			row{500, []string{"300|Total", "480|2018"}},
		), "amount_due", ""},
		{"gross less prepaid must be the payable", page(
			row{500, []string{"300|Total TTC", "480|2,076.76 €"}},
			row{488, []string{"300|Acompte", "480|623.00 €"}},
			row{476, []string{"300|Amount due", "480|2,076.76 €"}},
		), "amount_due", ""},
		{"gross with a prepayment and no payable", page(
			row{500, []string{"300|Invoice total", "480|2,076.76 €"}},
			row{488, []string{"300|Prepayment", "480|623.00 €"}},
		), "amount_due", ""},
		{"residual after the prepayment", page(
			row{500, []string{"300|Total", "480|2,076.76 €"}},
			row{488, []string{"300|Prepaid", "480|623.00 €"}},
			row{476, []string{"300|Residual", "480|1,453.76 €"}},
		), "amount_due", "1453.76"},
		{"net and tax disagree with the gross", page(
			row{500, []string{"300|Net total", "480|100.00 €"}},
			row{488, []string{"300|VAT amount", "480|20.00 €"}},
			row{476, []string{"300|Grand total", "480|130.00 €"}},
		), "amount_due", ""},
		{"table header over line items", page(
			row{440, []string{"60|Menge", "120|Produkt", "346|Preis", "421|Gesamtbetrag"}},
			row{420, []string{"60|1,00", "120|Gestaltung", "346|160,00 €", "421|160,00 €"}},
			row{244, []string{"57|Gesamtbetrag: 406,82 €"}},
		), "amount_due", "406.82"},
		{"buyer block is not the supplier", page(
			row{720, []string{"50|Bill to:"}},
			row{706, []string{"50|Contoso Ltd"}},
			row{694, []string{"50|VAT No: GB 987 6543 21"}},
		), "supplier_name", ""},
		{"a heading is not the supplier", page(
			row{800, []string{"50|Thank you for your business|20"}},
			row{780, []string{"50|We appreciate it"}},
			row{700, []string{"50|Invoice number: 12345"}},
			row{680, []string{"50|Total", "400|10.00 €"}},
			row{660, []string{"50|Total", "400|10.00 €"}},
		), "supplier_name", ""},
		{"two company names in the letterhead", page(
			row{800, []string{"50|Alpha GmbH · Beta GmbH"}},
			row{790, []string{"50|Alpha GmbH · Beta GmbH"}},
		), "supplier_name", ""},
		{"direct debit: the account is the payer's", page(
			row{500, []string{"50|Der Betrag wird per SEPA-Lastschrift von Ihrem Konto eingezogen."}},
			row{488, []string{"50|IBAN: DE89 3704 0044 0532 0130 00"}},
		), "iban", ""},
		{"slash dates month first when the page says so", page(
			row{500, []string{"50|Invoice Date", "150|11/03/2017"}},
			row{488, []string{"50|Payment", "150|11/17/2017"}},
		), "issue_date", "2017-11-03"},
		{"due date with a cash discount", page(
			row{500, []string{"50|Zahlbar bis 04.07.2018 netto, 3%"}},
			row{488, []string{"50|Skonto bis 15.06.2018"}},
		), "due_date", ""},
		{"issue date after the number", page(
			row{700, []string{"50|Rechnung Nr. 471102 vom 05.03.2013"}},
		), "issue_date", "2013-03-05"},
		{"amount in a currency that is no more", page(
			row{500, []string{"300|Total Amount (DEM)", "480|37.763,70"}},
		), "amount_due", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := readText(c.lines)
			if got := textFieldMap(res.Fields)[c.field]; got != c.want {
				t.Errorf("%s = %q, want %q (warnings %q)", c.field, got, c.want, res.Warnings)
			}
		})
	}
}

// TestFindDateLanguages reads the date forms of the six languages.
func TestFindDateLanguages(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"24. Januar 2014", "2014-01-24"},
		{"vom 05.03.2013", "2013-03-05"},
		{"3. März 2026", "2026-03-03"},
		{"19 april 2014", "2014-04-19"},
		{"1er février 2026", "2026-02-01"},
		{"15 décembre 2025", "2025-12-15"},
		{"5 mei 2026", "2026-05-05"},
		{"12 oktober 2026", "2026-10-12"},
		{"19 de abril de 2014", "2014-04-19"},
		{"3 de septiembre 2026", "2026-09-03"},
		{"12 marzo 2026", "2026-03-12"},
		{"1 giugno 2026", "2026-06-01"},
		{"7 dicembre 2025", "2025-12-07"},
		{"2026-01-31", "2026-01-31"},
		{"31/01/2026", "2026-01-31"},
		{"31-01-2026", "2026-01-31"},
		{"January 31, 2026", "2026-01-31"},
	} {
		d, _ := findDate(c.in, true)
		if got := d.String(); got != c.want {
			t.Errorf("findDate(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestTextRulesPreviousBalance(t *testing.T) {
	res := readText(page(
		row{520, []string{"300|Previous balance", "480|0.00 €"}},
		row{500, []string{"300|Invoice total", "480|150.00 €"}},
	))
	if res.Fields.AmountDue != "150.00" {
		t.Errorf("amount = %q, want 150.00 (warnings %q)", res.Fields.AmountDue, res.Warnings)
	}
}
