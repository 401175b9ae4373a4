package extract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Formats a Result can report.
const (
	FormatUBL      = "ubl"      // UBL 2.1 Invoice or CreditNote XML
	FormatCII      = "cii"      // UN/CEFACT CrossIndustryInvoice XML
	FormatFacturX  = "facturx"  // PDF carrying a CII attachment (Factur-X, ZUGFeRD 2, XRechnung)
	FormatZUGFeRD1 = "zugferd1" // PDF carrying a ZUGFeRD 1.0 CrossIndustryDocument, or that XML alone
	FormatPDFText  = "pdf_text" // PDF read from its text layer by the rules in text.go
)

// MaxInputSize is the largest input Read looks at. It matches the upload limit
// of the files API (20 MiB), so nothing a user can upload is refused for size
// alone, and it bounds the work done on hostile input.
const MaxInputSize = 20 << 20

// ErrUnreadable is wrapped by every error Read returns: the input is an image,
// a PDF without a text layer, an XML document that is not an invoice, garbage,
// or yielded no invoice field at all. The bill job answers it by setting
// extraction_failed_at and leaving the fields to the user.
var ErrUnreadable = errors.New("extract: unreadable invoice")

func unreadable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUnreadable, fmt.Sprintf(format, args...))
}

// Result is what Read found in one file.
type Result struct {
	// Format is one of the Format constants.
	Format string `json:"format"`
	// Profile is the CII/Factur-X guideline (BT-24), such as
	// "urn:factur-x.eu:1p0:minimum", or the UBL CustomizationID; empty when the
	// document names none or has no structured data.
	Profile string `json:"profile,omitempty"`
	Fields  Fields `json:"fields"`
	// FromText names, by their JSON names in Fields, the fields text rules
	// filled (sorted, no duplicates): a person should check them. A
	// structured document completed from its page lists what the page gave.
	FromText []string `json:"from_text,omitempty"`
	// Conflicts names, by their JSON names in Fields, the fields of a PDF's
	// embedded XML that the page surely prints otherwise (sorted): they are
	// left empty, with a warning giving both values, for a person to fill
	// from the document (reconcile, in reconcile.go).
	Conflicts []string `json:"conflicts,omitempty"`
	// Warnings are short sentences about what was read but not taken, or taken
	// after a correction (rounding, a failed check digit, an unknown currency).
	Warnings []string `json:"warnings,omitempty"`
}

// Fields are the bill fields Read fills. An empty string or a zero Date means
// "not found". See the package documentation for the EN 16931 terms behind
// each field.
type Fields struct {
	InvoiceNumber string `json:"invoice_number,omitempty"` // BT-1
	IssueDate     Date   `json:"issue_date,omitzero"`      // BT-2
	DueDate       Date   `json:"due_date,omitzero"`        // BT-9
	Currency      string `json:"currency,omitempty"`       // BT-5
	SupplierName  string `json:"supplier_name,omitempty"`  // BT-27
	SupplierTaxID string `json:"supplier_tax_id,omitempty"`
	// Bank details of the payee, from the first usable payment means (BG-16).
	IBAN              string `json:"iban,omitempty"`
	AccountNumber     string `json:"account_number,omitempty"`
	SortCode          string `json:"sort_code,omitempty"` // six digits, no dashes
	ABACode           string `json:"aba_code,omitempty"`  // US routing number, check digit verified
	BIC               string `json:"bic,omitempty"`
	AccountHolderName string `json:"account_holder_name,omitempty"` // BT-85
	// AmountDue is the amount due for payment (BT-115) as a decimal string at
	// the currency's precision ("1234.50", "1000" for JPY). It is never
	// negative: a credit note's amount is kept positive and CreditNote is set.
	AmountDue           string `json:"amount_due,omitempty"`
	RemittanceReference string `json:"remittance_reference,omitempty"` // BT-83
	CreditNote          bool   `json:"credit_note,omitempty"`
	// PaymentMeans is one of the Means constants, "" when the document does
	// not say (BT-81 codes, or the page's wording on the text path). On a
	// direct debit the payee bank fields stay empty: see finish.
	PaymentMeans string `json:"payment_means,omitempty"`
}

// empty reports whether no field was found.
func (f Fields) empty() bool { return f == Fields{} }

// Date is a civil date (no time, no zone), as the bill's issue_date and
// due_date are. The zero Date means "absent".
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// String formats d as YYYY-MM-DD, or "" for the zero Date.
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// MarshalText writes YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads YYYY-MM-DD; an empty text gives the zero Date.
func (d *Date) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*d = Date{}
		return nil
	}
	v, ok := isoDate(string(b))
	if !ok {
		return fmt.Errorf("extract: %q is not a YYYY-MM-DD date", b)
	}
	*d = v
	return nil
}

// makeDate returns the Date when y-m-d is a real calendar date in a plausible
// range for an invoice (years 1900–2199), so "31.02.2026" or "00000000" from a
// hostile or sloppy file are refused instead of normalised by time.Date.
func makeDate(y, m, d int) (Date, bool) {
	if y < 1900 || y > 2199 || m < 1 || m > 12 || d < 1 || d > 31 {
		return Date{}, false
	}
	t := time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC)
	if t.Day() != d || int(t.Month()) != m {
		return Date{}, false
	}
	return Date{y, time.Month(m), d}, true
}

// Read extracts the bill fields from a file's bytes. It sniffs the type from
// the content, never from a name: a PDF (with an embedded Factur-X / ZUGFeRD /
// XRechnung CII XML, else its text layer), a UBL 2.1 Invoice or CreditNote, or
// a CII CrossIndustryInvoice. Every error wraps ErrUnreadable. Read never
// panics: the PDF libraries, which do panic on some malformed files, are
// called behind recover (only there, so that FuzzRead still finds panics in
// this package's own code); it stops at MaxInputSize and at depth and count
// limits in XML and PDF.
func Read(data []byte) (res Result, err error) {
	if len(data) > MaxInputSize {
		return Result{}, unreadable("file larger than %d bytes", MaxInputSize)
	}
	switch kind := sniff(data); kind {
	case kindPDF:
		res, err = readPDF(data)
	case kindXML:
		res, err = readXML(data)
	case kindImage:
		return Result{}, unreadable("image without a text layer (no OCR)")
	default:
		return Result{}, unreadable("not a PDF or XML invoice")
	}
	if err != nil {
		return Result{}, err
	}
	finish(&res)
	if res.Fields.empty() {
		return Result{}, unreadable("no invoice field found (%s)", res.Format)
	}
	return res, nil
}

type kind int

const (
	kindUnknown kind = iota
	kindPDF
	kindXML
	kindImage
)

// sniff decides the type from magic bytes. A PDF header may follow some junk
// (ISO 32000-1, 7.5.2: readers accept it within the first 1024 bytes, and mail
// gateways do prepend bytes), so it is searched for there.
func sniff(b []byte) kind {
	head := b[:min(len(b), 1024)]
	if bytes.Contains(head, []byte("%PDF-")) {
		return kindPDF
	}
	for _, magic := range [][]byte{
		[]byte("\x89PNG\r\n\x1a\n"), []byte("\xff\xd8\xff"), []byte("GIF87a"), []byte("GIF89a"),
		[]byte("II*\x00"), []byte("MM\x00*"), []byte("BM"),
	} {
		if bytes.HasPrefix(b, magic) {
			return kindImage
		}
	}
	if len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP" {
		return kindImage
	}
	if len(b) >= 12 && string(b[4:8]) == "ftyp" { // HEIC/AVIF from phones
		return kindImage
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")), " \t\r\n")
	if len(t) > 0 && t[0] == '<' {
		return kindXML
	}
	return kindUnknown
}

// warnings collects Result.Warnings without duplicates.
type warnings []string

func (w *warnings) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	for _, x := range *w {
		if x == s {
			return
		}
	}
	*w = append(*w, s)
}

// filled lists the JSON names of the fields f fills.
func (f Fields) filled() []string {
	b, _ := json.Marshal(f)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// payeeBankFields are the JSON names of the payee's bank fields.
var payeeBankFields = []string{"iban", "bic", "account_number", "sort_code", "aba_code", "account_holder_name"}

// finish applies what holds whatever path read the document: on a direct
// debit the supplier collects the money from the buyer's account, so any
// account the document carries (the buyer's mandate, printed for
// information) is not one to pay into and every payee bank field is
// cleared; FromText is sorted and without duplicates.
func finish(res *Result) {
	f := &res.Fields
	if f.PaymentMeans == MeansDirectDebit {
		if f.IBAN != "" || f.BIC != "" || f.AccountNumber != "" || f.SortCode != "" || f.ABACode != "" || f.AccountHolderName != "" {
			res.Warnings = append(res.Warnings, "direct debit: the account on the document is the buyer's mandate; no payee bank details taken")
		}
		f.IBAN, f.BIC, f.AccountNumber, f.SortCode, f.ABACode, f.AccountHolderName = "", "", "", "", "", ""
		res.FromText = slices.DeleteFunc(res.FromText, func(n string) bool { return slices.Contains(payeeBankFields, n) })
	}
	if res.Format == FormatPDFText {
		// Every field of a document read from its page came from text rules.
		res.FromText = append(res.FromText, f.filled()...)
	}
	slices.Sort(res.Conflicts)
	if len(res.FromText) > 0 {
		slices.Sort(res.FromText)
		res.FromText = slices.Compact(res.FromText)
	} else {
		res.FromText = nil
	}
}
