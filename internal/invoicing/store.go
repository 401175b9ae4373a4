package invoicing

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var (
	errContactNotFound = apierr.New(apierr.NotFound, "There is no billing contact with this id.")
	errInvoiceNotFound = apierr.New(apierr.NotFound, "There is no invoice with this id.")
	errDepositNotFound = apierr.New(apierr.NotFound, "There is no crypto deposit with this id.")
)

// Contacts.

const contactColumns = `c.id, c.organization_id, c.company_name, c.address, c.emails, c.phone_number, c.tax_id,
	c.deleted_at, c.inserted_at, c.updated_at`

// contactFields are the scan targets of contactColumns into c; finish
// completes c once scanned.
func contactFields(c *Contact, emails *sql.NullString) []any {
	return []any{&c.ID, &c.OrganizationID, &c.CompanyName, &c.Address, emails, &c.PhoneNumber, &c.TaxID,
		&c.DeletedAt, &c.InsertedAt, &c.UpdatedAt}
}

func (c *Contact) finish(emails sql.NullString) error {
	if emails.Valid {
		if err := json.Unmarshal([]byte(emails.String), &c.Emails); err != nil {
			return err
		}
	}
	c.InsertedAt, c.UpdatedAt = c.InsertedAt.UTC(), c.UpdatedAt.UTC()
	if c.DeletedAt != nil {
		t := c.DeletedAt.UTC()
		c.DeletedAt = &t
	}
	return nil
}

func scanContact(row db.Scanner) (Contact, error) {
	var c Contact
	var emails sql.NullString
	err := row.Scan(contactFields(&c, &emails)...)
	if errors.Is(err, sql.ErrNoRows) {
		return Contact{}, errContactNotFound
	}
	if err != nil {
		return Contact{}, err
	}
	return c, c.finish(emails)
}

// emailsValue is how emails are stored: a JSON array, or NULL for none given.
func emailsValue(emails []string) (*string, error) {
	if emails == nil {
		return nil, nil
	}
	b, err := json.Marshal(emails)
	s := string(b)
	return &s, err
}

func loadContact(ctx context.Context, q db.Querier, orgID, id uuid.UUID, lock string) (Contact, error) {
	return scanContact(q.QueryRowContext(ctx, `SELECT `+contactColumns+` FROM billing_contacts c
		WHERE c.id = $1 AND c.organization_id = $2`+lock, id, orgID))
}

func insertContact(ctx context.Context, tx *db.Tx, c Contact) error {
	emails, err := emailsValue(c.Emails)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO billing_contacts (id, organization_id, company_name, address, emails, phone_number, tax_id,
		inserted_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		c.ID, c.OrganizationID, c.CompanyName, c.Address, emails, c.PhoneNumber, c.TaxID, tx.Now())
	return err
}

func updateContact(ctx context.Context, tx *db.Tx, c Contact) error {
	emails, err := emailsValue(c.Emails)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE billing_contacts SET company_name = $2, address = $3, emails = $4, phone_number = $5,
		tax_id = $6, deleted_at = $7, updated_at = $8 WHERE id = $1`,
		c.ID, c.CompanyName, c.Address, emails, c.PhoneNumber, c.TaxID, c.DeletedAt, tx.Now())
	return err
}

func listContacts(ctx context.Context, q db.Querier, orgID uuid.UUID, req page.Request) ([]Contact, error) {
	return db.QueryAll(ctx, q, scanContact, `SELECT `+contactColumns+` FROM billing_contacts c
		WHERE c.organization_id = $1 AND c.deleted_at IS NULL AND (c.id < $2 OR $2 IS NULL)
		ORDER BY c.id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
}

// Invoices.

// storedItem is a line item as kept in billing_invoices.line_items. The
// unit price is its whole minor units (price) and the ten-thousandths of a
// minor unit beyond them (price_fraction, left out when zero, as in lines
// stored before unit prices could be finer than the currency).
type storedItem struct {
	Description   string `json:"description"`
	Price         int64  `json:"price"`
	PriceFraction int64  `json:"price_fraction,omitempty"`
	Quantity      string `json:"quantity"`
	TaxPercentage string `json:"tax_percentage"`
	Total         int64  `json:"total"`
}

func (it storedItem) lineItem(currency string) LineItem {
	return LineItem{Description: it.Description, Price: money.UnitPrice{Minor: it.Price, Fraction: it.PriceFraction, Currency: currency},
		Quantity: it.Quantity, TaxPercentage: it.TaxPercentage, Total: it.Total}
}

func storedItemOf(it LineItem) storedItem {
	return storedItem{Description: it.Description, Price: it.Price.Minor, PriceFraction: it.Price.Fraction, Quantity: it.Quantity,
		TaxPercentage: it.TaxPercentage, Total: it.Total}
}

const invoiceColumns = `i.id, i.organization_id, i.state, i.currency, i.due_amount, i.allocated, i.accepted_amount,
	i.issue_date, i.due_date, i.line_items, i.comments, i.internal_description, i.internal_reference_number,
	i.approval_request_id, i.approval_requester_id, i.created_by_id, i.completed_at, i.inserted_at, i.updated_at, ` + contactColumns

const invoiceFrom = ` FROM billing_invoices i JOIN billing_contacts c ON c.id = i.billing_contact_id`

func scanInvoice(row db.Scanner) (Invoice, error) {
	var inv Invoice
	var items string
	var emails sql.NullString
	err := row.Scan(append([]any{&inv.ID, &inv.OrganizationID, &inv.State, &inv.Currency, &inv.DueAmount, &inv.Allocated,
		&inv.AcceptedAmount, &inv.IssueDate, &inv.DueDate, &items, &inv.Comments, &inv.InternalDescription,
		&inv.InternalReferenceNumber, &inv.ApprovalRequestID, &inv.ApprovalRequesterID, &inv.CreatedByID, &inv.CompletedAt,
		&inv.InsertedAt, &inv.UpdatedAt}, contactFields(&inv.Contact, &emails)...)...)
	if errors.Is(err, sql.ErrNoRows) {
		return Invoice{}, errInvoiceNotFound
	}
	if err != nil {
		return Invoice{}, err
	}
	if err := inv.Contact.finish(emails); err != nil {
		return Invoice{}, err
	}
	var stored []storedItem
	if err := json.Unmarshal([]byte(items), &stored); err != nil {
		return Invoice{}, err
	}
	inv.LineItems = make([]LineItem, len(stored))
	for i, it := range stored {
		inv.LineItems[i] = it.lineItem(inv.Currency)
	}
	inv.InsertedAt, inv.UpdatedAt = inv.InsertedAt.UTC(), inv.UpdatedAt.UTC()
	if inv.CompletedAt != nil {
		t := inv.CompletedAt.UTC()
		inv.CompletedAt = &t
	}
	inv.NextValidStates = NextValidStates(inv.State)
	return inv, nil
}

// loadInvoice reads invoice id of orgID. With lock (the dialect's row-lock
// clause) the row is locked first and read after, so on PostgreSQL what is
// read is what the lock protects.
func loadInvoice(ctx context.Context, q db.Querier, orgID, id uuid.UUID, lock string) (Invoice, error) {
	if lock != "" {
		var locked uuid.UUID
		err := q.QueryRowContext(ctx, `SELECT id FROM billing_invoices WHERE id = $1 AND organization_id = $2`+lock, id, orgID).Scan(&locked)
		if errors.Is(err, sql.ErrNoRows) {
			return Invoice{}, errInvoiceNotFound
		}
		if err != nil {
			return Invoice{}, err
		}
	}
	return scanInvoice(q.QueryRowContext(ctx, `SELECT `+invoiceColumns+invoiceFrom+` WHERE i.id = $1 AND i.organization_id = $2`, id, orgID))
}

// invoiceOrganization is the organization of invoice id, for reads by id alone.
func invoiceOrganization(ctx context.Context, q db.Querier, id uuid.UUID) (uuid.UUID, error) {
	var org uuid.UUID
	err := q.QueryRowContext(ctx, `SELECT organization_id FROM billing_invoices WHERE id = $1`, id).Scan(&org)
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, errInvoiceNotFound
	}
	return org, err
}

func itemsValue(items []LineItem) (string, error) {
	stored := make([]storedItem, len(items))
	for i, it := range items {
		stored[i] = storedItemOf(it)
	}
	b, err := json.Marshal(stored)
	return string(b), err
}

func insertInvoice(ctx context.Context, tx *db.Tx, inv Invoice) error {
	items, err := itemsValue(inv.LineItems)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO billing_invoices (id, organization_id, billing_contact_id, state, currency, due_amount,
		issue_date, due_date, line_items, comments, internal_description, internal_reference_number, created_by_id, inserted_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $14)`,
		inv.ID, inv.OrganizationID, inv.Contact.ID, inv.State, inv.Currency, inv.DueAmount, inv.IssueDate, inv.DueDate, items,
		inv.Comments, inv.InternalDescription, inv.InternalReferenceNumber, inv.CreatedByID, tx.Now())
	return err
}

// updateInvoice writes what a draft's PATCH may change.
func updateInvoice(ctx context.Context, tx *db.Tx, inv Invoice) error {
	items, err := itemsValue(inv.LineItems)
	if err != nil {
		return err
	}
	return setInvoice(ctx, tx, inv.ID, `billing_contact_id = $2, currency = $3, due_amount = $4, issue_date = $5, due_date = $6,
		line_items = $7, comments = $8, internal_description = $9, internal_reference_number = $10`,
		inv.Contact.ID, inv.Currency, inv.DueAmount, inv.IssueDate, inv.DueDate, items,
		inv.Comments, inv.InternalDescription, inv.InternalReferenceNumber)
}

// setInvoice applies set, an SQL SET list whose parameters start at $2, to
// invoice id, stamping updated_at.
func setInvoice(ctx context.Context, tx *db.Tx, id uuid.UUID, set string, args ...any) error {
	_, err := tx.ExecContext(ctx, `UPDATE billing_invoices SET `+set+`, updated_at = $`+strconv.Itoa(len(args)+2)+` WHERE id = $1`,
		append(append([]any{id}, args...), tx.Now())...)
	return err
}

// InvoiceFilter narrows the invoice list.
type InvoiceFilter struct {
	// States keeps invoices in any of these states; empty keeps all.
	States    []string
	ContactID *uuid.UUID
	// Overdue keeps only overdue invoices (true) or only the others (false).
	Overdue *bool
}

var errBadCursor = apierr.New(apierr.InvalidCursor, "The cursor is not valid for this list; start again from the first page.")

func listInvoices(ctx context.Context, q db.Querier, now time.Time, orgID uuid.UUID, f InvoiceFilter, req page.Request) ([]Invoice, error) {
	var afterDate *string
	var afterID *uuid.UUID
	if req.After != nil {
		id, err := uuid.Parse(req.After.ID)
		if err != nil {
			return nil, errBadCursor
		}
		afterDate, afterID = &req.After.Sort, &id
	}
	states := "," + strings.Join(f.States, ",") + ","
	if len(f.States) == 0 {
		states = ","
	}
	return db.QueryAll(ctx, q, scanInvoice, `SELECT `+invoiceColumns+invoiceFrom+`
		WHERE i.organization_id = $1
		  AND ($2 = ',' OR $2 LIKE '%,' || i.state || ',%')
		  AND (i.billing_contact_id = $3 OR $3 IS NULL)
		  AND ($4 = (i.state = 'sent' AND i.due_date < $5) OR $4 IS NULL)
		  AND (i.issue_date < $6 OR (i.issue_date = $6 AND i.id < $7) OR $6 IS NULL)
		ORDER BY i.issue_date DESC, i.id DESC LIMIT $8`,
		orgID, states, f.ContactID, f.Overdue, now.UTC().Format(time.DateOnly), afterDate, afterID, req.Limit+1)
}

// Crypto deposits.

const depositColumns = `d.id, d.organization_id, d.coin, d.amount, d.unallocated, d.tx_ref, d.transaction_id, d.inserted_at`

func depositFields(d *CryptoIncoming) []any {
	return []any{&d.ID, &d.OrganizationID, &d.Coin, &d.Amount, &d.Unallocated, &d.TxRef, &d.TransactionID, &d.InsertedAt}
}

func scanDeposit(row db.Scanner) (CryptoIncoming, error) {
	var d CryptoIncoming
	err := row.Scan(depositFields(&d)...)
	if errors.Is(err, sql.ErrNoRows) {
		return CryptoIncoming{}, errDepositNotFound
	}
	d.InsertedAt = d.InsertedAt.UTC()
	return d, err
}

func loadDeposit(ctx context.Context, q db.Querier, orgID, id uuid.UUID) (CryptoIncoming, error) {
	return scanDeposit(q.QueryRowContext(ctx, `SELECT `+depositColumns+` FROM crypto_incoming d WHERE d.id = $1 AND d.organization_id = $2`, id, orgID))
}

func insertDeposit(ctx context.Context, tx *db.Tx, d CryptoIncoming) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO crypto_incoming (id, organization_id, coin, amount, unallocated, tx_ref, transaction_id, inserted_at)
		VALUES ($1, $2, $3, $4, $4, $5, $6, $7)`, d.ID, d.OrganizationID, d.Coin, d.Amount, d.TxRef, d.TransactionID, tx.Now())
	return err
}

func listDeposits(ctx context.Context, q db.Querier, orgID uuid.UUID, req page.Request) ([]CryptoIncoming, error) {
	return db.QueryAll(ctx, q, scanDeposit, `SELECT `+depositColumns+` FROM crypto_incoming d
		WHERE d.organization_id = $1 AND (d.id < $2 OR $2 IS NULL) ORDER BY d.id DESC LIMIT $3`, orgID, req.AfterUUID(), req.Limit+1)
}

// takeUnallocated takes units (millionths of the coin) from deposit id's
// unallocated amount, only while that much is left: the database decides,
// so concurrent allocations can never take more than the deposit holds.
// It reports whether it took them.
func takeUnallocated(ctx context.Context, tx *db.Tx, id uuid.UUID, units int64) (bool, error) {
	res, err := tx.ExecContext(ctx, `UPDATE crypto_incoming SET unallocated = unallocated - $2 WHERE id = $1 AND unallocated >= $2`, id, units)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// returnUnallocated gives units back to deposit id (a reversal); the CHECK
// constraint keeps unallocated within the deposit's amount.
func returnUnallocated(ctx context.Context, tx *db.Tx, id uuid.UUID, units int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE crypto_incoming SET unallocated = unallocated + $2 WHERE id = $1`, id, units)
	return err
}

// Allocations.

const allocationColumns = `a.id, a.organization_id, a.billing_contact_id, a.billing_invoice_id, a.credit, i.currency, a.notes,
	a.user_id, a.reverses_allocation_id, a.inserted_at, ` + depositColumns

const allocationFrom = ` FROM billing_allocations a JOIN billing_invoices i ON i.id = a.billing_invoice_id
	JOIN crypto_incoming d ON d.id = a.crypto_incoming_id`

func scanAllocation(row db.Scanner) (Allocation, error) {
	var a Allocation
	err := row.Scan(append([]any{&a.ID, &a.OrganizationID, &a.ContactID, &a.InvoiceID, &a.Credit, &a.Currency, &a.Notes,
		&a.UserID, &a.Reverses, &a.CreatedAt}, depositFields(&a.Deposit)...)...)
	a.CreatedAt, a.Deposit.InsertedAt = a.CreatedAt.UTC(), a.Deposit.InsertedAt.UTC()
	return a, err
}

func insertAllocation(ctx context.Context, tx *db.Tx, a Allocation) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO billing_allocations (id, organization_id, billing_contact_id, billing_invoice_id,
		crypto_incoming_id, credit, notes, user_id, reverses_allocation_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.ID, a.OrganizationID, a.ContactID, a.InvoiceID, a.Deposit.ID, a.Credit, a.Notes, a.UserID, a.Reverses, tx.Now())
	return err
}

func loadAllocation(ctx context.Context, q db.Querier, id uuid.UUID) (Allocation, error) {
	return scanAllocation(q.QueryRowContext(ctx, `SELECT `+allocationColumns+allocationFrom+` WHERE a.id = $1`, id))
}

// standingAllocations lists invoice id's allocations that are not reversed,
// oldest first.
func standingAllocations(ctx context.Context, tx *db.Tx, id uuid.UUID) ([]Allocation, error) {
	return db.QueryAll(ctx, tx, scanAllocation, `SELECT `+allocationColumns+allocationFrom+`
		WHERE a.billing_invoice_id = $1 AND a.reverses_allocation_id IS NULL
		  AND NOT EXISTS (SELECT 1 FROM billing_allocations r WHERE r.reverses_allocation_id = a.id)
		ORDER BY a.id`, id)
}

func listAllocations(ctx context.Context, q db.Querier, contactID uuid.UUID, req page.Request) ([]Allocation, error) {
	return db.QueryAll(ctx, q, scanAllocation, `SELECT `+allocationColumns+allocationFrom+`
		WHERE a.billing_contact_id = $1 AND (a.id < $2 OR $2 IS NULL) ORDER BY a.id DESC LIMIT $3`, contactID, req.AfterUUID(), req.Limit+1)
}
