package extract

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/pdfcpu/pdfcpu/pkg/filter"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/types"
)

// Limits on PDF input.
const (
	maxAttachment  = 5 << 20 // decoded bytes of one embedded XML
	maxAttachments = 20      // embedded files looked at
	maxPages       = 6       // pages whose text is read: invoice facts sit on the first ones
	maxGlyphs      = 200_000 // glyphs kept over all pages
)

func init() {
	// pdfcpu otherwise writes a config.yml into the user's config directory
	// on first use; a server library must not touch the file system. This is
	// what pdfcpu's api.DisableConfigDir does; that package is not imported
	// because its dependencies (go-runewidth) spend tens of milliseconds
	// building tables at start-up, a third of the server's.
	model.ConfigPath = "disable"
}

// pdfcpuLimits bound pdfcpu's reading of the file (it decodes every object
// stream and xref stream while reading) to what an invoice needs.
var pdfcpuLimits = model.ResourceLimits{
	MaxStreamBytes:       MaxInputSize,
	MaxDecodeBytes:       8 << 20,
	MaxImagePixels:       50 << 20,
	MaxImageBytes:        64 << 20,
	MaxObjectCount:       maxObjects,
	MaxObjectStreamCount: 1 << 16,
	MaxObjectStreamFirst: 1 << 20,
	MaxXRefEntries:       maxObjects,
	MaxRecursionDepth:    100,
}

// facturxNames are the attachment names the Factur-X 1.0, ZUGFeRD 2.x and
// XRechnung specifications prescribe for the invoice XML, in the order they
// are preferred when a file carries several.
var facturxNames = []string{"factur-x.xml", "zugferd-invoice.xml", "xrechnung.xml"}

// readPDF reads the embedded e-invoice when there is one, else the text layer.
func readPDF(data []byte) (Result, error) {
	var w warnings
	xmlRes, xmlErr := readPDFAttachment(data)
	if xmlErr == nil {
		// The visible page of a MINIMUM or BASIC WL Factur-X often shows the
		// bank details and due date that its XML leaves out; complete the
		// result from the text layer, field by field, saying so.
		// The same text pass checks the XML against the page: a field the
		// page surely prints otherwise is left empty (reconcile).
		if txt, err := readPDFText(data); err == nil {
			complete(&xmlRes, txt.Fields, reconcile(&xmlRes, txt.Fields))
		}
		return xmlRes, nil
	}
	if !errors.Is(xmlErr, errNoAttachment) {
		w.add("embedded invoice XML ignored: %v", xmlErr)
	}
	res, err := readPDFText(data)
	if err != nil {
		return Result{}, err
	}
	res.Warnings = append(w, res.Warnings...)
	return res, nil
}

// complete fills the due date and, when the XML has no account at all, the
// bank details of r from text-layer fields t; never a field in conflicts,
// which the XML and the page give differently.
func complete(r *Result, t Fields, conflicts map[string]bool) {
	f := &r.Fields
	var taken []string
	if f.DueDate.IsZero() && !t.DueDate.IsZero() && !conflicts["due_date"] {
		f.DueDate = t.DueDate
		taken = append(taken, "due date")
		r.FromText = append(r.FromText, "due_date")
	}
	// A direct debit takes no payee account, from the XML or the page.
	if f.IBAN == "" && f.AccountNumber == "" && !conflicts["iban"] && (t.IBAN != "" || t.AccountNumber != "") && f.PaymentMeans != MeansDirectDebit && t.PaymentMeans != MeansDirectDebit {
		f.IBAN, f.AccountNumber, f.SortCode, f.ABACode = t.IBAN, t.AccountNumber, t.SortCode, t.ABACode
		r.FromText = append(r.FromText, nonEmpty(map[string]string{"iban": t.IBAN, "account_number": t.AccountNumber, "sort_code": t.SortCode, "aba_code": t.ABACode})...)
		if f.BIC == "" && t.BIC != "" {
			f.BIC = t.BIC
			r.FromText = append(r.FromText, "bic")
		}
		taken = append(taken, "bank details")
	}
	if f.RemittanceReference == "" && t.RemittanceReference != "" && !conflicts["remittance_reference"] {
		f.RemittanceReference = t.RemittanceReference
		taken = append(taken, "payment reference")
		r.FromText = append(r.FromText, "remittance_reference")
	}
	if f.PaymentMeans == "" && t.PaymentMeans != "" {
		f.PaymentMeans = t.PaymentMeans
		r.FromText = append(r.FromText, "payment_means")
	}
	if len(taken) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s not in the embedded XML; read from the PDF text", strings.Join(taken, ", ")))
	}
}

var errNoAttachment = errors.New("no embedded invoice XML")

// readPDFAttachment finds the Factur-X / ZUGFeRD / XRechnung XML among the
// PDF's embedded files and reads it.
func readPDFAttachment(data []byte) (Result, error) {
	files := pdfAttachments(data)
	// Prescribed names first, then any other XML attachment.
	var ordered []embedded
	for _, want := range facturxNames {
		for _, f := range files {
			if f.name == want {
				ordered = append(ordered, f)
			}
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f.name, ".xml") && !containsName(facturxNames, f.name) {
			ordered = append(ordered, f)
		}
	}
	if len(ordered) == 0 {
		return Result{}, errNoAttachment
	}
	var firstErr error
	for _, f := range ordered {
		b, err := f.data()
		if err != nil {
			firstErr = cmpOr(firstErr, fmt.Errorf("%s: %v", f.name, err))
			continue
		}
		root, err := parseXML(b)
		if err != nil {
			firstErr = cmpOr(firstErr, fmt.Errorf("%s: %v", f.name, err))
			continue
		}
		res, err := readInvoiceTree(root)
		if err != nil {
			firstErr = cmpOr(firstErr, fmt.Errorf("%s: not an invoice", f.name))
			continue
		}
		if res.Format != FormatZUGFeRD1 {
			res.Format = FormatFacturX
		}
		return res, nil
	}
	return Result{}, firstErr
}

// fileSpec reads a file specification dictionary (ISO 32000-1, 7.11.3): its
// name from UF or F, its data from the EF/F stream.
func fileSpec(xt *model.XRefTable, o types.Object) (embedded, bool) {
	d, err := xt.DereferenceDict(o)
	if err != nil || d == nil {
		return embedded{}, false
	}
	fname := ""
	for _, key := range []string{"UF", "F"} {
		if v, ok := d.Find(key); ok {
			if s, err := xt.DereferenceStringOrHexLiteral(v, model.V10, nil); err == nil && s != "" {
				fname = s
				break
			}
		}
	}
	ef, err := xt.DereferenceDict(d["EF"])
	if err != nil || ef == nil {
		return embedded{}, false
	}
	f, ok := ef.Find("F")
	if !ok {
		return embedded{}, false
	}
	sd, _, err := xt.DereferenceStreamDict(f)
	if err != nil || sd == nil {
		return embedded{}, false
	}
	return embedded{
		name: strings.ToLower(path.Base(strings.ReplaceAll(fname, `\`, "/"))),
		data: func() (b []byte, err error) {
			defer func() {
				if r := recover(); r != nil {
					b, err = nil, fmt.Errorf("decoding failed (%v)", r)
				}
			}()
			return decodeStream(sd)
		},
	}, true
}

// embedded is one embedded file: its lower-cased base name and a way to
// decode it.
type embedded struct {
	name string
	data func() ([]byte, error)
}

// pdfAttachments lists the PDF's embedded files. Reading or walking the name
// tree of a hostile file can panic, which here means "no attachments".
func pdfAttachments(data []byte) (files []embedded) {
	defer func() {
		if recover() != nil {
			files = nil
		}
	}()
	conf := model.NewDefaultConfiguration()
	conf.ValidationMode = model.ValidationRelaxed
	conf.Limits = pdfcpuLimits
	ctx, err := pdfcpu.Read(bytes.NewReader(data), conf)
	if err != nil {
		return nil
	}
	xt := ctx.XRefTable
	cat, err := xt.Catalog()
	if err != nil || cat == nil {
		return nil
	}
	names, err := xt.DereferenceDict(cat["Names"])
	if err != nil || names == nil {
		return nil
	}
	// The EmbeddedFiles name tree is walked here rather than through
	// pdfcpu's Node, which is only populated by a full validation pass.
	var walk func(o types.Object, depth int)
	walk = func(o types.Object, depth int) {
		if depth > 16 || len(files) >= maxAttachments {
			return
		}
		n, err := xt.DereferenceDict(o)
		if err != nil || n == nil {
			return
		}
		if kids, err := xt.DereferenceArray(n["Kids"]); err == nil {
			for _, k := range kids {
				walk(k, depth+1)
			}
		}
		arr, err := xt.DereferenceArray(n["Names"])
		if err != nil {
			return
		}
		for i := 0; i+1 < len(arr) && len(files) < maxAttachments; i += 2 {
			if f, ok := fileSpec(xt, arr[i+1]); ok {
				files = append(files, f)
			}
		}
	}
	walk(names["EmbeddedFiles"], 0)
	return files
}

// nonEmpty lists the keys of m whose values are not empty.
func nonEmpty(m map[string]string) []string {
	var out []string
	for k, v := range m {
		if v != "" {
			out = append(out, k)
		}
	}
	return out
}

func containsName(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// maxFilters bounds the length of an embedded file's filter chain.
const maxFilters = 4

var errTooLarge = errors.New("embedded file too large")

// capReader fails, rather than truncates, once more than left bytes come
// through: every stage of a filter chain sits behind one, so that no stage
// (a Flate inside a Flate is a 1000×1000 bomb) can produce more than an
// invoice could need.
type capReader struct {
	r    io.Reader
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left < 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if c.left -= int64(n); c.left < 0 {
		return n, errTooLarge
	}
	return n, err
}

// decodeStream returns the decoded bytes of an embedded file stream, at most
// maxAttachment of them. The filter chain is decoded here, stage by stage,
// each stage's output bounded by maxAttachment as it is produced: Flate
// through compress/zlib, streaming; the other general filters through
// pdfcpu's filter package, given the same limit. Image and crypt filters
// are refused: an invoice XML does not use them. pdfcpu's StreamDict.Decode
// is not used: its limit is 512 MiB per stage.
func decodeStream(sd *types.StreamDict) ([]byte, error) {
	if len(sd.FilterPipeline) > maxFilters {
		return nil, fmt.Errorf("%d filters on an embedded file", len(sd.FilterPipeline))
	}
	var r io.Reader = &capReader{r: bytes.NewReader(sd.Raw), left: maxAttachment}
	for _, f := range sd.FilterPipeline {
		switch {
		case f.Name == filter.Flate && f.DecodeParms == nil:
			zr, err := zlib.NewReader(r)
			if err != nil {
				return nil, err
			}
			r = zr
		case f.Name == filter.Flate || f.Name == filter.LZW || f.Name == filter.ASCII85 ||
			f.Name == filter.ASCIIHex || f.Name == filter.RunLength:
			fi, err := filter.NewFilter(f.Name, filterParms(f.DecodeParms), maxAttachment)
			if err != nil {
				return nil, err
			}
			if r, err = fi.Decode(r); err != nil {
				if errors.Is(err, errTooLarge) || errors.Is(err, filter.ErrDecodeLimitExceeded) {
					return nil, errTooLarge
				}
				return nil, err
			}
		default:
			return nil, fmt.Errorf("filter %s not supported on an embedded file", f.Name)
		}
		r = &capReader{r: r, left: maxAttachment}
	}
	b, err := io.ReadAll(r)
	if errors.Is(err, errTooLarge) {
		return nil, errTooLarge
	}
	if err != nil && len(b) == 0 {
		return nil, err
	}
	return b, nil
}

// filterParms converts a DecodeParms dictionary as pdfcpu's filters take it:
// integers, and booleans as 0 or 1.
func filterParms(d types.Dict) map[string]int {
	m := map[string]int{}
	for k, v := range d {
		switch v := v.(type) {
		case types.Integer:
			m[k] = v.Value()
		case types.Boolean:
			m[k] = 0
			if v.Value() {
				m[k] = 1
			}
		}
	}
	return m
}

// readPDFText reads the text layer and applies the text rules. A PDF whose
// pages carry no text (a scan) is unreadable: there is no OCR here.
func readPDFText(data []byte) (Result, error) {
	lines, err := pdfLines(data)
	if err != nil {
		return Result{}, err
	}
	if len(lines) == 0 {
		return Result{}, unreadable("PDF without a text layer (scanned?)")
	}
	res := readText(lines)
	if res.Fields.PaymentMeans == "" {
		page := make([]string, len(lines))
		for i, l := range lines {
			page[i] = l.String()
		}
		if m := PaymentMeansOfText(strings.Join(page, "\n")); m != "" {
			res.Fields.PaymentMeans = m
			res.FromText = append(res.FromText, "payment_means")
		}
	}
	return res, nil
}
