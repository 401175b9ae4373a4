package expense

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var errNotFound = apierr.New(apierr.NotFound, "There is no expense with this id.")

const expenseColumns = `id, organization_id, created_by_id, status, category, description, bill_amount, bill_currency,
	local_amount, local_currency, business_name, business_tax_id, receipt_number, transaction_date, rejection_reason, inserted_at`

func scanExpense(row db.Scanner) (Expense, error) {
	var e Expense
	var billAmount, localAmount sql.NullInt64
	var billCurrency, localCurrency sql.NullString
	err := row.Scan(&e.ID, &e.OrganizationID, &e.CreatedBy.ID, &e.Status, &e.Category, &e.Description, &billAmount, &billCurrency,
		&localAmount, &localCurrency, &e.BusinessName, &e.BusinessTaxID, &e.ReceiptNumber, &e.TransactionDate, &e.RejectionReason, &e.InsertedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return Expense{}, errNotFound
	}
	if err != nil {
		return Expense{}, err
	}
	if billAmount.Valid && billCurrency.Valid {
		e.Bill = &money.Amount{Minor: billAmount.Int64, Currency: billCurrency.String}
	}
	if localAmount.Valid && localCurrency.Valid {
		e.Local = &money.Amount{Minor: localAmount.Int64, Currency: localCurrency.String}
	}
	e.InsertedAt = e.InsertedAt.UTC()
	return e, nil
}

// loadExpense reads expense id; lock is the dialect's row-lock clause or empty.
func loadExpense(ctx context.Context, q db.Querier, id uuid.UUID, lock string) (Expense, error) {
	return scanExpense(q.QueryRowContext(ctx, `SELECT `+expenseColumns+` FROM expenses WHERE id = $1`+lock, id))
}

// amountColumns splits a for its two columns: nil, nil when a is nil.
func amountColumns(a *money.Amount) (*int64, *string) {
	if a == nil {
		return nil, nil
	}
	return &a.Minor, &a.Currency
}

func insertExpense(ctx context.Context, tx *db.Tx, e Expense) error {
	billAmount, billCurrency := amountColumns(e.Bill)
	localAmount, localCurrency := amountColumns(e.Local)
	_, err := tx.ExecContext(ctx, `
		INSERT INTO expenses (id, organization_id, created_by_id, status, category, description, bill_amount, bill_currency,
		                      local_amount, local_currency, business_name, business_tax_id, receipt_number, transaction_date,
		                      search_text, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $16)`,
		e.ID, e.OrganizationID, e.CreatedBy.ID, e.Status, e.Category, e.Description, billAmount, billCurrency,
		localAmount, localCurrency, e.BusinessName, e.BusinessTaxID, e.ReceiptNumber, e.TransactionDate, searchText(e), tx.Now())
	return err
}

// updateExpense writes e's editable fields and status.
func updateExpense(ctx context.Context, tx *db.Tx, e Expense) error {
	billAmount, billCurrency := amountColumns(e.Bill)
	localAmount, localCurrency := amountColumns(e.Local)
	_, err := tx.ExecContext(ctx, `
		UPDATE expenses SET status = $2, category = $3, description = $4, bill_amount = $5, bill_currency = $6,
		       local_amount = $7, local_currency = $8, business_name = $9, business_tax_id = $10, receipt_number = $11,
		       transaction_date = $12, search_text = $13, updated_at = $14
		WHERE id = $1`,
		e.ID, e.Status, e.Category, e.Description, billAmount, billCurrency, localAmount, localCurrency,
		e.BusinessName, e.BusinessTaxID, e.ReceiptNumber, e.TransactionDate, searchText(e), tx.Now())
	return err
}

// setStatus moves expense id to status, keeping reason (a rejection's) or
// clearing it.
func setStatus(ctx context.Context, tx *db.Tx, id uuid.UUID, status string, reason *string) error {
	_, err := tx.ExecContext(ctx, `UPDATE expenses SET status = $2, rejection_reason = $3, updated_at = $4 WHERE id = $1`,
		id, status, reason, tx.Now())
	return err
}

// deleteExpense removes expense id with its bindings and receipts.
func deleteExpense(ctx context.Context, tx *db.Tx, id uuid.UUID) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM expense_bindings WHERE expense_id = $1`, id); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM expense_receipts WHERE expense_id = $1`, id); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, `DELETE FROM expenses WHERE id = $1`, id)
	return err
}

// ListFilter narrows an expense list. Dates are inclusive.
type ListFilter struct {
	Statuses  []string
	Search    *string
	CreatorID *uuid.UUID
	From, To  *string // YYYY-MM-DD
}

// listExpenses reads a page of orgID's expenses, newest first. The status
// filter always binds seven values (the statuses asked for, repeated; all
// of them when none is), so the statement text is one and prepared once.
func listExpenses(ctx context.Context, q db.Querier, orgID uuid.UUID, f ListFilter, req page.Request) ([]Expense, error) {
	statuses := f.Statuses
	if len(statuses) == 0 {
		statuses = Statuses
	}
	args := []any{orgID, f.CreatorID, nil, f.From, f.To, req.AfterUUID(), req.Limit + 1}
	if f.Search != nil {
		args[2] = likePattern(*f.Search)
	}
	for i := range Statuses {
		args = append(args, statuses[i%len(statuses)])
	}
	return db.QueryAll(ctx, q, scanExpense, `SELECT `+expenseColumns+` FROM expenses
		WHERE organization_id = $1
		  AND status IN (`+db.Placeholders(8, len(Statuses))+`)
		  AND (created_by_id = $2 OR $2 IS NULL)
		  AND (search_text LIKE $3 ESCAPE '\' OR $3 IS NULL)
		  AND (transaction_date >= $4 OR $4 IS NULL)
		  AND (transaction_date <= $5 OR $5 IS NULL)
		  AND (id < $6 OR $6 IS NULL)
		ORDER BY id DESC LIMIT $7`, args...)
}

const bindingColumns = `id, expense_id, target_id, target_type, amount, currency`

func scanBinding(row db.Scanner) (Binding, error) {
	var b Binding
	err := row.Scan(&b.ID, &b.ExpenseID, &b.TargetID, &b.TargetType, &b.Total.Minor, &b.Total.Currency)
	return b, err
}

// bindingsOf reads the bindings of expenses ids, oldest first, by expense.
func bindingsOf(ctx context.Context, q db.Querier, ids []uuid.UUID) (map[uuid.UUID][]Binding, error) {
	return byExpense(ctx, q, scanBinding, func(b Binding) uuid.UUID { return b.ExpenseID },
		`SELECT `+bindingColumns+` FROM expense_bindings WHERE expense_id IN (%s) ORDER BY expense_id, id`, ids)
}

// byExpense runs query, whose %s is the list of ids, and groups its rows by
// the expense key names.
func byExpense[T any](ctx context.Context, q db.Querier, scan func(db.Scanner) (T, error), key func(T) uuid.UUID, query string, ids []uuid.UUID) (map[uuid.UUID][]T, error) {
	out := map[uuid.UUID][]T{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := db.QueryAll(ctx, q, scan, fmt.Sprintf(query, db.Placeholders(1, len(ids))), args...)
	for _, r := range rows {
		out[key(r)] = append(out[key(r)], r)
	}
	return out, err
}

// errBound answers binding a transaction that an expense already holds.
var errBound = apierr.New(apierr.Conflict, "This transaction is already bound to an expense.")

// insertBinding binds b; a target bound to any expense is refused by the
// unique index (concurrent binds of one target: one wins), as errBound.
func insertBinding(ctx context.Context, tx *db.Tx, orgID uuid.UUID, b Binding) error {
	_, err := tx.ExecContext(ctx, `
		INSERT INTO expense_bindings (id, expense_id, organization_id, target_id, target_type, amount, currency, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		b.ID, b.ExpenseID, orgID, b.TargetID, b.TargetType, b.Total.Minor, b.Total.Currency, tx.Now())
	if db.IsConstraint(err, "expense_bindings_target_key") {
		return errBound
	}
	return err
}

// deleteBinding removes binding id of expense expenseID: not_found when it
// has no such binding.
func deleteBinding(ctx context.Context, tx *db.Tx, expenseID, id uuid.UUID) error {
	return deleteOne(ctx, tx, `DELETE FROM expense_bindings WHERE id = $1 AND expense_id = $2`, expenseID, id, "binding")
}

// deleteOne runs query, deleting row id of expense expenseID: not_found
// naming what when there is no such row.
func deleteOne(ctx context.Context, tx *db.Tx, query string, expenseID, id uuid.UUID, what string) error {
	res, err := tx.ExecContext(ctx, query, id, expenseID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		if err == nil {
			err = apierr.Newf(apierr.NotFound, "This expense has no %s with this id.", what)
		}
		return err
	}
	return nil
}

// receipt is a receipt's row: which file is attached to which expense.
type receipt struct {
	ID, ExpenseID, FileID uuid.UUID
}

// receiptsOf reads the receipts of expenses ids, oldest first, by expense.
func receiptsOf(ctx context.Context, q db.Querier, ids []uuid.UUID) (map[uuid.UUID][]receipt, error) {
	return byExpense(ctx, q, func(row db.Scanner) (receipt, error) {
		var r receipt
		err := row.Scan(&r.ID, &r.ExpenseID, &r.FileID)
		return r, err
	}, func(r receipt) uuid.UUID { return r.ExpenseID },
		`SELECT id, expense_id, file_id FROM expense_receipts WHERE expense_id IN (%s) ORDER BY expense_id, id`, ids)
}

// errReceiptTaken answers attaching a file that is already a receipt.
var errReceiptTaken = apierr.New(apierr.Conflict, "This file is already the receipt of an expense.")

// insertReceipt attaches file fileID to expense expenseID; a file that is
// already any expense's receipt is refused by the unique index, as
// errReceiptTaken.
func insertReceipt(ctx context.Context, tx *db.Tx, orgID, expenseID, fileID uuid.UUID) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO expense_receipts (id, expense_id, organization_id, file_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5)`, uuid.Must(uuid.NewV7()), expenseID, orgID, fileID, tx.Now())
	if db.IsConstraint(err, "expense_receipts_file_key") {
		return errReceiptTaken
	}
	return err
}

// deleteReceipt removes receipt id of expense expenseID: not_found when it
// has no such receipt.
func deleteReceipt(ctx context.Context, tx *db.Tx, expenseID, id uuid.UUID) error {
	return deleteOne(ctx, tx, `DELETE FROM expense_receipts WHERE id = $1 AND expense_id = $2`, expenseID, id, "receipt")
}
