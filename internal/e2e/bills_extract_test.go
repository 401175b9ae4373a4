package e2e_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// corpusSample is one invoice of the extraction corpus with the fields its
// .json expects.
type corpusSample struct {
	name       string // file name
	unreadable bool
	want       map[string]string // bill field → value
	creditNote bool              // read as a credit note
	means      string            // payment_means, "" for null
	format     string            // extraction.format
}

// billFieldOf names the bill field each extracted field fills.
var billFieldOf = map[string]string{
	"invoice_number": "bill_number", "issue_date": "issue_date", "due_date": "due_date", "currency": "currency",
	"supplier_name": "supplier_name", "supplier_tax_id": "supplier_tax_id", "iban": "iban", "bic": "swift_code",
	"account_number": "account_number", "sort_code": "sort_code", "aba_code": "aba_code",
	"account_holder_name": "account_holder_name", "amount_due": "amount", "remittance_reference": "payment_reference",
}

func loadCorpus(t *testing.T) []corpusSample {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(corpusDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus in %s: %v", corpusDir, err)
	}
	var out []corpusSample
	for _, p := range paths {
		var golden struct {
			Unreadable bool           `json:"unreadable"`
			Format     string         `json:"format"`
			Fields     map[string]any `json:"fields"`
		}
		if err := json.Unmarshal(corpusFile(t, filepath.Base(p)), &golden); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		base := strings.TrimSuffix(filepath.Base(p), ".json")
		var name string
		for _, ext := range []string{".xml", ".pdf", ".png", ".jpg"} {
			if _, err := os.Stat(filepath.Join(corpusDir, base+ext)); err == nil {
				name = base + ext
			}
		}
		if name == "" {
			t.Fatalf("%s has no sample beside it", p)
		}
		s := corpusSample{name: name, unreadable: golden.Unreadable, want: map[string]string{}, format: golden.Format}
		for k, v := range golden.Fields {
			if k == "credit_note" {
				s.creditNote = v.(bool) // the bill's document_type
				continue
			}
			if k == "payment_means" {
				s.means = v.(string)
				continue
			}
			field, ok := billFieldOf[k]
			if !ok {
				t.Fatalf("%s: field %s has no bill field", p, k)
			}
			s.want[field] = v.(string)
		}
		out = append(out, s)
	}
	return out
}

// TestBillExtractionReadsTheCorpus creates a bill from every sample of the
// extraction corpus, once through createBill (Files API, then the file id)
// and once through uploadBill, and checks the fields extraction filled
// against the sample's .json: UBL, CII, Factur-X MINIMUM, BASIC and
// EN16931, text PDFs. A photo and a scan without text end extracted with
// extraction_failed_at and every field empty.
func TestBillExtractionReadsTheCorpus(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	samples := loadCorpus(t)
	formats := map[string]bool{}
	for _, c := range samples {
		formats[strings.SplitN(c.name, "-", 2)[0]+filepath.Ext(c.name)] = true
	}
	for _, f := range []string{"ubl.xml", "cii.xml", "facturx.pdf", "text.pdf", "unreadable.png", "unreadable.pdf"} {
		if !formats[f] {
			t.Fatalf("the corpus has no %s sample (%v)", f, formats)
		}
	}
	for _, name := range []string{"facturx-minimum-fr.pdf", "facturx-basic-de.pdf", "facturx-en16931-at.pdf"} {
		if !slices.ContainsFunc(samples, func(c corpusSample) bool { return c.name == name }) {
			t.Fatalf("the corpus lacks %s", name)
		}
	}
	type started struct {
		sample corpusSample
		via    string
		bill   api.Bill
	}
	var bills []started
	for _, c := range samples {
		fileID := storedFile(t, s, p.web, p.org, c.name, corpusFile(t, c.name))
		bills = append(bills, started{c, "createBill", createBill(t, s, p.web, p.org, fileID)})
		bills = append(bills, started{c, "uploadBill", uploadCorpus(t, s, p.web, p.org, c.name)})
	}
	for _, x := range bills {
		t.Run(x.via+"/"+x.sample.name, func(t *testing.T) {
			b := extracted(t, s, p.web, x.bill.Id.String())
			if b.Status != "extracted" || b.FileId == nil || b.FileId.String() != x.bill.FileId.String() || b.CreatedById.String() != p.userID ||
				b.ApprovalRequestId != nil || b.FiatOutgoingId != nil || !b.UpdatedAt.After(b.InsertedAt) && !b.UpdatedAt.Equal(b.InsertedAt) {
				t.Fatalf("bill = %+v", b)
			}
			got := billFields(t, b)
			if x.sample.unreadable {
				if b.ExtractionFailedAt == nil || len(got) != 0 {
					t.Fatalf("unreadable file: extraction_failed_at %v, fields %v; want set and none", b.ExtractionFailedAt, got)
				}
				return
			}
			if b.ExtractionFailedAt != nil {
				t.Fatalf("extraction_failed_at = %v for a readable file", b.ExtractionFailedAt)
			}
			if want := map[bool]api.BillDocumentType{false: "invoice", true: "credit_note"}[x.sample.creditNote]; b.DocumentType != want {
				t.Errorf("document_type = %q, want %q", b.DocumentType, want)
			}
			if got := b.PaymentMeans; x.sample.means == "" && got != nil || x.sample.means != "" && (got == nil || string(*got) != x.sample.means) {
				t.Errorf("payment_means = %v, want %q", got, x.sample.means)
			}
			if got := b.Extraction.Format; got == nil || string(*got) != x.sample.format {
				t.Errorf("extraction.format = %v, want %q", got, x.sample.format)
			}
			for k, want := range x.sample.want {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			for k, v := range got {
				if _, ok := x.sample.want[k]; !ok {
					t.Errorf("%s = %q, which the sample does not hold", k, v)
				}
			}
		})
	}
	// The stored file behind an uploaded bill is the organization's.
	status, raw := rawCall(t, s, "GET", "/api/v1/files/"+bills[1].bill.FileId.String(), p.web, "", nil)
	if status != 200 || !strings.Contains(string(raw), `"status":"stored"`) {
		t.Fatalf("file of an uploaded bill: %d %s", status, raw)
	}
}

// TestBillExtractionKeepsWhatPeopleSet edits a bill while it is extracting
// (its file cannot be read yet, so extraction retries) and checks that
// extraction then fills only the fields still empty, and takes no amount
// read in another currency than the one the person set.
func TestBillExtractionKeepsWhatPeopleSet(t *testing.T) {
	t.Parallel()
	files := t.TempDir()
	s := apitest.Start(t, "STRONGROOM_FILES=file:"+files)
	p := newPayer(t, s, "ada@acme.test", "")
	fileID := storedFile(t, s, p.web, p.org, "cii-de-xrechnung.xml", corpusFile(t, "cii-de-xrechnung.xml"))
	cancelled := storedFile(t, s, p.web, p.org, "ubl-be-invoice.xml", corpusFile(t, "ubl-be-invoice.xml"))
	// Hide the stored bytes: the extraction job fails to read them and retries later.
	hidden := filepath.Join(t.TempDir(), "hidden")
	if err := os.Rename(filepath.Join(files, "files"), hidden); err != nil {
		t.Fatal(err)
	}
	b := createBill(t, s, p.web, p.org, fileID)
	other := createBill(t, s, p.web, p.org, cancelled)
	edited := patchBillOK(t, s, p.web, b.Id.String(), map[string]any{"supplier_name": "Müller GmbH (Werk 2)", "currency": "USD", "due_date": "2026-03-01"})
	if edited.Status != "extracting" || str(edited.SupplierName) != "Müller GmbH (Werk 2)" || str(edited.Currency) != "USD" {
		t.Fatalf("edited while extracting = %+v", edited)
	}
	// Cancelling from extracting ends it; extraction then fills nothing.
	var c api.Bill
	s.Post(t, billPath(other.Id.String(), "cancel"), p.web, nil).ExpectStatus(t, 200).Decode(t, &c)
	if c.Status != "cancelled" {
		t.Fatalf("cancel from extracting = %+v", c)
	}
	if got := getBill(t, s, p.web, b.Id.String()); got.Status != "extracting" {
		t.Fatalf("bill whose file cannot be read = %+v, want extracting", got)
	}
	// A bill still extracting cannot be paid.
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(p.quote(t, s, "10.00").Id.String(), b.Id.String())).ExpectError(t, 422, "bill_mismatch")
	if err := os.Rename(hidden, filepath.Join(files, "files")); err != nil {
		t.Fatal(err)
	}
	advance(t, s, time.Minute) // past the job's retry backoff
	done := extracted(t, s, p.web, b.Id.String())
	got := billFields(t, done)
	want := map[string]string{
		// The person's values stand.
		"supplier_name": "Müller GmbH (Werk 2)", "currency": "USD", "due_date": "2026-03-01",
		// The rest comes from the file; its amount is in EUR, so it is not taken.
		"bill_number": "RE-2026-0117", "issue_date": "2026-01-31", "supplier_tax_id": "DE123456789",
		"iban": "DE89370400440532013000", "swift_code": "COBADEFFXXX", "account_holder_name": "Müller Maschinenbau GmbH",
		"payment_reference": "RE-2026-0117",
	}
	if done.Status != "extracted" || done.ExtractionFailedAt != nil || !mapsEqual(got, want) {
		t.Fatalf("after extraction: status %s, fields %v; want %v", done.Status, got, want)
	}
	if after := getBill(t, s, p.web, other.Id.String()); after.Status != "cancelled" || len(billFields(t, after)) != 0 {
		t.Fatalf("cancelled bill after extraction = %+v", after)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCreateBillRefusals covers what createBill refuses.
func TestCreateBillRefusals(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	eve := newPayer(t, s, "eve@evil.test", "")
	xml := corpusFile(t, "ubl-us-aba.xml")
	evesFile := storedFile(t, s, eve.web, eve.org, "ubl-us-aba.xml", xml)
	s.Post(t, billsPath(p.org), p.web, map[string]any{"file_id": evesFile}).ExpectError(t, 404, "not_found")
	s.Post(t, billsPath(p.org), p.web, map[string]any{"file_id": "0190f5cf-0a1b-7c2d-8e3f-4a5b6c7d8e9f"}).ExpectError(t, 404, "not_found")
	pending, _ := newFile(t, s, p.web, p.org, "later.xml", "application/xml", len(xml))
	s.Post(t, billsPath(p.org), p.web, map[string]any{"file_id": pending}).ExpectError(t, 422, "file_not_stored")
	for _, body := range []any{map[string]any{}, map[string]any{"file_id": "not-a-uuid"}, map[string]any{"file_id": nil}, map[string]any{"file_id": 7}} {
		expectInvalidField(t, s.Post(t, billsPath(p.org), p.web, body), "file_id")
	}
	mine := storedFile(t, s, p.web, p.org, "ubl-us-aba.xml", xml)
	s.Post(t, billsPath(p.org), p.web, map[string]any{"file_id": mine, "amount": "1.00"}).ExpectError(t, 400, "invalid_request")
	s.Post(t, billsPath(p.org), p.web, "").ExpectError(t, 400, "invalid_request")
	// Someone else's organization, and an organization that does not exist.
	s.Post(t, billsPath(p.org), eve.web, map[string]any{"file_id": mine}).ExpectError(t, 404, "not_found")
	s.Post(t, billsPath("0190f5c2-0000-7000-8000-000000000000"), p.web, map[string]any{"file_id": mine}).ExpectError(t, 404, "not_found")
	var list api.BillPage
	s.Get(t, billsPath(p.org), p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused creations left %d bills", len(list.Data))
	}
	createBill(t, s, p.web, p.org, mine)
}

// TestUploadBillRefusals covers what uploadBill refuses; nothing refused is kept.
func TestUploadBillRefusals(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "")
	pdf := corpusFile(t, "text-gb-invoice.pdf")
	up := func(field, name, ct string, data []byte) *apitest.Response {
		return uploadBill(t, s, p.web, p.org, field, name, ct, data)
	}
	// No part at all, another field name, a body that is not multipart.
	empty, ct := func() ([]byte, string) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		_ = w.Close()
		return buf.Bytes(), w.FormDataContentType()
	}()
	expectInvalidField(t, s.Do(t, apitest.Request{Method: "POST", Path: billsPath(p.org) + "/upload", Bearer: p.web, Body: empty,
		Header: map[string]string{"Content-Type": ct}}), "file")
	expectInvalidField(t, up("invoice", "a.pdf", "application/pdf", pdf), "invoice")
	s.Post(t, billsPath(p.org)+"/upload", p.web, map[string]any{"file": "x"}).ExpectError(t, 400, "invalid_request")
	// Types none of the accepted ones, and a declared type the bytes are not.
	up("file", "notes.txt", "text/plain", []byte("Invoice 42: pay 100 EUR")).ExpectError(t, 422, "file_type_mismatch")
	up("file", "page.html", "application/xml", []byte("<html><body>Invoice</body></html>")).ExpectError(t, 422, "file_type_mismatch")
	up("file", "invoice.pdf", "image/png", pdf).ExpectError(t, 422, "file_type_mismatch")
	// Over 20 MiB.
	big := append(append([]byte{}, pdf...), bytes.Repeat([]byte(" "), 20<<20)...)
	up("file", "big.pdf", "application/pdf", big).ExpectError(t, 413, "payload_too_large")
	// Another organization's upload path.
	eve := newPayer(t, s, "eve@evil.test", "")
	uploadBill(t, s, eve.web, p.org, "file", "a.pdf", "application/pdf", pdf).ExpectError(t, 404, "not_found")
	var list api.BillPage
	s.Get(t, billsPath(p.org), p.web).ExpectStatus(t, 200).Decode(t, &list)
	if len(list.Data) != 0 {
		t.Fatalf("refused uploads left %d bills", len(list.Data))
	}
	// The type is read from the bytes: a generic declared type and no file name are fine.
	var b api.Bill
	up("file", "", "application/octet-stream", pdf).ExpectStatus(t, 201).Decode(t, &b)
	if got := extracted(t, s, p.web, b.Id.String()); str(got.BillNumber) != "HLP-10231" {
		t.Fatalf("bill of an upload without a name or type = %+v", got)
	}
}
