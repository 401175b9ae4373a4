package file

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// LinkTTL is how long a signed upload or download URL is valid.
const LinkTTL = 15 * time.Minute

// Purpose is what a signed URL lets its holder do; the signature covers
// it, so a download URL cannot be used to upload.
type Purpose string

// The purposes of signed URLs.
const (
	Upload    Purpose = "upload"
	Download  Purpose = "download"
	Thumbnail Purpose = "thumbnail"
)

// Link is a signed URL: a path on this server, so it holds behind any proxy.
type Link struct {
	URL       string
	ExpiresAt time.Time
}

// Grant is what a signed URL's query carries: when it expires and its signature.
type Grant struct {
	Expires   string
	Signature string
}

func (s *Service) signature(p Purpose, id uuid.UUID, expires int64) string {
	mac := hmac.New(sha256.New, s.Keys.Key("file-url"))
	mac.Write([]byte(string(p) + "\n" + id.String() + "\n" + strconv.FormatInt(expires, 10)))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// link signs p on file id until now + LinkTTL.
func (s *Service) link(p Purpose, id uuid.UUID, now time.Time) Link {
	expires := now.Add(LinkTTL).Truncate(time.Second).UTC()
	path := "/api/v1/files/" + id.String() + "/content"
	if p == Thumbnail {
		path = "/api/v1/files/" + id.String() + "/thumbnail"
	}
	q := url.Values{"expires": {strconv.FormatInt(expires.Unix(), 10)}, "signature": {s.signature(p, id, expires.Unix())}}
	return Link{URL: path + "?" + q.Encode(), ExpiresAt: expires}
}

var errLink = apierr.New(apierr.Forbidden, "This link is invalid or has expired. Ask for a new one.")

// check verifies that g grants p on file id at now.
func (s *Service) check(p Purpose, id uuid.UUID, g Grant, now time.Time) error {
	expires, err := strconv.ParseInt(g.Expires, 10, 64)
	if err != nil || now.Unix() > expires || !hmac.Equal([]byte(g.Signature), []byte(s.signature(p, id, expires))) {
		return errLink
	}
	return nil
}
