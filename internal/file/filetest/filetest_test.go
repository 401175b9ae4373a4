package filetest_test

import (
	"bytes"
	"image"
	"image/png"
	"testing"

	"github.com/strongroom/strongroom/internal/file/filetest"
)

// TestPNG: the hand-deflated pictures decode to the size they declare, in
// every shape the tests use, including remainders short of one match.
func TestPNG(t *testing.T) {
	for _, c := range []struct {
		w, h      int
		depth, ct byte
	}{
		{1, 1, 8, filetest.Gray}, {300, 200, 8, filetest.RGB}, {257, 3, 16, filetest.RGBA},
		{1000, 1, 16, filetest.Gray}, {33, 65, 8, filetest.Paletted}, {40, 40, 8, filetest.GrayAlpha},
	} {
		b := filetest.PNG(c.w, c.h, c.depth, c.ct)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		if img.Bounds() != image.Rect(0, 0, c.w, c.h) {
			t.Fatalf("%+v: decoded %v", c, img.Bounds())
		}
	}
	for _, c := range []struct{ w, h int }{{1, 1}, {7, 3}, {9, 9}, {300, 201}} {
		for _, b := range [][]byte{filetest.InterlacedPNG(c.w, c.h, 16, filetest.RGBA), filetest.TransparentPNG(c.w, c.h, 8, filetest.Gray)} {
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil || img.Bounds() != image.Rect(0, 0, c.w, c.h) {
				t.Fatalf("%+v: %v", c, err)
			}
		}
	}
	if n := len(filetest.PNG(7071, 7071, 16, filetest.RGBA)); n > 3<<20 {
		t.Fatalf("the 400 MB picture takes %d bytes", n)
	}
}
