package file_test

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/memblob" // mem:// buckets

	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/file/filetest"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/keyring"
)

// allocated is how many bytes this process has allocated on the heap so far.
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// allocatedBy is how many bytes f allocates on the heap.
func allocatedBy(f func()) uint64 {
	runtime.GC()
	before := allocated()
	f()
	return allocated() - before
}

func memService(t *testing.T) *file.Service {
	t.Helper()
	b, err := blob.OpenBucket(t.Context(), "mem://")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	keys, err := keyring.New([]byte("file-tests-root-secret-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	return file.New(nil, keys, b)
}

func mustPut(t *testing.T, s *file.Service, mimeType string, b []byte, decoded int64) file.File {
	t.Helper()
	f, err := file.PutForTest(t.Context(), s, mimeType, b, decoded)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// expectNoThumbnail fails t unless err is not_found.
func expectNoThumbnail(t *testing.T, r io.ReadCloser, err error) {
	t.Helper()
	if err == nil {
		r.Close()
		t.Fatal("a thumbnail was drawn")
	}
	if e, ok := apierr.As(err); !ok || e.Type != apierr.NotFound || e.Message == "" {
		t.Fatalf("got %v, want not_found", err)
	}
}

// TestDecompressionBombIsNotDecoded: a 2.5 MB 16-bit RGBA PNG of 7071 ×
// 7071 pixels (under 50 megapixels, 400 MB decoded) gets no thumbnail and
// is never decoded, whether its decoded size was recorded when it was
// stored or (a file stored before that) is read from its header when a
// thumbnail is asked for.
func TestDecompressionBombIsNotDecoded(t *testing.T) {
	bomb := filetest.PNG(7071, 7071, 16, filetest.RGBA)
	if err := file.Sniff(file.PNG, bomb); err != nil {
		t.Fatalf("the bomb is not a PNG that is stored: %v", err)
	}
	size, ok := file.DecodedSize(bomb)
	if !ok || size < 7071*7071*8 {
		t.Fatalf("decoded size %d, %v: want at least 400 MB", size, ok)
	}
	s := memService(t)
	for _, decoded := range []int64{size, 0} {
		f := mustPut(t, s, file.PNG, bomb, decoded)
		if l := s.ThumbnailLink(f, time.Now()); (l == nil) != (decoded != 0) {
			t.Fatalf("recorded size %d: thumbnail link %v", decoded, l)
		}
		n := allocatedBy(func() {
			r, err := file.ThumbnailOf(s, t.Context(), f)
			expectNoThumbnail(t, r, err)
		})
		if n > 8<<20 {
			t.Fatalf("recorded size %d: refusing the thumbnail allocated %d MiB", decoded, n>>20)
		}
	}
	if s.Decodes() != 0 {
		t.Fatalf("%d decodes", s.Decodes())
	}
}

// TestConcurrentThumbnailRequestsDecodeOnce: N requests for the thumbnail of
// one image, all waiting while the drawing slots are taken, decode it once
// and all get the same thumbnail.
func TestConcurrentThumbnailRequestsDecodeOnce(t *testing.T) {
	const n = 6
	s := memService(t)
	photo := encodePNG(t, picture(1200, 900))
	f := mustPut(t, s, file.PNG, photo, 0)
	release := s.HoldSlots()
	thumbs := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			r, err := file.ThumbnailOf(s, context.Background(), f)
			if err != nil {
				errs[i] = err
				return
			}
			defer r.Close()
			thumbs[i], errs[i] = io.ReadAll(r)
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.Waiting() < n {
		if time.Now().After(deadline) {
			release()
			t.Fatalf("%d of %d requests waiting", s.Waiting(), n)
		}
		runtime.Gosched()
	}
	release()
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(thumbs[i], thumbs[0]) {
			t.Fatalf("request %d: %v (%d bytes, the first got %d)", i, errs[i], len(thumbs[i]), len(thumbs[0]))
		}
	}
	img, err := png.Decode(bytes.NewReader(thumbs[0]))
	if err != nil || img.Bounds() != image.Rect(0, 0, 256, 192) {
		t.Fatalf("thumbnail %v, %v", img.Bounds(), err)
	}
	if d := s.Decodes(); d != 1 {
		t.Fatalf("%d decodes for %d requests, want 1", d, n)
	}
	// Later requests read the kept thumbnail.
	r, err := file.ThumbnailOf(s, t.Context(), f)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if d := s.Decodes(); d != 1 {
		t.Fatalf("%d decodes after one more request", d)
	}
}

// TestUndecodableImageHasNoThumbnail: stored bytes whose header is sound but
// whose pixels are not answer not_found, never an internal error.
func TestUndecodableImageHasNoThumbnail(t *testing.T) {
	s := memService(t)
	photo := encodePNG(t, picture(300, 200))
	broken := append(bytes.Clone(photo[:len(photo)/2]), make([]byte, len(photo)/2)...)
	if err := file.Sniff(file.PNG, broken); err != nil {
		t.Fatalf("the broken PNG is refused on upload: %v", err)
	}
	r, err := file.ThumbnailOf(s, t.Context(), mustPut(t, s, file.PNG, broken, 0))
	expectNoThumbnail(t, r, err)
}

func picture(w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x), uint8(y), uint8(x ^ y), 255})
		}
	}
	return img
}

func encodePNG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodeJPEG(t *testing.T, img image.Image) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDecodedSizeBoundsTheDecoders: what decodedSize counts is at least
// what the standard library's decoders allocate, for each color model,
// interlacing, transparency, subsampling, progressive JPEGs and CMYK (up to
// a fixed 64 KiB of tables and buffers).
func TestDecodedSizeBoundsTheDecoders(t *testing.T) {
	type sample struct {
		name string
		b    []byte
	}
	samples := []sample{
		{"RGBA 8-bit", encodePNG(t, picture(800, 600))},
		{"gray 8-bit", filetest.PNG(1000, 700, 8, filetest.Gray)},
		{"gray 8-bit with tRNS", filetest.TransparentPNG(1000, 700, 8, filetest.Gray)},
		{"gray 16-bit", filetest.PNG(900, 500, 16, filetest.Gray)},
		{"gray 16-bit with tRNS", filetest.TransparentPNG(900, 500, 16, filetest.Gray)},
		{"RGB 8-bit with tRNS", filetest.TransparentPNG(700, 700, 8, filetest.RGB)},
		{"RGBA 16-bit", filetest.PNG(700, 500, 16, filetest.RGBA)},
		{"RGBA 16-bit interlaced", filetest.InterlacedPNG(700, 500, 16, filetest.RGBA)},
		{"gray+alpha 8-bit", filetest.PNG(600, 600, 8, filetest.GrayAlpha)},
		{"paletted", filetest.PNG(1000, 1000, 8, filetest.Paletted)},
		{"one very wide row", filetest.PNG(1_000_000, 1, 16, filetest.RGBA)},
		{"one very tall column", filetest.PNG(1, 1_000_000, 8, filetest.Gray)},
		{"JPEG 4:2:0", encodeJPEG(t, picture(1000, 750))},
		{"JPEG gray", encodeJPEG(t, image.NewGray(image.Rect(0, 0, 900, 700)))},
	}
	// The decoders' own test pictures: progressive, subsampled, CMYK, RGB, gray.
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "image", "testdata")
	for _, name := range []string{"video-001.jpeg", "video-001.progressive.jpeg", "video-001.q50.444.progressive.jpeg",
		"video-001.q50.410.progressive.jpeg", "video-001.q50.422.jpeg", "video-001.cmyk.jpeg", "video-001.rgb.jpeg",
		"video-005.gray.q50.2x2.progressive.jpeg", "video-001.png", "video-001.cmyk.png"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		samples = append(samples, sample{name, b})
	}
	for _, c := range samples {
		size, ok := file.DecodedSize(c.b)
		if !ok {
			t.Fatalf("%s: no decoded size", c.name)
		}
		var img image.Image
		used := allocatedBy(func() {
			var err error
			if img, _, err = image.Decode(bytes.NewReader(c.b)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		})
		b := img.Bounds()
		thumb := min(b.Dx(), 256) * max(1, b.Dy()*min(b.Dx(), 256)/b.Dx()) * 4
		used += uint64(thumb)
		if used > uint64(size)+64<<10 {
			t.Errorf("%s: decoding allocated %d bytes, more than the %d counted", c.name, used, size)
		}
	}
}

// TestDecodedSizeOfPhotos: a 12-megapixel phone photo (JPEG, 4:2:0, no JFIF
// marker, as cameras write them) and screenshot are drawn; a 16-bit
// 50-megapixel PNG, a progressive 4:4:4 JPEG of 20 megapixels and a
// picture whose thumbnail alone is huge are not. Headers that cannot be
// read have no size.
func TestDecodedSizeOfPhotos(t *testing.T) {
	phone := jpegHeader(4032, 3024, 0xc0, [][2]byte{{2, 2}, {1, 1}, {1, 1}}, false)
	progressive := jpegHeader(5472, 3648, 0xc2, [][2]byte{{1, 1}, {1, 1}, {1, 1}}, true)
	for _, c := range []struct {
		name   string
		head   []byte
		drawn  bool
		within bool // false: no size at all
	}{
		{"phone photo", phone, true, true},
		{"phone photo with JFIF", jpegHeader(4032, 3024, 0xc0, [][2]byte{{2, 2}, {1, 1}, {1, 1}}, true), true, true},
		{"screenshot", filetest.PNG(4000, 3000, 8, filetest.RGBA)[:100], true, true},
		{"16-bit 50 megapixels", filetest.PNG(7071, 7071, 16, filetest.RGBA)[:100], false, true},
		{"progressive 20 megapixels", progressive, false, true},
		{"1 × 40 million", filetest.PNG(1, 40_000_000, 1, filetest.Gray)[:100], false, true},
		{"over 50 megapixels", filetest.PNG(8000, 8000, 1, filetest.Gray)[:100], false, false},
		{"PNG cut in its header", filetest.PNG(10, 10, 8, filetest.Gray)[:20], false, false},
		{"JPEG without a frame header", []byte{0xff, 0xd8, 0xff, 0xe0, 0, 4, 0, 0, 0xff, 0xda, 0, 2}, false, false},
		{"JPEG cut before its first scan", phone[:len(phone)-4], false, false},
		// A restart marker has no length, and a comment may hold what
		// looks like a small frame header: the header is read where the
		// decoder reads it, past both.
		{"JPEG with a restart marker and a decoy frame", append([]byte{0xff, 0xd8, 0xff, 0xd0, 0xff, 0xfe, 0, 15,
			0xff, 0xc0, 0, 11, 8, 0, 1, 0, 1, 1, 1, 0x11, 0}, progressive[2:]...), false, true},
		{"not an image", []byte("%PDF-1.7\n"), false, false},
	} {
		size, ok := file.DecodedSize(c.head)
		if ok != c.within || ok && (size <= file.MaxDecodedSize) != c.drawn {
			t.Errorf("%s: size %d (%d MiB), %v", c.name, size, size>>20, ok)
		}
	}
}

// jpegHeader is the start of a JPEG of w × h with the frame marker sof
// (0xc0 baseline, 0xc2 progressive) and the components' sampling factors,
// with a JFIF marker or an Exif one, up to its first scan.
func jpegHeader(w, h int, sof byte, sampling [][2]byte, jfif bool) []byte {
	out := []byte{0xff, 0xd8}
	if jfif {
		out = append(out, 0xff, 0xe0, 0, 16, 'J', 'F', 'I', 'F', 0, 1, 1, 0, 0, 1, 0, 1, 0, 0)
	} else {
		out = append(out, 0xff, 0xe1, 0, 8, 'E', 'x', 'i', 'f', 0, 0)
	}
	seg := []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), byte(len(sampling))}
	for i, s := range sampling {
		seg = append(seg, byte(i+1), s[0]<<4|s[1], 0)
	}
	out = append(out, 0xff, sof, 0, byte(len(seg)+2))
	out = append(out, seg...)
	return append(out, 0xff, 0xda, 0, 2) // the first scan: the header ends
}

// FuzzDecodedSize: reading any header never panics, and an image that
// decodes takes no more than decodedSize counted for it (up to a fixed
// 64 KiB of tables and buffers): the count is what thumbnails are refused by.
func FuzzDecodedSize(f *testing.F) {
	f.Add(filetest.PNG(30, 20, 8, filetest.RGB))
	f.Add(filetest.InterlacedPNG(17, 9, 16, filetest.RGBA))
	f.Add(filetest.TransparentPNG(40, 3, 8, filetest.Gray))
	f.Add(jpegHeader(64, 48, 0xc2, [][2]byte{{2, 1}, {1, 1}, {1, 1}}, false))
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 40, 30)), nil)
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, b []byte) {
		size, ok := file.DecodedSize(b)
		if !ok || size > 4<<20 {
			return // decoding large pictures would make the fuzzer slow, not find more
		}
		used := allocatedBy(func() { _, _, _ = image.Decode(bytes.NewReader(b)) })
		if used > uint64(size)+64<<10 {
			t.Fatalf("decoding allocated %d bytes, more than the %d counted", used, size)
		}
	})
}
