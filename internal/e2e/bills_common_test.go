package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// fields is the bill's fillable fields by JSON name, set ones only.
func billFields(t *testing.T, b api.Bill) map[string]string {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]any
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range billFillable {
		if v, ok := all[k].(string); ok {
			out[k] = v
		}
	}
	return out
}

// billFillable are the fields extraction and people fill (amount to
// sort_code, and payment_contact_id).
var billFillable = []string{"amount", "currency", "bill_number", "issue_date", "due_date", "supplier_name", "supplier_tax_id",
	"payment_reference", "payment_contact_id", "account_holder_name", "account_number", "iban", "swift_code", "aba_code", "bank_code",
	"bank_name", "bank_country_alpha2", "branch_code", "bsb_code", "cnaps", "ifsc_code", "sort_code"}

func billsPath(org string) string { return "/api/v1/organizations/" + org + "/bills" }

func billPath(id, action string) string {
	if action == "" {
		return "/api/v1/bills/" + id
	}
	return "/api/v1/bills/" + id + "/" + action
}

// corpusDir holds the extraction library's sample invoices, each with a
// .json of the fields expected from it.
var corpusDir = filepath.Join("..", "bill", "extract", "testdata")

func corpusFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(corpusDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mimeOf(name string) string {
	switch filepath.Ext(name) {
	case ".pdf":
		return "application/pdf"
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	}
	return "application/xml"
}

// rawCall sends a request the OpenAPI document of this branch does not
// describe (the Files operations are documented apart), without validating
// the answer against it.
func rawCall(t *testing.T, s *apitest.Server, method, path, bearer, contentType string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, out
}

// newFile creates a pending file of org through the Files API and returns
// its id and upload URL.
func newFile(t *testing.T, s *apitest.Server, token, org, name, mimeType string, size int) (string, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"file_name": name, "mime_type": mimeType, "size": size})
	status, raw := rawCall(t, s, "POST", "/api/v1/organizations/"+org+"/files", token, "application/json", body)
	if status != 201 {
		t.Fatalf("createFile: %d %s", status, raw)
	}
	var f api.FileCreated
	if err := json.Unmarshal(raw, &f); err != nil || f.Status != "pending" || !strings.HasPrefix(f.UploadUrl, "/") {
		t.Fatalf("createFile answered %s", raw)
	}
	return f.Id.String(), f.UploadUrl
}

// storedFile creates a file of org and PUTs data to its upload URL
// (without a bearer), returning the stored file's id.
func storedFile(t *testing.T, s *apitest.Server, token, org, name string, data []byte) string {
	t.Helper()
	id, upload := newFile(t, s, token, org, name, mimeOf(name), len(data))
	status, raw := rawCall(t, s, "PUT", upload, "", mimeOf(name), data)
	if status != 200 || !strings.Contains(string(raw), `"status":"stored"`) {
		t.Fatalf("PUT upload_url: %d %s", status, raw)
	}
	return id
}

// multipartBody is a multipart/form-data body with one file part.
func multipartBody(t *testing.T, field, fileName, contentType string, data []byte) ([]byte, string) {
	t.Helper()
	disposition := `form-data; name="` + field + `"`
	if fileName != "" {
		disposition += `; filename="` + fileName + `"`
	}
	return multipartPart(t, disposition, contentType, data)
}

// uploadBill sends data as the multipart field field of uploadBill.
func uploadBill(t *testing.T, s *apitest.Server, token, org, field, fileName, contentType string, data []byte) *apitest.Response {
	t.Helper()
	body, ct := multipartBody(t, field, fileName, contentType, data)
	return s.Do(t, apitest.Request{Method: "POST", Path: billsPath(org) + "/upload", Bearer: token, Body: body,
		Header: map[string]string{"Content-Type": ct}})
}

// uploadCorpus uploads a sample of the corpus as a bill.
func uploadCorpus(t *testing.T, s *apitest.Server, token, org, name string) api.Bill {
	t.Helper()
	var b api.Bill
	uploadBill(t, s, token, org, "file", name, mimeOf(name), corpusFile(t, name)).ExpectStatus(t, 201).Decode(t, &b)
	expectNewBill(t, b, org)
	return b
}

// createBill opens a bill on stored file fileID with createBill.
func createBill(t *testing.T, s *apitest.Server, token, org, fileID string) api.Bill {
	t.Helper()
	var b api.Bill
	s.Post(t, billsPath(org), token, map[string]any{"file_id": fileID}).ExpectStatus(t, 201).Decode(t, &b)
	expectNewBill(t, b, org)
	if b.FileId == nil || b.FileId.String() != fileID {
		t.Fatalf("bill file_id = %v, want %s", b.FileId, fileID)
	}
	return b
}

func expectNewBill(t *testing.T, b api.Bill, org string) {
	t.Helper()
	if b.Status != "extracting" || b.OrganizationId.String() != org || b.FileId == nil || len(billFields(t, b)) != 0 ||
		b.ApprovalRequestId != nil || b.FiatOutgoingId != nil || b.ExtractionFailedAt != nil {
		t.Fatalf("new bill = %+v", b)
	}
}

func getBill(t *testing.T, s *apitest.Server, token, id string) api.Bill {
	t.Helper()
	var b api.Bill
	s.Get(t, billPath(id, ""), token).ExpectStatus(t, 200).Decode(t, &b)
	return b
}

// extracted polls the bill until its extraction is over (a background job),
// within a deadline, and returns it.
func extracted(t *testing.T, s *apitest.Server, token, id string) api.Bill {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		b := getBill(t, s, token, id)
		if b.Status != "extracting" {
			return b
		}
		if time.Now().After(deadline) {
			t.Fatalf("bill %s still extracting after 30 s", id)
		}
	}
}

func patchBill(t *testing.T, s *apitest.Server, token, id string, body any) *apitest.Response {
	t.Helper()
	return s.Do(t, apitest.Request{Method: "PATCH", Path: billPath(id, ""), Bearer: token, Body: body})
}

func patchBillOK(t *testing.T, s *apitest.Server, token, id string, body any) api.Bill {
	t.Helper()
	var b api.Bill
	patchBill(t, s, token, id, body).ExpectStatus(t, 200).Decode(t, &b)
	return b
}

// blankBill uploads a photo, which nothing can be read from, and returns
// the bill once extraction gave up: extracted, with every field empty.
func blankBill(t *testing.T, s *apitest.Server, token, org string) api.Bill {
	t.Helper()
	b := extracted(t, s, token, uploadCorpus(t, s, token, org, "unreadable-photo.png").Id.String())
	if b.Status != "extracted" || b.ExtractionFailedAt == nil || len(billFields(t, b)) != 0 {
		t.Fatalf("bill of a photo = %+v", b)
	}
	return b
}

// supplierFields are the fields of a payable EUR bill of amt.
func supplierFields(amt string) map[string]any {
	return map[string]any{"amount": amt, "currency": "EUR", "supplier_name": "Müller Maschinenbau GmbH", "bill_number": "RE-2026-0117",
		"due_date": "2026-02-14", "iban": "DE89370400440532013000", "swift_code": "COBADEFFXXX"}
}

// payableBill is an extracted EUR bill of amt with its payment contact.
func payableBill(t *testing.T, s *apitest.Server, p *payer, amt string) api.Bill {
	t.Helper()
	b := blankBill(t, s, p.web, p.org)
	patchBillOK(t, s, p.web, b.Id.String(), supplierFields(amt))
	var out api.Bill
	s.Post(t, billPath(b.Id.String(), "payment-contact"), p.web, nil).ExpectStatus(t, 200).Decode(t, &out)
	if out.PaymentContactId == nil || out.Status != "extracted" {
		t.Fatalf("bill with contact = %+v", out)
	}
	return out
}

// billQuote quotes a payment to contact that delivers amt (amount_side receive).
func billQuote(t *testing.T, s *apitest.Server, p *payer, contact, amt string) api.Quote {
	t.Helper()
	var q api.Quote
	s.Post(t, "/api/v1/payments/preflight", p.web, map[string]any{"organization_id": p.org, "rail": "fiat", "payment_contact_id": contact,
		"source_currency": "EUR", "amount": amt, "amount_side": "receive"}).ExpectStatus(t, 201).Decode(t, &q)
	return q
}

func billExecuteBody(quoteID, billID string) map[string]any {
	body := executeBody(quoteID)
	body["bill_id"] = billID
	return body
}

// payBill executes a payment of the bill's amount to its contact.
func payBill(t *testing.T, s *apitest.Server, p *payer, b api.Bill) api.Payment {
	t.Helper()
	var pay api.Payment
	q := billQuote(t, s, p, b.PaymentContactId.String(), *b.Amount)
	s.Post(t, "/api/v1/payments/execute", p.web, billExecuteBody(q.Id.String(), b.Id.String())).ExpectStatus(t, 201).Decode(t, &pay)
	return pay
}

// expectRequested checks that bill id waits for payment pay.
func expectRequested(t *testing.T, s *apitest.Server, token, id string, pay api.Payment) api.Bill {
	t.Helper()
	b := getBill(t, s, token, id)
	if b.Status != "payment_requested" || b.FiatOutgoingId == nil || b.FiatOutgoingId.String() != pay.Id.String() ||
		b.ApprovalRequestId == nil || pay.ApprovalRequestId == nil || b.ApprovalRequestId.String() != pay.ApprovalRequestId.String() {
		t.Fatalf("bill = %+v, want payment_requested for payment %+v", b, pay)
	}
	return b
}

// expectReleased checks that bill id is extracted again, without payment.
func expectReleased(t *testing.T, s *apitest.Server, token, id string) api.Bill {
	t.Helper()
	b := getBill(t, s, token, id)
	if b.Status != "extracted" || b.FiatOutgoingId != nil || b.ApprovalRequestId != nil {
		t.Fatalf("bill = %+v, want extracted without payment", b)
	}
	return b
}

// str shows an optional value: a string, a UUID or a date.
func str[T any](s *T) string {
	if s == nil {
		return "<nil>"
	}
	return fmt.Sprint(*s)
}
