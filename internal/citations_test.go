package internal_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A citation is a reference to a document that is not in the repository:
// the working notes the project was first built from (a contract, a design
// note, a decisions file, an API specification numbered by section). A
// reader of the repository cannot open them, so a comment or document
// states the rule itself or cites docs/api.md by its section name
// ("docs/api.md, Bills"). The needles are spelt in pieces so that this file
// does not cite; they are plain strings, with word boundaries checked by
// hand, because a regular expression starting at a word boundary is slow
// over the generated client.
var (
	// citationWords are matched as written.
	citationWords = []string{"CON" + "TRACT", "\u00a7", "DES" + "IGN", "DECI" + "SIONS"}
	// citationPhrases are matched in lower-cased text.
	citationPhrases = []string{"the " + "spec", "our " + "spec", "the " + "contract", "our " + "contract"}
	// specSection is a section number after the word spec, also on the
	// next comment line; matched in lower-cased text.
	specSection = regexp.MustCompile(`spec(?:'s)?(?:\s|//|#|--|\*)*\d+\.\d+`)
)

// citedFiles are the kinds of file a reader of the repository reads.
var citedFiles = []string{".go", ".md", ".yaml", ".yml", ".sql", ".sh"}

// TestNothingCitesADocumentOutsideTheRepository fails on every such
// citation in the repository's code, documents and configuration.
func TestNothingCitesADocumentOutsideTheRepository(t *testing.T) {
	root := ".."
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") && d.Name() != ".ci" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		ext := filepath.Ext(path)
		if !slices.Contains(citedFiles, ext) && filepath.Base(filepath.Dir(path)) != ".ci" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		text := string(b)
		lines := strings.Split(text, "\n")
		report := func(in string, at int) {
			line := strings.Count(in[:at], "\n")
			t.Errorf("%s:%d: %q cites a document outside the repository: state the rule, or cite docs/api.md by section name",
				path, line+1, strings.TrimSpace(lines[line]))
		}
		for _, w := range citationWords {
			for _, at := range words(text, w) {
				report(text, at)
			}
		}
		lower := strings.ToLower(text)
		for _, w := range citationPhrases {
			for _, at := range words(lower, w) {
				report(lower, at)
			}
		}
		for _, m := range specSection.FindAllStringIndex(lower, -1) {
			if m[0] == 0 || !wordByte(lower[m[0]-1]) {
				report(lower, m[0])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: is the walk rooted at the repository?", checked)
	}
}

// words returns where w occurs in text as a whole word (or, for a word of
// no letters, anywhere).
func words(text, w string) []int {
	var out []int
	for i := 0; ; {
		j := strings.Index(text[i:], w)
		if j < 0 {
			return out
		}
		at, end := i+j, i+j+len(w)
		if (at == 0 || !wordByte(text[at-1]) || !wordByte(w[0])) && (end == len(text) || !wordByte(text[end]) || !wordByte(w[len(w)-1])) {
			out = append(out, at)
		}
		i = end
	}
}

// wordByte reports whether c is an ASCII letter, digit or underscore.
func wordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
