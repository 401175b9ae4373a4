// Package file keeps an organization's uploaded files: the record in the
// files table and the bytes in a blob store (a local directory, or an
// S3-compatible bucket shared by several instances). Bills read invoices
// from it and expenses keep receipts in it.
//
// A file is created pending with a signed upload URL; the bytes PUT to that
// URL are checked (count, sniffed type, image dimensions) before the file
// becomes stored. Bytes are written under a key of their own attempt and the
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

// MaxSize is the largest file accepted, in bytes (CONTRACT §8).
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

// checkName accepts 1 to 255 characters without control characters (the
// name is sent back in a Content-Disposition header) or path separators.
func checkName(f *apierr.Fields, field, name string) {
	ok := name != "" && utf8.RuneCountInString(name) <= 255 && name == strings.TrimSpace(name) &&
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
		ok = isXML(head)
	}
	if !ok {
		return errMismatch(mimeType)
	}
	return nil
}

// isXML reports whether head opens an XML document: a declaration,
// comments or processing instructions at most, then a root element.
func isXML(head []byte) bool {
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	d := xml.NewDecoder(bytes.NewReader(head))
	d.Strict = true
	// Only the document's structure is checked, which is ASCII in every
	// encoding an e-invoice declares (ISO-8859-1 included): read it as is.
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	for {
		tok, err := d.RawToken()
		if err != nil {
			return false
		}
		switch t := tok.(type) {
		case xml.StartElement:
			return !strings.EqualFold(t.Name.Local, "html")
		case xml.CharData:
			if len(bytes.TrimSpace(t)) > 0 {
				return false
			}
		case xml.ProcInst, xml.Comment, xml.Directive:
		default:
			return false
		}
	}
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
