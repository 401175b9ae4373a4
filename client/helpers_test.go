package client_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// A receipt goes up through the signed upload URL and comes back the same
// through the signed download URL, attached to an expense that is
// submitted, found by its status, and rejected with a reason; the signed
// URLs are refused when altered, and never sent elsewhere.
func TestFilesAndExpensesThroughTheHelpers(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	c, _ := login(t, s, o)
	ctx := t.Context()

	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	f, err := c.UploadFile(ctx, o.id, "taxi.pdf", api.FileMimeTypeApplicationpdf, pdf)
	if err != nil {
		t.Fatal(err)
	}
	if f.Status != api.FileStatusStored || f.DownloadUrl == nil || f.Size != int64(len(pdf)) {
		t.Fatalf("uploaded file = %+v", f)
	}
	again, err := c.File(ctx, f.Id.String())
	if err != nil || again.DownloadUrl == nil {
		t.Fatalf("file read again: %+v, %v", again, err)
	}
	body, contentType, err := c.DownloadFileContent(ctx, *again.DownloadUrl)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if !bytes.Equal(got, pdf) || contentType != "application/pdf" {
		t.Fatalf("downloaded %q as %q", got, contentType)
	}
	altered := strings.Replace(*again.DownloadUrl, "signature=", "signature=0", 1)
	if _, _, err := c.DownloadFileContent(ctx, altered); asError(t, err).StatusCode != http.StatusForbidden {
		t.Fatalf("altered signature: %v", err)
	}
	if _, _, err := c.DownloadFileContent(ctx, "https://elsewhere.test/x?signature=1"); err == nil {
		t.Fatal("a URL elsewhere was fetched")
	}

	// The bytes go once.
	created, err := c.CreateFile(ctx, o.id, api.CreateFileRequest{FileName: "twice.pdf", MimeType: api.FileMimeTypeApplicationpdf, Size: int64(len(pdf))})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadFileContent(ctx, created.UploadUrl, created.MimeType, bytes.NewReader(pdf)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.UploadFileContent(ctx, created.UploadUrl, created.MimeType, bytes.NewReader(pdf)); asError(t, err).Type != "conflict" {
		t.Fatalf("second upload: %v", err)
	}

	category, day := api.ExpenseCategoryTransport, openapi_types.Date{Time: time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)}
	e, err := c.CreateExpense(ctx, o.id, api.ExpenseFields{Category: &category, TransactionDate: &day})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitExpense(ctx, e.Id.String()); asError(t, err).Type != "expense_incomplete" {
		t.Fatalf("submitted without a receipt: %v", err)
	}
	if e, err = c.AddExpenseReceipt(ctx, e.Id.String(), api.ExpenseReceiptRequest{FileId: f.Id}); err != nil || len(e.Receipts) != 1 {
		t.Fatalf("receipt: %+v, %v", e, err)
	}
	if e, err = c.SubmitExpense(ctx, e.Id.String()); err != nil || e.Status != api.ExpenseStatusSubmitted {
		t.Fatalf("submit: %+v, %v", e, err)
	}
	other, err := c.CreateExpense(ctx, o.id, api.ExpenseFields{})
	if err != nil {
		t.Fatal(err)
	}
	submitted := []api.ExpenseStatus{api.ExpenseStatusSubmitted}
	list := collect(t, c.Expenses(ctx, o.id, &api.ListExpensesParams{Status: &submitted}))
	if len(list) != 1 || list[0].Id != e.Id {
		t.Fatalf("submitted expenses = %+v", list)
	}
	if e, err = c.RejectExpense(ctx, e.Id.String(), "No receipt date"); err != nil || e.Status != api.ExpenseStatusRejected || deref(e.RejectionReason) != "No receipt date" {
		t.Fatalf("reject: %+v, %v", e, err)
	}
	if _, err := c.DeleteExpense(ctx, other.Id.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expense(ctx, other.Id.String()); asError(t, err).Type != "not_found" {
		t.Fatalf("deleted expense: %v", err)
	}
	if _, err := c.Expense(ctx, "not-a-uuid"); err == nil || strings.Contains(err.Error(), "404") {
		t.Fatalf("a malformed id went to the server: %v", err)
	}
}
