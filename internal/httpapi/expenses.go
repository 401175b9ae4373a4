package httpapi

import (
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

type expensePersonRecord struct {
	ID        uuid.UUID `json:"id"`
	FirstName *string   `json:"first_name"`
	LastName  *string   `json:"last_name"`
}

type expenseBindingRecord struct {
	ID            uuid.UUID  `json:"id"`
	TargetID      uuid.UUID  `json:"target_id"`
	TargetType    string     `json:"target_type"`
	TransactionID *uuid.UUID `json:"transaction_id"`
}

type expenseReceiptRecord struct {
	ID           uuid.UUID `json:"id"`
	FileName     string    `json:"file_name"`
	FileSize     int64     `json:"file_size"`
	MimeType     string    `json:"mime_type"`
	ThumbnailURL *string   `json:"thumbnail_url"`
	URL          string    `json:"url"`
}

type expenseTotalsRecord struct {
	Bill  []money.Amount `json:"bill"`
	Local []money.Amount `json:"local"`
}

type expenseRecord struct {
	ID              uuid.UUID              `json:"id"`
	OrganizationID  uuid.UUID              `json:"organization_id"`
	Status          string                 `json:"status"`
	Category        *string                `json:"category"`
	BillAmount      *string                `json:"bill_amount"`
	BillCurrency    *string                `json:"bill_currency"`
	LocalAmount     *string                `json:"local_amount"`
	LocalCurrency   *string                `json:"local_currency"`
	BusinessName    *string                `json:"business_name"`
	BusinessTaxID   *string                `json:"business_tax_id"`
	Description     *string                `json:"description"`
	ReceiptNumber   *string                `json:"receipt_number"`
	TransactionDate *string                `json:"transaction_date"`
	RejectionReason *string                `json:"rejection_reason"`
	CreatedBy       expensePersonRecord    `json:"created_by"`
	Bindings        []expenseBindingRecord `json:"bindings"`
	Receipts        []expenseReceiptRecord `json:"receipts"`
	Totals          expenseTotalsRecord    `json:"totals"`
	InsertedAt      time.Time              `json:"inserted_at"`
}

// amountFields splits a into its two fields: null, null when a is nil.
func amountFields(a *money.Amount) (*string, *string) {
	if a == nil {
		return nil, nil
	}
	amount, currency := a.String(), a.Currency
	return &amount, &currency
}

func newExpenseRecord(e expense.Expense) expenseRecord {
	out := expenseRecord{ID: e.ID, OrganizationID: e.OrganizationID, Status: e.Status, Category: e.Category,
		BusinessName: e.BusinessName, BusinessTaxID: e.BusinessTaxID, Description: e.Description, ReceiptNumber: e.ReceiptNumber,
		TransactionDate: e.TransactionDate, RejectionReason: e.RejectionReason,
		CreatedBy: expensePersonRecord{ID: e.CreatedBy.ID, FirstName: e.CreatedBy.FirstName, LastName: e.CreatedBy.LastName},
		Bindings:  make([]expenseBindingRecord, len(e.Bindings)), Receipts: make([]expenseReceiptRecord, len(e.Receipts)),
		Totals:     expenseTotalsRecord{Bill: e.TotalsBill, Local: e.TotalsLocal},
		InsertedAt: e.InsertedAt}
	out.BillAmount, out.BillCurrency = amountFields(e.Bill)
	out.LocalAmount, out.LocalCurrency = amountFields(e.Local)
	for i, b := range e.Bindings {
		out.Bindings[i] = expenseBindingRecord{ID: b.ID, TargetID: b.TargetID, TargetType: b.TargetType, TransactionID: b.TransactionID}
	}
	for i, x := range e.Receipts {
		out.Receipts[i] = expenseReceiptRecord{ID: x.ID, FileName: x.FileName, FileSize: x.FileSize, MimeType: x.MimeType,
			ThumbnailURL: x.ThumbnailURL, URL: x.URL}
	}
	return out
}

// expenses finds the expense in the path and answers it, noting its
// organization for the access log.
var expenses = object[expense.Expense, expenseRecord]{name: "expense_id", kind: "Expense",
	org: func(e expense.Expense) uuid.UUID { return e.OrganizationID }, record: newExpenseRecord}

func (s *server) createExpense(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	var req expense.Fields // every field is optional, so the body may be left out
	if err == nil {
		err = decodeOptional(r, &req)
	}
	if err != nil {
		return err
	}
	e, err := s.Expenses.Create(r.Context(), actorOf(r), org, req)
	return render(w, http.StatusCreated, newExpenseRecord, e, err)
}

func (s *server) listExpenses(w http.ResponseWriter, r *http.Request) error {
	org, err := orgID(r)
	if err != nil {
		return err
	}
	f, err := expenseFilter(r)
	if err != nil {
		return err
	}
	pages := s.pages("expenses")
	req, err := pages.Parse(r.URL.Query(), "status", "search", "creator_id", "transaction_date_from", "transaction_date_to")
	if err != nil {
		return err
	}
	es, err := s.Expenses.List(r.Context(), actorOf(r), org, f, req)
	return renderPage(w, pages, req, expense.PageKey, newExpenseRecord, es, err)
}

// expenseFilter reads the list's filters: statuses (repeated),
// search, creator and inclusive calendar dates.
func expenseFilter(r *http.Request) (expense.ListFilter, error) {
	q := r.URL.Query()
	var f expense.ListFilter
	var errs apierr.Fields
	for _, v := range q["status"] {
		if !slices.Contains(expense.Statuses, v) {
			errs.Add("status", "must be one of "+strings.Join(expense.Statuses, ", ")+".")
			break
		}
		if !slices.Contains(f.Statuses, v) {
			f.Statuses = append(f.Statuses, v)
		}
	}
	if vs, ok := q["search"]; ok {
		v := vs[0]
		n := utf8.RuneCountInString(v)
		if len(vs) != 1 || n < 1 || n > expense.MaxSearch || strings.ContainsFunc(v, unicode.IsControl) {
			errs.Add("search", "must be given once, 1 to 100 characters without control characters.")
		} else {
			f.Search = &v
		}
	}
	if v := q.Get("creator_id"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			errs.Add("creator_id", "must be a user id.")
		} else {
			f.CreatorID = &id
		}
	}
	for name, target := range map[string]**string{"transaction_date_from": &f.From, "transaction_date_to": &f.To} {
		if v := q.Get(name); v != "" {
			if _, ok := expense.ParseDate(v); !ok {
				errs.Add(name, "must be a calendar date YYYY-MM-DD.")
				continue
			}
			*target = &v
		}
	}
	if f.From != nil && f.To != nil && *f.To < *f.From {
		errs.Add("transaction_date_to", "must not be before transaction_date_from.")
	}
	slices.SortFunc(errs, func(a, b apierr.FieldError) int { return strings.Compare(a.Field, b.Field) })
	return f, errs.Err()
}
