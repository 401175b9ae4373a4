package file

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
	"golang.org/x/image/draw"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// ThumbnailWidth is the widest a receipt thumbnail is drawn.
const ThumbnailWidth = 256

// Service keeps files: records in the database, bytes in Blobs.
type Service struct {
	DB    *db.DB
	Keys  *keyring.Keyring
	Blobs *blob.Bucket
	// slots bounds how many thumbnails are drawn at once, each within
	// MaxDecodedSize.
	slots chan struct{}

	mu sync.Mutex
	// drawing holds the thumbnails being drawn, by file: a request for one
	// waits for that drawing rather than decoding the image again.
	drawing map[uuid.UUID]*drawing
	// waiting counts requests waiting for a slot or for another's drawing,
	// and decodes the images decoded; tests read them.
	waiting, decodes atomic.Int64
}

// drawing is a thumbnail being drawn; err is set before done is closed.
type drawing struct {
	done chan struct{}
	err  error
}

// New returns the files service over d, signing URLs with keys and keeping
// bytes in blobs.
func New(d *db.DB, keys *keyring.Keyring, blobs *blob.Bucket) *Service {
	return &Service{DB: d, Keys: keys, Blobs: blobs, slots: make(chan struct{}, 2), drawing: map[uuid.UUID]*drawing{}}
}

// Created is a new pending file and the URL its bytes are PUT to.
type Created struct {
	File   File
	Upload Link
}

// Shown is a file with the URL its bytes are read from (nil while pending).
type Shown struct {
	File     File
	Download *Link
}

// Create records a pending file of orgID declared by req and signs its
// upload URL. Any member may upload; the organization must admit writes.
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, req CreateRequest) (Created, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Created, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Write: true}); err != nil {
			return Created{}, err
		}
		id, err := uuid.NewV7()
		if err != nil {
			return Created{}, err
		}
		f := File{ID: id, OrganizationID: orgID, CreatedByID: a.UserID, Name: req.FileName, MimeType: req.MimeType,
			Size: req.Size, Status: Pending, InsertedAt: tx.Now().UTC()}
		if err := insertFile(ctx, tx, f); err != nil {
			return Created{}, err
		}
		return Created{File: f, Upload: s.link(Upload, id, tx.Now())}, nil
	})
}

// Get returns file id to a member of its organization, with a download URL
// once it is stored.
func (s *Service) Get(ctx context.Context, a actor.Actor, id uuid.UUID) (Shown, error) {
	q := s.DB.Reader()
	f, err := loadFile(ctx, q, id)
	if err != nil {
		return Shown{}, err
	}
	if _, err := organization.Check(ctx, q, a, f.OrganizationID, organization.Need{}); err != nil {
		return Shown{}, organization.Hide(err, errNotFound)
	}
	out := Shown{File: f}
	if f.Status == Stored {
		l := s.DownloadLink(f, s.DB.Now())
		out.Download = &l
	}
	return out, nil
}

// DownloadLink signs a download URL of f from now.
func (s *Service) DownloadLink(f File, now time.Time) Link { return s.link(Download, f.ID, now) }

// ThumbnailLink signs the URL of f's thumbnail from now; nil when f is not
// an image, or is one too large to decode within MaxDecodedSize.
func (s *Service) ThumbnailLink(f File, now time.Time) *Link {
	if !f.IsImage() || f.decodedSize > MaxDecodedSize {
		return nil
	}
	l := s.link(Thumbnail, f.ID, now)
	return &l
}

// Stored returns file id of orgID once its bytes are stored, for the
// features that refer to files (bills, receipts): not_found when it does
// not exist or is another organization's, file_not_stored while pending.
func (s *Service) Stored(ctx context.Context, q db.Querier, orgID, id uuid.UUID) (File, error) {
	f, err := loadFile(ctx, q, id)
	if err != nil || f.OrganizationID != orgID {
		return File{}, errNotFound
	}
	if f.Status != Stored {
		return File{}, apierr.New(apierr.FileNotStored, "This file's bytes have not been uploaded yet: PUT them to its upload_url first.")
	}
	return f, nil
}

// Load returns the files of orgID among ids, by id.
func (s *Service) Load(ctx context.Context, q db.Querier, orgID uuid.UUID, ids []uuid.UUID) (map[uuid.UUID]File, error) {
	return loadFiles(ctx, q, orgID, ids)
}

// Open reads stored file f's bytes.
func (s *Service) Open(ctx context.Context, f File) (io.ReadCloser, error) {
	if f.Status != Stored {
		return nil, errNotFound
	}
	return s.Blobs.NewReader(ctx, f.blobKey, nil)
}

var errAlreadyStored = apierr.New(apierr.Conflict, "This file's bytes are already stored; create a new file to upload again.")

// Receive stores the bytes of pending file id sent to its signed upload
// URL (grant g). length is the request's declared byte count (-1 when
// unknown). The bytes must be exactly the declared size and of the
// declared type; otherwise, or when another upload got there first,
// nothing is stored.
func (s *Service) Receive(ctx context.Context, id uuid.UUID, g Grant, length int64, body io.Reader) (File, error) {
	if err := s.check(Upload, id, g, s.DB.Now()); err != nil {
		return File{}, err
	}
	q := s.DB.Reader()
	f, err := loadFile(ctx, q, id)
	if err != nil {
		return File{}, err
	}
	if f.Status != Pending {
		return File{}, errAlreadyStored
	}
	if err := s.admits(ctx, q, f, true); err != nil {
		return File{}, err
	}
	if length > MaxSize {
		return File{}, errTooLarge
	}
	if length >= 0 && length != f.Size {
		return File{}, wrongSize(f.Size)
	}
	w, err := s.write(ctx, f.MimeType, f.Size, body)
	if err != nil {
		return File{}, err
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (File, error) {
		ok, err := markStored(ctx, tx, id, w, tx.Now().UTC())
		if err == nil && !ok {
			err = errAlreadyStored
		}
		if err != nil {
			s.discard(w.key)
			return File{}, err
		}
		return loadFile(ctx, tx, id)
	})
}

func wrongSize(size int64) error {
	return apierr.InvalidField("body", "must be exactly "+strconv.FormatInt(size, 10)+" bytes, the size this file was created with.")
}

// admits checks that f's organization allows reading (or writing) its files.
func (s *Service) admits(ctx context.Context, q db.Querier, f File, write bool) error {
	st, err := organization.StatusOf(ctx, q, f.OrganizationID, "")
	if err != nil {
		return err
	}
	if !st.Allows(write) {
		return organization.ErrUnavailable
	}
	return nil
}

// written is bytes in the blob store that no record names yet.
type written struct {
	key, sum string
	size     int64
	// decodedSize is what decoding an image takes (0 for other files).
	decodedSize int64
}

// write streams body to a new blob after checking its type: exactly size
// bytes when size ≥ 0, else at most MaxSize. On any failure the blob is
// not kept (the writer is aborted, so a half-written blob never appears).
func (s *Service) write(ctx context.Context, mimeType string, size int64, body io.Reader) (written, error) {
	limit := size
	if limit < 0 {
		limit = MaxSize
	}
	r := io.LimitReader(body, limit+1)
	head, err := readHead(r)
	if err != nil {
		return written{}, readError(err)
	}
	if size >= 0 && len(head) < sniffSize && int64(len(head)) != size || int64(len(head)) > limit {
		return written{}, sizeError(size)
	}
	if err := checkActive(head); err != nil {
		return written{}, err
	}
	if err := sniff(mimeType, head); err != nil {
		return written{}, err
	}
	var decoded int64
	if mimeType == PNG || mimeType == JPEG {
		decoded, _ = decodedSize(head) // 0, unknown, when it cannot be told: the thumbnail checks again
	}
	key := "files/" + uuid.NewString()
	wctx, abort := context.WithCancel(ctx)
	defer abort()
	w, err := s.Blobs.NewWriter(wctx, key, &blob.WriterOptions{ContentType: mimeType})
	if err != nil {
		return written{}, err
	}
	sum := sha256.New()
	n, err := copyAll(io.MultiWriter(w, sum), head, r)
	if err == nil && n > MaxSize {
		err = errTooLarge
	} else if err == nil && (n > limit || size >= 0 && n != size) {
		err = sizeError(size)
	}
	if err != nil {
		abort()
		_ = w.Close()
		return written{}, readError(err)
	}
	if err := w.Close(); err != nil {
		return written{}, fmt.Errorf("file: store bytes: %w", err)
	}
	return written{key: key, sum: hex.EncodeToString(sum.Sum(nil)), size: n, decodedSize: decoded}, nil
}

func copyAll(w io.Writer, head []byte, rest io.Reader) (int64, error) {
	if _, err := w.Write(head); err != nil {
		return 0, err
	}
	n, err := io.Copy(w, rest)
	return int64(len(head)) + n, err
}

func sizeError(size int64) error {
	if size < 0 {
		return errTooLarge
	}
	return wrongSize(size)
}

// readError answers a failure reading the request body: over the server's
// limit is payload_too_large; a domain error stands as it is.
func readError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return errTooLarge
	}
	if _, ok := apierr.As(err); ok {
		return err
	}
	return apierr.InvalidField("body", "could not be read in full; send the file again.")
}

// discard removes a blob no record names (best effort: an orphan blob
// costs space, never correctness).
func (s *Service) discard(key string) {
	_ = s.Blobs.Delete(context.Background(), key)
}

// Staged is a file whose bytes are stored but which is not yet recorded:
// the caller records it in its own transaction (Record) or drops it (Discard).
type Staged struct{ file File }

// Stage stores body, a file of orgID uploaded by userID in one request
// (uploadBill), of at most MaxSize bytes. Its type is read from the bytes;
// declared, the type the client named, must agree when it is one of the
// accepted types.
func (s *Service) Stage(ctx context.Context, orgID, userID uuid.UUID, name, declared string, body io.Reader) (Staged, error) {
	var f apierr.Fields
	checkName(&f, "file", name)
	// The declared type is only compared, never kept, but it is text the
	// client sent: raw multipart bytes, refused like any string that is not UTF-8.
	f.Check(utf8.ValidString(declared) && !strings.ContainsRune(declared, 0), "file",
		"has a Content-Type that is not UTF-8 text; name the file's type, such as application/pdf, or leave it out.")
	if err := f.Err(); err != nil {
		return Staged{}, err
	}
	head, err := readHead(body)
	if err != nil {
		return Staged{}, readError(err)
	}
	if err := checkActive(head); err != nil {
		return Staged{}, err
	}
	mimeType := detect(head)
	if _, isXML := xmlRoot(head); mimeType == "" && isXML {
		return Staged{}, errNotInvoice
	}
	if mimeType == "" {
		return Staged{}, apierr.New(apierr.FileTypeMismatch, "The file is not a PDF, PNG, JPEG or XML document.")
	}
	if declared == "text/xml" {
		declared = XML
	}
	if declared != mimeType && slices.Contains(MimeTypes, declared) {
		return Staged{}, errMismatch(declared)
	}
	w, err := s.write(ctx, mimeType, -1, io.MultiReader(bytes.NewReader(head), body))
	if err != nil {
		return Staged{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		s.discard(w.key)
		return Staged{}, err
	}
	return Staged{File{ID: id, OrganizationID: orgID, CreatedByID: userID, Name: name, MimeType: mimeType, Size: w.size,
		Status: Stored, SHA256: w.sum, blobKey: w.key, decodedSize: w.decodedSize}}, nil
}

// Record inserts staged in tx, stored at tx.Now().
func (s *Service) Record(ctx context.Context, tx *db.Tx, staged Staged) (File, error) {
	f := staged.file
	now := tx.Now().UTC()
	f.InsertedAt, f.StoredAt = now, &now
	return f, insertFile(ctx, tx, f)
}

// Discard removes the bytes of a staged file that will not be recorded.
func (s *Service) Discard(staged Staged) { s.discard(staged.file.blobKey) }

// detect names the accepted type head is, or "".
func detect(head []byte) string {
	for _, t := range MimeTypes {
		if sniff(t, head) == nil {
			return t
		}
	}
	return ""
}

// Download opens the bytes of file id for the holder of its signed
// download URL (grant g).
func (s *Service) Download(ctx context.Context, id uuid.UUID, g Grant) (File, io.ReadCloser, error) {
	f, err := s.granted(ctx, Download, id, g)
	if err != nil {
		return File{}, nil, err
	}
	r, err := s.Open(ctx, f)
	return f, r, err
}

// granted checks grant g for p on file id and returns the stored file.
func (s *Service) granted(ctx context.Context, p Purpose, id uuid.UUID, g Grant) (File, error) {
	if err := s.check(p, id, g, s.DB.Now()); err != nil {
		return File{}, err
	}
	q := s.DB.Reader()
	f, err := loadFile(ctx, q, id)
	if err == nil && f.Status != Stored {
		err = errNotFound
	}
	if err == nil {
		err = s.admits(ctx, q, f, false)
	}
	return f, err
}

// OpenThumbnail opens the PNG thumbnail of image file id for the holder of
// its signed URL (grant g), drawing it on first use and keeping it beside
// the file. An image too large to decode within MaxDecodedSize, or whose
// pixels cannot be read, has none: not_found.
func (s *Service) OpenThumbnail(ctx context.Context, id uuid.UUID, g Grant) (io.ReadCloser, error) {
	f, err := s.granted(ctx, Thumbnail, id, g)
	if err != nil {
		return nil, err
	}
	if !f.IsImage() {
		return nil, errNotFound
	}
	return s.thumbnail(ctx, f)
}

var (
	errTooLargeToDraw = apierr.New(apierr.NotFound, "This image is too large to draw a thumbnail of; download the file instead.")
	errUndrawable     = apierr.New(apierr.NotFound, "This image's pixels cannot be read, so it has no thumbnail; download the file instead.")
)

func thumbnailKey(id uuid.UUID) string { return "thumbnails/" + id.String() + ".png" }

// thumbnail opens the kept thumbnail of image file f, drawing it first when
// there is none. Requests for one image at once decode it once: the first
// draws, the others wait for it and then read what it kept.
func (s *Service) thumbnail(ctx context.Context, f File) (io.ReadCloser, error) {
	if f.decodedSize > MaxDecodedSize {
		return nil, errTooLargeToDraw
	}
	key := thumbnailKey(f.ID)
	for {
		r, err := s.Blobs.NewReader(ctx, key, nil)
		if gcerrors.Code(err) != gcerrors.NotFound {
			return r, err
		}
		s.mu.Lock()
		d, drawer := s.drawing[f.ID], false
		if d == nil {
			d, drawer = &drawing{done: make(chan struct{})}, true
			s.drawing[f.ID] = d
		}
		s.mu.Unlock()
		if drawer {
			d.err = s.draw(ctx, f, key)
			s.mu.Lock()
			delete(s.drawing, f.ID)
			s.mu.Unlock()
			close(d.done)
			if d.err != nil {
				return nil, d.err
			}
			return s.Blobs.NewReader(ctx, key, nil)
		}
		s.waiting.Add(1)
		select {
		case <-d.done:
			s.waiting.Add(-1)
		case <-ctx.Done():
			s.waiting.Add(-1)
			return nil, ctx.Err()
		}
		// Drawn: read it. The drawer's request ended before it could draw:
		// draw it here. Any other failure is this image's too.
		if d.err != nil && !errors.Is(d.err, context.Canceled) && !errors.Is(d.err, context.DeadlineExceeded) {
			return nil, d.err
		}
	}
}

// draw decodes image file f and keeps its thumbnail at key. It takes a
// drawing slot first, then looks for the thumbnail again (another request,
// or another instance sharing the bucket, may have drawn it meanwhile),
// and decodes only an image whose header shows it fits MaxDecodedSize:
// files stored before the size was recorded are measured here.
func (s *Service) draw(ctx context.Context, f File, key string) error {
	s.waiting.Add(1)
	select {
	case s.slots <- struct{}{}:
		s.waiting.Add(-1)
		defer func() { <-s.slots }()
	case <-ctx.Done():
		s.waiting.Add(-1)
		return ctx.Err()
	}
	if ok, err := s.Blobs.Exists(ctx, key); err != nil || ok {
		return err
	}
	r, err := s.Open(ctx, f)
	if err != nil {
		return err
	}
	defer r.Close()
	head, err := readHead(r)
	if err != nil {
		return fmt.Errorf("file %s: read image: %w", f.ID, err)
	}
	if size, ok := decodedSize(head); !ok || size > MaxDecodedSize {
		return errTooLargeToDraw
	}
	s.decodes.Add(1)
	body := &readFailure{r: io.MultiReader(bytes.NewReader(head), r)}
	src, _, err := image.Decode(body)
	if body.err != nil {
		return fmt.Errorf("file %s: read image: %w", f.ID, body.err)
	}
	if err != nil {
		return errUndrawable // stored bytes whose header is sound but whose pixels are not
	}
	b := src.Bounds()
	w, h := thumbnailSize(b.Dx(), b.Dy())
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	return s.Blobs.WriteAll(ctx, key, encodePNG(dst), &blob.WriterOptions{ContentType: PNG})
}

// readFailure remembers an error reading the stored bytes, which is the
// store's failure, apart from the decoder's verdict on the bytes.
type readFailure struct {
	r   io.Reader
	err error
}

func (r *readFailure) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

func encodePNG(img image.Image) []byte {
	var buf bytes.Buffer
	_ = png.Encode(&buf, img) // writing to memory does not fail
	return buf.Bytes()
}
