package extract

import (
	"bytes"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/ledongthuc/pdf"
)

// Bounds on reading a PDF's text layer. github.com/ledongthuc/pdf builds
// whole pages, walks page trees and parent chains, and parses a font's CMap
// on every font change without limit, so only its low-level pieces are used
// here (the object reader, Value, Interpret) and every loop over the
// document is counted. A document that reaches a bound is unreadable: its
// text would be partial, and a partial text can give wrong fields.
const (
	// maxReadBytes + maxReadFactor × the file size bounds the bytes read
	// from the file by the object reader, re-reads included: it has no
	// object cache, so a cycle in the xref /Prev chain or object-stream
	// /Extends chain, or a page that makes it resolve the same objects again
	// and again, shows up as reading. The 82 real and sample invoices read
	// at most 123 KiB, 8.5 times their size (small files: it reads 4 KiB at
	// a time).
	maxReadBytes  = 4 << 20
	maxReadFactor = 16
	// maxObjects bounds object numbers in cross-reference sections: the
	// reader sizes its table by the largest number it sees.
	maxObjects = 1 << 20
	// maxContentBytes bounds a page's decoded content. A real invoice page
	// is tens of KiB; the bound keeps the interpreter's operand stack (about
	// 40 bytes per operand) small.
	maxContentBytes = 2 << 20
	// maxContentParts bounds the streams of one page's Contents array.
	maxContentParts = 1024
	// maxOps bounds content operators interpreted over all pages.
	maxOps = 500_000
	// maxGSDepth bounds q nesting (PDF's own implementation limit is 28).
	maxGSDepth = 256
	// maxCMapBytes bounds a decoded ToUnicode CMap; subset fonts carry a
	// few KiB.
	maxCMapBytes = 512 << 10
	// maxDifferences bounds a font's Encoding /Differences array, which the
	// library scans once per byte of text (256 codes need at most 512).
	maxDifferences = 1024
	// maxDecodeWork bounds the work of mapping codes to text: the library's
	// CMap lookup scans every entry for every code.
	maxDecodeWork = 200_000_000
	// maxTreeNodes and maxTreeDepth bound the walk of the page tree.
	maxTreeNodes = 10_000
	maxTreeDepth = 32
	// maxColumns bounds a Flate predictor's /Columns, by which the library
	// allocates a row buffer.
	maxColumns = 1 << 20
	// maxFonts bounds the distinct fonts prepared on one page.
	maxFonts = 256
)

// limitExceeded is the panic value by which a spent budget unwinds out of
// the library (whose callbacks and readers have no error path); readPDFText
// recovers it and answers ErrUnreadable.
type limitExceeded struct{ what string }

func (l limitExceeded) Error() string { return "PDF exceeds the bound on " + l.what }

func exceed(what string) { panic(limitExceeded{what}) }

// budgetReader counts the bytes the object reader takes from the file.
type budgetReader struct {
	r    *bytes.Reader
	left int64
}

func (b *budgetReader) ReadAt(p []byte, off int64) (int, error) {
	b.left -= int64(len(p))
	if b.left < 0 {
		exceed("bytes read")
	}
	return b.r.ReadAt(p, off)
}

var (
	// Any "xref" followed by white space, wherever it stands: the reader
	// goes to the offset startxref names, whatever precedes it on the line
	// ("startxref" itself is followed by an offset, which the table scan
	// does not take for a subsection).
	reXrefHead   = regexp.MustCompile(`xref[ \t\r\n\f\x00%]`)
	reXrefOffset = regexp.MustCompile(`(?:startxref|/Prev)\s+(\d{1,12})`)
	reXRefType   = regexp.MustCompile(`/Type\s*/XRef\b`)
	reColumns    = regexp.MustCompile(`/Columns\s+(\d+)`)
	reSize       = regexp.MustCompile(`/Size\s+(\d+)`)
	reIndex      = regexp.MustCompile(`/Index\s*\[([\d\s]*)\]`)
	reW          = regexp.MustCompile(`/W\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s*\]`)
)

// checkXref refuses cross-reference data that would make the object
// reader allocate by an attacker's number before reading anything: it sizes
// its table by the largest object number of a classic xref subsection, by
// an xref stream's /Size and /Index, and row buffers by /W and by a
// predictor's /Columns (anywhere in the file). The scan is
// over the raw file and conservative: every dictionary that says
// /Type /XRef (from the "obj" before it to the "stream" after it) and every
// "xref" table is checked.
func checkXref(data []byte) error {
	big := func(s string) bool {
		n, err := strconv.ParseInt(s, 10, 64)
		return err != nil || n > maxObjects
	}
	for _, loc := range reXRefType.FindAllIndex(data, -1) {
		from := bytes.LastIndex(data[:loc[0]], []byte("obj"))
		to := bytes.Index(data[loc[1]:], []byte("stream"))
		if from < 0 || to < 0 {
			continue
		}
		d := data[from : loc[1]+to]
		for _, m := range reSize.FindAllSubmatch(d, -1) {
			if big(string(m[1])) {
				return limitExceeded{"object numbers"}
			}
		}
		for _, m := range reIndex.FindAllSubmatch(d, -1) {
			f := strings.Fields(string(m[1]))
			for i := 0; i+1 < len(f); i += 2 {
				if big(f[i]) || big(f[i+1]) || mustInt(f[i])+mustInt(f[i+1]) > maxObjects {
					return limitExceeded{"object numbers"}
				}
			}
		}
		for _, m := range reW.FindAllSubmatch(d, -1) {
			for _, w := range m[1:] {
				if n, err := strconv.Atoi(string(w)); err != nil || n > 1<<16 {
					return limitExceeded{"xref stream fields"}
				}
			}
		}
	}
	for _, m := range reColumns.FindAllSubmatch(data, -1) {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err != nil || n > maxColumns {
			return limitExceeded{"predictor columns"}
		}
	}
	// The "xref" ending a "startxref" keyword heads a table only when an
	// offset (a startxref's or a /Prev's) points at it: its offset after it
	// is no subsection, and files over 1 MiB have offsets beyond
	// maxObjects.
	named := map[int64]bool{}
	for _, m := range reXrefOffset.FindAllSubmatch(data, -1) {
		if n, err := strconv.ParseInt(string(m[1]), 10, 64); err == nil {
			named[n] = true
		}
	}
	for _, loc := range reXrefHead.FindAllIndex(data, -1) {
		if loc[0] >= 5 && string(data[loc[0]-5:loc[0]]) == "start" && !named[int64(loc[0])] {
			continue
		}
		if err := checkXrefTable(data[loc[1]:]); err != nil {
			return err
		}
	}
	return nil
}

func mustInt(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// checkXrefTable reads the subsection headers ("first count") of one
// classic xref table, skipping its entries, up to the trailer.
func checkXrefTable(b []byte) error {
	next := func() string {
		i := 0
		for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n' || b[i] == '\f' || b[i] == 0 || b[i] == '%') {
			if b[i] == '%' { // a comment runs to the end of its line
				for i < len(b) && b[i] != '\r' && b[i] != '\n' {
					i++
				}
				continue
			}
			i++
		}
		j := i
		for j < len(b) && !(b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n' || b[j] == '\f' || b[j] == 0) {
			j++
		}
		tok := string(b[i:j])
		b = b[j:]
		return tok
	}
	for len(b) > 0 {
		tok := next()
		if tok == "trailer" || tok == "" {
			return nil
		}
		first, err1 := strconv.ParseInt(tok, 10, 64)
		count, err2 := strconv.ParseInt(next(), 10, 64)
		if err1 != nil || err2 != nil {
			return nil // not a table this scan understands; the reader judges it
		}
		if first < 0 || count < 0 || first > maxObjects || count > maxObjects || first+count > maxObjects {
			return limitExceeded{"object numbers"}
		}
		for i := int64(0); i < 3*count && len(b) > 0; i++ {
			next()
		}
	}
	return nil
}

// pageTree returns up to n leaf pages of the document in order. It walks the
// tree itself, bounded in depth and nodes, with cycle detection: the Value
// API exposes no object identity, but an array's String form prints each
// indirect element as "id gen R", so a Kids array of references names the
// object of every kid. A Pages node reached again by the same reference is
// a cycle. Any cycle must pass through a reference (direct objects nest
// strictly inside their container), so keying the references finds every
// cycle that the node bound does not cut first.
func pageTree(r *pdf.Reader, n int) []pdf.Value {
	root := r.Trailer().Key("Root")
	node := root.Key("Pages")
	if node.Key("Type").Name() != "Pages" {
		return nil
	}
	seen := map[string]bool{}
	if m := reRootPages.FindStringSubmatch(root.String()); m != nil {
		seen[m[1]] = true
	}
	var pages []pdf.Value
	steps := 0
	var walk func(node pdf.Value, depth int)
	walk = func(node pdf.Value, depth int) {
		if depth > maxTreeDepth {
			exceed("page tree depth")
		}
		kids := node.Key("Kids")
		ids := refIDs(kids)
		for i := 0; i < kids.Len() && len(pages) < n; i++ {
			if steps++; steps > maxTreeNodes {
				exceed("page tree nodes")
			}
			kid := kids.Index(i)
			switch kid.Key("Type").Name() {
			case "Pages":
				if ids != nil {
					if seen[ids[i]] {
						exceed("page tree (it has a cycle)")
					}
					seen[ids[i]] = true
				}
				walk(kid, depth+1)
			case "Page":
				pages = append(pages, kid)
			}
		}
	}
	walk(node, 0)
	return pages
}

var reRootPages = regexp.MustCompile(`/Pages (\d+ \d+) R`)

// refIDs returns "id gen" of every element of an array made only of
// indirect references, else nil.
func refIDs(arr pdf.Value) []string {
	s := arr.String()
	if len(s) < 2 || s[0] != '[' || s[len(s)-1] != ']' {
		return nil
	}
	f := strings.Fields(s[1 : len(s)-1])
	if len(f) != 3*arr.Len() {
		return nil
	}
	ids := make([]string, arr.Len())
	for i := range ids {
		if f[3*i+2] != "R" {
			return nil
		}
		ids[i] = f[3*i] + " " + f[3*i+1]
	}
	return ids
}

// inherited looks key up in the page and its ancestors, at most
// maxTreeDepth of them (a Parent chain can be a cycle).
func inherited(page pdf.Value, key string) pdf.Value {
	v := page
	for i := 0; i <= maxTreeDepth && !v.IsNull(); i++ {
		if r := v.Key(key); !r.IsNull() {
			return r
		}
		v = v.Key("Parent")
	}
	return pdf.Value{}
}

// streamSize returns the decoded size of a stream, reading at most limit+1
// bytes of it; a decoding error ends the count as it ends the reading.
func streamSize(s pdf.Value, limit int64) int64 {
	// The library allocates a PNG predictor's row by /Columns.
	parms := s.Key("DecodeParms")
	for i := -1; i < parms.Len(); i++ {
		p := parms
		if i >= 0 {
			p = parms.Index(i)
		}
		if p.Key("Columns").Int64() > maxColumns {
			exceed("predictor columns")
		}
	}
	var scan lexScan
	n, _ := io.Copy(&scan, io.LimitReader(s.Reader(), limit+1))
	if scan.openHex() {
		exceed("unterminated hex string")
	}
	return n
}

// lexScan follows a content stream's strings and comments as the
// library's lexer will, to find a hex string left open at the end: the
// lexer reads the end of its input as endless white space and so never
// leaves such a string. Literal strings and comments stop at the end.
type lexScan struct {
	state lexState
	depth int  // of parentheses in a literal string
	esc   bool // the previous byte of a literal string was a backslash
}

type lexState byte

const (
	lexCode    lexState = iota
	lexComment          // % to the end of the line
	lexLiteral          // ( … )
	lexAngle            // after <: a dictionary's << or a hex string
	lexHex              // < … >
)

func (l *lexScan) Write(p []byte) (int, error) {
	for _, c := range p {
		switch l.state {
		case lexCode:
			switch c {
			case '%':
				l.state = lexComment
			case '(':
				l.state, l.depth, l.esc = lexLiteral, 1, false
			case '<':
				l.state = lexAngle
			}
		case lexComment:
			if c == '\r' || c == '\n' {
				l.state = lexCode
			}
		case lexLiteral:
			switch {
			case l.esc:
				l.esc = false
			case c == '\\':
				l.esc = true
			case c == '(':
				l.depth++
			case c == ')':
				if l.depth--; l.depth == 0 {
					l.state = lexCode
				}
			}
		case lexAngle:
			if c == '<' || c == '>' {
				l.state = lexCode
			} else {
				l.state = lexHex
			}
		case lexHex:
			if c == '>' {
				l.state = lexCode
			}
		}
	}
	return len(p), nil
}

func (l *lexScan) openHex() bool { return l.state == lexAngle || l.state == lexHex }

// textState is the interpreter's budget over one document.
type textState struct {
	ops, glyphs int
	work        int64
}

// font is a page font prepared once per page: the library's Font.Encoder
// parses the CMap on each call of a fresh Font, which Page.Content makes on
// every Tf.
type font struct {
	base        string
	enc         pdf.TextEncoding
	cost        int64 // work per code byte decoded
	first, last int
	widths      []float64
	// A composite (Type0) font takes two bytes per code, and its widths
	// come from the descendant font's /W array (default /DW).
	twoByte bool
	dw      float64
	cidW    map[int]float64
}

func (f *font) width(code int) float64 {
	if f == nil {
		return 0
	}
	if f.twoByte {
		if w, ok := f.cidW[code]; ok {
			return w
		}
		return f.dw
	}
	if code < f.first || code > f.last || code-f.first >= len(f.widths) {
		return 0
	}
	return f.widths[code-f.first]
}

// maxCIDWidths bounds the entries read from a composite font's /W array.
const maxCIDWidths = 1 << 16

func prepareFont(v pdf.Value) *font {
	f := &font{base: v.Key("BaseFont").Name(), cost: 1}
	if i := strings.Index(f.base, "+"); i >= 0 {
		f.base = f.base[i+1:]
	}
	enc := v.Key("Encoding")
	switch enc.Kind() {
	case pdf.Dict:
		d := enc.Key("Differences").Len()
		if d > maxDifferences {
			exceed("font encoding differences")
		}
		f.cost += int64(d)
	case pdf.Null, pdf.Name:
		if enc.Kind() == pdf.Null || enc.Name() == "Identity-H" {
			if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
				n := streamSize(tu, maxCMapBytes)
				if n > maxCMapBytes {
					exceed("ToUnicode CMap size")
				}
				// The CMap lookup scans its entries (about 16 bytes each)
				// for every code.
				f.cost += n / 16
			}
		}
	}
	lib := pdf.Font{V: v}
	f.enc = lib.Encoder()
	if v.Key("Subtype").Name() == "Type0" && enc.Kind() == pdf.Name && (enc.Name() == "Identity-H" || enc.Name() == "Identity-V") {
		f.twoByte = true
		f.cidWidths(v.Key("DescendantFonts").Index(0))
		return f
	}
	f.first, f.last = int(v.Key("FirstChar").Int64()), int(v.Key("LastChar").Int64())
	// Codes of a simple font are single bytes, so at most 256 widths matter.
	if ws := v.Key("Widths"); f.last >= f.first && f.first <= 255 {
		for i := 0; i < ws.Len() && i <= min(f.last, 255)-f.first; i++ {
			f.widths = append(f.widths, ws.Index(i).Float64())
		}
	}
	return f
}

// cidWidths reads a CIDFont's /DW and /W (ISO 32000-1, 9.7.4.3): entries
// "c [w1 w2 …]" and "cfirst clast w", at most maxCIDWidths widths.
func (f *font) cidWidths(cf pdf.Value) {
	f.dw = 1000
	if dw := cf.Key("DW"); dw.Kind() == pdf.Integer || dw.Kind() == pdf.Real {
		f.dw = dw.Float64()
	}
	f.cidW = map[int]float64{}
	w := cf.Key("W")
	n := w.Len()
	if n > maxCIDWidths {
		exceed("font widths")
	}
	for i := 0; i+1 < n; {
		c := int(w.Index(i).Int64())
		if next := w.Index(i + 1); next.Kind() == pdf.Array {
			for j := 0; j < next.Len(); j++ {
				if len(f.cidW) >= maxCIDWidths {
					exceed("font widths")
				}
				f.cidW[c+j] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= n {
			break
		}
		last, wd := int(w.Index(i+1).Int64()), w.Index(i+2).Float64()
		if last-c > maxCIDWidths || last < c {
			exceed("font widths")
		}
		for k := c; k <= last; k++ {
			if len(f.cidW) >= maxCIDWidths {
				exceed("font widths")
			}
			f.cidW[k] = wd
		}
		i += 3
	}
}

type matrix [3][3]float64

var ident = matrix{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}

func (x matrix) mul(y matrix) matrix {
	var z matrix
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				z[i][j] += x[i][k] * y[k][j]
			}
		}
	}
	return z
}

type gstate struct {
	Tc, Tw, Th, Tl, Tfs, Trise float64
	Tf                         *font
	Tm, Tlm, CTM               matrix
}

// Bounds on form XObjects (content drawn by "Do"), which some generators
// put a whole page's text in.
const (
	maxFormDepth = 8  // forms drawn inside forms
	maxFormCalls = 64 // forms drawn on one page
)

// pageText interprets the page's content as ledongthuc/pdf's Page.Content
// does (the same glyphs, positions and widths) and, beyond it, the content
// of the form XObjects the page draws, composite fonts' two-byte codes and
// their widths, and word spacing. It counts operators, glyphs, forms and
// decoding work against st as it goes, and measures the decoded content of
// the page and of every form drawn (together at most maxContentBytes)
// before interpreting it.
func (st *textState) pageText(page pdf.Value) []pdf.Text {
	p := &pageRun{st: st, left: maxContentBytes}
	p.run(page.Key("Contents"), inherited(page, "Resources"), gstate{Th: 1, CTM: ident}, 0)
	return p.text
}

// pageRun is the state of interpreting one page.
type pageRun struct {
	st    *textState
	text  []pdf.Text
	left  int64 // content bytes still allowed on the page
	forms int
	fonts int
}

// measure charges the decoded size of contents (a stream or an array of
// them) to the page's budget.
func (p *pageRun) measure(contents pdf.Value) bool {
	switch contents.Kind() {
	case pdf.Stream:
		if p.left -= streamSize(contents, p.left); p.left < 0 {
			exceed("page content size")
		}
	case pdf.Array:
		if contents.Len() > maxContentParts {
			exceed("page content streams")
		}
		for i := 0; i < contents.Len(); i++ {
			if p.left -= streamSize(contents.Index(i), p.left); p.left < 0 {
				exceed("page content size")
			}
		}
	default:
		return false
	}
	return true
}

func (p *pageRun) run(contents, resources pdf.Value, g gstate, depth int) {
	st := p.st
	if !p.measure(contents) {
		return
	}
	fontDict := resources.Key("Font")
	fonts := map[string]*font{}
	var gstack []gstate
	// emit places the characters one code decodes to (usually one, a
	// ligature several, an unmapped code none) and advances the text
	// matrix by the code's width; the width goes to the first character.
	emit := func(code int, decoded string, oneByte bool) {
		var w0 float64
		base := ""
		if g.Tf != nil {
			w0, base = g.Tf.width(code), g.Tf.base
		}
		w := w0
		for _, ch := range decoded {
			if st.glyphs++; st.glyphs > maxGlyphs {
				exceed("glyphs")
			}
			Trm := matrix{{g.Tfs * g.Th, 0, 0}, {0, g.Tfs, 0}, {0, g.Trise, 1}}.mul(g.Tm).mul(g.CTM)
			p.text = append(p.text, pdf.Text{Font: base, FontSize: Trm[0][0], X: Trm[2][0], Y: Trm[2][1], W: w / 1000 * Trm[0][0], S: string(ch)})
			w = 0
		}
		tx := w0/1000*g.Tfs + g.Tc
		if oneByte && code == ' ' {
			tx += g.Tw
		}
		g.Tm = matrix{{1, 0, 0}, {0, 1, 0}, {tx * g.Th, 0, 1}}.mul(g.Tm)
	}
	showText := func(s string) {
		if g.Tf == nil || g.Tf.enc == nil {
			for i := 0; i < len(s); i++ {
				emit(int(s[i]), string(rune(s[i])), true)
			}
			return
		}
		if st.work += int64(len(s)) * g.Tf.cost; st.work > maxDecodeWork {
			exceed("text decoding work")
		}
		step := 1
		if g.Tf.twoByte {
			step = 2
		}
		for i := 0; i+step <= len(s); i += step {
			code := int(s[i])
			if step == 2 {
				code = code<<8 | int(s[i+1])
			}
			emit(code, g.Tf.enc.Decode(s[i:i+step]), step == 1)
		}
	}
	var args []pdf.Value
	pdf.Interpret(contents, func(stk *pdf.Stack, op string) {
		if st.ops++; st.ops > maxOps {
			exceed("content operators")
		}
		args = args[:0]
		for stk.Len() > 0 {
			args = append(args, stk.Pop())
		}
		for i, j := 0, len(args)-1; i < j; i, j = i+1, j-1 {
			args[i], args[j] = args[j], args[i]
		}
		// The panics below on malformed operators are Page.Content's: they
		// drop the page, as before.
		switch op {
		case "cm":
			if len(args) != 6 {
				panic("bad cm")
			}
			var m matrix
			for i := 0; i < 6; i++ {
				m[i/2][i%2] = args[i].Float64()
			}
			m[2][2] = 1
			g.CTM = m.mul(g.CTM)
		case "q":
			if len(gstack) >= maxGSDepth {
				exceed("graphics state nesting")
			}
			gstack = append(gstack, g)
		case "Q":
			n := len(gstack) - 1
			g = gstack[n]
			gstack = gstack[:n]
		case "BT":
			g.Tm = ident
			g.Tlm = g.Tm
		case "T*":
			x := matrix{{1, 0, 0}, {0, 1, 0}, {0, -g.Tl, 1}}
			g.Tlm = x.mul(g.Tlm)
			g.Tm = g.Tlm
		case "Tc":
			if len(args) != 1 {
				panic("bad Tc")
			}
			g.Tc = args[0].Float64()
		case "TD", "Td":
			if len(args) != 2 {
				panic("bad Td")
			}
			if op == "TD" {
				g.Tl = -args[1].Float64()
			}
			x := matrix{{1, 0, 0}, {0, 1, 0}, {args[0].Float64(), args[1].Float64(), 1}}
			g.Tlm = x.mul(g.Tlm)
			g.Tm = g.Tlm
		case "Tf":
			if len(args) != 2 {
				panic("bad Tf")
			}
			name := args[0].Name()
			f, ok := fonts[name]
			if !ok {
				if p.fonts++; p.fonts > maxFonts {
					exceed("fonts")
				}
				f = prepareFont(fontDict.Key(name))
				fonts[name] = f
			}
			g.Tf = f
			g.Tfs = args[1].Float64()
		case "\"", "'", "Tj":
			if op == "\"" {
				if len(args) != 3 {
					panic("bad \" operator")
				}
				g.Tw = args[0].Float64()
				g.Tc = args[1].Float64()
				args = args[2:]
			}
			if op != "Tj" {
				if len(args) != 1 {
					panic("bad ' operator")
				}
				x := matrix{{1, 0, 0}, {0, 1, 0}, {0, -g.Tl, 1}}
				g.Tlm = x.mul(g.Tlm)
				g.Tm = g.Tlm
			}
			if len(args) != 1 {
				panic("bad Tj operator")
			}
			showText(args[0].RawString())
		case "TJ":
			v := args[0]
			for i := 0; i < v.Len(); i++ {
				x := v.Index(i)
				if x.Kind() == pdf.String {
					showText(x.RawString())
				} else {
					tx := -x.Float64() / 1000 * g.Tfs * g.Th
					g.Tm = matrix{{1, 0, 0}, {0, 1, 0}, {tx, 0, 1}}.mul(g.Tm)
				}
			}
		case "TL":
			if len(args) != 1 {
				panic("bad TL")
			}
			g.Tl = args[0].Float64()
		case "Tm":
			if len(args) != 6 {
				panic("bad Tm")
			}
			var m matrix
			for i := 0; i < 6; i++ {
				m[i/2][i%2] = args[i].Float64()
			}
			m[2][2] = 1
			g.Tm = m
			g.Tlm = m
		case "Ts":
			if len(args) != 1 {
				panic("bad Ts")
			}
			g.Trise = args[0].Float64()
		case "Tw":
			if len(args) != 1 {
				panic("bad Tw")
			}
			g.Tw = args[0].Float64()
		case "Tz":
			if len(args) != 1 {
				panic("bad Tz")
			}
			g.Th = args[0].Float64() / 100
		case "Tr", "re":
			// Rendering mode and rectangles: not used for text layout,
			// but Page.Content checks their operands.
			if op == "Tr" && len(args) != 1 || op == "re" && len(args) != 4 {
				panic("bad " + op)
			}
		case "Do":
			// A form XObject is content of its own, drawn with the
			// current state under its /Matrix, with its own resources
			// (else the caller's).
			if len(args) != 1 || depth >= maxFormDepth {
				return
			}
			xo := resources.Key("XObject").Key(args[0].Name())
			if xo.Kind() != pdf.Stream || xo.Key("Subtype").Name() != "Form" {
				return
			}
			if p.forms++; p.forms > maxFormCalls {
				exceed("forms drawn")
			}
			fg := g
			if m := xo.Key("Matrix"); m.Len() == 6 {
				var fm matrix
				for i := 0; i < 6; i++ {
					fm[i/2][i%2] = m.Index(i).Float64()
				}
				fm[2][2] = 1
				fg.CTM = fm.mul(g.CTM)
			}
			res := xo.Key("Resources")
			if res.Kind() != pdf.Dict {
				res = resources
			}
			p.run(xo, res, fg, depth+1)
		}
	})
}

// pdfLines returns the text of the first maxPages pages as lines of cells.
// A page that the library fails on contributes nothing rather than failing
// the file, as before; a spent budget fails the file.
func pdfLines(data []byte) (lines []line, err error) {
	if err := checkXref(data); err != nil {
		return nil, unreadable("%v", err)
	}
	defer func() {
		if r := recover(); r != nil {
			if l, ok := r.(limitExceeded); ok {
				lines, err = nil, unreadable("%v", l)
				return
			}
			panic(r)
		}
	}()
	br := &budgetReader{r: bytes.NewReader(data), left: maxReadBytes + maxReadFactor*int64(len(data))}
	r, err := pdf.NewReader(br, int64(len(data)))
	if err != nil {
		if l, ok := err.(limitExceeded); ok {
			return nil, unreadable("%v", l)
		}
		return nil, unreadable("PDF: %v", err)
	}
	var pages []pdf.Value
	libraryCall(func() {
		// The page count bounds the pages read, as Reader.NumPage did.
		n := int(min(r.Trailer().Key("Root").Key("Pages").Key("Count").Int64(), maxPages))
		if n > 0 {
			pages = pageTree(r, n)
		}
	})
	st := &textState{}
	for i, p := range pages {
		var glyphs []pdf.Text
		libraryCall(func() { glyphs = st.pageText(p) })
		lines = append(lines, layoutLines(glyphs, i+1)...)
	}
	return lines, nil
}

// libraryCall runs f, turning a panic of the PDF library on a malformed
// file into nothing, but letting a spent budget through.
func libraryCall(f func()) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(limitExceeded); ok {
				panic(r)
			}
		}
	}()
	f()
}
