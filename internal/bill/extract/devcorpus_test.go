package extract_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/bill/extract"
)

// TestDevCorpus scores Read on a directory of real invoices laid out as
// docs/*.pdf with a truth.json beside it (field values a person reads off
// each document). It runs only when EXTRACT_DEV_CORPUS names that
// directory: the documents are not part of the repository. Each document is
// read twice, as it is and by its page text alone (the text rules, as for
// a PDF without an embedded invoice). EXTRACT_DEV_CORPUS_OUT, when set, receives every result as JSON so
// that two versions of the reader can be compared document by document.
//
// What must hold, and fails the test otherwise:
//   - every document whose embedded XML is read (the structured path) has
//     every truth field right, its document type and payment means
//     included, except the fields pageExpect names for documents whose
//     truth is the printed page: there the value pageExpect gives (empty
//     where the page contradicts the XML, and then the field is listed in
//     Result.Conflicts);
//   - on a direct-debit document no payee bank field is filled, on either
//     path: the account printed is the buyer's;
//   - no credit note is read as an invoice on the structured path.
//
// The per-field table it logs (correct, wrong, missing, per path) is the
// accuracy report of bench/RESULTS.md.
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
		Notes  []string       `json:"notes"`
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(truth))
	for id := range truth {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	type score struct{ right, wrong, missed int }
	// scores[path][field]; path is "structured" (the XML was read),
	// "text, as is" (no usable XML) or "text only" (XML removed).
	scores := map[string]map[string]*score{}
	count := func(path, field string) *score {
		if scores[path] == nil {
			scores[path] = map[string]*score{}
		}
		if scores[path][field] == nil {
			scores[path][field] = &score{}
		}
		return scores[path][field]
	}
	docs := map[string]int{}
	out := map[string]any{}
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(dir, "docs", id))
		if err != nil {
			t.Fatal(err)
		}
		want := expected(truth[id].Fields)
		directDebit := want["payment_means"] == extract.MeansDirectDebit || containsSub(truth[id].Notes, "direct debit")
		for _, mode := range []string{"as is", "text only"} {
			read := extract.Read
			if mode == "text only" {
				read = extract.TextOnly // the page alone, whatever it embeds
			}
			res, err := read(data)
			if err != nil {
				out[mode+" "+id] = err.Error()
			} else {
				out[mode+" "+id] = res
			}
			path := mode
			switch {
			case mode == "as is" && err == nil && res.Format != extract.FormatPDFText:
				path = "structured"
			case mode == "as is":
				path = "text, as is"
			}
			docs[path]++
			got := fieldsMap(t, res.Fields)
			if err == nil {
				got["document_type"] = "invoice"
				if res.Fields.CreditNote {
					got["document_type"] = "credit_note"
				}
			}
			if directDebit {
				for _, f := range []string{"iban", "bic", "account_number", "sort_code", "aba_code", "account_holder_name"} {
					if got[f] != nil {
						t.Errorf("%s (%s): direct debit, yet %s = %v was taken as the payee's", id, mode, f, got[f])
					}
				}
			}
			if path == "structured" {
				var conflicts []string
				for _, e := range pageExpect[id] {
					if e.conflict {
						conflicts = append(conflicts, e.field)
					}
				}
				slices.Sort(conflicts)
				if !slices.Equal(res.Conflicts, conflicts) {
					t.Errorf("%s: conflicts %v, want %v (warnings %q)", id, res.Conflicts, conflicts, res.Warnings)
				}
			}
			for _, k := range scoredFields {
				w, g := want[k], normalized(k, got[k])
				if k == "payment_means" && w == nil {
					continue // the truth knows only the XML's codes
				}
				if path == "structured" {
					e, why := w, "truth.json"
					for _, x := range pageExpect[id] {
						if x.field == k {
							e, why = x.want, x.why
						}
					}
					if g != e {
						t.Errorf("%s: structured %s = %v, want %v (%s)", id, k, got[k], e, why)
					}
				}
				s := count(path, k)
				switch {
				case w == nil && g == nil:
					continue
				case w == nil || g != nil && g != w:
					s.wrong++
				case g == nil:
					s.missed++
				default:
					s.right++
				}
			}
		}
	}
	var b strings.Builder
	for _, path := range []string{"structured", "text, as is", "text only"} {
		fmt.Fprintf(&b, "\n%s: %d documents\n| field | correct | wrong | missing |\n|---|---|---|---|\n", path, docs[path])
		var all score
		for _, k := range scoredFields {
			s := count(path, k)
			fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", k, s.right, s.wrong, s.missed)
			all.right, all.wrong, all.missed = all.right+s.right, all.wrong+s.wrong, all.missed+s.missed
		}
		fmt.Fprintf(&b, "| **all** | %d | %d | %d |\n", all.right, all.wrong, all.missed)
	}
	t.Logf("per-field results on %s:%s", dir, b.String())
	if p := os.Getenv("EXTRACT_DEV_CORPUS_OUT"); p != "" {
		b, _ := json.MarshalIndent(out, "", " ")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pageExpect gives, for documents whose truth is the printed page rather
// than the embedded XML (their notes in truth.json say so), what the
// structured path must give instead of the truth for the fields named: nil
// for an empty field. conflict marks a field left empty because the page
// surely prints another value than the XML (it must be listed in
// Result.Conflicts, and no other field may be).
var pageExpect = map[string][]struct {
	field    string
	want     any
	conflict bool
	why      string
}{
	// The XML's seller name carries "GLN 4333741000005" and "Lief-Nr:
	// 549910" lines before the name; the reader keeps the name, as the truth
	// of the ZUGFeRD 1.0 twin of this document does, and this truth keeps
	// all three lines.
	"zfc__ZUGFeRDv2__correct__intarsys__BASIC__zugferd_2p0_BASIC_Rechnungskorrektur.pdf": {
		{"supplier_name", "MUSTERLIEFERANT GMBH", false, "the name without its identifier lines"},
	},
	// The XML describes RE-20201121/508, the page RE-20190610/507.
	"zfc__ZUGFeRDv2__fail__Mustangproject__factur-x-invalid-xml-encoding-attribute.pdf": {
		{"invoice_number", nil, true, "the page prints RE-20190610/507"},
		{"issue_date", nil, true, "the page prints 2019-06-10"},
		{"due_date", nil, true, "the page prints 2019-07-01"},
		{"remittance_reference", nil, true, "the XML's reference is its own invoice number, which the page contradicts"},
	},
	"zfc__ZUGFeRDv1__correct__Mustangproject__MustangGnuaccountingBeispielRE-20150613_503.pdf": {
		{"amount_due", nil, true, "the XML says 571.04, the page 406.82"},
		{"remittance_reference", "RE-20150613/503", false, "the page prints no reference, so the XML's (the invoice number the page shows) is kept; the truth, read off the page, has none"},
	},
	"zfc__ZUGFeRDv1__fail__Mustangproject__fail1.pdf": {
		{"issue_date", nil, false, "the XML's date is in format 1020, not a date"},
		{"currency", nil, false, "the XML has no currency"},
		{"due_date", nil, true, "the XML's 2014-10-29 is before the issue date the page prints, 2015-10-08"},
		{"remittance_reference", "RE-20151008/504", false, "the page prints no reference; the XML's is kept"},
	},
	"zfc__ZUGFeRDv1__fail__Mustangproject__fail3.pdf": {
		{"remittance_reference", "RE-20170509/505", false, "the page prints no reference; the XML's is kept"},
	},
}

// scoredFields are the fields the truth gives, in table order, with the two
// a bill derives: document_type and payment_means.
var scoredFields = []string{
	"invoice_number", "issue_date", "due_date", "currency", "amount_due", "document_type", "supplier_name",
	"supplier_tax_id", "iban", "bic", "account_number", "remittance_reference", "payment_means",
}

// expected turns a truth record into comparable values: white space
// collapsed (a bill's text fields are one line), amounts as canonical
// decimals, document_type from credit_note, payment_means from the payment
// means codes of the XML, and an IBAN or BIC whose check fails expected
// empty (the corpus README: such a value is not to be taken).
func expected(f map[string]any) map[string]any {
	want := map[string]any{}
	for _, k := range scoredFields {
		if v, ok := f[k]; ok && v != nil {
			want[k] = normalized(k, v)
		}
	}
	want["document_type"] = "invoice"
	if f["credit_note"] == true {
		want["document_type"] = "credit_note"
	}
	if f["_iban_checksum_ok"] == false {
		delete(want, "iban")
	}
	if f["_bic_valid"] == false {
		delete(want, "bic")
	}
	var codes []string
	var payee []bool
	if means, ok := f["_payment_means"].([]any); ok {
		for _, m := range means {
			if m, ok := m.(map[string]any); ok {
				c, _ := m["code"].(string)
				codes = append(codes, c)
				payee = append(payee, m["iban"] != nil || m["prop"] != nil)
			}
		}
	}
	if m := extract.MeansOf(codes, payee); m != "" {
		want["payment_means"] = m
	}
	return want
}

// normalized makes a value comparable: nil stays nil, amounts lose trailing
// decimal zeros, text has its white space collapsed.
func normalized(field string, v any) any {
	if v == nil {
		return nil
	}
	s := strings.Join(strings.Fields(fmt.Sprint(v)), " ")
	if field == "amount_due" && strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}
