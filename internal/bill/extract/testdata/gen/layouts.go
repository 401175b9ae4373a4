package main

// The page layouts of the text-only PDFs. Each mirrors a common real layout:
// letterhead top left or right, a buyer block (labelled or in a DIN 5008
// address window), invoice facts as "label: value" lines or as a header row
// with values below, a line-item table, totals, and bank details in the
// body or the footer.

// ukInvoice: facts in a header row with values underneath; £ amounts.
func ukInvoice() []item {
	return []item{
		sz(50, 790, 18, true, "Harbour Lane Print Ltd"),
		sz(420, 790, 20, true, "INVOICE"),
		t(50, 772, "Unit 4, Quayside Works, Bristol BS1 6XN"),
		t(50, 760, "VAT Reg No: GB 123 4567 82"),
		b(50, 720, "Bill to:"),
		t(50, 706, "Strongroom Demo Ltd"),
		t(50, 694, "1 Market Street, Leeds LS1 2AB"),
		t(50, 682, "VAT Reg No: GB 987 6543 21"),
		b(300, 640, "Invoice No."), b(390, 640, "Invoice Date"), b(480, 640, "Due Date"),
		t(300, 626, "HLP-10231"), t(390, 626, "14/01/2026"), t(480, 626, "13/02/2026"),
		b(50, 580, "Description"), b(330, 580, "Qty"), b(390, 580, "Unit price"), b(480, 580, "Amount"),
		t(50, 564, "Business cards, 500, matt laminate"), t(330, 564, "4"), t(390, 564, "£95.00"), t(480, 564, "£380.00"),
		t(50, 550, "A2 posters, 170gsm silk"), t(330, 550, "20"), t(390, 550, "£46.75"), t(480, 550, "£935.00"),
		t(390, 520, "Subtotal"), t(480, 520, "£1,315.00"),
		t(390, 506, "VAT 20%"), t(480, 506, "£263.00"),
		b(390, 490, "Total due"), b(480, 490, "£1,578.00"),
		b(50, 440, "Payment details"),
		t(50, 426, "Account name: Harbour Lane Print Ltd"),
		t(50, 414, "Sort code: 20-00-00"), t(220, 414, "Account number: 55779911"),
		t(50, 402, "IBAN: GB29 NWBK 6016 1331 9268 19"), t(300, 402, "BIC: NWBKGB2L"),
		t(50, 388, "Please quote HLP-10231 as the payment reference."),
		sz(50, 60, 7, false, "Harbour Lane Print Ltd · Registered in England and Wales No. 08123456"),
	}
}

// deRechnung: DIN 5008 letter with an unlabelled address window and the
// bank details in the footer.
func deRechnung() []item {
	return []item{
		sz(350, 800, 16, true, "Müller Maschinenbau GmbH"),
		sz(350, 784, 9, false, "Industriestraße 12 · 70565 Stuttgart"),
		sz(60, 730, 7, false, "Müller Maschinenbau GmbH · Industriestraße 12 · 70565 Stuttgart"),
		t(60, 712, "Strongroom Kunde AG"),
		t(60, 700, "Einkauf"),
		t(60, 688, "Friedrichstraße 100"),
		t(60, 676, "10117 Berlin"),
		t(350, 712, "Rechnungsnummer:"), t(460, 712, "RE-2026-0098"),
		t(350, 700, "Rechnungsdatum:"), t(460, 700, "12.01.2026"),
		t(350, 688, "Kundennummer:"), t(460, 688, "K-20931"),
		t(350, 676, "Fällig am:"), t(460, 676, "26.01.2026"),
		sz(60, 620, 14, true, "Rechnung"),
		t(60, 596, "Sehr geehrte Damen und Herren, für unsere Leistungen berechnen wir Ihnen:"),
		b(60, 570, "Pos."), b(90, 570, "Bezeichnung"), b(330, 570, "Menge"), b(400, 570, "Einzelpreis"), b(490, 570, "Gesamt"),
		t(60, 554, "1"), t(90, 554, "Wartung CNC-Fräse, Pauschale"), t(330, 554, "1"), t(400, 554, "1.600,00 €"), t(490, 554, "1.600,00 €"),
		t(60, 540, "2"), t(90, 540, "Ersatzteil Spindellager"), t(330, 540, "2"), t(400, 540, "200,00 €"), t(490, 540, "400,00 €"),
		t(330, 510, "Nettobetrag"), t(490, 510, "2.000,00 €"),
		t(330, 496, "zzgl. 19 % USt."), t(490, 496, "380,00 €"),
		b(330, 480, "Gesamtbetrag"), b(490, 480, "2.380,00 €"),
		t(60, 440, "Zahlbar innerhalb von 14 Tagen ohne Abzug. Verwendungszweck: RE-2026-0098"),
		t(60, 410, "Mit freundlichen Grüßen"),
		sz(60, 80, 7, false, "Müller Maschinenbau GmbH · Geschäftsführer: Hans Müller · Amtsgericht Stuttgart HRB 123456"),
		sz(60, 70, 7, false, "Commerzbank Stuttgart · IBAN: DE89 3704 0044 0532 0130 00 · BIC: COBADEFFXXX · USt-IdNr.: DE123456789 · St.-Nr.: 99/815/08150"),
	}
}

// frFacture: buyer block on the right, French month names, "Net à payer".
func frFacture() []item {
	return []item{
		sz(50, 790, 16, true, "Boulangerie Dupont SARL"),
		t(50, 774, "12 rue des Lilas, 69003 Lyon"),
		sz(50, 762, 8, false, "SIRET 123 456 789 00012 — N° TVA intracommunautaire : FR40 123456789"),
		sz(430, 790, 20, true, "FACTURE"),
		t(50, 720, "Facture n° : F2026-0042"),
		t(50, 706, "Date de facture : 5 janvier 2026"),
		t(50, 692, "Date d'échéance : 4 février 2026"),
		b(330, 720, "Facturé à :"),
		t(330, 706, "Strongroom Démo SAS"),
		t(330, 692, "8 avenue Foch, 75008 Paris"),
		t(330, 678, "N° TVA : FR12 987654321"),
		b(50, 620, "Désignation"), b(330, 620, "Qté"), b(400, 620, "PU HT"), b(490, 620, "Total HT"),
		t(50, 604, "Viennoiseries assorties (lot de 50)"), t(330, 604, "10"), t(400, 604, "42,50 €"), t(490, 604, "425,00 €"),
		t(50, 590, "Pains spéciaux"), t(330, 590, "25"), t(400, 590, "17,00 €"), t(490, 590, "425,00 €"),
		t(380, 560, "Total HT"), t(490, 560, "850,00 €"),
		t(380, 546, "TVA 5,5 %"), t(490, 546, "46,75 €"),
		t(380, 532, "Total TTC"), t(490, 532, "896,75 €"),
		b(380, 516, "Net à payer"), b(490, 516, "896,75 €"),
		t(50, 470, "Règlement par virement — IBAN : FR76 3000 6000 0112 3456 7890 189 — BIC : AGRIFRPP882"),
		t(50, 456, "Référence de paiement : F2026-0042"),
		sz(50, 60, 7, false, "Pénalités de retard : trois fois le taux d'intérêt légal. Indemnité forfaitaire pour frais de recouvrement : 40 €."),
	}
}

// usInvoice: US dates, "Net 30" terms instead of a due date, ABA routing.
func usInvoice() []item {
	return []item{
		sz(50, 790, 16, true, "Cascade Cloud Services, Inc."),
		t(50, 774, "1200 Westlake Ave N, Seattle, WA 98109"),
		t(50, 762, "EIN: 12-3456789"),
		sz(430, 790, 20, true, "INVOICE"),
		t(380, 750, "Invoice #: 2026-118"),
		t(380, 736, "Invoice Date: January 31, 2026"),
		t(380, 722, "Terms: Net 30"),
		b(50, 720, "Bill To:"),
		t(50, 706, "Strongroom Demo LLC"),
		t(50, 692, "350 Fifth Avenue, New York, NY 10118"),
		b(50, 620, "Description"), b(330, 620, "Qty"), b(400, 620, "Rate"), b(490, 620, "Amount"),
		t(50, 604, "Managed Kubernetes, January 2026"), t(330, 604, "1"), t(400, 604, "$9,800.00"), t(490, 604, "$9,800.00"),
		t(50, 590, "Premium support"), t(330, 590, "1"), t(400, 590, "$2,650.00"), t(490, 590, "$2,650.00"),
		t(380, 560, "Subtotal"), t(490, 560, "$12,450.00"),
		t(380, 546, "Sales tax (0%)"), t(490, 546, "$0.00"),
		b(380, 530, "Amount Due (USD)"), b(490, 530, "$12,450.00"),
		b(50, 480, "Remit payment by ACH or wire to:"),
		t(50, 466, "Bank: First Example Bank, New York"),
		t(50, 452, "ABA Routing Number: 021000021"),
		t(50, 438, "Account Number: 483920175"),
		t(50, 424, "SWIFT: CHASUS33"),
	}
}

// nlFactuur: labels in one column and values in another.
func nlFactuur() []item {
	return []item{
		sz(50, 790, 16, true, "Van Dijk Installatietechniek B.V."),
		t(50, 774, "Havenstraat 8, 3011 AB Rotterdam"),
		t(50, 762, "KvK 12345678 · BTW-nummer NL123456789B01"),
		sz(430, 790, 20, true, "FACTUUR"),
		t(50, 720, "Factuurnummer"), t(200, 720, "2026-0311"),
		t(50, 706, "Factuurdatum"), t(200, 706, "10-02-2026"),
		t(50, 692, "Vervaldatum"), t(200, 692, "12-03-2026"),
		t(50, 678, "Klant"), t(200, 678, "Strongroom Demo B.V., Keizersgracht 1, Amsterdam"),
		b(50, 620, "Omschrijving"), b(400, 620, "Aantal"), b(490, 620, "Bedrag"),
		t(50, 604, "Onderhoud warmtepomp"), t(400, 604, "1"), t(490, 604, "€ 1.250,00"),
		t(50, 590, "Vervangen expansievat"), t(400, 590, "1"), t(490, 590, "€ 750,00"),
		t(380, 560, "Subtotaal"), t(490, 560, "€ 2.000,00"),
		t(380, 546, "BTW 21%"), t(490, 546, "€ 420,00"),
		b(380, 530, "Totaal te betalen"), b(490, 530, "€ 2.420,00"),
		t(50, 480, "Gelieve het bedrag over te maken op IBAN NL91 ABNA 0417 1643 00 (BIC ABNANL2A)"),
		t(50, 466, "o.v.v. betalingskenmerk 2026-0311."),
	}
}

// ukCreditNote: a credit note with a generic "Date:" label and no due date.
func ukCreditNote() []item {
	return []item{
		sz(50, 790, 16, true, "Kestrel Office Supplies Limited"),
		t(50, 774, "22 Canal Street, Manchester M1 3HE"),
		t(50, 762, "VAT No. GB 244 8765 12"),
		sz(400, 790, 20, true, "CREDIT NOTE"),
		t(400, 750, "Credit Note No: CN-0457"),
		t(400, 736, "Date: 3 March 2026"),
		t(400, 722, "Original invoice: INV-8812"),
		b(50, 720, "Customer:"),
		t(50, 706, "Strongroom Demo Ltd"),
		t(50, 692, "1 Market Street, Leeds LS1 2AB"),
		b(50, 620, "Description"), b(400, 620, "Qty"), b(490, 620, "Amount"),
		t(50, 604, "Returned: ergonomic chairs (damaged in transit)"), t(400, 604, "2"), t(490, 604, "£200.00"),
		t(380, 560, "Net"), t(490, 560, "£200.00"),
		t(380, 546, "VAT 20%"), t(490, 546, "£40.00"),
		b(380, 530, "Credit total"), b(490, 530, "£240.00"),
		t(50, 480, "The amount will be refunded to your account within 5 working days."),
		t(50, 466, "Our bank: Sort Code 40-11-62  Account No 31926819"),
	}
}

// The visible pages of the Factur-X samples.
func fxMinimumPage() []item {
	return []item{
		sz(50, 790, 16, true, "Imprimerie Lacroix SAS"),
		t(50, 774, "4 quai de la Fosse, 44000 Nantes"),
		sz(430, 790, 20, true, "FACTURE"),
		t(50, 720, "Facture n° : FA-2026-0150"),
		t(50, 706, "Date : 20/01/2026"),
		t(50, 692, "Échéance : 19/02/2026"),
		b(330, 720, "Client :"), t(330, 706, "Strongroom Démo SAS"),
		t(380, 560, "Total HT"), t(490, 560, "1 200,00 €"),
		t(380, 546, "TVA 20 %"), t(490, 546, "240,00 €"),
		b(380, 530, "Net à payer"), b(490, 530, "1 440,00 €"),
		t(50, 470, "IBAN : FR14 2004 1010 0505 0001 3M02 606 — BIC : BNPAFRPP"),
		sz(50, 60, 7, false, "Imprimerie Lacroix SAS · N° TVA FR32 812345678"),
	}
}

func fxBasicPage() []item {
	return []item{
		sz(50, 790, 16, true, "Schreinerei Holzmann e.K."),
		t(50, 774, "Am Sägewerk 3 · 83022 Rosenheim"),
		sz(430, 790, 18, true, "RECHNUNG"),
		t(330, 720, "Rechnungsnummer: 2026-00077"),
		t(330, 706, "Datum: 05.02.2026"),
		t(330, 692, "Zahlbar bis: 05.03.2026"),
		t(380, 530, "Gesamtbetrag"), t(490, 530, "1.071,01 €"),
		t(50, 470, "Bayerische Landesbank · IBAN DE02 1203 0000 0000 2020 51 · BIC BYLADEM1001"),
	}
}

func fxEN16931Page() []item {
	return []item{
		sz(50, 790, 16, true, "Alpenblick Software GmbH"),
		t(50, 774, "Mariahilfer Straße 45 · 1060 Wien · UID ATU12345678"),
		sz(430, 790, 18, true, "RECHNUNG"),
		t(330, 720, "Rechnungsnummer: AB-26-0044"),
		t(330, 706, "Rechnungsdatum: 16.02.2026"),
		t(330, 692, "Fällig: 02.03.2026"),
		t(380, 530, "Zu zahlen"), t(490, 530, "EUR 2.400,00"),
		t(50, 470, "Erste Bank · IBAN AT61 1904 3002 3457 3201 · BIC GIBAATWWXXX"),
	}
}

// The three layouts below were added after the text rules were written and
// scored before any rule was adjusted to them (see ACCURACY.md).

// esFactura: Spanish labels, "Nº" before the word, CIF tax number.
func esFactura() []item {
	return []item{
		sz(50, 790, 16, true, "Talleres Ibarra S.L."),
		t(50, 774, "Polígono Industrial Asua, Nave 7 · 48950 Erandio (Bizkaia)"),
		t(50, 762, "CIF: ESB95123456"),
		sz(430, 790, 20, true, "FACTURA"),
		t(330, 720, "Nº Factura: 2026/00123"),
		t(330, 706, "Fecha de emisión: 09/03/2026"),
		t(330, 692, "Fecha de vencimiento: 08/04/2026"),
		b(50, 720, "Cliente:"),
		t(50, 706, "Strongroom Demo S.L."),
		t(50, 692, "Calle de Alcalá 50, 28014 Madrid"),
		b(50, 620, "Concepto"), b(400, 620, "Cantidad"), b(490, 620, "Importe"),
		t(50, 604, "Mecanizado de piezas, lote 14"), t(400, 604, "1"), t(490, 604, "3.100,00 €"),
		t(380, 560, "Base imponible"), t(490, 560, "3.100,00 €"),
		t(380, 546, "IVA 21%"), t(490, 546, "651,00 €"),
		b(380, 530, "Total a pagar"), b(490, 530, "3.751,00 €"),
		t(50, 480, "Forma de pago: transferencia bancaria a IBAN ES91 2100 0418 4502 0005 1332"),
	}
}

// chRechnung: Swiss francs with apostrophe thousands, MWST number, a plain
// "Total" line.
func chRechnung() []item {
	return []item{
		sz(380, 800, 16, true, "Bergsicht Treuhand AG"),
		sz(380, 784, 9, false, "Bahnhofstrasse 21 · 8001 Zürich"),
		t(60, 712, "Strongroom Demo GmbH"),
		t(60, 700, "Seestrasse 5"),
		t(60, 688, "6004 Luzern"),
		sz(60, 640, 14, true, "Rechnung Nr. 2026-4471"),
		t(60, 620, "Datum: 03.03.2026"),
		t(60, 606, "Zahlbar bis 02.04.2026"),
		b(60, 570, "Leistung"), b(490, 570, "Betrag"),
		t(60, 554, "Buchhaltung Februar 2026"), t(490, 554, "1'161.10"),
		t(330, 520, "MWST 8.1 %"), t(490, 520, "94.05"),
		b(330, 504, "Total CHF"), b(490, 504, "1'255.15"),
		t(60, 460, "Bitte überweisen Sie den Betrag auf IBAN CH93 0076 2011 6238 5295 7."),
		sz(60, 80, 7, false, "Bergsicht Treuhand AG · MWST-Nr. CHE-123.456.789 MWST"),
	}
}

// gbStudio: a sole trader without a legal form, buyer block on the right,
// "Balance Due" and abbreviated month names.
func gbStudio() []item {
	return []item{
		sz(50, 795, 22, true, "Brightside Design Studio"),
		t(50, 775, "Flat 2, 9 Albion Road, Brighton BN2 9NS · hello@brightside.example"),
		t(350, 730, "Invoice To"),
		t(350, 716, "Strongroom Demo Ltd"),
		t(350, 702, "1 Market Street, Leeds"),
		t(50, 730, "Invoice Number"), t(160, 730, "BDS-0093"),
		t(50, 716, "Issued"), t(160, 716, "15 Mar 2026"),
		t(50, 702, "Payment Due"), t(160, 702, "29 Mar 2026"),
		b(50, 620, "Item"), b(490, 620, "Total"),
		t(50, 604, "Brand identity refresh (logo, palette, type)"), t(490, 604, "GBP 2,600.00"),
		t(50, 590, "Social media templates x 12"), t(490, 590, "GBP 520.00"),
		b(380, 540, "Balance Due"), b(490, 540, "GBP 3,120.00"),
		t(50, 490, "Not VAT registered."),
		t(50, 476, "Bank transfer to S. Patel, sort code 09-01-28, account 73815590"),
		t(50, 462, "Reference: BDS-0093"),
	}
}
