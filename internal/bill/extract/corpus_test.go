package extract_test

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

var update = flag.Bool("update", false, "rewrite testdata/ACCURACY.md from the corpus run")

// golden is the expected outcome of one corpus file.
type golden struct {
	Unreadable bool           `json:"unreadable"`
	Format     string         `json:"format"`
	Fields     map[string]any `json:"fields"`
	// Warnings lists substrings each of which some warning must contain.
	Warnings []string `json:"warnings"`
}

// fieldNames are the JSON names of extract.Fields, in table order.
var fieldNames = []string{
	"invoice_number", "issue_date", "due_date", "currency", "supplier_name", "supplier_tax_id",
	"iban", "account_number", "sort_code", "aba_code", "bic", "account_holder_name",
	"amount_due", "remittance_reference", "credit_note", "payment_means",
}

// textFloor is the share of text-rule fields that must come out right; the
// corpus is at 100% today, the floor leaves room for a new sample that the
// rules do not read perfectly without turning the suite red.
const textFloor = 0.9

type tally struct{ right, total int }

func TestCorpus(t *testing.T) {
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	structured := map[string]*tally{}
	text := map[string]*tally{}
	var unreadable tally
	files := 0
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || ext == ".json" || ext == ".md" {
			continue
		}
		files++
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		gb, err := os.ReadFile(filepath.Join("testdata", strings.TrimSuffix(name, ext)+".json"))
		if err != nil {
			t.Errorf("%s: no golden file: %v", name, err)
			continue
		}
		var want golden
		if err := json.Unmarshal(gb, &want); err != nil {
			t.Fatalf("%s: golden: %v", name, err)
		}
		res, err := extract.Read(data)
		if want.Unreadable {
			unreadable.total++
			if errors.Is(err, extract.ErrUnreadable) {
				unreadable.right++
			} else {
				t.Errorf("%s: want ErrUnreadable, got %v (%+v)", name, err, res)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if res.Format != want.Format {
			t.Errorf("%s: format %q, want %q", name, res.Format, want.Format)
		}
		for _, sub := range want.Warnings {
			if !containsSub(res.Warnings, sub) {
				t.Errorf("%s: no warning containing %q in %q", name, sub, res.Warnings)
			}
		}
		got := fieldsMap(t, res.Fields)
		isText := want.Format == extract.FormatPDFText
		bucket := structured
		if isText {
			bucket = text
		}
		for _, f := range fieldNames {
			g, w := got[f], want.Fields[f]
			if g == nil && w == nil {
				continue // absent in both: not counted, or every empty field would score
			}
			tl := bucket[f]
			if tl == nil {
				tl = &tally{}
				bucket[f] = tl
			}
			tl.total++
			if fmt.Sprint(g) == fmt.Sprint(w) {
				tl.right++
				continue
			}
			if isText {
				t.Logf("%s: %s = %v, want %v", name, f, g, w)
			} else {
				t.Errorf("%s: %s = %v, want %v", name, f, g, w)
			}
		}
		for f := range want.Fields {
			if !contains(fieldNames, f) {
				t.Errorf("%s: golden has unknown field %q", name, f)
			}
		}
	}
	if files < 12 {
		t.Errorf("corpus has %d files, want at least 12", files)
	}
	table := accuracyTable(structured, text, unreadable)
	t.Logf("per-field accuracy over the corpus:\n%s", table)
	if r, n := sum(text); n > 0 && float64(r)/float64(n) < textFloor {
		t.Errorf("text rules: %d/%d fields right, below the floor of %.0f%%", r, n, textFloor*100)
	}
	if *update {
		doc := "# Extraction accuracy\n\n" +
			"Per-field accuracy of `internal/bill/extract` over its corpus (testdata/).\n" +
			"A field counts when the golden file or the result has it; right means equal.\n" +
			"Regenerate with `go test ./internal/bill/extract/ -run TestCorpus -update`.\n\n" + table +
			"\nStructured formats must stay at 100% (TestCorpus fails otherwise); the text rules must stay\n" +
			"above 90% of their fields.\n\n" +
			"The text corpus is small and the first six text PDFs were written together with the rules,\n" +
			"so their score flatters the rules. Three layouts (text-es-factura, text-ch-rechnung,\n" +
			"text-gb-studio) were added afterwards and scored before any rule was changed: 21/25 fields\n" +
			"right (84%); the misses (Spanish \"Nº Factura\", Swiss \"MWST-Nr.\", the label \"Issued\",\n" +
			"a bare \"account\" label) were then fixed. Expect real-world text accuracy nearer the\n" +
			"held-out figure than the table.\n"
		if err := os.WriteFile(filepath.Join("testdata", "ACCURACY.md"), []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func fieldsMap(t *testing.T, f extract.Fields) map[string]any {
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func accuracyTable(structured, text map[string]*tally, unreadable tally) string {
	var b strings.Builder
	b.WriteString("| field | structured (UBL, CII, Factur-X) | text PDFs | all |\n|---|---|---|---|\n")
	cell := func(tl *tally) string {
		if tl == nil || tl.total == 0 {
			return "–"
		}
		return fmt.Sprintf("%d/%d", tl.right, tl.total)
	}
	for _, f := range fieldNames {
		s, x := structured[f], text[f]
		all := &tally{}
		for _, tl := range []*tally{s, x} {
			if tl != nil {
				all.right += tl.right
				all.total += tl.total
			}
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", f, cell(s), cell(x), cell(all))
	}
	sr, sn := sum(structured)
	xr, xn := sum(text)
	fmt.Fprintf(&b, "| **all fields** | %s | %s | %s |\n", cell(&tally{sr, sn}), cell(&tally{xr, xn}), cell(&tally{sr + xr, sn + xn}))
	fmt.Fprintf(&b, "| unreadable files rejected (ErrUnreadable) | | | %s |\n", cell(&unreadable))
	return b.String()
}

func sum(m map[string]*tally) (right, total int) {
	for _, tl := range m {
		right += tl.right
		total += tl.total
	}
	return right, total
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func containsSub(list []string, sub string) bool {
	for _, x := range list {
		if strings.Contains(x, sub) {
			return true
		}
	}
	return false
}
