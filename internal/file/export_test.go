package file

import (
	"context"

	"github.com/google/uuid"
)

// Sniff exposes sniff to the external tests: nil when head is of mimeType.
var Sniff = sniff

// SniffSize is how much of a file sniff reads.
const SniffSize = sniffSize

// CheckActive exposes checkActive: nil when head holds no active content.
var CheckActive = checkActive

// DecodedSize exposes decodedSize: what decoding the image head begins takes.
var DecodedSize = decodedSize

// ThumbnailOf exposes thumbnail: file f's thumbnail, drawn on first use.
var ThumbnailOf = (*Service).thumbnail

// PutForTest stores b as the bytes of a stored file of type mimeType,
// recorded with the decoded size decoded (0: unknown, as for files stored
// before it was recorded).
func PutForTest(ctx context.Context, s *Service, mimeType string, b []byte, decoded int64) (File, error) {
	f := File{ID: uuid.New(), MimeType: mimeType, Size: int64(len(b)), Status: Stored, blobKey: "files/" + uuid.NewString(), decodedSize: decoded}
	return f, s.Blobs.WriteAll(ctx, f.blobKey, b, nil)
}

// Waiting is how many thumbnail requests are waiting for a slot or for
// another's drawing.
func (s *Service) Waiting() int64 { return s.waiting.Load() }

// Decodes is how many images s has decoded.
func (s *Service) Decodes() int64 { return s.decodes.Load() }

// HoldSlots takes every drawing slot until release is called.
func (s *Service) HoldSlots() (release func()) {
	for range cap(s.slots) {
		s.slots <- struct{}{}
	}
	return func() {
		for range cap(s.slots) {
			<-s.slots
		}
	}
}
