package file

import (
	"bytes"
	"encoding/binary"
	"image"
)

// MaxDecodedSize bounds the memory drawing one thumbnail may take: the
// decoded picture with the decoder's own buffers, and the thumbnail. A
// 12-megapixel phone photo counts about 64 MiB (decodedSize errs high; it
// takes 18 MiB), a 12-megapixel screenshot 46 MiB. Pixels alone do not
// bound it: a 16-bit RGBA PNG under 50 megapixels decodes to 400 MB from a
// file of a few hundred KB. An image over the bound is stored but has no
// thumbnail.
const MaxDecodedSize = 80 << 20

// thumbnailSize is the size of the thumbnail of a w × h picture: at most
// ThumbnailWidth wide, keeping the aspect ratio.
func thumbnailSize(w, h int) (int, int) {
	if w > ThumbnailWidth {
		return ThumbnailWidth, max(1, int(int64(h)*ThumbnailWidth/int64(w)))
	}
	return w, h
}

// decodedSize is the most memory, in bytes, that decoding the PNG or JPEG
// head begins and drawing its thumbnail take, read from its header before
// anything is decoded; false when the header is not within head or is not
// one the decoders accept. It follows what the standard library's decoders
// allocate, erring high where the header leaves it open.
func decodedSize(head []byte) (int64, bool) {
	var size, w, h int64
	var ok bool
	switch {
	case bytes.HasPrefix(head, pngSignature):
		size, w, h, ok = pngDecodedSize(head)
	case bytes.HasPrefix(head, []byte{0xff, 0xd8}):
		size, w, h, ok = jpegDecodedSize(head)
	}
	if !ok || w <= 0 || h <= 0 || w*h > MaxPixels {
		return 0, false
	}
	// The decoder must see the picture the header was read as.
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(head)); err != nil || int64(cfg.Width) != w || int64(cfg.Height) != h {
		return 0, false
	}
	tw, th := thumbnailSize(int(w), int(h))
	return size + 4*int64(tw)*int64(th), true // the thumbnail is RGBA
}

var pngSignature = []byte("\x89PNG\r\n\x1a\n")

// pngDecodedSize reads the IHDR chunk and the chunks before the image data.
// image/png decodes into a picture of the color model the color type and
// bit depth give (Gray, Gray16, Paletted, RGBA, NRGBA, RGBA64, NRGBA64),
// widened to NRGBA or NRGBA64 when a tRNS chunk makes gray or RGB
// transparent; it keeps two rows of raw samples, and an interlaced image
// is drawn pass by pass, each pass with its rows and a picture of its own,
// which together are as large again.
func pngDecodedSize(head []byte) (size, w, h int64, ok bool) {
	const ihdrEnd = 8 + 8 + 13
	if len(head) < ihdrEnd || string(head[12:16]) != "IHDR" {
		return 0, 0, 0, false
	}
	w = int64(binary.BigEndian.Uint32(head[16:]))
	h = int64(binary.BigEndian.Uint32(head[20:]))
	depth, colorType, interlaced := int64(head[24]), head[25], head[28] != 0
	channels := map[byte]int64{0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[colorType]
	if channels == 0 || depth == 0 {
		return 0, 0, 0, false
	}
	transparent, found := false, false
	for at := 8; at+8 <= len(head); {
		n := int64(binary.BigEndian.Uint32(head[at:]))
		typ := string(head[at+4 : at+8])
		if typ == "IDAT" {
			found = true
			break
		}
		transparent = transparent || typ == "tRNS"
		at += 12 + int(min(n, int64(len(head))))
	}
	if !found {
		transparent = true // the chunks before the pixels run past head: assume the widest
	}
	var perPixel int64
	switch {
	case colorType == 3:
		perPixel = 1 // paletted
	case depth == 16 && colorType == 0 && !transparent:
		perPixel = 2 // Gray16
	case depth == 16:
		perPixel = 8 // RGBA64 or NRGBA64
	case colorType == 0 && !transparent:
		perPixel = 1 // Gray
	default:
		perPixel = 4 // RGBA or NRGBA
	}
	picture, rows := w*h*perPixel, int64(2)
	if interlaced {
		picture, rows = 2*picture, 2*8 // each of the seven passes has its own rows and picture
	}
	row := 1 + (w*channels*depth+7)/8
	return picture + rows*row, w, h, true
}

// jpegDecodedSize reads the frame header (SOF) and the markers before it.
// image/jpeg decodes each component into a plane padded to whole blocks of
// the sampling factors; a progressive JPEG also keeps every block's 64
// coefficients as int32 (4 bytes a sample). Four components are then
// converted into a CMYK picture, and three into RGBA unless a JFIF marker
// says they are YCbCr (an Adobe marker after the header could still ask
// for RGB, so without JFIF the conversion is counted).
func jpegDecodedSize(head []byte) (size, w, h int64, ok bool) {
	// Markers are walked as image/jpeg walks them, so that both read the
	// same frame header: bytes up to the next 0xff are skipped, as are
	// 0xff 0x00, fill bytes and restart markers, which have no length.
	jfif := false
	for at := 2; at+2 <= len(head); {
		if head[at] != 0xff {
			at++
			continue
		}
		marker := head[at+1]
		switch {
		case marker == 0x00:
			at += 2
			continue
		case marker == 0xff: // fill byte
			at++
			continue
		case 0xd0 <= marker && marker <= 0xd7:
			at += 2
			continue
		case marker == 0xd9 || marker == 0xda:
			return 0, 0, 0, false // the end, or pixels, before any frame header
		}
		if at+4 > len(head) {
			return 0, 0, 0, false
		}
		n := int(binary.BigEndian.Uint16(head[at+2:])) // the length counts its own two bytes
		if n < 2 {
			return 0, 0, 0, false
		}
		seg := head[at+4 : min(len(head), at+2+n)]
		switch {
		case marker == 0xe0 && bytes.HasPrefix(seg, []byte("JFIF\x00")):
			jfif = true
		case marker == 0xc0 || marker == 0xc1 || marker == 0xc2:
			return jpegFrameSize(seg, marker == 0xc2, jfif)
		}
		at += 2 + n
	}
	return 0, 0, 0, false
}

func jpegFrameSize(sof []byte, progressive, jfif bool) (size, w, h int64, ok bool) {
	if len(sof) < 6 {
		return 0, 0, 0, false
	}
	h, w = int64(binary.BigEndian.Uint16(sof[1:])), int64(binary.BigEndian.Uint16(sof[3:]))
	nComp := int(sof[5])
	if nComp != 1 && nComp != 3 && nComp != 4 || len(sof) < 6+3*nComp {
		return 0, 0, 0, false
	}
	hv := func(i int) (int64, int64) {
		if nComp == 1 {
			return 1, 1 // a single component is decoded as 1 × 1 whatever it says
		}
		b := sof[6+3*i+1]
		return max(1, int64(b>>4)), max(1, int64(b&0x0f))
	}
	h0, v0 := hv(0)
	mxx, myy := (w+8*h0-1)/(8*h0), (h+8*v0-1)/(8*v0) // blocks of the first component's sampling
	var planes int64
	for i := range nComp {
		hi, vi := hv(i)
		planes += 64 * hi * vi * mxx * myy
	}
	size = planes
	if progressive {
		size += 4 * planes
	}
	if nComp == 4 || nComp == 3 && !jfif {
		size += 4 * (64 * h0 * v0 * mxx * myy)
	}
	return size, w, h, true
}
