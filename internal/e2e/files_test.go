package e2e_test

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// Files (docs/api.md, Files): create, PUT the bytes to the signed upload URL,
// download them through the signed download URL; every refusal stores
// nothing; thumbnails of images.

// testRootSecret is STRONGROOM_SECRET of apitest servers: the tests sign
// thumbnail URLs with it (no operation hands them out yet) and forge
// download URLs of pending files.
const testRootSecret = "end-to-end-test-root-secret-0123456789abcdef"

// signer signs file URLs as the test server does.
func signer(t *testing.T) *file.Service {
	t.Helper()
	keys, err := keyring.New([]byte(testRootSecret))
	if err != nil {
		t.Fatal(err)
	}
	return file.New(nil, keys, nil)
}

func filesPath(org string) string { return "/api/v1/organizations/" + org + "/files" }

func filePath(id string) string { return "/api/v1/files/" + id }

func createFile(t *testing.T, s *apitest.Server, token, org, name, mimeType string, size int) api.FileCreated {
	t.Helper()
	r := ok[*api.CreateFileResponse](t, http.StatusCreated)(s.Client(t, token).API().CreateFileWithResponse(t.Context(), uuidOf(t, org), nil,
		api.CreateFileRequest{FileName: name, MimeType: api.FileMimeType(mimeType), Size: int64(size)}))
	f := *r.JSON201
	var raw map[string]any
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatal(err)
	}
	if f.Status != "pending" || raw["download_url"] != nil || !strings.HasPrefix(f.UploadUrl, "/api/v1/files/"+f.Id.String()+"/content?") {
		t.Fatalf("created file: %+v", f)
	}
	return f
}

func getFile(t *testing.T, s *apitest.Server, token, id string) api.File {
	t.Helper()
	return *ok[*api.GetFileResponse](t, http.StatusOK)(s.Client(t, token).API().GetFileWithResponse(t.Context(), uuidOf(t, id), nil)).JSON200
}

// put sends body to a signed upload URL, with no bearer.
func put(t *testing.T, s *apitest.Server, link string, body any, header map[string]string) *apitest.Response {
	t.Helper()
	h := map[string]string{"Content-Type": "application/octet-stream"}
	for k, v := range header {
		h[k] = v
	}
	return s.Do(t, apitest.Request{Method: "PUT", Path: link, Body: body, Header: h})
}

// upload PUTs body to f's upload URL and expects it stored.
func upload(t *testing.T, s *apitest.Server, f api.FileCreated, body []byte) api.File {
	t.Helper()
	var got api.File
	put(t, s, f.UploadUrl, body, map[string]string{"Content-Type": string(f.MimeType)}).ExpectStatus(t, http.StatusOK).Decode(t, &got)
	if got.Id != f.Id || got.Status != "stored" || got.DownloadUrl == nil || got.ExpiresAt == nil {
		t.Fatalf("uploaded file: %+v", got)
	}
	return got
}

// download reads a signed download URL and checks the bytes and headers.
func download(t *testing.T, s *apitest.Server, link, mimeType, name string, want []byte) {
	t.Helper()
	r := s.Get(t, link, "").ExpectStatus(t, http.StatusOK)
	if !bytes.Equal(r.Body, want) {
		t.Fatalf("downloaded %d bytes, not the %d uploaded", len(r.Body), len(want))
	}
	if ct := r.Header.Get("Content-Type"); ct != mimeType {
		t.Errorf("Content-Type %q, want %q", ct, mimeType)
	}
	disposition, params, err := mime.ParseMediaType(r.Header.Get("Content-Disposition"))
	if err != nil || disposition != "attachment" || params["filename"] != name {
		t.Errorf("Content-Disposition %q, want an attachment named %q", r.Header.Get("Content-Disposition"), name)
	}
	if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Errorf("download headers %v", r.Header)
	}
}

// expectNothingStored checks that f is still pending and that no bytes can
// be read, even through a correctly signed download URL.
func expectNothingStored(t *testing.T, s *apitest.Server, token string, f api.FileCreated) {
	t.Helper()
	got := getFile(t, s, token, f.Id.String())
	if got.Status != "pending" || got.DownloadUrl != nil || got.ExpiresAt != nil {
		t.Fatalf("after a refused upload the file is %+v, want pending without a download URL", got)
	}
	forged := signer(t).DownloadLink(file.File{ID: f.Id}, now(t, s))
	s.Get(t, forged.URL, "").ExpectError(t, http.StatusNotFound, "not_found")
}

// withQuery returns link with query parameter key set to value ("" removes it).
func withQuery(t *testing.T, link, key, value string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if value == "" {
		q.Del(key)
	} else {
		q.Set(key, value)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

func queryValue(t *testing.T, link, key string) string {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get(key)
}

// pdfOf is a small PDF whose body says text, padded to at least size bytes.
func pdfOf(text string, size int) []byte {
	b := []byte("%PDF-1.7\n% " + text + "\n1 0 obj << /Type /Catalog >> endobj\n")
	if pad := size - len(b) - len("%%EOF\n"); pad > 0 {
		b = append(b, bytes.Repeat([]byte{'%'}, pad)...)
	}
	return append(b, "%%EOF\n"...)
}

func picture(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x + y), 255})
		}
	}
	return img
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, picture(w, h)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func jpegOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, picture(w, h), &jpeg.Options{Quality: 80}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// hugePNG is a tiny, well-formed PNG whose header declares w × h pixels.
func hugePNG(w, h uint32) []byte {
	chunk := func(typ string, data []byte) []byte {
		out := binary.BigEndian.AppendUint32(nil, uint32(len(data)))
		out = append(out, typ...)
		out = append(out, data...)
		return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	ihdr = append(ihdr, 8, 2, 0, 0, 0) // 8-bit RGB, deflate, no filter, no interlace
	out := []byte("\x89PNG\r\n\x1a\n")
	out = append(out, chunk("IHDR", ihdr)...)
	var idat bytes.Buffer
	z := zlib.NewWriter(&idat)
	_, _ = z.Write([]byte{0, 0, 0, 0}) // the first row's filter byte and pixel: far from 10^8 pixels
	_ = z.Close()
	out = append(out, chunk("IDAT", idat.Bytes())...)
	return append(out, chunk("IEND", nil)...)
}

const invoiceXML = `<?xml version="1.0" encoding="UTF-8"?>
<!-- UBL 2.1 -->
<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><ID>INV-17</ID></Invoice>
`

func TestFileUploadAndDownload(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	member := addCardUser(t, s, o.id, "max@acme.test", "member", "Max", "Member")
	other := newCardOwner(t, s, "globex.test")

	for _, c := range []struct {
		name, mimeType string
		body           []byte
	}{
		{"invoice-2025-017.pdf", file.PDF, pdfOf("invoice", 3000)},
		{"Rechnung März.pdf", file.PDF, pdfOf("rechnung", 100)},
		{"receipt.png", file.PNG, pngOf(t, 40, 30)},
		{"receipt photo.jpg", file.JPEG, jpegOf(t, 40, 30)},
		{"invoice.xml", file.XML, []byte(invoiceXML)},
	} {
		created := now(t, s)
		f := createFile(t, s, member.token, o.id, c.name, c.mimeType, len(c.body))
		if f.OrganizationId.String() != o.id || f.FileName != c.name || string(f.MimeType) != c.mimeType || f.Size != int64(len(c.body)) ||
			!f.InsertedAt.Equal(created) || !f.ExpiresAt.Equal(created.Add(15*time.Minute)) {
			t.Fatalf("created %s: %+v (now %v)", c.name, f, created)
		}
		if got := getFile(t, s, o.owner.token, f.Id.String()); got.Status != "pending" || got.DownloadUrl != nil || got.ExpiresAt != nil {
			t.Fatalf("pending %s reads %+v", c.name, got)
		}
		advance(t, s, time.Minute)
		stored := upload(t, s, f, c.body)
		if !stored.InsertedAt.Equal(created) || !stored.ExpiresAt.Equal(created.Add(16*time.Minute)) {
			t.Fatalf("stored %s: %+v", c.name, stored)
		}
		download(t, s, *stored.DownloadUrl, c.mimeType, c.name, c.body)

		// Any member reads it, with a fresh download URL; the bytes are the same.
		advance(t, s, time.Minute)
		for _, token := range []string{o.owner.token, member.token} {
			got := getFile(t, s, token, f.Id.String())
			if got.Status != "stored" || got.DownloadUrl == nil || !got.ExpiresAt.Equal(created.Add(17*time.Minute)) || got.Size != f.Size {
				t.Fatalf("stored %s reads %+v", c.name, got)
			}
			download(t, s, *got.DownloadUrl, c.mimeType, c.name, c.body)
		}

		// Each signed URL does only what it was signed for.
		s.Get(t, f.UploadUrl, "").ExpectError(t, http.StatusForbidden, "forbidden")
		put(t, s, *stored.DownloadUrl, c.body, nil).ExpectError(t, http.StatusForbidden, "forbidden")
		s.Get(t, strings.Replace(*stored.DownloadUrl, "/content?", "/thumbnail?", 1), "").ExpectError(t, http.StatusForbidden, "forbidden")

		// Another organization does not see it; neither does an unknown id.
		s.Get(t, filePath(f.Id.String()), other.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	}
	s.Get(t, filePath(uuid.NewString()), o.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, filePath("not-a-uuid"), o.owner.token).ExpectError(t, http.StatusNotFound, "not_found")
	s.Post(t, filesPath(other.id), o.owner.token, map[string]any{"file_name": "a.pdf", "mime_type": file.PDF, "size": 10}).
		ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, filePath(uuid.NewString()), "").ExpectError(t, http.StatusUnauthorized, "not_authenticated")
}

func TestCreateFileChecksTheDeclaration(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"file_name": "", "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": " a.pdf", "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": "dir/a.pdf", "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": `dir\a.pdf`, "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": "a\r\nb.pdf", "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": strings.Repeat("é", 256), "mime_type": file.PDF, "size": 10}, "file_name"},
		{map[string]any{"file_name": "a.html", "mime_type": "text/html", "size": 10}, "mime_type"},
		{map[string]any{"file_name": "a.pdf", "mime_type": file.PDF, "size": 0}, "size"},
		{map[string]any{"file_name": "a.pdf", "mime_type": file.PDF}, "size"},
		{map[string]any{"file_name": "a.pdf", "mime_type": file.PDF, "size": 10, "sha256": "x"}, "sha256"},
	} {
		expectInvalidField(t, s.Post(t, filesPath(o.id), o.owner.token, c.body), c.field)
	}
	createFile(t, s, o.owner.token, o.id, strings.Repeat("é", 255), file.PDF, 10)
	createFile(t, s, o.owner.token, o.id, "largest.pdf", file.PDF, file.MaxSize)
	s.Post(t, filesPath(o.id), o.owner.token, map[string]any{"file_name": "a.pdf", "mime_type": file.PDF, "size": file.MaxSize + 1}).
		ExpectError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
}

// TestRefusedUploadsStoreNothing: every refused PUT leaves the file pending
// with nothing to download, and the same URL still works afterwards.
func TestRefusedUploadsStoreNothing(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	tok := o.owner.token
	body := pdfOf("the real one", 2048)
	f := createFile(t, s, tok, o.id, "invoice.pdf", file.PDF, len(body))
	pdf := map[string]string{"Content-Type": file.PDF}

	expires := queryValue(t, f.UploadUrl, "expires")
	later, _ := strconv.ParseInt(expires, 10, 64)
	sig := []byte(queryValue(t, f.UploadUrl, "signature"))
	sig[0] ^= 1
	for name, link := range map[string]string{
		"altered signature": withQuery(t, f.UploadUrl, "signature", string(sig)),
		"no signature":      withQuery(t, f.UploadUrl, "signature", ""),
		"altered expires":   withQuery(t, f.UploadUrl, "expires", strconv.FormatInt(later+3600, 10)),
		"no expires":        withQuery(t, f.UploadUrl, "expires", ""),
		"another file":      strings.Replace(f.UploadUrl, f.Id.String(), uuid.NewString(), 1),
		"download URL":      signer(t).DownloadLink(file.File{ID: f.Id}, now(t, s)).URL,
	} {
		if e := put(t, s, link, body, pdf).ExpectError(t, http.StatusForbidden, "forbidden"); e.Error.Message == "" {
			t.Errorf("%s: no message", name)
		}
	}
	expectNothingStored(t, s, tok, f)

	// Fewer or more bytes, with a Content-Length that says so, or chunked.
	for name, r := range map[string]*apitest.Response{
		"one byte fewer":   put(t, s, f.UploadUrl, body[:len(body)-1], pdf),
		"one byte more":    put(t, s, f.UploadUrl, append(bytes.Clone(body), '\n'), pdf),
		"empty":            put(t, s, f.UploadUrl, []byte{}, pdf),
		"chunked, fewer":   put(t, s, f.UploadUrl, io.MultiReader(bytes.NewReader(body[:len(body)-1])), pdf),
		"chunked, more":    put(t, s, f.UploadUrl, io.MultiReader(bytes.NewReader(body), strings.NewReader("x")), pdf),
		"chunked, doubled": put(t, s, f.UploadUrl, io.MultiReader(bytes.NewReader(body), bytes.NewReader(body)), pdf),
	} {
		e := r.ExpectError(t, http.StatusBadRequest, "invalid_request")
		if len(e.Error.Details) != 1 || e.Error.Details[0].Field != "body" {
			t.Errorf("%s: details %+v, want the field body", name, e.Error.Details)
		}
	}
	expectNothingStored(t, s, tok, f)

	// Bytes of another type than declared, of exactly the declared size.
	notPDF := append([]byte("<html><body>"), bytes.Repeat([]byte(" "), len(body)-len("<html><body></body></html>"))...)
	notPDF = append(notPDF, "</body></html>"...)
	put(t, s, f.UploadUrl, notPDF, pdf).ExpectError(t, http.StatusUnprocessableEntity, "file_type_mismatch")
	expectNothingStored(t, s, tok, f)

	// The same URL, with the right bytes, now succeeds; a second PUT does not replace them.
	stored := upload(t, s, f, body)
	download(t, s, *stored.DownloadUrl, file.PDF, "invoice.pdf", body)
	put(t, s, f.UploadUrl, body, pdf).ExpectError(t, http.StatusConflict, "conflict")
	put(t, s, f.UploadUrl, pdfOf("the other", len(body)), pdf).ExpectError(t, http.StatusConflict, "conflict")
	download(t, s, *getFile(t, s, tok, f.Id.String()).DownloadUrl, file.PDF, "invoice.pdf", body)

	// Declared types are checked against the bytes.
	png := pngOf(t, 20, 20)
	for _, c := range []struct {
		name, mimeType string
		body           []byte
	}{
		{"scan.pdf", file.PDF, png},
		{"photo.png", file.PNG, jpegOf(t, 20, 20)},
		{"photo.jpg", file.JPEG, png},
		{"invoice.xml", file.XML, []byte("<!DOCTYPE html>\n<html><head><title>Invoice</title></head><body></body></html>\n")},
		{"invoice.xml", file.XML, pdfOf("x", 100)},
		{"huge.png", file.PNG, hugePNG(10000, 10000)},
		{"truncated.png", file.PNG, png[:20]},
	} {
		f := createFile(t, s, tok, o.id, c.name, c.mimeType, len(c.body))
		put(t, s, f.UploadUrl, c.body, map[string]string{"Content-Type": c.mimeType}).
			ExpectError(t, http.StatusUnprocessableEntity, "file_type_mismatch")
		expectNothingStored(t, s, tok, f)
	}

	// An expired upload URL is refused, and stores nothing.
	late := createFile(t, s, tok, o.id, "late.pdf", file.PDF, len(body))
	advance(t, s, 16*time.Minute)
	put(t, s, late.UploadUrl, body, pdf).ExpectError(t, http.StatusForbidden, "forbidden")
	expectNothingStored(t, s, tok, late)
	// So is a download URL that has expired.
	s.Get(t, *stored.DownloadUrl, "").ExpectError(t, http.StatusForbidden, "forbidden")
}

// TestUploadsOverTwentyMiB: the declared size and the bytes sent are bounded
// by 20 MiB; exactly 20 MiB is stored.
func TestUploadsOverTwentyMiB(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	body := pdfOf("large", file.MaxSize)
	f := createFile(t, s, o.owner.token, o.id, "large.pdf", file.PDF, file.MaxSize)
	pdf := map[string]string{"Content-Type": file.PDF}

	// Refused from the Content-Length before the body is sent (the client waits for 100 Continue).
	put(t, s, f.UploadUrl, append(bytes.Clone(body), '\n'), map[string]string{"Content-Type": file.PDF, "Expect": "100-continue"}).
		ExpectError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
	// Counted while reading a body of unknown length.
	put(t, s, f.UploadUrl, io.MultiReader(bytes.NewReader(body), strings.NewReader("\n")), pdf).
		ExpectError(t, http.StatusRequestEntityTooLarge, "payload_too_large")
	expectNothingStored(t, s, o.owner.token, f)

	stored := upload(t, s, f, body)
	download(t, s, *stored.DownloadUrl, file.PDF, "large.pdf", body)
}

// TestConcurrentUploadsStoreOne: two PUTs of one file at once: one is stored
// and its bytes are downloaded, the other gets 409.
func TestConcurrentUploadsStoreOne(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	const size = 1 << 20
	for round := range 3 {
		f := createFile(t, s, o.owner.token, o.id, fmt.Sprintf("race-%d.pdf", round), file.PDF, size)
		bodies := [][]byte{pdfOf("first", size), pdfOf("second", size)}
		statuses := make([]int, len(bodies))
		var wg sync.WaitGroup
		for i, b := range bodies {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// The client waits for 100 Continue: a PUT that arrives once the
				// other's bytes are stored is refused before its body is read,
				// and a client still sending a megabyte then may see the
				// connection reset instead of the 409 (the body-size test above
				// does the same).
				statuses[i] = put(t, s, f.UploadUrl, b, map[string]string{"Content-Type": file.PDF, "Connection": "close",
					"Expect": "100-continue"}).Status
			}()
		}
		wg.Wait()
		winner := -1
		switch {
		case statuses[0] == 200 && statuses[1] == 409:
			winner = 0
		case statuses[0] == 409 && statuses[1] == 200:
			winner = 1
		default:
			t.Fatalf("round %d: statuses %v, want one 200 and one 409", round, statuses)
		}
		got := getFile(t, s, o.owner.token, f.Id.String())
		download(t, s, *got.DownloadUrl, file.PDF, f.FileName, bodies[winner])
	}
}

func TestFilesUnderOrganizationStatus(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	member := addCardUser(t, s, o.id, "max@acme.test", "member", "", "")
	body := pdfOf("kept", 500)
	stored := upload(t, s, createFile(t, s, o.owner.token, o.id, "kept.pdf", file.PDF, len(body)), body)
	pending := createFile(t, s, member.token, o.id, "pending.pdf", file.PDF, len(body))
	create := map[string]any{"file_name": "new.pdf", "mime_type": file.PDF, "size": 10}

	setOrgStatus(t, s, o.id, "paused")
	expectUnavailable(t, s.Post(t, filesPath(o.id), o.owner.token, create))
	expectUnavailable(t, put(t, s, pending.UploadUrl, body, nil))
	expectNothingStored(t, s, member.token, pending)
	got := getFile(t, s, member.token, stored.Id.String())
	download(t, s, *got.DownloadUrl, file.PDF, "kept.pdf", body)
	download(t, s, *stored.DownloadUrl, file.PDF, "kept.pdf", body)

	setOrgStatus(t, s, o.id, "banned")
	expectUnavailable(t, s.Get(t, filePath(stored.Id.String()), o.owner.token))
	expectUnavailable(t, s.Post(t, filesPath(o.id), o.owner.token, create))
	expectUnavailable(t, s.Get(t, *got.DownloadUrl, ""))
	expectUnavailable(t, put(t, s, pending.UploadUrl, body, nil))

	setOrgStatus(t, s, o.id, "active")
	upload(t, s, pending, body)
	download(t, s, *got.DownloadUrl, file.PDF, "kept.pdf", body)
}

// TestFileOperationsRefuseAPIKeys: files are for people and for holders of
// signed URLs; an API key as bearer is refused everywhere.
func TestFileOperationsRefuseAPIKeys(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	keyBody := map[string]any{"name": "Files sync", "role": "admin", "scopes": []string{"balances:read"}}
	keys := "/api/v1/organizations/" + o.id + "/api-keys"
	stepUpByCode(t, s, o.owner.token, o.owner.secret, s.Post(t, keys, o.owner.token, keyBody))
	var k api.ApiKeyWithSecret
	s.Post(t, keys, o.owner.token, keyBody).ExpectStatus(t, http.StatusCreated).Decode(t, &k)

	body := pdfOf("x", 300)
	stored := upload(t, s, createFile(t, s, o.owner.token, o.id, "a.pdf", file.PDF, len(body)), body)
	pending := createFile(t, s, o.owner.token, o.id, "b.pdf", file.PDF, len(body))
	for _, req := range []apitest.Request{
		{Method: "POST", Path: filesPath(o.id), Body: map[string]any{"file_name": "c.pdf", "mime_type": file.PDF, "size": 10}},
		{Method: "GET", Path: filePath(stored.Id.String())},
		{Method: "PUT", Path: pending.UploadUrl, Body: body, Header: map[string]string{"Content-Type": file.PDF}},
		{Method: "GET", Path: *stored.DownloadUrl},
	} {
		req.Bearer = k.Secret
		s.Do(t, req).ExpectError(t, http.StatusForbidden, "api_key_not_permitted")
		req.Bearer = k.Secret[:len(k.Secret)-1] + "x"
		if req.Bearer == k.Secret {
			req.Bearer = k.Secret[:len(k.Secret)-1] + "y"
		}
		s.Do(t, req).ExpectError(t, http.StatusUnauthorized, "invalid_api_key")
	}
	expectNothingStored(t, s, o.owner.token, pending)
}

func TestFileThumbnails(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	sign := signer(t)
	thumbnail := func(id uuid.UUID) string {
		l := sign.ThumbnailLink(file.File{ID: id, MimeType: file.PNG}, now(t, s))
		return l.URL
	}
	for _, c := range []struct {
		name, mimeType string
		body           []byte
		w, h           int
	}{
		{"wide.png", file.PNG, pngOf(t, 1000, 500), 256, 128},
		{"photo.jpg", file.JPEG, jpegOf(t, 640, 480), 256, 192},
		{"tall.png", file.PNG, pngOf(t, 300, 900), 256, 768},
		{"small.jpg", file.JPEG, jpegOf(t, 100, 50), 100, 50},
	} {
		f := upload(t, s, createFile(t, s, o.owner.token, o.id, c.name, c.mimeType, len(c.body)), c.body)
		link := thumbnail(f.Id)
		first := s.Get(t, link, "").ExpectStatus(t, http.StatusOK)
		if ct := first.Header.Get("Content-Type"); ct != file.PNG {
			t.Fatalf("%s: thumbnail Content-Type %q", c.name, ct)
		}
		img, err := png.Decode(bytes.NewReader(first.Body))
		if err != nil {
			t.Fatalf("%s: thumbnail is not a PNG: %v", c.name, err)
		}
		if b := img.Bounds(); b.Dx() != c.w || b.Dy() != c.h {
			t.Fatalf("%s: thumbnail %d×%d, want %d×%d", c.name, b.Dx(), b.Dy(), c.w, c.h)
		}
		if again := s.Get(t, link, "").ExpectStatus(t, http.StatusOK); !bytes.Equal(again.Body, first.Body) {
			t.Fatalf("%s: the kept thumbnail differs from the first", c.name)
		}
		// A thumbnail URL is not a download URL, and the other way round.
		s.Get(t, strings.Replace(link, "/thumbnail?", "/content?", 1), "").ExpectError(t, http.StatusForbidden, "forbidden")
		s.Get(t, strings.Replace(*f.DownloadUrl, "/content?", "/thumbnail?", 1), "").ExpectError(t, http.StatusForbidden, "forbidden")
	}

	// A PDF has no thumbnail, and neither has a pending image.
	body := pdfOf("x", 400)
	pdf := upload(t, s, createFile(t, s, o.owner.token, o.id, "a.pdf", file.PDF, len(body)), body)
	s.Get(t, thumbnail(pdf.Id), "").ExpectError(t, http.StatusNotFound, "not_found")
	pending := createFile(t, s, o.owner.token, o.id, "later.png", file.PNG, 100)
	s.Get(t, thumbnail(pending.Id), "").ExpectError(t, http.StatusNotFound, "not_found")

	// An expired thumbnail URL is refused.
	img := pngOf(t, 10, 10)
	f := upload(t, s, createFile(t, s, o.owner.token, o.id, "b.png", file.PNG, len(img)), img)
	link := thumbnail(f.Id)
	advance(t, s, 16*time.Minute)
	s.Get(t, link, "").ExpectError(t, http.StatusForbidden, "forbidden")
}
