package extract

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/ledongthuc/pdf"
)

// cell is a run of text on one line, separated from its neighbours by a gap
// wider than a word space: a table column, or a label and its value set apart.
type cell struct {
	x0, x1 float64
	size   float64 // largest font size in the cell
	text   string
}

// line is the cells sharing one baseline, left to right.
type line struct {
	page  int
	y     float64
	cells []cell
}

// String joins the cells with a wide separator so that whole-line patterns
// (IBANs, currency codes) never run across a column boundary unnoticed.
func (l line) String() string {
	parts := make([]string, len(l.cells))
	for i, c := range l.cells {
		parts[i] = c.text
	}
	return strings.Join(parts, "   ")
}

// layoutLines groups a page's glyphs into lines and cells. PDF text has no
// lines, only glyphs at positions, and generators emit them in any order, so
// the page is rebuilt from the coordinates: glyphs whose baselines lie within
// 40% of the font size form a line; within a line a gap over a fifth of the
// font size is a space and one over 1.5 font sizes starts a new cell.
func layoutLines(glyphs []pdf.Text, page int) []line {
	gs := make([]pdf.Text, 0, len(glyphs))
	for _, g := range glyphs {
		if g.S == "" || g.S == "\n" || g.S == "\r" || math.IsNaN(g.X) || math.IsNaN(g.Y) || math.IsInf(g.X, 0) || math.IsInf(g.Y, 0) {
			continue
		}
		gs = append(gs, g)
	}
	// Stable, so glyphs that a font without widths leaves at one position
	// keep the order they were drawn in.
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Y > gs[j].Y })
	var groups [][]pdf.Text
	for _, g := range gs {
		if n := len(groups); n > 0 {
			last := groups[n-1]
			if math.Abs(last[0].Y-g.Y) <= 0.4*fontSize(g) {
				groups[n-1] = append(last, g)
				continue
			}
		}
		groups = append(groups, []pdf.Text{g})
	}
	var out []line
	for _, grp := range groups {
		// Some generators draw a word's space glyph where the next word
		// starts (a hair to its right); sorted by its position it would
		// land after the word's first letter ("R 18-31"). A space sorts a
		// tenth of the font size to the left of where it is drawn.
		key := func(g pdf.Text) float64 {
			if g.S == " " {
				return g.X - 0.1*fontSize(g)
			}
			return g.X
		}
		sort.SliceStable(grp, func(i, j int) bool { return key(grp[i]) < key(grp[j]) })
		l := line{page: page, y: grp[0].Y}
		var (
			cur        *cell
			b          strings.Builder
			prevX, end float64
			prevW      float64
		)
		flush := func() {
			if cur != nil {
				cur.text = normSpace(b.String())
				if cur.text != "" {
					l.cells = append(l.cells, *cur)
				}
			}
			b.Reset()
		}
		for i, g := range grp {
			fs := fontSize(g)
			w := g.W
			if w <= 0 || w > 10*fs {
				w = 0.5 * fs
			}
			x := g.X
			if i > 0 && prevW <= 0 && math.Abs(g.X-prevX) < 0.01 {
				// No widths in the font: the library could not advance
				// the position, so place the glyph after the previous one.
				x = end
			}
			gap := x - end
			switch {
			case i == 0 || gap > 1.5*fs:
				flush()
				cur = &cell{x0: x, size: fs}
			case gap > 0.2*fs && !strings.HasSuffix(b.String(), " "):
				b.WriteByte(' ')
			}
			b.WriteString(g.S)
			cur.x1 = x + w
			cur.size = max(cur.size, fs)
			prevX, prevW, end = g.X, g.W, x+w
		}
		flush()
		if len(l.cells) > 0 {
			out = append(out, l)
		}
	}
	return out
}

func fontSize(g pdf.Text) float64 {
	fs := math.Abs(g.FontSize)
	if fs < 1 || fs > 200 || math.IsNaN(fs) {
		return 10
	}
	return fs
}

// normSpace maps every Unicode space (PDFs use no-break and thin spaces in
// amounts and IBANs) to ' ', drops control characters and collapses runs.
func normSpace(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space = true
		case unicode.IsControl(r) || r == unicode.ReplacementChar:
		default:
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(r)
		}
	}
	return b.String()
}
