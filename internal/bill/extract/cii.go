package extract

import "strings"

// UN/CEFACT Cross Industry Invoice D16B namespaces (EN 16931-3-3 binding,
// Factur-X 1.0, ZUGFeRD 2.x, XRechnung CII).
const (
	nsRSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
	nsRAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
	nsUDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
)

// ZUGFeRD 1.0 (2014) namespaces: its root CrossIndustryDocument and the
// UN/CEFACT D13B-era library versions 12 and 15 it builds on.
const (
	nsZF1    = "urn:ferd:CrossIndustryDocument:invoice:1p0"
	nsZF1RAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:12"
	nsZF1UDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:15"
)

// ciiDialect names the elements that differ between the CII D16B binding
// (Factur-X, ZUGFeRD 2.x, XRechnung CII) and ZUGFeRD 1.0. The two share
// their structure and the names of everything below these elements.
type ciiDialect struct {
	format                string
	rsm, ram, udt         string // namespaces
	context, document     string // rsm: children of the root
	transaction           string
	agreement, settlement string // ram: children of the transaction
	summation             string // ram: child of the settlement
}

var (
	ciiD16B = ciiDialect{
		format: FormatCII, rsm: nsRSM, ram: nsRAM, udt: nsUDT,
		context: "ExchangedDocumentContext", document: "ExchangedDocument",
		transaction: "SupplyChainTradeTransaction",
		agreement:   "ApplicableHeaderTradeAgreement", settlement: "ApplicableHeaderTradeSettlement",
		summation: "SpecifiedTradeSettlementHeaderMonetarySummation",
	}
	zugferd1 = ciiDialect{
		format: FormatZUGFeRD1, rsm: nsZF1, ram: nsZF1RAM, udt: nsZF1UDT,
		context: "SpecifiedExchangedDocumentContext", document: "HeaderExchangedDocument",
		transaction: "SpecifiedSupplyChainTradeTransaction",
		agreement:   "ApplicableSupplyChainTradeAgreement", settlement: "ApplicableSupplyChainTradeSettlement",
		summation: "SpecifiedTradeSettlementMonetarySummation",
	}
)

// readCII maps a CrossIndustryInvoice, or a ZUGFeRD 1.0
// CrossIndustryDocument (dialect d). Every Factur-X profile uses the same
// paths; MINIMUM simply lacks the payment means, so the bank fields stay
// empty.
func readCII(root *node, d ciiDialect) Result {
	var (
		f Fields
		w warnings
	)
	rsm := func(local string) name { return name{d.rsm, local} }
	ram := func(local string) name { return name{d.ram, local} }
	doc := root.child(rsm(d.document))
	f.InvoiceNumber = clean(doc.child(ram("ID")).value())
	if creditNoteTypes[doc.child(ram("TypeCode")).value()] {
		f.CreditNote = true
	}
	f.IssueDate = ciiDate(doc.child(ram("IssueDateTime")), d.udt, "issue date", &w)

	tx := root.child(rsm(d.transaction))
	agreement := tx.child(ram(d.agreement))
	settlement := tx.child(ram(d.settlement))

	seller := agreement.child(ram("SellerTradeParty"))
	f.SupplierName = partyName(seller.child(ram("Name")).value())
	var otherTaxID string
	for _, reg := range seller.all(ram("SpecifiedTaxRegistration")) {
		id := reg.child(ram("ID"))
		v := clean(id.value())
		if v == "" {
			continue
		}
		// schemeID VA is the VAT identifier (BT-31), FC the local tax
		// registration (BT-32).
		if strings.EqualFold(id.attr("schemeID"), "VA") {
			if f.SupplierTaxID == "" {
				f.SupplierTaxID = v
			}
		} else if otherTaxID == "" {
			otherTaxID = v
		}
	}
	if f.SupplierTaxID == "" {
		f.SupplierTaxID = otherTaxID
	}

	setCurrency(settlement.child(ram("InvoiceCurrencyCode")).value(), &f, &w)
	// BT-83 is the settlement's PaymentReference alone: the buyer reference
	// (BT-10) and the order or customer references are not what the
	// supplier matches the payment with.
	f.RemittanceReference = clean(settlement.child(ram("PaymentReference")).value())

	// Only the payee's account (PayeePartyCreditorFinancialAccount) is read;
	// a direct debit's PayerPartyDebtorFinancialAccount is the buyer's.
	var (
		accts []account
		codes []string
		payee []bool
	)
	for _, pm := range settlement.all(ram("SpecifiedTradeSettlementPaymentMeans")) {
		fa := pm.child(ram("PayeePartyCreditorFinancialAccount"))
		code := pm.child(ram("TypeCode")).value()
		codes = append(codes, code)
		id, isIBAN := fa.child(ram("IBANID")).value(), true
		proprietary := fa.child(ram("ProprietaryID")).value()
		if id == "" {
			id, isIBAN, proprietary = proprietary, false, ""
		}
		accts = append(accts, account{
			id:          id,
			proprietary: proprietary,
			branch:      pm.path(ram("PayeeSpecifiedCreditorFinancialInstitution"), ram("BICID")).value(),
			holder:      fa.child(ram("AccountName")).value(),
			credit:      creditTransferCodes[code],
			ibanID:      isIBAN && id != "",
		})
	}
	for _, a := range accts {
		payee = append(payee, compact(a.id) != "")
	}
	f.PaymentMeans = meansOf(codes, payee)
	if a, ok := pickAccount(accts, &w); ok {
		accountFields(a, &f, &w)
	}

	// BT-9: the first payment terms that carry a due date.
	for _, terms := range settlement.all(ram("SpecifiedTradePaymentTerms")) {
		if due := ciiDate(terms.child(ram("DueDateDateTime")), d.udt, "due date", &w); !due.IsZero() {
			f.DueDate = due
			break
		}
	}

	sum := settlement.child(ram(d.summation))
	due := sum.child(ram("DuePayableAmount"))
	if due == nil {
		if due = sum.child(ram("GrandTotalAmount")); due != nil {
			w.add("no DuePayableAmount (BT-115); took GrandTotalAmount (BT-112)")
		}
	}
	if due != nil {
		if f.Currency == "" {
			setCurrency(due.attr("currencyID"), &f, &w)
		}
		setAmount(due.value(), f.Currency, &f, &w)
	}

	profile := clean(root.path(rsm(d.context), ram("GuidelineSpecifiedDocumentContextParameter"), ram("ID")).value())
	return Result{Format: d.format, Profile: profile, Fields: f, Warnings: w}
}

// ciiDate reads a udt:DateTimeString. EN 16931 allows only format 102
// (YYYYMMDD); ISO dates without a format attribute are accepted too, because
// some generators write them.
func ciiDate(n *node, udtSpace, what string, w *warnings) Date {
	s := n.child(name{udtSpace, "DateTimeString"})
	if s == nil {
		// A few generators drop the udt wrapper or bind it to the ram
		// namespace; take any child's text.
		if n == nil || len(n.children) == 0 {
			return Date{}
		}
		s = n.children[0]
	}
	v := s.value()
	if v == "" {
		return Date{}
	}
	format := s.attr("format")
	if format == "" || format == "102" {
		if d, ok := basicDate(v); ok {
			return d
		}
		if d, ok := isoDate(v); ok && format == "" {
			return d
		}
	}
	w.add("%s %q (format %s) is not a YYYYMMDD date", what, truncate(v, 30), truncate(format, 10))
	return Date{}
}
