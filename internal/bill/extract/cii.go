package extract

import "strings"

// UN/CEFACT Cross Industry Invoice D16B namespaces (EN 16931-3-3 binding,
// Factur-X 1.0, ZUGFeRD 2.x, XRechnung CII).
const (
	nsRSM = "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100"
	nsRAM = "urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100"
	nsUDT = "urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100"
)

func rsm(local string) name { return name{nsRSM, local} }
func ram(local string) name { return name{nsRAM, local} }
func udt(local string) name { return name{nsUDT, local} }

// readCII maps a CrossIndustryInvoice. Every Factur-X profile uses the same
// paths; MINIMUM simply lacks the payment means, so the bank fields stay empty.
func readCII(root *node) Result {
	var (
		f Fields
		w warnings
	)
	doc := root.child(rsm("ExchangedDocument"))
	f.InvoiceNumber = clean(doc.child(ram("ID")).value())
	if creditNoteTypes[doc.child(ram("TypeCode")).value()] {
		f.CreditNote = true
	}
	f.IssueDate = ciiDate(doc.child(ram("IssueDateTime")), "issue date", &w)

	tx := root.child(rsm("SupplyChainTradeTransaction"))
	agreement := tx.child(ram("ApplicableHeaderTradeAgreement"))
	settlement := tx.child(ram("ApplicableHeaderTradeSettlement"))

	seller := agreement.child(ram("SellerTradeParty"))
	f.SupplierName = clean(seller.child(ram("Name")).value())
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
	f.RemittanceReference = clean(settlement.child(ram("PaymentReference")).value())

	var accts []account
	for _, pm := range settlement.all(ram("SpecifiedTradeSettlementPaymentMeans")) {
		fa := pm.child(ram("PayeePartyCreditorFinancialAccount"))
		id, isIBAN := fa.child(ram("IBANID")).value(), true
		if id == "" {
			id, isIBAN = fa.child(ram("ProprietaryID")).value(), false
		}
		accts = append(accts, account{
			id:     id,
			branch: pm.path(ram("PayeeSpecifiedCreditorFinancialInstitution"), ram("BICID")).value(),
			holder: fa.child(ram("AccountName")).value(),
			credit: creditTransferCodes[pm.child(ram("TypeCode")).value()],
			ibanID: isIBAN && id != "",
		})
	}
	if a, ok := pickAccount(accts, &w); ok {
		accountFields(a, &f, &w)
	}

	// BT-9: the first payment terms that carry a due date.
	for _, terms := range settlement.all(ram("SpecifiedTradePaymentTerms")) {
		if d := ciiDate(terms.child(ram("DueDateDateTime")), "due date", &w); !d.IsZero() {
			f.DueDate = d
			break
		}
	}

	sum := settlement.child(ram("SpecifiedTradeSettlementHeaderMonetarySummation"))
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

	profile := clean(root.path(rsm("ExchangedDocumentContext"), ram("GuidelineSpecifiedDocumentContextParameter"), ram("ID")).value())
	return Result{Format: FormatCII, Profile: profile, Fields: f, Warnings: w}
}

// ciiDate reads a udt:DateTimeString. EN 16931 allows only format 102
// (YYYYMMDD); ISO dates without a format attribute are accepted too, because
// some generators write them.
func ciiDate(n *node, what string, w *warnings) Date {
	s := n.child(udt("DateTimeString"))
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
