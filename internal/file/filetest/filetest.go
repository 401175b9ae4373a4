// Package filetest makes hostile image files for tests: files that are
// small on disk and huge once decoded.
package filetest

import (
	"encoding/binary"
	"hash/crc32"
)

// PNG color types (the IHDR's color type byte).
const (
	Gray      = 0
	RGB       = 2
	Paletted  = 3
	GrayAlpha = 4
	RGBA      = 6
)

// PNG is a well-formed PNG of width × height black pixels of color type
// colorType at bitDepth bits per sample, not interlaced. Its pixel data is
// deflated by hand as one literal and matches of 258 bytes (13 bits each),
// so a picture that decodes to hundreds of megabytes takes a few megabytes
// and is made in milliseconds.
func PNG(width, height int, bitDepth, colorType byte) []byte {
	return makePNG(width, height, bitDepth, colorType, false, nil)
}

// InterlacedPNG is PNG drawn in Adam7's seven passes.
func InterlacedPNG(width, height int, bitDepth, colorType byte) []byte {
	return makePNG(width, height, bitDepth, colorType, true, nil)
}

// TransparentPNG is PNG with a tRNS chunk, which makes a gray or RGB
// picture decode with an alpha channel.
func TransparentPNG(width, height int, bitDepth, colorType byte) []byte {
	return makePNG(width, height, bitDepth, colorType, false, make([]byte, 6)[:map[byte]int{Gray: 2, RGB: 6, Paletted: 1}[colorType]])
}

// adam7 are the passes of an interlaced PNG: offsets and steps in x and y.
var adam7 = [7][4]int{{0, 8, 0, 8}, {4, 8, 0, 8}, {0, 4, 4, 8}, {2, 4, 0, 4}, {0, 2, 2, 4}, {1, 2, 0, 2}, {0, 1, 1, 2}}

func makePNG(width, height int, bitDepth, colorType byte, interlaced bool, trns []byte) []byte {
	channels := map[byte]int{Gray: 1, RGB: 3, Paletted: 1, GrayAlpha: 2, RGBA: 4}[colorType]
	// Each row is its filter byte, then the samples.
	rows := func(w, h int) int64 { return int64(h) * int64(1+(w*channels*int(bitDepth)+7)/8) }
	total := rows(width, height)
	if interlaced {
		total = 0
		for _, p := range adam7 {
			w, h := (width-p[0]+p[1]-1)/p[1], (height-p[2]+p[3]-1)/p[3]
			if w > 0 && h > 0 {
				total += rows(w, h)
			}
		}
	}

	ihdr := binary.BigEndian.AppendUint32(nil, uint32(width))
	ihdr = binary.BigEndian.AppendUint32(ihdr, uint32(height))
	ihdr = append(ihdr, bitDepth, colorType, 0, 0, 0)
	if interlaced {
		ihdr[12] = 1
	}
	out := []byte("\x89PNG\r\n\x1a\n")
	out = appendChunk(out, "IHDR", ihdr)
	if colorType == Paletted {
		out = appendChunk(out, "PLTE", []byte{0, 0, 0})
	}
	if trns != nil {
		out = appendChunk(out, "tRNS", trns)
	}
	out = appendChunk(out, "IDAT", zerosZlib(total))
	return appendChunk(out, "IEND", nil)
}

func appendChunk(out []byte, typ string, data []byte) []byte {
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, typ...)
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(append([]byte(typ), data...)))
}

// zerosZlib is a zlib stream of n zero bytes: one fixed-Huffman block
// holding the literal 0, then copies of 258 bytes at distance 1.
func zerosZlib(n int64) []byte {
	w := bitWriter{out: []byte{0x78, 0x01}}
	w.bits(1, 1)                          // BFINAL
	w.bits(1, 2)                          // BTYPE 01: fixed Huffman codes
	literal := func() { w.code(0x30, 8) } // literal 0 is code 00110000
	left := n
	if left > 0 {
		literal()
		left--
	}
	// Length code 285 (258 bytes, no extra bits: code 11000101), then
	// distance code 0 (distance 1: code 00000), reversed once for bits.
	match := reverse(0xc5<<5, 13)
	for ; left >= 258; left -= 258 {
		w.bits(match, 13)
	}
	for ; left > 0; left-- {
		literal()
	}
	w.code(0, 7) // end of block
	out := w.flush()
	// Adler-32 of n zero bytes: a stays 1, b adds 1 for each byte.
	sum := uint32(n%adler32Mod)<<16 | 1
	return binary.BigEndian.AppendUint32(out, sum)
}

const adler32Mod = 65521

// bitWriter packs deflate's bits, least significant first.
type bitWriter struct {
	out  []byte
	acc  uint64
	nacc uint
}

// bits writes the low n bits of v, least significant first (header fields).
func (w *bitWriter) bits(v uint64, n uint) {
	w.acc |= v << w.nacc
	w.nacc += n
	for w.nacc >= 8 {
		w.out = append(w.out, byte(w.acc))
		w.acc >>= 8
		w.nacc -= 8
	}
}

// code writes an n-bit Huffman code, most significant bit first.
func (w *bitWriter) code(c uint64, n uint) { w.bits(reverse(c, n), n) }

// reverse is the low n bits of c in reverse order.
func reverse(c uint64, n uint) uint64 {
	var r uint64
	for i := range n {
		r |= (c >> i & 1) << (n - 1 - i)
	}
	return r
}

func (w *bitWriter) flush() []byte {
	if w.nacc > 0 {
		w.out = append(w.out, byte(w.acc))
	}
	return w.out
}
