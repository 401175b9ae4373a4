package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

func billsUpload(e *env, args []string) error {
	fs := e.flags("bills upload", "bills upload FILE [--timeout D] [--org ORG] [-o json]")
	timeout := fs.Duration("timeout", 2*time.Minute, "how long to wait for the extraction")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("bills upload takes one file (a PDF, PNG, JPEG, or UBL or CII XML invoice)")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	f, err := os.Open(pos[0])
	if err != nil {
		return usagef("%v", err)
	}
	defer f.Close()
	b, err := e.c.UploadBill(e.ctx, org, filepath.Base(pos[0]), f)
	if err != nil {
		return err
	}
	e.progress("Uploaded %s as bill %s; waiting for the extraction…", filepath.Base(pos[0]), b.Id)
	ctx, cancel := context.WithTimeout(e.ctx, *timeout)
	defer cancel()
	poll := e.opts.Poll
	if poll <= 0 {
		poll = time.Second
	}
	done, err := e.c.WaitBill(ctx, b.Id.String(), poll)
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded && e.ctx.Err() == nil {
			return fmt.Errorf("bill %s was still being read after %v; look at it later in the app", b.Id, *timeout)
		}
		return err
	}
	if e.jsonOut() {
		return e.printJSON(done)
	}
	if done.ExtractionFailedAt != nil {
		e.progress("The file could not be read; fill in the bill's fields in the app.")
	}
	due, issued := "-", "-"
	if done.DueDate != nil {
		due = done.DueDate.String()
	}
	if done.IssueDate != nil {
		issued = done.IssueDate.String()
	}
	currency := str2(done.Currency)
	return e.fields([][2]string{
		{"Bill", done.Id.String()},
		{"Status", string(done.Status)},
		{"Supplier", str(done.SupplierName)},
		{"Supplier tax id", str(done.SupplierTaxId)},
		{"Number", str(done.BillNumber)},
		{"Amount", money(str2(done.Amount), currency)},
		{"Issued", issued},
		{"Due", due},
		{"Account", account(done.Iban, done.AccountNumber, nil)},
		{"BIC", str(done.SwiftCode)},
		{"Reference", str(done.PaymentReference)},
	})
}
