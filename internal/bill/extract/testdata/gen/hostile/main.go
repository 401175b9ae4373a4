// Command hostile writes the hostile-document corpus (../../hostile/): small
// files that blow up, without bounds, into gigabytes of memory or endless
// loops in a PDF or XML reader. Each file is a few kilobytes; the README
// there names the shape of each. Run it from the package directory:
//
//	go run ./testdata/gen/hostile
//
// The output is byte-identical on every run.
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	dir := filepath.Join("testdata", "hostile")
	files := map[string][]byte{
		"content-8mib-string.pdf":         textPage(flate(repeatWrap("BT /F1 12 Tf 72 700 Td (", "A", 8<<20, ") Tj ET"))),
		"content-2m-tj.pdf":               textPage(flate(repeatWrap("BT /F1 12 Tf 72 700 Td ", "(a)Tj ", 2_000_000, "ET"))),
		"content-1m-glyphs.pdf":           textPage(flate(repeatWrap("BT /F1 12 Tf 72 700 Td ", "("+strings.Repeat("a", 1000)+")Tj\n", 1500, "ET"))),
		"content-operand-pileup.pdf":      textPage(flate(repeatWrap("BT ", "1 ", 3_000_000, "ET"))),
		"content-nested-flate.pdf":        nestedFlateContent(),
		"content-deep-arrays.pdf":         textPage(flate(repeatWrap("BT /F1 12 Tf ", "[", 1_000_000, "] TJ ET"))),
		"dict-deep-nesting.pdf":           deepDict(),
		"pagetree-self.pdf":               selfPageTree(),
		"pagetree-two-node-cycle.pdf":     twoNodeCycle(),
		"page-parent-cycle.pdf":           parentCycle(),
		"xref-prev-cycle.pdf":             prevCycle(),
		"xref-huge-subsection.pdf":        hugeSubsection(),
		"indirect-ref-cycle.pdf":          refCycle(),
		"embedded-nested-flate.pdf":       embeddedBomb(),
		"tounicode-huge.pdf":              cmapPage(hugeCMap(), 20, 1),
		"tf-many-cmap-font.pdf":           cmapPage(mediumCMap(), 100_000, 1000),
		"stream-predictor-columns.pdf":    pageWith(flate([]byte("BT ET")), "/Filter /FlateDecode /DecodeParms <</Predictor 12 /Columns 68719476736>>", helvetica),
		"xml-xxe.xml":                     []byte(xxe),
		"xml-billion-laughs.xml":          []byte(laughs),
		"xml-deep-nesting.xml":            []byte(strings.Repeat("<a>", 20_000) + strings.Repeat("</a>", 20_000)),
		"xml-embedded-billion-laughs.pdf": embeddedXML(laughs),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%-34s %7d bytes\n", name, len(b))
	}
}

// writer assembles a PDF from numbered objects with a classic xref table.
type writer struct {
	buf  bytes.Buffer
	offs []int
}

func newWriter() *writer {
	w := &writer{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return w
}

// obj writes object number len(offs)+1 and returns its number.
func (w *writer) obj(body string) int {
	w.offs = append(w.offs, w.buf.Len())
	n := len(w.offs)
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	return n
}

func (w *writer) stream(dict string, data []byte) int {
	w.offs = append(w.offs, w.buf.Len())
	n := len(w.offs)
	fmt.Fprintf(&w.buf, "%d 0 obj\n<<%s /Length %d>>\nstream\n", n, dict, len(data))
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
	return n
}

// finish writes the xref table and a trailer with the extra entries.
func (w *writer) finish(root int, extra string) []byte {
	x := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offs)+1)
	for _, o := range w.offs {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&w.buf, "trailer\n<</Size %d /Root %d 0 R%s>>\nstartxref\n%d\n%%%%EOF\n", len(w.offs)+1, root, extra, x)
	return w.buf.Bytes()
}

func flate(b []byte) []byte { return flateReader(bytes.NewReader(b)) }

func flateReader(r io.Reader) []byte {
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if _, err := io.Copy(zw, r); err != nil {
		log.Fatal(err)
	}
	zw.Close()
	return out.Bytes()
}

// repeated yields head, n copies of unit, then tail, without holding them.
func repeated(head, unit string, n int, tail string) io.Reader {
	rs := []io.Reader{strings.NewReader(head)}
	const chunk = 1 << 16
	block := strings.Repeat(unit, max(1, chunk/len(unit)))
	per := max(1, chunk/len(unit))
	for n > 0 {
		k := min(n, per)
		rs = append(rs, strings.NewReader(block[:k*len(unit)]))
		n -= k
	}
	rs = append(rs, strings.NewReader(tail))
	return io.MultiReader(rs...)
}

func repeatWrap(head, unit string, n int, tail string) []byte {
	b, _ := io.ReadAll(repeated(head, unit, n, tail))
	return b
}

const helvetica = "<</Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding>>"

// textPage is a one-page PDF whose page content is the given Flate stream.
func textPage(content []byte) []byte {
	return pageWith(content, "/Filter /FlateDecode", helvetica)
}

func pageWith(content []byte, filter, font string) []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources <</Font <</F1 5 0 R>>>> /Contents 4 0 R>>")
	w.stream(filter, content)
	w.obj(font)
	return w.finish(1, "")
}

// nestedFlateContent: a content stream under [/FlateDecode /FlateDecode]
// whose two inflations make a 1 GiB string operand from about 5 KB.
func nestedFlateContent() []byte {
	inner := flateReader(repeated("BT /F1 12 Tf (", "a", 1<<30, ") Tj ET"))
	return pageWith(flate(inner), "/Filter [/FlateDecode /FlateDecode]", helvetica)
}

// deepDict nests 20 000 dictionaries in the page dictionary.
func deepDict() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /X " + strings.Repeat("<</A ", 20_000) + strings.Repeat(">>", 20_000) +
		" /Resources <</Font <</F1 5 0 R>>>> /Contents 4 0 R>>")
	w.stream("", []byte("BT /F1 12 Tf 72 700 Td (Invoice 1) Tj ET"))
	w.obj(helvetica)
	return w.finish(1, "")
}

// selfPageTree: the root Pages node lists itself as its only kid.
func selfPageTree() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [2 0 R] /Count 1>>")
	return w.finish(1, "")
}

// twoNodeCycle: two Pages nodes, each the other's only kid.
func twoNodeCycle() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Pages /Parent 2 0 R /Kids [2 0 R] /Count 1>>")
	return w.finish(1, "")
}

// parentCycle: a page without Resources whose Parent is itself, so that
// looking up inherited resources climbs forever.
func parentCycle() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 3 0 R /Contents 4 0 R>>")
	w.stream("", []byte("BT /F1 12 Tf 72 700 Td (Invoice 1) Tj ET"))
	return w.finish(1, "")
}

// prevCycle: the trailer's /Prev points back at its own xref section.
func prevCycle() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [] /Count 0>>")
	x := w.buf.Len()
	return w.finish(1, fmt.Sprintf(" /Prev %d", x))
}

// hugeSubsection: an xref subsection that starts at object 2^31-2, which a
// reader that sizes its table by object number allocates for.
func hugeSubsection() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [] /Count 0>>")
	x := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 3\n0000000000 65535 f \n%010d 00000 n \n%010d 00000 n \n2147483646 1\n%010d 00000 n \n", w.offs[0], w.offs[1], w.offs[1])
	fmt.Fprintf(&w.buf, "trailer\n<</Size 3 /Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", x)
	return w.buf.Bytes()
}

// refCycle: objects that are nothing but references to each other, used as
// the page tree, the page contents and the font.
func refCycle() []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R 4 0 R] /Count 2>>")
	w.obj("<</Type /Page /Parent 2 0 R /Resources <</Font <</F1 6 0 R>>>> /Contents 5 0 R>>")
	w.obj("7 0 R")
	w.obj("6 0 R")
	w.obj("5 0 R")
	w.obj("4 0 R")
	return w.finish(1, "")
}

// embeddedBomb: a factur-x.xml attachment under [/FlateDecode /FlateDecode]
// that inflates to 512 MiB, on a page with a readable text layer.
func embeddedBomb() []byte {
	inner := flateReader(repeated("<a>", " ", 512<<20, "</a>"))
	return withAttachment(flate(inner), "/Filter [/FlateDecode /FlateDecode]")
}

func embeddedXML(x string) []byte { return withAttachment([]byte(x), "") }

func withAttachment(data []byte, filter string) []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R /Names <</EmbeddedFiles <</Names [(factur-x.xml) 6 0 R]>>>>>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources <</Font <</F1 5 0 R>>>> /Contents 4 0 R>>")
	w.stream("", []byte("BT /F1 12 Tf 72 700 Td (Invoice number: HX-1) Tj ET"))
	w.obj(helvetica)
	w.obj("<</Type /Filespec /F (factur-x.xml) /UF (factur-x.xml) /EF <</F 7 0 R>>>>")
	w.stream("/Type /EmbeddedFile "+filter, data)
	return w.finish(1, "")
}

// hugeCMap: a ToUnicode CMap of 2 million bfchar entries (28 MB inflated).
func hugeCMap() []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n")
	for i := 0; i < 20; i++ {
		b.WriteString("100000 beginbfchar\n")
		b.WriteString(strings.Repeat("<0041> <0041>\n", 100_000))
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap CMapName currentdict /CMap defineresource pop end end\n")
	return b.Bytes()
}

// mediumCMap: an ordinary-looking CMap of 2000 entries.
func mediumCMap() []byte {
	var b bytes.Buffer
	b.WriteString("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n1 begincodespacerange <0000> <FFFF> endcodespacerange\n")
	for i := 0; i < 20; i++ {
		b.WriteString("100 beginbfchar\n")
		for j := 0; j < 100; j++ {
			fmt.Fprintf(&b, "<%04X> <%04X>\n", i*100+j+32, i*100+j+32)
		}
		b.WriteString("endbfchar\n")
	}
	b.WriteString("endcmap CMapName currentdict /CMap defineresource pop end end\n")
	return b.Bytes()
}

// cmapPage: a Type0 font with the given ToUnicode CMap, and a content
// stream that selects it tfs times, showing glyphs in between.
func cmapPage(cmap []byte, tfs, shows int) []byte {
	w := newWriter()
	w.obj("<</Type /Catalog /Pages 2 0 R>>")
	w.obj("<</Type /Pages /Kids [3 0 R] /Count 1>>")
	w.obj("<</Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources <</Font <</F1 5 0 R>>>> /Contents 4 0 R>>")
	var c bytes.Buffer
	c.WriteString("BT 72 700 Td\n")
	for i := 0; i < tfs; i++ {
		c.WriteString("/F1 12 Tf\n")
		if i < shows {
			c.WriteString("<00410042> Tj\n")
		}
	}
	c.WriteString("ET")
	w.stream("/Filter /FlateDecode", flate(c.Bytes()))
	w.obj("<</Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H /DescendantFonts [] /ToUnicode 6 0 R>>")
	w.stream("/Filter /FlateDecode", flate(cmap))
	return w.finish(1, "")
}

const xxe = `<?xml version="1.0"?>
<!DOCTYPE Invoice [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cbc:ID>&xxe;</cbc:ID></Invoice>
`

const laughs = `<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol5 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
 <!ENTITY lol6 "&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;&lol5;">
 <!ENTITY lol7 "&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;&lol6;">
 <!ENTITY lol8 "&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;&lol7;">
 <!ENTITY lol9 "&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;&lol8;">
]>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
 xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
 <cbc:ID>&lol9;</cbc:ID></Invoice>
`
