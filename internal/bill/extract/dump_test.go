package extract

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDumpText prints the lines and cells the layout builds from the PDF
// named by EXTRACT_DUMP (x positions and font sizes in brackets), for
// looking at a document the text rules misread.
func TestDumpText(t *testing.T) {
	name := os.Getenv("EXTRACT_DUMP")
	if name == "" {
		t.Skip("EXTRACT_DUMP not set")
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pdfLines(data)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range lines {
		var b strings.Builder
		for _, c := range l.cells {
			fmt.Fprintf(&b, " [%.0f-%.0f %.0f] %s |", c.x0, c.x1, c.size, c.text)
		}
		t.Logf("%3d p%d y=%.0f%s", i, l.page, l.y, b.String())
	}
}
