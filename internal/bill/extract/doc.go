// Package extract reads the fields of a bill (a supplier invoice) from the
// bytes of an uploaded file. It is a pure library: no database, no HTTP, no
// file system; the bill job calls Read and stores what comes back.
//
// # Inputs
//
// Read sniffs the content and handles, in order of trust:
//
//   - UBL 2.1 Invoice and CreditNote XML (PEPPOL BIS 3, XRechnung UBL, …);
//   - UN/CEFACT Cross Industry Invoice D16B XML (XRechnung CII, Factur-X and
//     ZUGFeRD 2.x XML on its own);
//   - ZUGFeRD 1.0 CrossIndustryDocument XML
//     (urn:ferd:CrossIndustryDocument:invoice:1p0), on its own or embedded
//     as "ZUGFeRD-invoice.xml": the same paths as CII under the 1.0 names
//     (HeaderExchangedDocument, ApplicableSupplyChainTradeSettlement, …);
//   - PDFs with an embedded e-invoice (Factur-X, ZUGFeRD 2.x, XRechnung as
//     attachment "factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml", or
//     any other .xml attachment that is an invoice): the XML is read as
//     above; the due date, bank details and payment reference that a MINIMUM
//     or BASIC WL profile leaves out are completed from the PDF's text, with a
//     warning, and a field whose value the page surely prints otherwise is
//     left empty and listed in Result.Conflicts (reconcile.go);
//   - other PDFs with a text layer, by the label rules in text.go (supplier,
//     number, dates, total payable, currency, IBAN/BIC, UK account number and
//     sort code, US routing number).
//
// # Text rules
//
// The text layer is read with positions (pdftext.go: page content, the form
// XObjects it draws, simple and composite fonts with their widths) and laid
// out again as lines of cells (layout.go). The rules pair a label with the
// value beside it in its cell, to its right on the line, or below it when the
// label's line is not a table header, in English, German, French, Dutch,
// Spanish and Italian. Each of the invoice number, issue date, due date,
// amount and supplier name gets a confidence; below the bar (confident) the
// field stays empty, because a wrong value is worse than none. In short:
//
//   - invoice number: a label that names the document's own number, never an
//     order, customer or delivery number; two different numbers give none;
//   - issue date: the date after the number ("Nr. 471102 vom 05.03.2018"),
//     else a date label; numeric dates, and month names in the six languages;
//     slash dates month first only when the page or a USD currency says so;
//   - due date: a due-date label, not from payment terms that also grant a
//     cash discount (two dates for two amounts);
//   - amount: the amount payable, else the gross total, else a final total,
//     checked against what is printed of net, tax, gross and prepaid (net +
//     tax = gross, gross − prepaid = payable); a disagreement, a prepayment
//     without an amount payable, a tax total or a bare year give none;
//   - supplier: the block under a seller label, else a company name (ending
//     in a legal form) printed twice or above the supplier's VAT number, else
//     a letterhead with the address right under it; never a cell of a block
//     labelled as the buyer's or recipient's;
//   - bank details: an IBAN next to its label or the only one on the page,
//     the BIC printed with it; none when the page speaks of a direct debit.
//
// Images and PDFs without text (scans) end in ErrUnreadable: there is no OCR.
//
// XML elements are matched on namespace URI and local name, never on the
// prefix, so any prefix or a default namespace works. XML with a DTD is
// refused (no entity expansion can happen), and depth, element count, input
// size, embedded-file size, pages and glyphs are capped, so hostile input
// costs bounded work. FuzzRead checks that nothing panics.
//
// # EN 16931 business terms
//
//	Field               Term     UBL 2.1                                          CII D16B
//	InvoiceNumber       BT-1     cbc:ID                                           rsm:ExchangedDocument/ram:ID
//	IssueDate           BT-2     cbc:IssueDate (YYYY-MM-DD)                        ram:IssueDateTime/udt:DateTimeString (format 102)
//	DueDate             BT-9     cbc:DueDate, else cac:PaymentMeans/cbc:PaymentDueDate (CreditNote)
//	                                                                              ram:SpecifiedTradePaymentTerms/ram:DueDateDateTime
//	Currency            BT-5     cbc:DocumentCurrencyCode                          ram:InvoiceCurrencyCode
//	SupplierName        BT-27    cac:PartyLegalEntity/cbc:RegistrationName,        ram:SellerTradeParty/ram:Name
//	                             else cac:PartyName/cbc:Name (BT-28)
//	SupplierTaxID       BT-31    cac:PartyTaxScheme[TaxScheme/ID=VAT]/cbc:CompanyID ram:SpecifiedTaxRegistration/ram:ID[@schemeID=VA]
//	                    BT-32    any other PartyTaxScheme, when no VAT id           ram:ID[@schemeID=FC]
//	IBAN                BT-84    cac:PayeeFinancialAccount/cbc:ID when an IBAN     ram:PayeePartyCreditorFinancialAccount/ram:IBANID
//	                             whose check digits hold
//	AccountNumber       BT-84    the same, when it is not shaped like an IBAN      ram:ProprietaryID
//	BIC                 BT-86    cac:FinancialInstitutionBranch/cbc:ID when a     ram:PayeeSpecifiedCreditorFinancialInstitution/ram:BICID
//	                             valid BIC
//	SortCode, ABACode   BT-86    the same branch id when six digits (UK sort code) —
//	                             or nine digits with a good ABA check digit (US)
//	AccountHolderName   BT-85    cac:PayeeFinancialAccount/cbc:Name                ram:AccountName
//	AmountDue           BT-115   cac:LegalMonetaryTotal/cbc:PayableAmount          ram:DuePayableAmount
//	                             (BT-112 TaxInclusiveAmount / GrandTotalAmount stands in, with a warning, when BT-115 is missing)
//	RemittanceReference BT-83    cac:PaymentMeans/cbc:PaymentID                    ram:PaymentReference
//	CreditNote          BT-3     a CreditNote root, or a type code of a credit note (381, 261, 396, …),
//	                             or a negative amount due
//
// PaymentMeans comes from the UNTDID 4461 codes of the payment means
// (BT-81; means.go), else from the page's wording (PaymentMeansOfText). On
// a direct debit no payee bank field is kept, whatever the document
// carries: the account is the buyer's mandate (finish, in extract.go).
// Result.FromText lists the fields text rules filled.
//
// Bank details come from one payment means (BG-16): the first credit
// transfer whose account is a valid IBAN, else the first that has an
// account at all. An IBAN-shaped value whose check digits fail is dropped
// with a warning, never passed off as an account number.
//
// AmountDue is a decimal string at the currency's precision (money.Digits:
// "1234.50" EUR, "1235" JPY). More decimals than the currency has are
// rounded half up, with a warning; a credit note's amount stays positive.
//
// # Corpus and accuracy
//
// testdata/ holds sample files, each beside a hand-written golden
// <name>.json. TestCorpus compares every field, fails on any mismatch for a
// structured format (UBL, CII, Factur-X) and on text-rule accuracy below its
// floor, and logs a per-field accuracy table. To refresh testdata/ACCURACY.md
// from that table:
//
//	go test ./internal/bill/extract/ -run TestCorpus -update
//
// The PDF and PNG samples are produced by testdata/gen (go generate).
package extract

//go:generate go run ./testdata/gen
