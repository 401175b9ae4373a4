package e2e_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"runtime/metrics"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/file/filetest"
)

// Hostile files: an image small on disk and huge once
// decoded gets no thumbnail, and asking for one anyway costs no memory;
// text of a multipart part that is not UTF-8 is refused before it reaches
// the database; files carrying web page or script markup, and XML that is
// not an invoice, are refused whichever way they are uploaded.

// allocatedBytes is how many bytes the process has allocated on the heap
// so far (the server runs in this process).
func allocatedBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestDecompressionBombHasNoThumbnail: a 2.5 MB PNG of 7071 × 7071 16-bit
// RGBA pixels is under 50 megapixels and is stored, but decodes to 400 MB:
// as a receipt it has no thumbnail_url, and its thumbnail URL answers 404
// without decoding it.
func TestDecompressionBombHasNoThumbnail(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	bomb := filetest.PNG(7071, 7071, 16, filetest.RGBA)
	f := upload(t, s, createFile(t, s, o.owner.token, o.id, "receipt.png", file.PNG, len(bomb)), bomb)
	photo := pngOf(t, 600, 300)
	small := upload(t, s, createFile(t, s, o.owner.token, o.id, "photo.png", file.PNG, len(photo)), photo)

	e := completeDraft(t, s, o.owner.token, o.id)
	addReceipt(t, s, o.owner.token, e.Id.String(), f.Id.String()).ExpectStatus(t, http.StatusOK)
	var got api.Expense
	addReceipt(t, s, o.owner.token, e.Id.String(), small.Id.String()).ExpectStatus(t, http.StatusOK).Decode(t, &got)
	if len(got.Receipts) != 2 || got.Receipts[0].ThumbnailUrl != nil || got.Receipts[1].ThumbnailUrl == nil {
		t.Fatalf("receipts %+v: want no thumbnail for the bomb, one for the photo", got.Receipts)
	}
	s.Get(t, *got.Receipts[1].ThumbnailUrl, "").ExpectStatus(t, http.StatusOK)

	// A thumbnail URL signed anyway (as one handed out before the limit was
	// known) is refused before the image is decoded: a few requests at once
	// allocate nothing like one decoded picture.
	link := signer(t).ThumbnailLink(file.File{ID: f.Id, MimeType: file.PNG}, now(t, s)).URL
	before := allocatedBytes()
	for range 3 {
		s.Get(t, link, "").ExpectError(t, http.StatusNotFound, "not_found")
	}
	if n := allocatedBytes() - before; n > 32<<20 {
		t.Fatalf("refusing the thumbnail allocated %d MiB", n>>20)
	}
	// The file itself is kept and downloads as sent.
	download(t, s, *getFile(t, s, o.owner.token, f.Id.String()).DownloadUrl, file.PNG, "receipt.png", bomb)
}

// multipartPart is a multipart/form-data body of one part with the raw
// Content-Disposition and Content-Type given (bytes that are not UTF-8
// included), and its Content-Type header.
func multipartPart(t *testing.T, disposition, contentType string, data []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{"Content-Disposition": {disposition}}
	if contentType != "" {
		h["Content-Type"] = []string{contentType}
	}
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := part.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

// TestMultipartTextMustBeUTF8: a file name or part type that is not UTF-8
// (or holds a NUL) is 400 invalid_request naming the field "file" on both
// engines, and no bill or file is kept; a field name that is not UTF-8 is
// refused too, and named in UTF-8.
func TestMultipartTextMustBeUTF8(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	pdf := corpusFile(t, "text-gb-invoice.pdf")
	send := func(disposition, contentType string) *apitest.Response {
		body, ct := multipartPart(t, disposition, contentType, pdf)
		return s.Do(t, apitest.Request{Method: "POST", Path: billsPath(p.org) + "/upload", Bearer: p.web, Body: body,
			Header: map[string]string{"Content-Type": ct}})
	}
	for _, c := range []struct{ name, disposition, contentType, field string }{
		{"file name not UTF-8", "form-data; name=\"file\"; filename=\"Rechnung \xff\xfe.pdf\"", "application/pdf", "file"},
		{"file name not UTF-8, percent-encoded", `form-data; name="file"; filename*=UTF-8''Rechnung%20%FF%FE.pdf`, "application/pdf", "file"},
		{"file name a lone continuation byte", "form-data; name=\"file\"; filename=\"\x80.pdf\"", "application/pdf", "file"},
		{"file name with NUL", `form-data; name="file"; filename*=UTF-8''a%00.pdf`, "application/pdf", "file"},
		{"part type not UTF-8", `form-data; name="file"; filename="invoice.pdf"`, "application/pdf\xff", "file"},
		// The multipart reader itself refuses a header holding a control character.
		{"part type with NUL", `form-data; name="file"; filename="invoice.pdf"`, "application/\x00pdf", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectInvalidField(t, send(c.disposition, c.contentType), c.field)
		})
	}
	t.Run("field name not UTF-8", func(t *testing.T) {
		e := send("form-data; name=\"fi\xffle\"; filename=\"invoice.pdf\"", "application/pdf").ExpectError(t, http.StatusBadRequest, "invalid_request")
		if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "fi\ufffdle" {
			t.Fatalf("details %+v", e.Error.Details)
		}
	})
	// createFile's JSON body is held to the same rule.
	for _, bad := range badTexts {
		t.Run("createFile "+bad.name, func(t *testing.T) {
			body := withBadText(t, map[string]any{"file_name": "invoice" + textMarker + ".pdf", "mime_type": file.PDF, "size": len(pdf)}, bad)
			expectInvalidField(t, s.Do(t, apitest.Request{Method: "POST", Path: filesPath(p.org), Bearer: p.web, Body: body}), "file_name")
		})
	}
	var list api.BillPage
	s.Get(t, billsPath(p.org), p.web).ExpectStatus(t, http.StatusOK).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused uploads left %d bills", len(list.Data))
	}
	// The same invoice with a proper name is taken.
	send(`form-data; name="file"; filename*=UTF-8''Rechnung%20M%C3%A4rz.pdf`, "application/pdf").ExpectStatus(t, http.StatusCreated)
}

// activeContent are files a browser would run or render as a page,
// dressed as the accepted types.
var activeContent = []struct{ name, mimeType, body string }{
	{"drawing.xml", file.XML, `<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(document.domain)</script></svg>`},
	{"plain.svg.xml", file.XML, `<svg xmlns="http://www.w3.org/2000/svg"><rect width="10" height="10"/></svg>`},
	{"page.xml", file.XML, `<?xml version="1.0"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
<x:html xmlns:x="http://www.w3.org/1999/xhtml"><x:body><x:p>Invoice</x:p></x:body></x:html>`},
	// An invoice root carrying XHTML script, which a browser runs in any XML document.
	{"invoice.xml", file.XML, `<?xml version="1.0"?>
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>1</ID><h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script></Invoice>`},
	{"note.xml", file.XML, `<?xml version="1.0"?><note><to>Accounts</to><body>Pay me</body></note>`},
	{"letter.xml", file.XML, `<?xml version="1.0"?><Letter xmlns="urn:example:letters"><To>Accounts</To></Letter>`},
	// An invoice element name in a namespace that is not an invoice's.
	{"fake.xml", file.XML, `<Invoice xmlns="urn:example:not-ubl"><ID>1</ID></Invoice>`},
	{"polyglot.pdf", file.PDF, "%PDF-1.4\n%<html><script>alert(1)</script>\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"},
	{"polyglot2.pdf", file.PDF, "<HTML><BODY onload=alert(1)>\n%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"},
	{"link.pdf", file.PDF, "%PDF-1.4\n1 0 obj << /Type /Action /S /URI /URI (JavaScript:alert(1)) >> endobj\n%%EOF\n"},
	{"frame.pdf", file.PDF, "%PDF-1.4\n% <iframe src=x>\n%%EOF\n"},
	{"doctype.pdf", file.PDF, "%PDF-1.4\n% <!DocType HTML>\n%%EOF\n"},
}

// TestActiveContentIsRefused: SVG, XHTML, XML that is not an invoice and
// PDF/HTML polyglots are 422 file_type_mismatch through the upload URL
// (as receipts are sent) and through uploadBill, storing nothing; real
// e-invoices and PDFs are still taken both ways.
func TestActiveContentIsRefused(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	for _, c := range activeContent {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(c.body)
			f := createFile(t, s, p.web, p.org, c.name, c.mimeType, len(body))
			put(t, s, f.UploadUrl, body, map[string]string{"Content-Type": c.mimeType}).
				ExpectError(t, http.StatusUnprocessableEntity, "file_type_mismatch")
			expectNothingStored(t, s, p.web, f)
			uploadBill(t, s, p.web, p.org, "file", c.name, c.mimeType, body).ExpectError(t, http.StatusUnprocessableEntity, "file_type_mismatch")
			// Declared as something else, the bytes are refused all the same.
			uploadBill(t, s, p.web, p.org, "file", c.name, "application/octet-stream", body).ExpectError(t, http.StatusUnprocessableEntity, "file_type_mismatch")
		})
	}
	var list api.BillPage
	s.Get(t, billsPath(p.org), p.web).ExpectStatus(t, http.StatusOK).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused uploads left %d bills", len(list.Data))
	}

	// Real invoices are taken both ways: UBL and CII XML, a Factur-X PDF and a plain one.
	for _, name := range []string{"ubl-be-invoice.xml", "ubl-se-creditnote.xml", "cii-de-xrechnung.xml", "facturx-basic-de.pdf", "text-gb-invoice.pdf"} {
		body := corpusFile(t, name)
		upload(t, s, createFile(t, s, p.web, p.org, name, mimeOf(name), len(body)), body)
		uploadCorpus(t, s, p.web, p.org, name)
	}
	// So is a ZUGFeRD 1.0 XML, and a photo receipt.
	zugferd := []byte(`<?xml version="1.0" encoding="UTF-8"?>
<rsm:CrossIndustryDocument xmlns:rsm="urn:ferd:CrossIndustryDocument:invoice:1p0"><rsm:HeaderExchangedDocument/></rsm:CrossIndustryDocument>`)
	upload(t, s, createFile(t, s, p.web, p.org, "zugferd.xml", file.XML, len(zugferd)), zugferd)
	photo := jpegOf(t, 64, 48)
	upload(t, s, createFile(t, s, p.web, p.org, "receipt.jpg", file.JPEG, len(photo)), photo)
}
