package extract_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// ubl builds a minimal UBL invoice around the payable amount and extra
// elements, to test one rule at a time.
func ubl(currency, payable, extra string) []byte {
	return []byte(`<?xml version="1.0"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cac="urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cbc:ID>T-1</cbc:ID><cbc:IssueDate>2026-01-31</cbc:IssueDate>
 <cbc:DocumentCurrencyCode>` + currency + `</cbc:DocumentCurrencyCode>` + extra + `
 <cac:LegalMonetaryTotal><cbc:PayableAmount currencyID="` + currency + `">` + payable + `</cbc:PayableAmount></cac:LegalMonetaryTotal>
</Invoice>`)
}

func TestAmountPrecision(t *testing.T) {
	for _, c := range []struct {
		cur, in, want string
		credit, warn  bool
	}{
		{"EUR", "1234.5", "1234.50", false, false},
		{"EUR", "1234", "1234.00", false, false},
		{"EUR", "0001234.500000", "1234.50", false, false}, // trailing zeros are not a rounding
		{"EUR", "99.995", "100.00", false, true},
		{"EUR", "10.004", "10.00", false, true},
		{"JPY", "1234", "1234", false, false},
		{"JPY", "1234.5", "1235", false, true},
		{"KWD", "12.3456", "12.346", false, true},
		{"EUR", "-50.00", "50.00", true, true},
		{"EUR", "+7.1", "7.10", false, false},
		{"EUR", ".5", "0.50", false, false},
		{"EUR", "-0.00", "0.00", false, false},
	} {
		res, err := extract.Read(ubl(c.cur, c.in, ""))
		if err != nil {
			t.Fatalf("%s %s: %v", c.cur, c.in, err)
		}
		if res.Fields.AmountDue != c.want || res.Fields.CreditNote != c.credit {
			t.Errorf("%s %s: amount %q credit %v, want %q %v", c.cur, c.in, res.Fields.AmountDue, res.Fields.CreditNote, c.want, c.credit)
		}
		if got := len(res.Warnings) > 0; got != c.warn {
			t.Errorf("%s %s: warnings %q, want some: %v", c.cur, c.in, res.Warnings, c.warn)
		}
	}
	for _, bad := range []string{"1,234.50", "12.3.4", "1e3", "", "abc", "1234567890123456.00"} {
		res, err := extract.Read(ubl("EUR", bad, ""))
		if err != nil {
			t.Fatal(err)
		}
		if res.Fields.AmountDue != "" {
			t.Errorf("%q: amount %q taken", bad, res.Fields.AmountDue)
		}
	}
}

func TestUnknownCurrency(t *testing.T) {
	res, err := extract.Read(ubl("XYZ", "10.5", ""))
	if err != nil {
		t.Fatal(err)
	}
	if res.Fields.Currency != "" || res.Fields.AmountDue != "10.50" || len(res.Warnings) == 0 {
		t.Errorf("got %+v %q", res.Fields, res.Warnings)
	}
}

func TestBankIdentifiers(t *testing.T) {
	means := func(code, id, branch string) string {
		return `<cac:PaymentMeans><cbc:PaymentMeansCode>` + code + `</cbc:PaymentMeansCode><cac:PayeeFinancialAccount><cbc:ID>` + id +
			`</cbc:ID><cac:FinancialInstitutionBranch><cbc:ID>` + branch + `</cbc:ID></cac:FinancialInstitutionBranch></cac:PayeeFinancialAccount></cac:PaymentMeans>`
	}
	for _, c := range []struct {
		name, extra                string
		iban, acct, sort, aba, bic string
	}{
		{"valid IBAN and BIC", means("58", "de89 3704 0044 0532 0130 00", "COBADEFFXXX"), "DE89370400440532013000", "", "", "", "COBADEFFXXX"},
		{"bad IBAN dropped", means("58", "DE89370400440532013001", "COBADEFF"), "", "", "", "", "COBADEFF"},
		{"bad BIC dropped", means("30", "GB29NWBK60161331926819", "NWBKXX2L"), "GB29NWBK60161331926819", "", "", "", ""},
		{"sort code", means("30", "12345678", "40-11-62"), "", "12345678", "401162", "", ""},
		{"ABA ok", means("30", "000123456789", "021000021"), "", "000123456789", "", "021000021", ""},
		{"ABA bad check digit", means("30", "000123456789", "021000022"), "", "000123456789", "", "", ""},
		{"first valid IBAN wins over earlier account", means("30", "12345678", "") + means("30", "BE68539007547034", ""), "BE68539007547034", "", "", "", ""},
		{"direct debit first, then transfer", means("59", "", "") + means("30", "NL91ABNA0417164300", "ABNANL2A"), "NL91ABNA0417164300", "", "", "", "ABNANL2A"},
	} {
		res, err := extract.Read(ubl("EUR", "1", c.extra))
		if err != nil {
			t.Fatal(err)
		}
		f := res.Fields
		if f.IBAN != c.iban || f.AccountNumber != c.acct || f.SortCode != c.sort || f.ABACode != c.aba || f.BIC != c.bic {
			t.Errorf("%s: got iban %q acct %q sort %q aba %q bic %q (warnings %q)", c.name, f.IBAN, f.AccountNumber, f.SortCode, f.ABACode, f.BIC, res.Warnings)
		}
	}
}

func TestDates(t *testing.T) {
	for _, c := range []struct {
		in       string
		dayFirst bool
		want     string
	}{
		{"2026-01-31", true, "2026-01-31"},
		{"31.01.2026", true, "2026-01-31"},
		{"31/01/2026", true, "2026-01-31"},
		{"01/31/2026", true, "2026-01-31"}, // 31 cannot be a month
		{"02/03/2026", false, "2026-02-03"},
		{"02/03/2026", true, "2026-03-02"},
		{"January 31, 2026", false, "2026-01-31"},
		{"Jan. 31st, 2026", false, "2026-01-31"},
		{"31 January 2026", true, "2026-01-31"},
		{"31. Januar 2026", true, "2026-01-31"},
		{"4 février 2026", true, "2026-02-04"},
		{"1er mars 2026", true, "2026-03-01"},
		{"12 maart 2026", true, "2026-03-12"},
		{"31.02.2026", true, ""},
		{"due on receipt", true, ""},
	} {
		d, ok := extract.FindDate(c.in, c.dayFirst)
		if got := d.String(); got != c.want || ok != (c.want != "") {
			t.Errorf("FindDate(%q, %v) = %q, %v; want %q", c.in, c.dayFirst, got, ok, c.want)
		}
	}
}

func TestTextAmounts(t *testing.T) {
	for _, c := range []struct{ in, raw, cur string }{
		{"£1,578.00", "1578.00", "GBP"},
		{"1.234,56 €", "1234.56", "EUR"},
		{"1 234,56 €", "1234.56", "EUR"},
		{"EUR 2.400,00", "2400.00", "EUR"},
		{"CHF 1'250.50", "1250.50", "CHF"},
		{"$12,450.00", "12450.00", "USD"},
		{"1,234", "1234", ""},
		{"€1.234", "1234", "EUR"},
		{"12.345 Fr.", "12345", "CHF"},
		{"1234.567 KWD", "1234.567", "KWD"},
		{"19 % 190,00 €", "190.00", "EUR"},
		{"(240.00)", "-240.00", ""},
		{"1234.5 USD", "1234.5", "USD"},
	} {
		raw, cur, ok := extract.LastAmount(c.in)
		if !ok || raw != c.raw || cur != c.cur {
			t.Errorf("LastAmount(%q) = %q %q %v; want %q %q", c.in, raw, cur, ok, c.raw, c.cur)
		}
	}
}

func TestUnreadable(t *testing.T) {
	deep := strings.Repeat("<a>", 100_000) + strings.Repeat("</a>", 100_000)
	laughs := `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>&lol2;</ID></Invoice>`
	huge := `<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2" a="` + strings.Repeat("x", 4<<20) + `"/>`
	wide := "<r>" + strings.Repeat("<b/>", 210_000) + "</r>"
	for name, data := range map[string][]byte{
		"empty":          nil,
		"garbage":        []byte("\x00\x01\x02hello"),
		"html":           []byte("<html><body>Invoice</body></html>"),
		"deep":           []byte(deep),
		"billion laughs": []byte(laughs),
		"huge attribute": []byte(huge),
		"many elements":  []byte(wide),
		"zugferd 1":      []byte(`<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>`),
		"empty invoice":  []byte(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`),
		"jpeg":           []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"),
		"pdf header":     []byte("%PDF-1.7\n"),
		"too large":      make([]byte, extract.MaxInputSize+1),
	} {
		start := time.Now()
		_, err := extract.Read(data)
		if !errors.Is(err, extract.ErrUnreadable) {
			t.Errorf("%s: err = %v, want ErrUnreadable", name, err)
		}
		if d := time.Since(start); d > 10*time.Second { // generous: -race and a busy CI; blow-ups take minutes
			t.Errorf("%s: took %v", name, d)
		}
	}
}

// TestTruncatedPDFs cuts every corpus PDF at several points: the readers
// must fail cleanly or read what is there, never panic or hang.
func TestTruncatedPDFs(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.pdf")
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []int{10, 33, 50, 75, 90, 99} {
			cut := data[:len(data)*frac/100]
			res, err := extract.Read(cut)
			if err != nil && !errors.Is(err, extract.ErrUnreadable) {
				t.Errorf("%s cut at %d%%: %v", f, frac, err)
			}
			_ = res
		}
		// Flipped bytes in the middle of the file.
		bad := bytes.Clone(data)
		for i := len(bad) / 3; i < len(bad)/3+40 && i < len(bad); i++ {
			bad[i] ^= 0x5a
		}
		if _, err := extract.Read(bad); err != nil && !errors.Is(err, extract.ErrUnreadable) {
			t.Errorf("%s corrupted: %v", f, err)
		}
	}
}

func TestDateJSON(t *testing.T) {
	d := extract.Date{Year: 2026, Month: time.January, Day: 5}
	b, _ := d.MarshalText()
	var back extract.Date
	if err := back.UnmarshalText(b); err != nil || back != d || string(b) != "2026-01-05" {
		t.Errorf("round trip %q → %v %v", b, back, err)
	}
	if err := back.UnmarshalText([]byte("2026-13-01")); err == nil {
		t.Error("month 13 accepted")
	}
	if fmt.Sprint(extract.Date{}) != "" {
		t.Error("zero date prints")
	}
}

func FuzzRead(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.*")
	for _, name := range files {
		if strings.HasSuffix(name, ".json") || strings.HasSuffix(name, ".md") {
			continue
		}
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`))
	f.Add([]byte("%PDF-1.4\n1 0 obj<</Type/Catalog>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := extract.Read(data)
		if err != nil {
			if !errors.Is(err, extract.ErrUnreadable) {
				t.Fatalf("error does not wrap ErrUnreadable: %v", err)
			}
			return
		}
		if res.Fields == (extract.Fields{}) {
			t.Fatal("success without a field")
		}
		if a := res.Fields.AmountDue; strings.HasPrefix(a, "-") {
			t.Fatalf("negative amount %q", a)
		}
	})
}

// TestAttachmentBomb embeds a highly compressible 6 MiB "factur-x.xml": it
// must be refused at the size cap, with the text layer read instead.
func TestAttachmentBomb(t *testing.T) {
	base, err := os.ReadFile("testdata/text-gb-invoice.pdf")
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := api.ReadContext(bytes.NewReader(base), model.NewDefaultConfiguration())
	if err != nil {
		t.Fatal(err)
	}
	bomb := "<a>" + strings.Repeat(" ", 6<<20) + "</a>"
	if err := ctx.AddAttachment(model.Attachment{Reader: strings.NewReader(bomb), ID: "factur-x.xml", FileName: "factur-x.xml"}, false); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := api.WriteContext(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 1<<20 {
		t.Fatalf("attachment not compressed (%d bytes); the test needs a flate stream", out.Len())
	}
	res, err := extract.Read(out.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != extract.FormatPDFText || !containsSub(res.Warnings, "too large") {
		t.Errorf("format %q warnings %q", res.Format, res.Warnings)
	}
	if res.Fields.InvoiceNumber != "HLP-10231" {
		t.Errorf("text layer not read: %+v", res.Fields)
	}
}
