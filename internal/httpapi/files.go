package httpapi

import (
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/file"
)

type fileRecord struct {
	ID             uuid.UUID `json:"id"`
	OrganizationID uuid.UUID `json:"organization_id"`
	FileName       string    `json:"file_name"`
	MimeType       string    `json:"mime_type"`
	Size           int64     `json:"size"`
	Status         string    `json:"status"`
	InsertedAt     time.Time `json:"inserted_at"`
}

func (f fileRecord) organization() uuid.UUID { return f.OrganizationID }

func newFileRecord(f file.File) fileRecord {
	return fileRecord{ID: f.ID, OrganizationID: f.OrganizationID, FileName: f.Name, MimeType: f.MimeType, Size: f.Size,
		Status: string(f.Status), InsertedAt: f.InsertedAt}
}

// createdFileRecord is a new file with the URL its bytes are PUT to.
type createdFileRecord struct {
	fileRecord
	UploadURL string    `json:"upload_url"`
	ExpiresAt time.Time `json:"expires_at"`
}

func newCreatedFileRecord(c file.Created) createdFileRecord {
	return createdFileRecord{fileRecord: newFileRecord(c.File), UploadURL: c.Upload.URL, ExpiresAt: c.Upload.ExpiresAt}
}

// shownFileRecord is a file with the URL its bytes are read from, once stored.
type shownFileRecord struct {
	fileRecord
	DownloadURL *string    `json:"download_url"`
	ExpiresAt   *time.Time `json:"expires_at"`
}

func newShownFileRecord(s file.Shown) shownFileRecord {
	out := shownFileRecord{fileRecord: newFileRecord(s.File)}
	if l := s.Download; l != nil {
		out.DownloadURL, out.ExpiresAt = &l.URL, &l.ExpiresAt
	}
	return out
}

// The file feature's resources: a new file of the organization in the
// path, with its upload URL, and the file in the path, with its download URL.
var (
	newFiles = resource[file.Created, createdFileRecord]{at: organizationID, record: newCreatedFileRecord}
	files    = resource[file.Shown, shownFileRecord]{at: fileID, record: newShownFileRecord}
	fileID   = param{"file_id", "File"}
)

// The content of a file is written out: its signed URLs are the
// permission (no bearer), and its bytes are streamed.

// grant reads the signature of a signed file URL from the query.
func grant(r *http.Request) file.Grant {
	q := r.URL.Query()
	return file.Grant{Expires: q.Get("expires"), Signature: q.Get("signature")}
}

// uploadFileContent receives a file's bytes at its signed upload URL: no
// bearer, the URL is the permission.
func (s *server) uploadFileContent(w http.ResponseWriter, r *http.Request) error {
	id, err := fileID.id(r)
	if err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, file.MaxSize+1)
	f, err := s.Files.Receive(r.Context(), id, grant(r), r.ContentLength, body)
	if err != nil {
		return err
	}
	l := s.Files.DownloadLink(f, s.Clock.Now())
	return files.answer(w, r, http.StatusOK, file.Shown{File: f, Download: &l}, nil)
}

// downloadFileContent sends a file's bytes to the holder of its signed
// download URL, as an attachment the browser will not render or sniff.
func (s *server) downloadFileContent(w http.ResponseWriter, r *http.Request) error {
	id, err := fileID.id(r)
	if err != nil {
		return err
	}
	f, body, err := s.Files.Download(r.Context(), id, grant(r))
	if err != nil {
		return err
	}
	defer body.Close()
	setOrganization(r, f.OrganizationID.String())
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	w.Header().Set("Content-Length", strconv.FormatInt(f.Size, 10))
	sendBytes(w, f.MimeType, body)
	return nil
}

// fileThumbnail sends the PNG thumbnail of an image file to the holder of
// its signed URL.
func (s *server) fileThumbnail(w http.ResponseWriter, r *http.Request) error {
	id, err := fileID.id(r)
	if err != nil {
		return err
	}
	body, err := s.Files.OpenThumbnail(r.Context(), id, grant(r))
	if err != nil {
		return err
	}
	defer body.Close()
	sendBytes(w, file.PNG, body)
	return nil
}

// sendBytes streams a stored file's bytes. Headers keep a browser from
// running or sniffing what an organization's staff uploaded; the signed
// URL expires, so caches keep it privately and briefly.
func sendBytes(w http.ResponseWriter, contentType string, body io.Reader) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=900")
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, body) // a client gone mid-download has nothing to be told
}
