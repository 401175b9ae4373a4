// Package file keeps an organization's uploaded files: the record in the
// files table and the bytes in a blob store (a local directory, or an
// S3-compatible bucket shared by several instances). Bills read invoices
// from it and expenses keep receipts in it.
//
// A file is created pending with a signed upload URL; the bytes PUT to that
// URL are checked (count, sniffed type, image dimensions, no web page or
// script markup, XML only as an e-invoice) before the file becomes stored. Bytes are written under a key of their own attempt and the
// record names that key in the statement that makes it stored, so a failed
// upload stores nothing and of two uploads at once exactly one is kept.
package file

import (
	"bytes"
	"encoding/xml"
	"errors"
	"image"
	_ "image/jpeg" // registers the decoder image.DecodeConfig needs
	_ "image/png"  // registers the decoder image.DecodeConfig needs
	"io"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// MaxSize is the largest file accepted, in bytes (docs/api.md, Files).
const MaxSize = 20 << 20

// MaxPixels bounds an image's width × height, so that a small file
// declaring a huge picture cannot exhaust memory when a thumbnail is drawn.
const MaxPixels = 50_000_000

// The accepted types of file.
const (
	PDF  = "application/pdf"
	PNG  = "image/png"
	JPEG = "image/jpeg"
	XML  = "application/xml"
)

// MimeTypes lists the accepted types.
var MimeTypes = []string{PDF, PNG, JPEG, XML}

// Status is where a file stands: pending until its bytes are stored.
type Status string

// The statuses of a file.
const (
	Pending Status = "pending"
	Stored  Status = "stored"
)

// File is one file of an organization.
type File struct {
	ID             uuid.UUID
	OrganizationID uuid.UUID
	CreatedByID    uuid.UUID
	Name           string
	MimeType       string
	Size           int64
	Status         Status
	// SHA256 is the hex digest of the stored bytes ("" while pending).
	SHA256     string
	InsertedAt time.Time
	StoredAt   *time.Time

	blobKey string
	// decodedSize is the memory decoding an image takes (decodedSize), 0
	// when unknown: not an image, or stored before it was recorded.
	decodedSize int64
}

// IsImage reports whether f is a picture (a receipt photo), which has a thumbnail.
func (f File) IsImage() bool { return f.MimeType == PNG || f.MimeType == JPEG }

// CreateRequest is the body of createFile.
type CreateRequest struct {
	FileName string `json:"file_name"`
	MimeType string `json:"mime_type"`
	Size     int64  `json:"size"`
}

// Validate checks the declared name, type and size. A size over MaxSize is
// payload_too_large, as the upload itself would be.
func (r CreateRequest) Validate() error {
	var f apierr.Fields
	checkName(&f, "file_name", r.FileName)
	f.Check(slices.Contains(MimeTypes, r.MimeType), "mime_type", "must be one of "+strings.Join(MimeTypes, ", ")+".")
	f.Check(r.Size >= 1, "size", "must be the file's size in bytes, at least 1.")
	if err := f.Err(); err != nil {
		return err
	}
	if r.Size > MaxSize {
		return errTooLarge
	}
	return nil
}

var errTooLarge = apierr.New(apierr.PayloadTooLarge, "A file may be at most 20 MiB.")

// checkName accepts 1 to 255 characters of UTF-8 without control
// characters (the name is sent back in a Content-Disposition header) or
// path separators. A multipart file name arrives as raw bytes, which
// PostgreSQL would refuse as text.
func checkName(f *apierr.Fields, field, name string) {
	ok := name != "" && utf8.ValidString(name) && utf8.RuneCountInString(name) <= 255 && name == strings.TrimSpace(name) &&
		!strings.ContainsAny(name, `/\`) && strings.IndexFunc(name, unicode.IsControl) < 0
	f.Check(ok, field, "must be 1 to 255 characters, without control characters, slashes or leading or trailing spaces.")
}

// sniffSize is how much of a file is read to check its type: enough for a
// JPEG's frame header behind a large EXIF block.
const sniffSize = 256 << 10

// errMismatch answers bytes that are not what the file declared.
func errMismatch(mimeType string) error {
	return apierr.Newf(apierr.FileTypeMismatch, "The bytes sent are not a valid %s file, the type this file was created with.", describe(mimeType))
}

func describe(mimeType string) string {
	switch mimeType {
	case PDF:
		return "PDF"
	case PNG:
		return "PNG"
	case JPEG:
		return "JPEG"
	}
	return "XML"
}

// sniff checks that head, the first bytes of a file (all of it when it is
// shorter than sniffSize), are of mimeType: the type is read from the bytes,
// never trusted from the name or the declaration.
func sniff(mimeType string, head []byte) error {
	ok := false
	switch mimeType {
	case PDF:
		// Readers accept the header anywhere in the first 1024 bytes.
		ok = bytes.Contains(head[:min(len(head), 1024)], []byte("%PDF-"))
	case PNG, JPEG:
		cfg, format, err := image.DecodeConfig(bytes.NewReader(head))
		if err == nil && "image/"+format == mimeType {
			if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
				return apierr.New(apierr.FileTypeMismatch, "The image is larger than 50 megapixels; send a smaller picture.")
			}
			ok = true
		}
	case XML:
		root, isXML := xmlRoot(head)
		if isXML && !isInvoice(root) {
			return errNotInvoice
		}
		ok = isXML
	}
	if !ok {
		return errMismatch(mimeType)
	}
	return nil
}

var errNotInvoice = apierr.New(apierr.FileTypeMismatch,
	"The XML document is not an e-invoice: its root must be a UBL Invoice or CreditNote, or a UN/CEFACT CrossIndustryInvoice.")

// invoiceRoots are the root elements of the e-invoices bills read, by
// namespace. XML is kept only as an invoice: any other root (SVG, XHTML,
// an arbitrary vocabulary) could be a page a browser renders.
var invoiceRoots = map[xml.Name]bool{
	{Space: "urn:oasis:names:specification:ubl:schema:xsd:Invoice-2", Local: "Invoice"}:                    true,
	{Space: "urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2", Local: "CreditNote"}:              true,
	{Space: "urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100", Local: "CrossIndustryInvoice"}: true,
	// ZUGFeRD 1.0, the XML inside older German PDF invoices.
	{Space: "urn:ferd:CrossIndustryDocument:invoice:1p0", Local: "CrossIndustryDocument"}: true,
}

func isInvoice(root xml.Name) bool { return invoiceRoots[root] }

// xmlRoot reads the root element of the XML document head opens: a
// declaration, comments or processing instructions at most, then the root,
// whose name is resolved against the namespaces it declares. false when
// head does not open an XML document.
func xmlRoot(head []byte) (xml.Name, bool) {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	d := xml.NewDecoder(bytes.NewReader(head))
	d.Strict = true
	// Only the document's structure is checked, which is ASCII in every
	// encoding an e-invoice declares (ISO-8859-1 included): read it as is.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.Token()
		if err != nil {
			return xml.Name{}, false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return t.Name, true
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return xml.Name{}, false
			}
		case xml.ProcInst, xml.Comment, xml.Directive:
		default:
			return xml.Name{}, false
		}
	}
}

// activeSize is how much of a file is searched for active content.
const activeSize = 1024

// activeTags are elements that make a browser run script or render a page.
// A PDF, image or e-invoice has no use for any of them, and a file that
// holds one near its start is a polyglot: a PDF or XML to this service and
// a web page to a browser that sniffs it.
var activeTags = map[string]bool{
	"html": true, "head": true, "body": true, "script": true, "svg": true, "iframe": true, "frame": true,
	"frameset": true, "object": true, "embed": true, "img": true, "style": true, "meta": true, "link": true,
	"base": true, "form": true, "math": true,
}

// activeText is other markup of the same kind: script URLs and the
// namespaces of XHTML and SVG (whose elements run in any XML document).
var activeText = []string{"<!doctype html", "javascript:", "vbscript:", "www.w3.org/1999/xhtml", "www.w3.org/2000/svg"}

var errActive = apierr.New(apierr.FileTypeMismatch,
	"The file holds web page or script markup (HTML, XHTML, SVG or JavaScript); send the PDF, image or e-invoice itself.")

// checkActive refuses a file whose first KiB holds HTML, XHTML, SVG or
// script markup, in any letter case and with or without a namespace prefix
// (<x:script>), whatever type the rest of it is.
func checkActive(head []byte) error {
	// Markup that begins in the first KiB is read to its end.
	lower := bytes.ToLower(head[:min(len(head), activeSize+32)])
	for _, s := range activeText {
		if i := bytes.Index(lower, []byte(s)); i >= 0 && i < activeSize {
			return errActive
		}
	}
	for rest := lower; ; {
		i := bytes.IndexByte(rest, '<')
		if i < 0 || len(lower)-len(rest)+i >= activeSize {
			return nil
		}
		rest = rest[i+1:]
		name := rest
		if len(name) > 0 && name[0] == '/' {
			name = name[1:]
		}
		n := 0
		for n < len(name) && isNameByte(name[n]) {
			n++
		}
		if n < len(name) && !isTagEnd(name[n]) {
			continue
		}
		tag := name[:n]
		tag = tag[bytes.LastIndexByte(tag, ':')+1:]
		if activeTags[string(tag)] {
			return errActive
		}
	}
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
}

// isTagEnd reports whether c may follow a tag name: browsers end it at
// white space, '/' or '>'.
func isTagEnd(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' || c == '>'
}

// readHead reads up to sniffSize bytes of r.
func readHead(r io.Reader) ([]byte, error) {
	head := make([]byte, sniffSize)
	n, err := io.ReadFull(r, head)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		err = nil
	}
	return head[:n], err
}
