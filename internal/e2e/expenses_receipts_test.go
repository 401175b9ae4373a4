package e2e_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/apitest"
)

// Expense receipts (CONTRACT §8): a stored file of the organization
// attached to an expense, with a signed download path and, for images, a
// signed PNG thumbnail path; a file is the receipt of at most one expense.

// rawCall sends a request outside the document's validation: the files
// operations are not in api/openapi.yaml on this branch yet.
func rawCall(t *testing.T, s *apitest.Server, method, path, bearer string, body []byte, into any) int {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if into != nil && resp.StatusCode < 300 {
		if b, ok := into.(*[]byte); ok {
			*b = raw
		} else if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, raw)
		}
	}
	return resp.StatusCode
}

// newFile creates a file of org; upload says whether its bytes are PUT.
func newFile(t *testing.T, s *apitest.Server, token, org, name, mimeType string, content []byte, upload bool) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"file_name": name, "mime_type": mimeType, "size": len(content)})
	var created struct {
		ID        string `json:"id"`
		UploadURL string `json:"upload_url"`
	}
	if st := rawCall(t, s, "POST", "/api/v1/organizations/"+org+"/files", token, body, &created); st != http.StatusCreated {
		t.Fatalf("createFile: %d", st)
	}
	if upload {
		if st := rawCall(t, s, "PUT", created.UploadURL, "", content, nil); st != http.StatusOK {
			t.Fatalf("upload: %d", st)
		}
	}
	return created.ID
}

func pngBytes(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, x%h, color.RGBA{R: 200, A: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

var pdfBytes = []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")

func addReceipt(t *testing.T, s *apitest.Server, token, expenseID, fileID string) *apitest.Response {
	t.Helper()
	return s.Post(t, expensePath(expenseID, "receipts"), token, map[string]any{"file_id": fileID})
}

func TestExpenseReceipts(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	other := newCardOwner(t, s, "globex.test")
	photo := newFile(t, s, o.alice.token, o.id, "breakfast.png", "image/png", pngBytes(t, 600, 300), true)
	pdf := newFile(t, s, o.alice.token, o.id, "hotel.pdf", "application/pdf", pdfBytes, true)
	pending := newFile(t, s, o.alice.token, o.id, "later.pdf", "application/pdf", pdfBytes, false)
	foreign := newFile(t, s, other.owner.token, other.id, "theirs.pdf", "application/pdf", pdfBytes, true)
	e := completeDraft(t, s, o.alice.token, o.id)

	// A receipt is enough to submit.
	moveExpense(t, s, o.alice.token, e.ID, "submit").ExpectError(t, 422, "expense_incomplete")
	var got expenseRecord
	addReceipt(t, s, o.alice.token, e.ID, photo).ExpectStatus(t, 200).Decode(t, &got)
	addReceipt(t, s, o.alice.token, e.ID, pdf).ExpectStatus(t, 200).Decode(t, &got)
	if len(got.Receipts) != 2 {
		t.Fatalf("receipts: %+v", got.Receipts)
	}
	img, doc := got.Receipts[0], got.Receipts[1]
	if img["file_name"] != "breakfast.png" || img["mime_type"] != "image/png" || img["file_size"] != float64(len(pngBytes(t, 600, 300))) ||
		doc["file_name"] != "hotel.pdf" || doc["mime_type"] != "application/pdf" || doc["thumbnail_url"] != nil {
		t.Fatalf("receipts: %+v", got.Receipts)
	}
	// The paths are on this server and signed: the bytes, and a PNG thumbnail at most 256 px wide.
	for _, x := range []map[string]any{img, doc} {
		u, _ := x["url"].(string)
		var content []byte
		if !strings.HasPrefix(u, "/") || rawCall(t, s, "GET", u, "", nil, &content) != 200 {
			t.Fatalf("download %q", u)
		}
		if x["mime_type"] == "application/pdf" && !bytes.Equal(content, pdfBytes) {
			t.Fatalf("downloaded PDF differs")
		}
	}
	thumb, _ := img["thumbnail_url"].(string)
	var thumbnail []byte
	if !strings.HasPrefix(thumb, "/") || rawCall(t, s, "GET", thumb, "", nil, &thumbnail) != 200 {
		t.Fatalf("thumbnail %q", thumb)
	}
	if cfg, err := png.DecodeConfig(bytes.NewReader(thumbnail)); err != nil || cfg.Width > 256 {
		t.Fatalf("thumbnail: %v, %+v", err, cfg)
	}
	if rawCall(t, s, "GET", strings.Replace(thumb, "signature=", "signature=x", 1), "", nil, nil) == 200 {
		t.Fatal("an altered thumbnail path is served")
	}

	// Not found, not stored, already a receipt.
	addReceipt(t, s, o.alice.token, e.ID, foreign).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, e.ID, uuid.NewString()).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, e.ID, pending).ExpectError(t, 422, "file_not_stored")
	addReceipt(t, s, o.alice.token, e.ID, photo).ExpectError(t, 409, "conflict")
	second := createExpense(t, s, o.alice.token, o.id, nil)
	addReceipt(t, s, o.alice.token, second.ID, pdf).ExpectError(t, 409, "conflict")
	expectInvalidField(t, s.Post(t, expensePath(e.ID, "receipts"), o.alice.token, map[string]any{}), "file_id")
	expectInvalidField(t, s.Post(t, expensePath(e.ID, "receipts"), o.alice.token, map[string]any{"file_id": "x"}), "file_id")
	addReceipt(t, s, o.bob.token, e.ID, pending).ExpectError(t, 404, "not_found")

	// Removing one leaves the file, which can be attached again.
	var after expenseRecord
	removePath := expensePath(e.ID, "receipts/"+doc["id"].(string))
	s.Do(t, apitest.Request{Method: "DELETE", Path: removePath, Bearer: o.alice.token}).ExpectStatus(t, 200).Decode(t, &after)
	if len(after.Receipts) != 1 || after.Receipts[0]["id"] != img["id"] {
		t.Fatalf("after removing: %+v", after.Receipts)
	}
	s.Do(t, apitest.Request{Method: "DELETE", Path: removePath, Bearer: o.alice.token}).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, second.ID, pdf).ExpectStatus(t, 200)

	// Submitted: receipts no longer change.
	expectExpenseStatus(t, moveExpense(t, s, o.alice.token, e.ID, "submit"), "submitted")
	addReceipt(t, s, o.alice.token, e.ID, newFile(t, s, o.alice.token, o.id, "more.pdf", "application/pdf", pdfBytes, true)).
		ExpectError(t, 409, "conflict")
	s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e.ID, "receipts/"+img["id"].(string)), Bearer: o.alice.token}).
		ExpectError(t, 409, "conflict")
	// Owners see the receipts in the list too.
	listed := listExpenses(t, s, o.owner.token, o.id, "status=submitted").Data
	if len(listed) != 1 || len(listed[0].Receipts) != 1 {
		t.Fatalf("listed: %+v", listed)
	}

	// A receipt of a pending card expense makes it working; deleting a
	// draft frees its receipt's file.
	draft := createExpense(t, s, o.bob.token, o.id, nil)
	bobs := newFile(t, s, o.bob.token, o.id, "taxi.pdf", "application/pdf", pdfBytes, true)
	addReceipt(t, s, o.bob.token, draft.ID, bobs).ExpectStatus(t, 200)
	deleteExpense(t, s, o.bob.token, draft.ID).ExpectStatus(t, 200)
	addReceipt(t, s, o.bob.token, createExpense(t, s, o.bob.token, o.id, nil).ID, bobs).ExpectStatus(t, 200)
	deposit(t, s, o.id, "USD", "10.00")
	purchase(t, s, cardFor(t, s, o.id, o.bob.id, 100).ID, "2.00")
	filed := listExpenses(t, s, o.bob.token, o.id, "status=pending").Data
	if len(filed) != 1 {
		t.Fatalf("%d pending", len(filed))
	}
	expectExpenseStatus(t, addReceipt(t, s, o.bob.token, filed[0].ID, newFile(t, s, o.bob.token, o.id, "r.pdf", "application/pdf", pdfBytes, true)), "working")
}

// TestConcurrentReceiptsOfOneFile: one file attached to ten expenses at
// once: exactly one keeps it.
func TestConcurrentReceiptsOfOneFile(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	f := newFile(t, s, o.owner.token, o.id, "r.pdf", "application/pdf", pdfBytes, true)
	const n = 10
	ids := make([]string, n)
	for i := range ids {
		ids[i] = createExpense(t, s, o.owner.token, o.id, nil).ID
	}
	got := answersAtOnce(t, s, n, func(i int) apitest.Request {
		return apitest.Request{Method: "POST", Path: expensePath(ids[i], "receipts"), Bearer: o.owner.token, Body: map[string]any{"file_id": f}}
	}, byStatus)
	if got["200"] != 1 || got["409"] != n-1 {
		t.Fatalf("answers %v, want one 200 and %d 409", got, n-1)
	}
}
