package bill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/bill/extract"
	"github.com/strongroom/strongroom/internal/bill/extract/isolated"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/metrics"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// extractJob reads a new bill's file into its fields.
const extractJob = "bill.extract"

// reading bounds how many invoices this process reads at once: each is read
// in a child process that may hold up to isolated.DefaultMemory for up to
// isolated.DefaultDeadline. Jobs take turns by organization (job.FairKey), so
// one organization's uploads hold at most one of these slots at a time.
var reading = make(chan struct{}, 2)

// maxCrashes is how many attempts may end with the process dying before
// the file is declared unreadable instead of being read again: the reader
// runs in a child that cannot take the server down, but whatever killed two
// servers anyway must not be given a third.
const maxCrashes = 2

type extractPayload struct {
	BillID uuid.UUID `json:"bill_id"`
}

// Register adds the extraction worker to r.
func (s *Service) Register(r *job.Runner) { r.Handle(extractJob, s.extract) }

// extract reads the file of a bill still extracting and fills the fields
// people have not filled meanwhile; a file nothing can be read from sets
// extraction_failed_at. Either way the bill becomes extracted, a normal
// bill whose fields are the user's to complete, and
// bill.event_appended tells the organization. Reading the file happens
// outside the transaction; a failure to read the bytes is retried.
func (s *Service) extract(ctx context.Context, j job.Job) error {
	var p extractPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return job.Permanent(err)
	}
	q := s.DB.Reader()
	b, err := loadBill(ctx, q, p.BillID, "")
	if errors.Is(err, errNotFound) {
		return job.Permanent(err)
	}
	if err != nil || b.Status != Extracting || b.FileID == nil {
		return err
	}
	if j.LeaseExpiries >= maxCrashes {
		return s.finishExtraction(ctx, p.BillID, extract.Result{},
			fmt.Errorf("%w: %d attempts to read it never finished", extract.ErrUnreadable, j.LeaseExpiries), metrics.Timer{})
	}
	f, err := s.Files.Stored(ctx, q, b.OrganizationID, *b.FileID)
	if err != nil {
		return job.Permanent(err)
	}
	select {
	case reading <- struct{}{}:
		defer func() { <-reading }()
	case <-ctx.Done():
		return ctx.Err()
	}
	r, err := s.Files.Open(ctx, f)
	if err != nil {
		return fmt.Errorf("bill %s: open file: %w", b.ID, err)
	}
	data, err := io.ReadAll(io.LimitReader(r, extract.MaxInputSize+1))
	r.Close()
	if err != nil {
		return fmt.Errorf("bill %s: read file: %w", b.ID, err)
	}
	timer := metrics.StartTimer()
	res, readErr := isolated.Read(ctx, data, isolated.Limits{})
	if readErr != nil && !errors.Is(readErr, extract.ErrUnreadable) && j.Attempts < j.MaxAttempts {
		// Not the document's fault (no process could be started): retried,
		// and on the last attempt the bill is left to the person like any
		// file that cannot be read, rather than extracting forever.
		return fmt.Errorf("bill %s: read file: %w", b.ID, readErr)
	}
	return s.finishExtraction(ctx, p.BillID, res, readErr, timer)
}

// finishExtraction fills bill id from res, or marks its extraction failed
// when readErr (an extract.ErrUnreadable) says the file could not be read.
// timer timed the read (zero when the file was not read).
func (s *Service) finishExtraction(ctx context.Context, id uuid.UUID, res extract.Result, readErr error, timer metrics.Timer) error {
	return s.DB.Tx(ctx, func(tx *db.Tx) error {
		b, err := loadBill(ctx, tx, id, tx.ForUpdate())
		if err != nil || b.Status != Extracting {
			return err // cancelled meanwhile: nothing to fill
		}
		outcome := ExtractionCompleted
		if readErr != nil {
			outcome = ExtractionFailed
			now := tx.Now().UTC()
			b.ExtractionFailedAt = &now
		} else {
			fill(&b, res)
		}
		took, counted := timer.Elapsed(), metrics.ExtractionCompleted
		if readErr != nil {
			counted = metrics.ExtractionFailed
		}
		tx.AfterCommit(func() { metrics.BillExtraction(counted, took) })
		b.Status, b.UpdatedAt = Extracted, tx.Now().UTC()
		if err := saveFields(ctx, tx, b); err != nil {
			return err
		}
		return appendEvent(ctx, tx, b, EventAppended, map[string]any{"event": outcome})
	})
}

// fill sets the fields of b still empty from what was read, each only when
// it passes the checks a person's edit would (a value that does not is
// left for the person), and records how the file was read: its format and
// which of the fields it filled came from text rules.
func fill(b *Bill, res extract.Result) {
	x := res.Fields
	before := *b
	text := func(dst **string, v string) {
		if *dst != nil {
			return
		}
		if v = clean(v); v != "" {
			*dst = &v
		}
	}
	text(&b.BillNumber, x.InvoiceNumber)
	text(&b.SupplierName, x.SupplierName)
	text(&b.SupplierTaxID, x.SupplierTaxID)
	text(&b.PaymentReference, x.RemittanceReference)
	if !x.IssueDate.IsZero() {
		text(&b.IssueDate, x.IssueDate.String())
	}
	if !x.DueDate.IsZero() {
		text(&b.DueDate, x.DueDate.String())
	}
	if b.Currency == nil && money.IsCurrency(x.Currency) {
		b.Currency = &x.Currency
	}
	var due string
	b.DocumentType, due = documentOf(x)
	// An amount is read in the currency of the file; a person who set
	// another currency meanwhile gets no amount in the wrong one.
	if b.Amount == nil && b.Currency != nil && due != "" && (x.Currency == "" || x.Currency == *b.Currency) {
		if v, err := money.Parse(due, *b.Currency); err == nil {
			b.Amount = &v
		}
	}
	bank := bankdetails.Account{}
	text(&bank.IBAN, x.IBAN)
	text(&bank.SwiftCode, x.BIC)
	text(&bank.AccountNumber, x.AccountNumber)
	text(&bank.SortCode, x.SortCode)
	text(&bank.ABACode, x.ABACode)
	text(&bank.AccountHolderName, x.AccountHolderName)
	var problems apierr.Fields
	bank.Check(&problems)
	bad := map[string]bool{}
	for _, p := range problems {
		bad[p.Field] = true
	}
	keep := func(dst **string, v *string, field string) {
		if *dst == nil && v != nil && !bad[field] {
			*dst = v
		}
	}
	keep(&b.Bank.IBAN, bank.IBAN, "iban")
	keep(&b.Bank.SwiftCode, bank.SwiftCode, "swift_code")
	keep(&b.Bank.AccountNumber, bank.AccountNumber, "account_number")
	keep(&b.Bank.SortCode, bank.SortCode, "sort_code")
	keep(&b.Bank.ABACode, bank.ABACode, "aba_code")
	keep(&b.Bank.AccountHolderName, bank.AccountHolderName, "account_holder_name")
	if m := PaymentMeans(x.PaymentMeans); slices.Contains([]PaymentMeans{CreditTransfer, DirectDebit, Card, OtherMeans}, m) {
		b.PaymentMeans = &m
	}
	if res.Format != "" {
		format := res.Format
		b.Extraction.Format = &format
	}
	b.Extraction.FromText = filledFromText(before, *b, res.FromText)
}

// billFieldOf maps the extract package's field names to the bill's.
var billFieldOf = map[string]string{
	"invoice_number": "bill_number", "issue_date": "issue_date", "due_date": "due_date", "currency": "currency",
	"supplier_name": "supplier_name", "supplier_tax_id": "supplier_tax_id", "iban": "iban", "bic": "swift_code",
	"account_number": "account_number", "sort_code": "sort_code", "aba_code": "aba_code",
	"account_holder_name": "account_holder_name", "amount_due": "amount",
	"remittance_reference": "payment_reference", "payment_means": "payment_means", "credit_note": "document_type",
}

// filledFromText names, as the bill's fields, those of fromText (the
// extract package's names) that the reading filled on the bill: a field a
// person had filled meanwhile, or one whose value was refused, is not
// listed.
func filledFromText(before, after Bill, fromText []string) []string {
	set := func(b Bill, name string) bool {
		switch name {
		case "amount":
			return b.Amount != nil
		case "payment_means":
			return b.PaymentMeans != nil
		case "document_type":
			return b.DocumentType == CreditNote
		}
		p := b.textField(name)
		return p != nil && *p != nil
	}
	var out []string
	for _, n := range fromText {
		name, ok := billFieldOf[n]
		if !ok || !set(after, name) {
			continue
		}
		if name != "document_type" && name != "payment_means" && set(before, name) {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// textField is the text field of b named as in the API, nil for another
// name.
func (b *Bill) textField(name string) **string {
	k := &b.Bank
	return map[string]**string{
		"bill_number": &b.BillNumber, "issue_date": &b.IssueDate, "due_date": &b.DueDate, "currency": &b.Currency,
		"supplier_name": &b.SupplierName, "supplier_tax_id": &b.SupplierTaxID, "payment_reference": &b.PaymentReference,
		"iban": &k.IBAN, "swift_code": &k.SwiftCode, "account_number": &k.AccountNumber, "sort_code": &k.SortCode,
		"aba_code": &k.ABACode, "account_holder_name": &k.AccountHolderName,
	}[name]
}

// documentOf is what the document read is, and its amount due as a
// positive decimal: a credit note when the reader says so or when the
// amount due is negative, which is money owed back, never a bill to pay
// of the opposite sign.
func documentOf(x extract.Fields) (DocumentType, string) {
	due, negative := strings.CutPrefix(x.AmountDue, "-")
	if x.CreditNote || negative {
		return CreditNote, due
	}
	return Invoice, due
}

// clean makes text read from a file fit a bill's text field: control
// characters become spaces, runs of spaces one, at most 140 characters.
func clean(s string) string {
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)), " ")
	if utf8.RuneCountInString(s) > 140 {
		s = strings.TrimSpace(string([]rune(s)[:140]))
	}
	return s
}
