package file_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/file/filetest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

func encoded(t *testing.T, format string, w, h int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	var buf bytes.Buffer
	var err error
	if format == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// pngDeclaring is a PNG signature and IHDR chunk (with its CRC) declaring w × h.
func pngDeclaring(w, h uint32) []byte {
	data := binary.BigEndian.AppendUint32(nil, w)
	data = binary.BigEndian.AppendUint32(data, h)
	data = append(data, 8, 0, 0, 0, 0)
	out := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	out = append(out, "IHDR"...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte("IHDR"), data...)))
}

func TestSniff(t *testing.T) {
	pngBytes := encoded(t, "png", 30, 20)
	jpegBytes := encoded(t, "jpeg", 30, 20)
	for _, c := range []struct {
		name, mimeType string
		head           []byte
		ok             bool
	}{
		{"PDF header first", file.PDF, []byte("%PDF-1.7\n%âãÏÓ\n"), true},
		{"PDF header after junk within 1024 bytes", file.PDF, append(bytes.Repeat([]byte{' '}, 1018), "%PDF-1.4"...), true},
		{"PDF header beyond 1024 bytes", file.PDF, append(bytes.Repeat([]byte{' '}, 1020), "%PDF-1.4"...), false},
		{"PDF without header", file.PDF, []byte("PDF-1.4 almost"), false},
		{"PNG declared as PDF", file.PDF, pngBytes, false},
		{"PNG", file.PNG, pngBytes, true},
		{"JPEG", file.JPEG, jpegBytes, true},
		{"JPEG declared as PNG", file.PNG, jpegBytes, false},
		{"PNG declared as JPEG", file.JPEG, pngBytes, false},
		{"truncated PNG", file.PNG, pngBytes[:20], false},
		{"truncated JPEG", file.JPEG, jpegBytes[:10], false},
		{"PNG of 50 megapixels", file.PNG, pngDeclaring(10000, 5000), true},
		{"PNG over 50 megapixels", file.PNG, pngDeclaring(10000, 10000), false},
		{"PNG of width 0", file.PNG, pngDeclaring(0, 10), false},
		{"UBL invoice with declaration", file.XML, []byte(`<?xml version="1.0" encoding="UTF-8"?><Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`), true},
		{"UBL credit note with a prefix", file.XML, []byte(`<ubl:CreditNote xmlns:ubl="urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2"/>`), true},
		{"CII with byte order mark", file.XML, []byte("\xef\xbb\xbf<?xml version=\"1.0\"?>\n<rsm:CrossIndustryInvoice xmlns:rsm=\"urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100\"/>"), true},
		{"ZUGFeRD 1.0", file.XML, []byte(`<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"/>`), true},
		{"XML with comments and spaces", file.XML, []byte("\n  <!-- exported -->\n<?pi x?>\n<Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"><ID>1</ID></Invoice>"), true},
		{"ISO-8859-1 invoice", file.XML, []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><Invoice xmlns=\"urn:oasis:names:specification:ubl:schema:xsd:Invoice-2\"><Note>M\xe4rz</Note></Invoice>"), true},
		{"Invoice without a namespace", file.XML, []byte(`<?xml version="1.0"?><Invoice/>`), false},
		{"Invoice in another namespace", file.XML, []byte(`<Invoice xmlns="urn:example:invoice"/>`), false},
		{"CII root under the UBL namespace", file.XML, []byte(`<CrossIndustryInvoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"/>`), false},
		{"SVG", file.XML, []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), false},
		{"other vocabulary", file.XML, []byte(`<?xml version="1.0"?><note><to>x</to></note>`), false},
		{"HTML page declared as XML", file.XML, []byte("<!DOCTYPE html>\n<html><body>Invoice</body></html>"), false},
		{"XHTML declared as XML", file.XML, []byte(`<?xml version="1.0"?><HTML xmlns="http://www.w3.org/1999/xhtml"/>`), false},
		{"text before the root", file.XML, []byte("invoice <Invoice/>"), false},
		{"not well formed", file.XML, []byte("<?xml version=\"1.0\"?><Invoice"), false},
		{"PDF declared as XML", file.XML, []byte("%PDF-1.7\n"), false},
		{"PNG of 7071 × 7071 16-bit pixels (stored: its thumbnail is bounded)", file.PNG, filetest.PNG(7071, 7071, 16, filetest.RGBA), true},
		{"empty", file.XML, nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := file.Sniff(c.mimeType, c.head)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok || e.Type != apierr.FileTypeMismatch || e.Message == "" {
				t.Fatalf("got %v, want file_type_mismatch", err)
			}
		})
	}
}

// TestCheckActive: markup a browser runs or renders as a page, in the first
// KiB of any file, in any letter case and with or without a namespace
// prefix, is refused; invoices, PDFs and photos are not.
func TestCheckActive(t *testing.T) {
	ubl := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"
  xmlns:cbc="urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2">
  <cbc:ID>1</cbc:ID><cbc:Note>Payable within 30 days &lt;net&gt;</cbc:Note><cbc:BaseAmount>1</cbc:BaseAmount>
  <cbc:HTMLText>not an element browsers know</cbc:HTMLText></Invoice>`)
	for _, c := range []struct {
		name   string
		head   []byte
		active bool
	}{
		{"UBL invoice", ubl, false},
		{"PDF", []byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"), false},
		{"PNG", encoded(t, "png", 30, 20), false},
		{"JPEG", encoded(t, "jpeg", 30, 20), false},
		{"PDF with JavaScript action but no URL", []byte("%PDF-1.7\n1 0 obj << /S /JavaScript /JS (app.alert(1)) >> endobj"), false},
		{"a less-than sign", []byte("%PDF-1.7\n% 3 <4 and a<b\n"), false},
		{"<html>", []byte("<html><p>x"), true},
		{"<HTML lang>", []byte("%PDF-1.4\n<HTML lang=en>"), true},
		{"<script>", []byte("%PDF-1.4\n%<script>alert(1)</script>"), true},
		{"closing </script>", []byte("%PDF-1.4\n%</SCRIPT>"), true},
		{"<svg/onload>", []byte("%PDF-1.4\n<svg/onload=alert(1)>"), true},
		{"<iframe\tsrc>", []byte("%PDF-1.4\n<iframe\tsrc=x>"), true},
		{"<body onload>", []byte("<Body onload=alert(1)>"), true},
		{"<img onerror>", []byte("GIF89a<img src=x onerror=alert(1)>"), true},
		{"prefixed script", []byte(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><h:script>1</h:script></Invoice>`), true},
		{"doctype", []byte("<!DOCTYPE HTML>"), true},
		{"javascript URL", []byte("%PDF-1.4\n<< /URI (JavaScript:alert(1)) >>"), true},
		{"XHTML namespace", []byte(`<x:p xmlns:x="http://www.w3.org/1999/xhtml">`), true},
		{"SVG namespace", []byte(`<Invoice xmlns:s="http://www.w3.org/2000/svg">`), true},
		{"tag cut at the end of the head", []byte("%PDF-1.4\n<script"), true},
		{"markup past the first KiB", append(bytes.Repeat([]byte(" "), 1024), "<script>"...), false},
		{"markup straddling the first KiB", append(bytes.Repeat([]byte(" "), 1020), "<script>"...), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := file.CheckActive(c.head)
			if !c.active {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e, ok := apierr.As(err); !ok || e.Type != apierr.FileTypeMismatch || e.Message == "" {
				t.Fatalf("got %v, want file_type_mismatch", err)
			}
		})
	}
}

func TestCreateRequestValidate(t *testing.T) {
	for _, c := range []struct {
		name  string
		req   file.CreateRequest
		field string // "" when valid; "413" for payload_too_large
	}{
		{"plain", file.CreateRequest{FileName: "invoice.pdf", MimeType: file.PDF, Size: 1}, ""},
		{"spaces inside and accents", file.CreateRequest{FileName: "Rechnung März 2025.pdf", MimeType: file.PDF, Size: 10}, ""},
		{"255 characters", file.CreateRequest{FileName: strings.Repeat("ü", 255), MimeType: file.XML, Size: 10}, ""},
		{"largest", file.CreateRequest{FileName: "a.png", MimeType: file.PNG, Size: file.MaxSize}, ""},
		{"empty name", file.CreateRequest{FileName: "", MimeType: file.PDF, Size: 1}, "file_name"},
		{"256 characters", file.CreateRequest{FileName: strings.Repeat("ü", 256), MimeType: file.PDF, Size: 1}, "file_name"},
		{"leading space", file.CreateRequest{FileName: " a.pdf", MimeType: file.PDF, Size: 1}, "file_name"},
		{"trailing space", file.CreateRequest{FileName: "a.pdf ", MimeType: file.PDF, Size: 1}, "file_name"},
		{"slash", file.CreateRequest{FileName: "../a.pdf", MimeType: file.PDF, Size: 1}, "file_name"},
		{"backslash", file.CreateRequest{FileName: `..\a.pdf`, MimeType: file.PDF, Size: 1}, "file_name"},
		{"newline", file.CreateRequest{FileName: "a\nContent-Type: text/html", MimeType: file.PDF, Size: 1}, "file_name"},
		{"NUL", file.CreateRequest{FileName: "a\x00.pdf", MimeType: file.PDF, Size: 1}, "file_name"},
		{"DEL", file.CreateRequest{FileName: "a\x7f.pdf", MimeType: file.PDF, Size: 1}, "file_name"},
		{"other type", file.CreateRequest{FileName: "a.gif", MimeType: "image/gif", Size: 1}, "mime_type"},
		{"text/xml", file.CreateRequest{FileName: "a.xml", MimeType: "text/xml", Size: 1}, "mime_type"},
		{"size 0", file.CreateRequest{FileName: "a.pdf", MimeType: file.PDF, Size: 0}, "size"},
		{"negative size", file.CreateRequest{FileName: "a.pdf", MimeType: file.PDF, Size: -1}, "size"},
		{"over 20 MiB", file.CreateRequest{FileName: "a.pdf", MimeType: file.PDF, Size: file.MaxSize + 1}, "413"},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.req.Validate()
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("got %v, want an API error", err)
			}
			if c.field == "413" {
				if e.Type != apierr.PayloadTooLarge {
					t.Fatalf("got %s, want payload_too_large", e.Type)
				}
				return
			}
			fields, _ := e.Details.([]apierr.FieldError)
			if e.Type != apierr.InvalidRequest || len(fields) != 1 || fields[0].Field != c.field {
				t.Fatalf("got %s %+v, want invalid_request on %s", e.Type, e.Details, c.field)
			}
		})
	}
}

func TestOpenBucket(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	abs := filepath.Join(dir, "absolute", "files")
	for _, c := range []struct {
		location string
		dir      string // where a written blob must appear; "" for mem://
	}{
		{"file:relative/files", filepath.Join(dir, "relative", "files")},
		{"file:" + abs, abs},
		{"file://" + abs, abs},
		{"mem://", ""},
	} {
		t.Run(c.location, func(t *testing.T) {
			b, err := file.OpenBucket(ctx, c.location)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if err := b.WriteAll(ctx, "files/k", []byte("bytes"), nil); err != nil {
				t.Fatal(err)
			}
			if got, err := b.ReadAll(ctx, "files/k"); err != nil || string(got) != "bytes" {
				t.Fatalf("read back %q, %v", got, err)
			}
			if c.dir == "" {
				return
			}
			if got, err := os.ReadFile(filepath.Join(c.dir, "files", "k")); err != nil || string(got) != "bytes" {
				t.Fatalf("the blob is not in %s: %q, %v", c.dir, got, err)
			}
			if st, err := os.Stat(c.dir); err != nil || st.Mode().Perm() != 0o700 {
				t.Fatalf("directory %s: %v, %v", c.dir, st, err)
			}
		})
	}
	for _, bad := range []string{"file:", "file://", "nosuch://bucket", "%zz", "relative/without/scheme", "file:" + filepath.Join(dir, "blocker", "sub")} {
		if bad == "file:"+filepath.Join(dir, "blocker", "sub") {
			if err := os.WriteFile(filepath.Join(dir, "blocker"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if b, err := file.OpenBucket(ctx, bad); err == nil {
			b.Close()
			t.Errorf("OpenBucket(%q) succeeded", bad)
		} else if !strings.Contains(err.Error(), "STRONGROOM_FILES") {
			t.Errorf("OpenBucket(%q): %v does not name STRONGROOM_FILES", bad, err)
		}
	}
}
