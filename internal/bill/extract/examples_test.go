package extract_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// The invoices in examples/ are what a newcomer uploads first. Each is a
// copy of a corpus file, so TestCorpus's truth covers them: this fails
// when one drifts from its source.
func TestExamplesAreCorpusFiles(t *testing.T) {
	examples := map[string]string{
		"invoice-ubl.xml":     "ubl-us-aba.xml",
		"invoice-cii.xml":     "cii-de-xrechnung.xml",
		"invoice-facturx.pdf": "facturx-en16931-at.pdf",
	}
	dir := filepath.Join("..", "..", "..", "examples")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if _, ok := examples[e.Name()]; !ok && e.Name() != "README.md" {
			t.Errorf("examples/%s is not a copy of a corpus file: add it to this test with its source", e.Name())
		}
	}
	for example, source := range examples {
		got, err := os.ReadFile(filepath.Join(dir, example))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", source))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/%s differs from testdata/%s", example, source)
		}
	}
}
