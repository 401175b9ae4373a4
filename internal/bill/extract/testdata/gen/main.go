// Command gen writes the PDF and PNG files of the extract corpus
// (../*.pdf, ../*.png) from the layouts below and the Factur-X XML beside
// this file. The XML and UBL/CII samples and every golden .json are written
// by hand; only binary files come from here, so that the corpus can be
// reviewed as text. Run it from the package directory:
//
//	go generate ./internal/bill/extract/   (or: go run ./testdata/gen)
//
// The PDFs are deliberately plain (standard Type 1 fonts with WinAnsi
// encoding, one page) but vary the text operators real generators use: Tm
// per run, Td moves within one text object, and TJ arrays with kerning.
// The text and scan PDFs and the PNG come out byte-identical on every run;
// the Factur-X PDFs do not, because pdfcpu stamps the write time and a new
// file ID into them (their content does not change).
package main

import (
	"bytes"
	"compress/zlib"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/font"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"
	"golang.org/x/text/encoding/charmap"
)

// item is one run of text at a position (points from the bottom left).
type item struct {
	x, y float64
	size float64
	bold bool
	s    string
}

// mode selects the text operators written.
type mode int

const (
	modeTm mode = iota // BT /F1 10 Tf 1 0 0 1 x y Tm (…) Tj ET per item
	modeTd             // one BT … ET with relative Td moves
	modeTJ             // Tm per item, text as a TJ array split at spaces with kerning
)

func t(x, y float64, s string) item { return item{x, y, 10, false, s} }
func b(x, y float64, s string) item { return item{x, y, 10, true, s} }
func sz(x, y, size float64, bold bool, s string) item {
	return item{x, y, size, bold, s}
}

func main() {
	api.DisableConfigDir()
	out := ".."
	if _, err := os.Stat("testdata/gen"); err == nil {
		out = "testdata" // run from the package directory
	}
	src := filepath.Join(out, "gen")

	write(out, "text-gb-invoice.pdf", textPDF(modeTm, ukInvoice()))
	write(out, "text-de-rechnung.pdf", textPDF(modeTm, deRechnung()))
	write(out, "text-fr-facture.pdf", textPDF(modeTd, frFacture()))
	write(out, "text-us-invoice.pdf", textPDF(modeTJ, usInvoice()))
	write(out, "text-nl-factuur.pdf", textPDF(modeTd, nlFactuur()))
	write(out, "text-gb-creditnote.pdf", textPDF(modeTJ, ukCreditNote()))
	write(out, "text-es-factura.pdf", textPDF(modeTm, esFactura()))
	write(out, "text-ch-rechnung.pdf", textPDF(modeTd, chRechnung()))
	write(out, "text-gb-studio.pdf", textPDF(modeTJ, gbStudio()))

	write(out, "facturx-minimum-fr.pdf", facturX(textPDF(modeTm, fxMinimumPage()), filepath.Join(src, "facturx-minimum-fr.xml"), "factur-x.xml"))
	write(out, "facturx-basic-de.pdf", facturX(textPDF(modeTd, fxBasicPage()), filepath.Join(src, "facturx-basic-de.xml"), "zugferd-invoice.xml"))
	write(out, "facturx-en16931-at.pdf", facturX(textPDF(modeTJ, fxEN16931Page()), filepath.Join(src, "facturx-en16931-at.xml"), "factur-x.xml"))

	write(out, "unreadable-scan.pdf", scanPDF())
	write(out, "unreadable-photo.png", photoPNG())
}

func write(dir, name string, b []byte) {
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Println("wrote", name)
}

// ---------------------------------------------------------------------------
// Minimal PDF writer

type pdfWriter struct {
	buf     bytes.Buffer
	offsets []int
}

func (w *pdfWriter) obj(body string) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n%s\nendobj\n", n, body)
	return n
}

func (w *pdfWriter) stream(dict string, data []byte) int {
	w.offsets = append(w.offsets, w.buf.Len())
	n := len(w.offsets)
	fmt.Fprintf(&w.buf, "%d 0 obj\n<<%s /Length %d>>\nstream\n", n, dict, len(data))
	w.buf.Write(data)
	w.buf.WriteString("\nendstream\nendobj\n")
	return n
}

func (w *pdfWriter) finish(root int) []byte {
	xref := w.buf.Len()
	fmt.Fprintf(&w.buf, "xref\n0 %d\n0000000000 65535 f \n", len(w.offsets)+1)
	for _, o := range w.offsets {
		fmt.Fprintf(&w.buf, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&w.buf, "trailer\n<</Size %d /Root %d 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(w.offsets)+1, root, xref)
	return w.buf.Bytes()
}

func deflate(b []byte) []byte {
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestCompression)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// fontObj writes a simple Type 1 font with its widths, so text extractors
// can place every glyph.
func fontObj(w *pdfWriter, base string) int {
	var widths []string
	dec := charmap.Windows1252.NewDecoder()
	for c := 32; c <= 255; c++ {
		r, err := dec.Bytes([]byte{byte(c)})
		wd := 0
		if err == nil {
			rr := []rune(string(r))
			if len(rr) == 1 {
				wd, _ = font.CharWidth(base, rr[0])
			}
		}
		widths = append(widths, fmt.Sprint(wd))
	}
	return w.obj(fmt.Sprintf("<</Type /Font /Subtype /Type1 /BaseFont /%s /Encoding /WinAnsiEncoding /FirstChar 32 /LastChar 255 /Widths [%s]>>", base, strings.Join(widths, " ")))
}

func pdfString(s string) string {
	enc, err := charmap.Windows1252.NewEncoder().String(s)
	if err != nil {
		log.Fatalf("%q: %v", s, err)
	}
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return "(" + r.Replace(enc) + ")"
}

func content(m mode, items []item) []byte {
	var c strings.Builder
	fontRef := func(it item) string {
		if it.bold {
			return "/F2"
		}
		return "/F1"
	}
	switch m {
	case modeTd:
		c.WriteString("BT\n")
		var px, py float64
		for _, it := range items {
			fmt.Fprintf(&c, "%s %g Tf\n%g %g Td\n%s Tj\n", fontRef(it), it.size, it.x-px, it.y-py, pdfString(it.s))
			px, py = it.x, it.y
		}
		c.WriteString("ET\n")
	default:
		for _, it := range items {
			fmt.Fprintf(&c, "BT %s %g Tf 1 0 0 1 %g %g Tm ", fontRef(it), it.size, it.x, it.y)
			if m == modeTJ {
				words := strings.Split(it.s, " ")
				var parts []string
				for i, wd := range words {
					if i < len(words)-1 {
						wd += " "
					}
					parts = append(parts, pdfString(wd))
				}
				fmt.Fprintf(&c, "[%s] TJ ET\n", strings.Join(parts, " -12 "))
			} else {
				fmt.Fprintf(&c, "%s Tj ET\n", pdfString(it.s))
			}
		}
	}
	// A rule under the header, as invoices have: graphics must not disturb
	// text extraction.
	c.WriteString("0.5 w 40 600 m 555 600 l S\n")
	return []byte(c.String())
}

func textPDF(m mode, items []item) []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	f1 := fontObj(w, "Helvetica")
	f2 := fontObj(w, "Helvetica-Bold")
	cs := w.stream(" /Filter /FlateDecode", deflate(content(m, items)))
	pagesNum := len(w.offsets) + 2
	page := w.obj(fmt.Sprintf("<</Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources <</Font <</F1 %d 0 R /F2 %d 0 R>>>> /Contents %d 0 R>>", pagesNum, f1, f2, cs))
	pages := w.obj(fmt.Sprintf("<</Type /Pages /Kids [%d 0 R] /Count 1>>", page))
	info := w.obj("<</Producer (strongroom extract corpus generator) /CreationDate (D:20260301120000Z)>>")
	_ = info
	root := w.obj(fmt.Sprintf("<</Type /Catalog /Pages %d 0 R>>", pages))
	return w.finish(root)
}

// scanPDF is what a scanner produces: one page holding only an image.
func scanPDF() []byte {
	w := &pdfWriter{}
	w.buf.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	const iw, ih = 60, 80
	px := make([]byte, iw*ih)
	for y := 0; y < ih; y++ {
		for x := 0; x < iw; x++ {
			v := byte(245)
			if y%8 == 3 && x > 6 && x < 54-(y*7)%20 { // lines of "print"
				v = 40
			}
			px[y*iw+x] = v
		}
	}
	img := w.stream(fmt.Sprintf(" /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", iw, ih), deflate(px))
	cs := w.stream(" /Filter /FlateDecode", deflate([]byte("q 595 0 0 842 0 0 cm /Im1 Do Q\n")))
	pagesNum := len(w.offsets) + 2
	page := w.obj(fmt.Sprintf("<</Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources <</XObject <</Im1 %d 0 R>>>> /Contents %d 0 R>>", pagesNum, img, cs))
	pages := w.obj(fmt.Sprintf("<</Type /Pages /Kids [%d 0 R] /Count 1>>", page))
	root := w.obj(fmt.Sprintf("<</Type /Catalog /Pages %d 0 R>>", pages))
	return w.finish(root)
}

// photoPNG is a small greyscale "photo of a receipt".
func photoPNG() []byte {
	img := image.NewGray(image.Rect(0, 0, 48, 64))
	for y := 0; y < 64; y++ {
		for x := 0; x < 48; x++ {
			v := uint8(230)
			if y%6 == 2 && x > 4 && x < 44-(y*5)%16 {
				v = 30
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

// facturX attaches the XML file to the PDF under the name the profile
// prescribes, as a Factur-X writer does (without the PDF/A-3 XMP metadata,
// which readers do not need).
func facturX(pdf []byte, xmlPath, name string) []byte {
	x, err := os.ReadFile(xmlPath)
	if err != nil {
		log.Fatal(err)
	}
	conf := model.NewDefaultConfiguration()
	ctx, err := api.ReadContext(bytes.NewReader(pdf), conf)
	if err != nil {
		log.Fatal(err)
	}
	mod := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := model.Attachment{Reader: bytes.NewReader(x), ID: name, FileName: name, Desc: "Factur-X/ZUGFeRD invoice", ModTime: &mod}
	if err := ctx.AddAttachment(a, false); err != nil {
		log.Fatal(err)
	}
	var out bytes.Buffer
	if err := api.WriteContext(ctx, &out); err != nil {
		log.Fatal(err)
	}
	return out.Bytes()
}
