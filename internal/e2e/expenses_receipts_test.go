package e2e_test

import (
	"bytes"
	"image/png"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// Expense receipts (docs/api.md, Expenses): a stored file of the organization
// attached to an expense, with a signed download path and, for images, a
// signed PNG thumbnail path; a file is the receipt of at most one expense.

// receiptFile is the id of a file of org, its bytes uploaded when uploaded says so.
func receiptFile(t *testing.T, s *apitest.Server, token, org, name, mimeType string, content []byte, uploaded bool) string {
	t.Helper()
	f := createFile(t, s, token, org, name, mimeType, len(content))
	if uploaded {
		upload(t, s, f, content)
	}
	return f.Id.String()
}

var pdfBytes = pdfOf("receipt", 0)

func addReceipt(t *testing.T, s *apitest.Server, token, expenseID, fileID string) *apitest.Response {
	t.Helper()
	return s.Post(t, expensePath(expenseID, "receipts"), token, map[string]any{"file_id": fileID})
}

func TestExpenseReceipts(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	other := newCardOwner(t, s, "globex.test")
	photo := receiptFile(t, s, o.alice.token, o.id, "breakfast.png", "image/png", pngOf(t, 600, 300), true)
	pdf := receiptFile(t, s, o.alice.token, o.id, "hotel.pdf", "application/pdf", pdfBytes, true)
	pending := receiptFile(t, s, o.alice.token, o.id, "later.pdf", "application/pdf", pdfBytes, false)
	foreign := receiptFile(t, s, other.owner.token, other.id, "theirs.pdf", "application/pdf", pdfBytes, true)
	e := completeDraft(t, s, o.alice.token, o.id)

	// A receipt is enough to submit.
	moveExpense(t, s, o.alice.token, e.Id.String(), "submit").ExpectError(t, 422, "expense_incomplete")
	var got api.Expense
	addReceipt(t, s, o.alice.token, e.Id.String(), photo).ExpectStatus(t, 200).Decode(t, &got)
	addReceipt(t, s, o.alice.token, e.Id.String(), pdf).ExpectStatus(t, 200).Decode(t, &got)
	if len(got.Receipts) != 2 {
		t.Fatalf("receipts: %+v", got.Receipts)
	}
	img, doc := got.Receipts[0], got.Receipts[1]
	if img.FileName != "breakfast.png" || img.MimeType != "image/png" || img.FileSize != len(pngOf(t, 600, 300)) ||
		doc.FileName != "hotel.pdf" || doc.MimeType != "application/pdf" || doc.ThumbnailUrl != nil {
		t.Fatalf("receipts: %+v", got.Receipts)
	}
	// The paths are on this server and signed: the bytes, and a PNG thumbnail at most 256 px wide.
	download(t, s, img.Url, "image/png", "breakfast.png", pngOf(t, 600, 300))
	download(t, s, doc.Url, "application/pdf", "hotel.pdf", pdfBytes)
	var thumb string
	if img.ThumbnailUrl != nil {
		thumb = *img.ThumbnailUrl
	}
	r := s.Get(t, thumb, "").ExpectStatus(t, http.StatusOK)
	if cfg, err := png.DecodeConfig(bytes.NewReader(r.Body)); err != nil || cfg.Width > 256 || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("thumbnail: %v, %+v", err, cfg)
	}
	s.Get(t, withQuery(t, thumb, "signature", "x"+queryValue(t, thumb, "signature")), "").ExpectError(t, http.StatusForbidden, "forbidden")

	// Not found, not stored, already a receipt.
	addReceipt(t, s, o.alice.token, e.Id.String(), foreign).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, e.Id.String(), uuid.NewString()).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, e.Id.String(), pending).ExpectError(t, 422, "file_not_stored")
	addReceipt(t, s, o.alice.token, e.Id.String(), photo).ExpectError(t, 409, "conflict")
	second := createExpense(t, s, o.alice.token, o.id, nil)
	addReceipt(t, s, o.alice.token, second.Id.String(), pdf).ExpectError(t, 409, "conflict")
	expectInvalidField(t, s.Post(t, expensePath(e.Id.String(), "receipts"), o.alice.token, map[string]any{}), "file_id")
	expectInvalidField(t, s.Post(t, expensePath(e.Id.String(), "receipts"), o.alice.token, map[string]any{"file_id": "x"}), "file_id")
	addReceipt(t, s, o.bob.token, e.Id.String(), pending).ExpectError(t, 404, "not_found")

	// Removing one leaves the file, which can be attached again.
	var after api.Expense
	removePath := expensePath(e.Id.String(), "receipts/"+doc.Id.String())
	s.Do(t, apitest.Request{Method: "DELETE", Path: removePath, Bearer: o.alice.token}).ExpectStatus(t, 200).Decode(t, &after)
	if len(after.Receipts) != 1 || after.Receipts[0].Id != img.Id {
		t.Fatalf("after removing: %+v", after.Receipts)
	}
	s.Do(t, apitest.Request{Method: "DELETE", Path: removePath, Bearer: o.alice.token}).ExpectError(t, 404, "not_found")
	addReceipt(t, s, o.alice.token, second.Id.String(), pdf).ExpectStatus(t, 200)

	// Submitted: receipts no longer change.
	expectExpenseStatus(t, moveExpense(t, s, o.alice.token, e.Id.String(), "submit"), "submitted")
	addReceipt(t, s, o.alice.token, e.Id.String(), receiptFile(t, s, o.alice.token, o.id, "more.pdf", "application/pdf", pdfBytes, true)).
		ExpectError(t, 409, "conflict")
	s.Do(t, apitest.Request{Method: "DELETE", Path: expensePath(e.Id.String(), "receipts/"+img.Id.String()), Bearer: o.alice.token}).
		ExpectError(t, 409, "conflict")
	// Owners see the receipts in the list too.
	listed := listExpenses(t, s, o.owner.token, o.id, "status=submitted").Data
	if len(listed) != 1 || len(listed[0].Receipts) != 1 {
		t.Fatalf("listed: %+v", listed)
	}

	// A receipt of a pending card expense makes it working; deleting a
	// draft frees its receipt's file.
	draft := createExpense(t, s, o.bob.token, o.id, nil)
	bobs := receiptFile(t, s, o.bob.token, o.id, "taxi.pdf", "application/pdf", pdfBytes, true)
	addReceipt(t, s, o.bob.token, draft.Id.String(), bobs).ExpectStatus(t, 200)
	deleteExpense(t, s, o.bob.token, draft.Id.String()).ExpectStatus(t, 200)
	addReceipt(t, s, o.bob.token, createExpense(t, s, o.bob.token, o.id, nil).Id.String(), bobs).ExpectStatus(t, 200)
	deposit(t, s, o.id, "USD", "10.00")
	purchase(t, s, cardFor(t, s, o.id, o.bob.id, 100).Id.String(), "2.00")
	filed := listExpenses(t, s, o.bob.token, o.id, "status=pending").Data
	if len(filed) != 1 {
		t.Fatalf("%d pending", len(filed))
	}
	expectExpenseStatus(t, addReceipt(t, s, o.bob.token, filed[0].Id.String(), receiptFile(t, s, o.bob.token, o.id, "r.pdf", "application/pdf", pdfBytes, true)), "working")
}

// TestConcurrentReceiptsOfOneFile: one file attached to ten expenses at
// once: exactly one keeps it.
func TestConcurrentReceiptsOfOneFile(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOwner(t, s, "acme.test")
	f := receiptFile(t, s, o.owner.token, o.id, "r.pdf", "application/pdf", pdfBytes, true)
	const n = 10
	ids := make([]string, n)
	for i := range ids {
		ids[i] = createExpense(t, s, o.owner.token, o.id, nil).Id.String()
	}
	got := answersAtOnce(t, s, n, func(i int) apitest.Request {
		return apitest.Request{Method: "POST", Path: expensePath(ids[i], "receipts"), Bearer: o.owner.token, Body: map[string]any{"file_id": f}}
	}, byStatus)
	if got["200"] != 1 || got["409"] != n-1 {
		t.Fatalf("answers %v, want one 200 and %d 409", got, n-1)
	}
}
