package extract_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu/model"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// TestDevCorpus scores Read on a directory of real invoices laid out as
// docs/*.pdf with a truth.json beside it (field values a person reads off
// each document). It runs only when EXTRACT_DEV_CORPUS names that
// directory: the documents are not part of the repository. Each document is
// read twice, as it is and with its embedded files removed (the text rules
// alone). EXTRACT_DEV_CORPUS_OUT, when set, receives every result as JSON so
// that two versions of the reader can be compared document by document.
func TestDevCorpus(t *testing.T) {
	dir := os.Getenv("EXTRACT_DEV_CORPUS")
	if dir == "" {
		t.Skip("EXTRACT_DEV_CORPUS not set")
	}
	raw, err := os.ReadFile(filepath.Join(dir, "truth.json"))
	if err != nil {
		t.Fatal(err)
	}
	var truth map[string]struct {
		Fields map[string]any `json:"fields"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(truth))
	for id := range truth {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type score struct{ right, wrong, missed, docs, failed int }
	scores := map[string]*score{"as is": {}, "text only": {}}
	out := map[string]any{}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(dir, "docs", id))
		if err != nil {
			t.Fatal(err)
		}
		var stripped bytes.Buffer
		if err := api.RemoveAttachments(bytes.NewReader(data), &stripped, nil, model.NewDefaultConfiguration()); err != nil {
			stripped.Reset()
			stripped.Write(data) // no attachment to remove
		}
		for mode, in := range map[string][]byte{"as is": data, "text only": stripped.Bytes()} {
			s := scores[mode]
			s.docs++
			res, err := extract.Read(in)
			if err != nil {
				s.failed++
				out[mode+" "+id] = err.Error()
			} else {
				out[mode+" "+id] = res
			}
			got := fieldsMap(t, res.Fields)
			for k, want := range truth[id].Fields {
				if strings.HasPrefix(k, "_") {
					continue
				}
				g, ok := got[k]
				if b, isBool := want.(bool); isBool && !b && !ok {
					continue
				}
				switch {
				case want == nil && !ok:
				case want == nil || (ok && fmt.Sprint(g) != fmt.Sprint(want)):
					if ok {
						s.wrong++
					}
				case !ok:
					s.missed++
				default:
					s.right++
				}
			}
		}
	}
	for _, mode := range []string{"as is", "text only"} {
		s := scores[mode]
		t.Logf("%-9s: %d documents, %d unreadable; fields right %d, wrong %d, left empty %d", mode, s.docs, s.failed, s.right, s.wrong, s.missed)
	}
	if p := os.Getenv("EXTRACT_DEV_CORPUS_OUT"); p != "" {
		b, _ := json.MarshalIndent(out, "", " ")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
