package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/strongroom/strongroom/client/api"
)

// Expenses iterates over the organization's expenses (a member sees only
// their own), every page of them. filters (may be nil) are sent with every
// page; its Cursor is ignored.
func (c *Client) Expenses(ctx context.Context, organizationID string, filters *api.ListExpensesParams) iter.Seq2[api.Expense, error] {
	var params api.ListExpensesParams
	if filters != nil {
		params = *filters
	}
	return list[api.Expense](ctx, func(ctx context.Context, cursor *string) (*http.Response, error) {
		org, err := parseUUID("organization id", organizationID)
		if err != nil {
			return nil, err
		}
		p := params
		p.Cursor = cursor
		return c.raw.ListExpenses(ctx, org, &p)
	})
}

// CreateExpense creates a draft expense (createExpense).
func (c *Client) CreateExpense(ctx context.Context, organizationID string, expense api.ExpenseFields) (*api.Expense, error) {
	org, err := parseUUID("organization id", organizationID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.CreateExpense(ctx, org, nil, expense))
}

// Expense reads one expense (getExpense).
func (c *Client) Expense(ctx context.Context, expenseID string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.GetExpense(ctx, id, nil))
}

// UpdateExpense changes an expense that is a draft or was rejected
// (updateExpense).
func (c *Client) UpdateExpense(ctx context.Context, expenseID string, update api.ExpenseFields) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.UpdateExpense(ctx, id, nil, update))
}

// DeleteExpense deletes a draft expense (deleteExpense) and answers it as it
// was.
func (c *Client) DeleteExpense(ctx context.Context, expenseID string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.DeleteExpense(ctx, id, nil))
}

// SubmitExpense submits a draft expense for approval (submitExpense).
func (c *Client) SubmitExpense(ctx context.Context, expenseID string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.SubmitExpense(ctx, id, nil, api.EmptyObject{}))
}

// ApproveExpense approves a submitted expense (approveExpense); an owner or
// admin, never its creator.
func (c *Client) ApproveExpense(ctx context.Context, expenseID string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.ApproveExpense(ctx, id, nil, api.EmptyObject{}))
}

// RejectExpense rejects a submitted expense (rejectExpense); reason may be
// empty. Its creator may change it and submit it again.
func (c *Client) RejectExpense(ctx context.Context, expenseID, reason string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	var body api.ExpenseRejection
	if reason != "" {
		body.Reason = &reason
	}
	return decode[api.Expense](c.raw.RejectExpense(ctx, id, nil, body))
}

// MarkExpensePaid records that an approved expense was reimbursed
// (markExpensePaid).
func (c *Client) MarkExpensePaid(ctx context.Context, expenseID string) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.MarkExpensePaid(ctx, id, nil, api.EmptyObject{}))
}

// BindExpense binds a transaction of the feed to an expense (bindExpense).
func (c *Client) BindExpense(ctx context.Context, expenseID string, binding api.ExpenseBindingRequest) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.BindExpense(ctx, id, nil, binding))
}

// UnbindExpense removes a transaction's binding from an expense
// (unbindExpense).
func (c *Client) UnbindExpense(ctx context.Context, expenseID, bindingID string) (*api.Expense, error) {
	expense, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	binding, err := parseUUID("binding id", bindingID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.UnbindExpense(ctx, expense, binding, nil))
}

// AddExpenseReceipt attaches a stored file as a receipt of an expense
// (addExpenseReceipt).
func (c *Client) AddExpenseReceipt(ctx context.Context, expenseID string, receipt api.ExpenseReceiptRequest) (*api.Expense, error) {
	id, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.AddExpenseReceipt(ctx, id, nil, receipt))
}

// RemoveExpenseReceipt detaches a receipt from an expense
// (removeExpenseReceipt).
func (c *Client) RemoveExpenseReceipt(ctx context.Context, expenseID, receiptID string) (*api.Expense, error) {
	expense, err := parseUUID("expense id", expenseID)
	if err != nil {
		return nil, err
	}
	receipt, err := parseUUID("receipt id", receiptID)
	if err != nil {
		return nil, err
	}
	return decode[api.Expense](c.raw.RemoveExpenseReceipt(ctx, expense, receipt, nil))
}
