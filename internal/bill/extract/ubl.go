package extract

import "strings"

// UBL 2.1 namespaces (OASIS UBL 2.1, also used by PEPPOL BIS 3 and XRechnung UBL).
const (
	nsUBLInvoice    = "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
	nsUBLCreditNote = "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"
	nsCAC           = "urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
	nsCBC           = "urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2"
)

func cac(local string) name { return name{nsCAC, local} }
func cbc(local string) name { return name{nsCBC, local} }

// readUBL maps a UBL Invoice or CreditNote (the EN 16931 UBL syntax binding).
func readUBL(root *node, creditNote bool) Result {
	var (
		f Fields
		w warnings
	)
	f.InvoiceNumber = clean(root.child(cbc("ID")).value())
	f.IssueDate = ublDate(root.child(cbc("IssueDate")), "issue date", &w)
	// BT-9: Invoice has cbc:DueDate; a CreditNote has none, and the binding
	// puts the due date on the payment means instead.
	f.DueDate = ublDate(root.child(cbc("DueDate")), "due date", &w)
	typeCode := root.child(cbc("InvoiceTypeCode")).value()
	if creditNote || creditNoteTypes[typeCode] {
		f.CreditNote = true
	}
	setCurrency(root.child(cbc("DocumentCurrencyCode")).value(), &f, &w)

	party := root.path(cac("AccountingSupplierParty"), cac("Party"))
	// BT-27 is the registered name; the trading name (BT-28) only stands in
	// when the legal entity is missing, which older UBL 2.0 habits produce.
	f.SupplierName = partyName(party.path(cac("PartyLegalEntity"), cbc("RegistrationName")).value())
	if f.SupplierName == "" {
		f.SupplierName = partyName(party.path(cac("PartyName"), cbc("Name")).value())
	}
	var otherTaxID string
	for _, ts := range party.all(cac("PartyTaxScheme")) {
		id := clean(ts.child(cbc("CompanyID")).value())
		if id == "" {
			continue
		}
		if strings.EqualFold(ts.path(cac("TaxScheme"), cbc("ID")).value(), "VAT") {
			if f.SupplierTaxID == "" {
				f.SupplierTaxID = id // BT-31
			}
		} else if otherTaxID == "" {
			otherTaxID = id // BT-32
		}
	}
	if f.SupplierTaxID == "" {
		f.SupplierTaxID = otherTaxID
	}

	var accts []account
	var refs, codes []string
	var means []*node
	// Only the payee's account (PayeeFinancialAccount) is read; a direct
	// debit's PaymentMandate/PayerFinancialAccount is the buyer's.
	for _, pm := range root.all(cac("PaymentMeans")) {
		means = append(means, pm)
		codes = append(codes, pm.child(cbc("PaymentMeansCode")).value())
		fa := pm.child(cac("PayeeFinancialAccount"))
		branch := fa.path(cac("FinancialInstitutionBranch"), cbc("ID")).value()
		if branch == "" { // UBL 2.0 placed the BIC one level deeper
			branch = fa.path(cac("FinancialInstitutionBranch"), cac("FinancialInstitution"), cbc("ID")).value()
		}
		accts = append(accts, account{
			id:     fa.child(cbc("ID")).value(),
			branch: branch,
			holder: fa.child(cbc("Name")).value(),
			credit: creditTransferCodes[pm.child(cbc("PaymentMeansCode")).value()],
		})
		refs = append(refs, clean(pm.child(cbc("PaymentID")).value()))
	}
	payee := make([]bool, len(accts))
	for i, a := range accts {
		payee[i] = compact(a.id) != ""
	}
	f.PaymentMeans = meansOf(codes, payee)
	if a, ok := pickAccount(accts, &w); ok {
		accountFields(a, &f, &w)
	}
	// BT-83 is PaymentID alone, never the buyer reference (BT-10) or an
	// order reference; BT-83 and, for credit notes, BT-9: the first payment means that has them.
	for i, pm := range means {
		if f.RemittanceReference == "" && refs[i] != "" {
			f.RemittanceReference = refs[i]
		}
		if f.DueDate.IsZero() {
			f.DueDate = ublDate(pm.child(cbc("PaymentDueDate")), "due date", &w)
		}
	}

	total := root.child(cac("LegalMonetaryTotal"))
	payable := total.child(cbc("PayableAmount"))
	if payable == nil {
		// BT-112 (total with VAT) is the best stand-in when BT-115 is
		// missing, which only broken files do; say so.
		payable = total.child(cbc("TaxInclusiveAmount"))
		if payable != nil {
			w.add("no PayableAmount (BT-115); took TaxInclusiveAmount (BT-112)")
		}
	}
	if payable != nil {
		cur := f.Currency
		if cur == "" {
			setCurrency(payable.attr("currencyID"), &f, &w)
			cur = f.Currency
		} else if c := payable.attr("currencyID"); c != "" && c != cur {
			w.add("amount due is in %s but the document currency is %s", truncate(c, 10), cur)
		}
		setAmount(payable.value(), cur, &f, &w)
	}
	return Result{Format: FormatUBL, Profile: clean(root.child(cbc("CustomizationID")).value()), Fields: f, Warnings: w}
}

func ublDate(n *node, what string, w *warnings) Date {
	v := n.value()
	if v == "" {
		return Date{}
	}
	d, ok := isoDate(v)
	if !ok {
		w.add("%s %q is not a YYYY-MM-DD date", what, truncate(v, 30))
	}
	return d
}
