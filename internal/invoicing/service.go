package invoicing

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs billing contacts, invoices, crypto deposits and allocations.
// Its transactions stamp rows with tx.Now(); reads tell overdue invoices by
// the database's clock (the service clock).
type Service struct {
	DB *db.DB
}

// Updated is the event type of every change of an invoice: the
// organization's realtime channel shows the invoice as it is at delivery.
const Updated = "invoice.updated"

var errManagersOnly = apierr.New(apierr.Forbidden, "Only an owner or admin of the organization can do this.")

// checkText requires v, when given, to be 1 to max characters without
// control characters (line breaks allowed when multiline) or leading and
// trailing spaces.
func checkText(f *apierr.Fields, field string, v *string, max int, multiline bool) {
	if v == nil {
		return
	}
	s := *v
	ctrl := strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) && !(multiline && r == '\n') })
	f.Check(s != "" && utf8.RuneCountInString(s) <= max && s == strings.TrimSpace(s) && ctrl < 0, field,
		fmt.Sprintf("must be 1 to %d characters, without control characters or leading or trailing spaces.", max))
}

// Contacts.

// ContactRequest is the body of creating a billing contact.
type ContactRequest struct {
	CompanyName string   `json:"company_name"`
	Address     *string  `json:"address"`
	Emails      []string `json:"emails"`
	PhoneNumber *string  `json:"phone_number"`
	TaxID       *string  `json:"tax_id"`
}

// MaxEmails is the most addresses a billing contact holds.
const MaxEmails = 20

// Validate checks the body's fields.
func (r ContactRequest) Validate() error {
	var f apierr.Fields
	if r.CompanyName == "" {
		f.Add("company_name", "is required.")
	} else {
		checkText(&f, "company_name", &r.CompanyName, 200, false)
	}
	checkContactFields(&f, r.Address, r.Emails, r.PhoneNumber, r.TaxID)
	return f.Err()
}

func checkContactFields(f *apierr.Fields, address *string, emails []string, phone, taxID *string) {
	checkText(f, "address", address, 500, true)
	checkText(f, "phone_number", phone, 40, false)
	checkText(f, "tax_id", taxID, 50, false)
	f.Check(len(emails) <= MaxEmails, "emails", fmt.Sprintf("must hold at most %d addresses.", MaxEmails))
	for i, e := range emails {
		f.Check(validEmail(e), fmt.Sprintf("emails[%d]", i), "must be an email address such as billing@example.com.")
	}
}

// validEmail accepts a bare address (no display name) with a dotted domain.
func validEmail(e string) bool {
	a, err := mail.ParseAddress(e)
	if err != nil || a.Name != "" || a.Address != e || len(e) > 254 {
		return false
	}
	_, domain, _ := strings.Cut(e, "@")
	return strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".")
}

// ContactPatch is the body of a billing contact's PATCH: fields sent change,
// null clears (company_name cannot be cleared).
type ContactPatch struct {
	CompanyName field.Optional[string]   `json:"company_name"`
	Address     field.Optional[string]   `json:"address"`
	Emails      field.Optional[[]string] `json:"emails"`
	PhoneNumber field.Optional[string]   `json:"phone_number"`
	TaxID       field.Optional[string]   `json:"tax_id"`
}

// Validate checks the fields sent.
func (r ContactPatch) Validate() error {
	var f apierr.Fields
	if r.CompanyName.Set {
		f.Check(r.CompanyName.Value != nil, "company_name", "cannot be null.")
		checkText(&f, "company_name", r.CompanyName.Value, 200, false)
	}
	var emails []string
	if r.Emails.Value != nil {
		emails = *r.Emails.Value
	}
	checkContactFields(&f, r.Address.Value, emails, r.PhoneNumber.Value, r.TaxID.Value)
	return f.Err()
}

// CreateContact adds a billing contact to orgID: any member.
func (s *Service) CreateContact(ctx context.Context, a actor.Actor, orgID uuid.UUID, r ContactRequest) (Contact, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Contact, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Write: true}); err != nil {
			return Contact{}, err
		}
		c := Contact{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, CompanyName: r.CompanyName, Address: r.Address,
			Emails: r.Emails, PhoneNumber: r.PhoneNumber, TaxID: r.TaxID}
		if err := insertContact(ctx, tx, c); err != nil {
			return Contact{}, err
		}
		return loadContact(ctx, tx, orgID, c.ID, "")
	})
}

// GetContact returns billing contact id of orgID, deleted ones too.
func (s *Service) GetContact(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Contact, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return Contact{}, err
	}
	return loadContact(ctx, q, orgID, id, "")
}

// ListContacts returns a page of orgID's billing contacts that are not
// deleted, newest first.
func (s *Service) ListContacts(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]Contact, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return nil, err
	}
	return listContacts(ctx, q, orgID, req)
}

// ContactPageKey positions a page after c.
func ContactPageKey(c Contact) page.Key { return page.Key{ID: c.ID.String()} }

var errContactDeleted = apierr.New(apierr.Conflict, "This billing contact is deleted.")

// changeContact runs one change of billing contact id in a transaction.
func (s *Service) changeContact(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, need organization.Role, fn func(tx *db.Tx, c *Contact) error) (Contact, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Contact, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Role: need, Write: true}); err != nil {
			return Contact{}, err
		}
		c, err := loadContact(ctx, tx, orgID, id, tx.ForUpdate())
		if err != nil {
			return Contact{}, err
		}
		if err := fn(tx, &c); err != nil {
			return Contact{}, err
		}
		if err := updateContact(ctx, tx, c); err != nil {
			return Contact{}, err
		}
		return loadContact(ctx, tx, orgID, id, "")
	})
}

// UpdateContact changes a billing contact that is not deleted: any member.
func (s *Service) UpdateContact(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r ContactPatch) (Contact, error) {
	return s.changeContact(ctx, a, orgID, id, organization.Member, func(_ *db.Tx, c *Contact) error {
		if c.DeletedAt != nil {
			return errContactDeleted
		}
		if r.CompanyName.Value != nil {
			c.CompanyName = *r.CompanyName.Value
		}
		if r.Address.Set {
			c.Address = r.Address.Value
		}
		if r.Emails.Set {
			c.Emails = nil
			if r.Emails.Value != nil {
				c.Emails = *r.Emails.Value
			}
		}
		if r.PhoneNumber.Set {
			c.PhoneNumber = r.PhoneNumber.Value
		}
		if r.TaxID.Set {
			c.TaxID = r.TaxID.Value
		}
		return nil
	})
}

// DeleteContact soft-deletes a billing contact: owners and admins. It leaves
// the list; GET still shows it and its invoices keep it. Deleting a deleted
// contact changes nothing.
func (s *Service) DeleteContact(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Contact, error) {
	return s.changeContact(ctx, a, orgID, id, organization.Admin, func(tx *db.Tx, c *Contact) error {
		if c.DeletedAt == nil {
			now := tx.Now()
			c.DeletedAt = &now
		}
		return nil
	})
}

// Invoices.

// LineItemRequest is one line of an invoice as sent.
type LineItemRequest struct {
	Description   string `json:"description"`
	Price         string `json:"price"`
	Quantity      string `json:"quantity"`
	TaxPercentage string `json:"tax_percentage"`
}

// MaxLineItems is the most lines an invoice holds.
const MaxLineItems = 100

// InvoiceRequest is the body of creating an invoice.
type InvoiceRequest struct {
	BillingContactID        string            `json:"billing_contact_id"`
	Currency                string            `json:"currency"`
	IssueDate               string            `json:"issue_date"`
	DueDate                 string            `json:"due_date"`
	LineItems               []LineItemRequest `json:"line_items"`
	Comments                *string           `json:"comments"`
	InternalDescription     *string           `json:"internal_description"`
	InternalReferenceNumber *string           `json:"internal_reference_number"`
}

// Validate checks the body's fields; the line totals are computed (and
// checked against the currency's largest amount) when the invoice is made.
func (r InvoiceRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.BillingContactID)
	f.Check(err == nil, "billing_contact_id", "must be the id of a billing contact.")
	f.Check(money.IsCurrency(r.Currency), "currency", "must be an ISO 4217 currency code in capitals.")
	checkDates(&f, r.IssueDate, r.DueDate)
	f.Check(r.LineItems != nil, "line_items", "is required.")
	checkItems(&f, r.LineItems, r.Currency)
	checkNotes(&f, r.Comments, r.InternalDescription, r.InternalReferenceNumber)
	return f.Err()
}

func checkDates(f *apierr.Fields, issue, due string) {
	f.Check(field.IsDate(issue), "issue_date", "must be a date as YYYY-MM-DD.")
	f.Check(field.IsDate(due), "due_date", "must be a date as YYYY-MM-DD.")
	if field.IsDate(issue) && field.IsDate(due) {
		f.Check(due >= issue, "due_date", "must not be before issue_date.")
	}
}

func checkNotes(f *apierr.Fields, comments, description, reference *string) {
	checkText(f, "comments", comments, 2000, true)
	checkText(f, "internal_description", description, 2000, true)
	checkText(f, "internal_reference_number", reference, 100, false)
}

// checkItems checks the lines' fields; prices only when currency is known.
func checkItems(f *apierr.Fields, items []LineItemRequest, currency string) {
	if items != nil {
		f.Check(len(items) >= 1 && len(items) <= MaxLineItems, "line_items", fmt.Sprintf("must hold 1 to %d lines.", MaxLineItems))
	}
	for i, it := range items {
		field := func(name string) string { return fmt.Sprintf("line_items[%d].%s", i, name) }
		if it.Description == "" {
			f.Add(field("description"), "is required.")
		} else {
			checkText(f, field("description"), &it.Description, 500, false)
		}
		if money.IsCurrency(currency) {
			_, err := money.ParseUnitPrice(it.Price, currency)
			var pe *money.ParseError
			switch {
			case errors.As(err, &pe):
				f.Add(field("price"), "price "+pe.Reason+".")
			case err != nil:
				f.Add(field("price"), "must be a decimal amount of at least 0.")
			}
		}
		f.Check(quantityPattern.MatchString(it.Quantity) && strings.Trim(it.Quantity, "0.") != "", field("quantity"),
			"must be a positive decimal number with at most 9 digits before and 6 after the decimal point.")
		f.Check(taxPattern.MatchString(it.TaxPercentage) && len(it.TaxPercentage) > 0 && percentAtMost100(it.TaxPercentage),
			field("tax_percentage"), "must be a decimal percentage from 0 to 100 with at most 4 decimal places.")
	}
}

func percentAtMost100(s string) bool {
	whole, frac, _ := strings.Cut(s, ".")
	whole = strings.TrimLeft(whole, "0")
	return len(whole) < 3 || (whole == "100" && strings.Trim(frac, "0") == "")
}

// lines computes the line items of items (already checked) in currency and
// their sum, the amount due; a total beyond the currency's largest amount is
// invalid_request.
func lines(items []LineItemRequest, currency string) ([]LineItem, int64, error) {
	out := make([]LineItem, len(items))
	for i, it := range items {
		price, err := money.ParseUnitPrice(it.Price, currency)
		if err != nil {
			return nil, 0, apierr.InvalidField(fmt.Sprintf("line_items[%d].price", i), "must be a decimal amount in "+currency+
				", with at most "+strconv.Itoa(money.UnitPriceExtraDigits)+" decimal places more than the currency has.")
		}
		total, err := LineTotal(price, it.Quantity, it.TaxPercentage, currency)
		if err != nil {
			return nil, 0, apierr.InvalidField(fmt.Sprintf("line_items[%d]", i), "The line's total is beyond the largest amount of "+currency+".")
		}
		out[i] = LineItem{Description: it.Description, Price: price, Quantity: it.Quantity, TaxPercentage: it.TaxPercentage, Total: total}
	}
	due, err := Sum(out, currency)
	if err != nil {
		return nil, 0, apierr.InvalidField("line_items", "The invoice's total is beyond the largest amount of "+currency+".")
	}
	return out, due, nil
}

// invoiceContact is contact id of orgID for an invoice: not deleted.
func invoiceContact(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID) (Contact, error) {
	c, err := loadContact(ctx, tx, orgID, id, "")
	if err != nil {
		return Contact{}, err
	}
	if c.DeletedAt != nil {
		return Contact{}, apierr.New(apierr.Conflict, "This billing contact is deleted; choose another for the invoice.")
	}
	return c, nil
}

// Create makes an invoice of orgID at draft: any member.
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, r InvoiceRequest) (Invoice, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Invoice, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Write: true}); err != nil {
			return Invoice{}, err
		}
		c, err := invoiceContact(ctx, tx, orgID, uuid.MustParse(r.BillingContactID))
		if err != nil {
			return Invoice{}, err
		}
		items, due, err := lines(r.LineItems, r.Currency)
		if err != nil {
			return Invoice{}, err
		}
		creator := a.UserID
		inv := Invoice{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, State: Draft, Currency: r.Currency, DueAmount: due,
			IssueDate: r.IssueDate, DueDate: r.DueDate, Contact: c, LineItems: items, Comments: r.Comments,
			InternalDescription: r.InternalDescription, InternalReferenceNumber: r.InternalReferenceNumber, CreatedByID: &creator}
		if err := insertInvoice(ctx, tx, inv); err != nil {
			return Invoice{}, err
		}
		return s.updated(ctx, tx, orgID, inv.ID)
	})
}

// InvoicePatch is the body of a draft invoice's PATCH: fields sent change;
// null clears the optional texts.
type InvoicePatch struct {
	BillingContactID        *string                `json:"billing_contact_id"`
	Currency                *string                `json:"currency"`
	IssueDate               *string                `json:"issue_date"`
	DueDate                 *string                `json:"due_date"`
	LineItems               *[]LineItemRequest     `json:"line_items"`
	Comments                field.Optional[string] `json:"comments"`
	InternalDescription     field.Optional[string] `json:"internal_description"`
	InternalReferenceNumber field.Optional[string] `json:"internal_reference_number"`
}

// Validate checks the fields sent; dates and prices are checked again
// against what they combine with once the invoice is read.
func (r InvoicePatch) Validate() error {
	var f apierr.Fields
	if r.BillingContactID != nil {
		_, err := uuid.Parse(*r.BillingContactID)
		f.Check(err == nil, "billing_contact_id", "must be the id of a billing contact.")
	}
	if r.Currency != nil {
		f.Check(money.IsCurrency(*r.Currency), "currency", "must be an ISO 4217 currency code in capitals.")
	}
	if r.LineItems != nil {
		f.Check(*r.LineItems != nil, "line_items", "cannot be null.")
		if *r.LineItems != nil {
			checkItems(&f, *r.LineItems, "")
		}
	}
	checkNotes(&f, r.Comments.Value, r.InternalDescription.Value, r.InternalReferenceNumber.Value)
	return f.Err()
}

// Update changes a draft invoice: any member; other states are conflict.
// The line totals are computed again when lines or currency change.
func (s *Service) Update(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r InvoicePatch) (Invoice, error) {
	return s.change(ctx, a, orgID, id, organization.Member, func(tx *db.Tx, inv *Invoice) error {
		if inv.State != Draft {
			return apierr.New(apierr.Conflict, "Only a draft invoice can be changed; this one is "+inv.State+".")
		}
		next := InvoiceRequest{BillingContactID: inv.Contact.ID.String(), Currency: inv.Currency, IssueDate: inv.IssueDate,
			DueDate: inv.DueDate, Comments: inv.Comments, InternalDescription: inv.InternalDescription,
			InternalReferenceNumber: inv.InternalReferenceNumber}
		for _, it := range inv.LineItems {
			next.LineItems = append(next.LineItems, LineItemRequest{Description: it.Description,
				Price: it.Price.String(), Quantity: it.Quantity, TaxPercentage: it.TaxPercentage})
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&next.BillingContactID, r.BillingContactID)
		set(&next.Currency, r.Currency)
		set(&next.IssueDate, r.IssueDate)
		set(&next.DueDate, r.DueDate)
		if r.LineItems != nil {
			next.LineItems = *r.LineItems
		}
		for _, o := range []struct {
			dst **string
			v   field.Optional[string]
		}{{&next.Comments, r.Comments}, {&next.InternalDescription, r.InternalDescription}, {&next.InternalReferenceNumber, r.InternalReferenceNumber}} {
			if o.v.Set {
				*o.dst = o.v.Value
			}
		}
		if err := next.Validate(); err != nil {
			return err
		}
		if r.BillingContactID != nil {
			c, err := invoiceContact(ctx, tx, orgID, uuid.MustParse(next.BillingContactID))
			if err != nil {
				return err
			}
			inv.Contact = c
		}
		items, due, err := lines(next.LineItems, next.Currency)
		if err != nil {
			return err
		}
		inv.Currency, inv.IssueDate, inv.DueDate, inv.LineItems, inv.DueAmount = next.Currency, next.IssueDate, next.DueDate, items, due
		inv.Comments, inv.InternalDescription, inv.InternalReferenceNumber = next.Comments, next.InternalDescription, next.InternalReferenceNumber
		return updateInvoice(ctx, tx, *inv)
	})
}

// Get returns invoice id of orgID.
func (s *Service) Get(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return Invoice{}, err
	}
	inv, err := loadInvoice(ctx, q, orgID, id, "")
	if err != nil {
		return Invoice{}, err
	}
	return s.finish(ctx, q, inv)
}

// GetByID returns invoice id, whatever its organization, if a may see it:
// the realtime channel's read of the invoice an event names.
func (s *Service) GetByID(ctx context.Context, a actor.Actor, id uuid.UUID) (Invoice, error) {
	org, err := invoiceOrganization(ctx, s.DB.Reader(), id)
	if err != nil {
		return Invoice{}, err
	}
	inv, err := s.Get(ctx, a, org, id)
	return inv, organization.Hide(err, errInvoiceNotFound)
}

// List returns a page of orgID's invoices, newest issue_date first, then id.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f InvoiceFilter, req page.Request) ([]Invoice, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return nil, err
	}
	rows, err := listInvoices(ctx, q, orgID, f, req)
	if err != nil {
		return nil, err
	}
	for i := range rows {
		if rows[i], err = s.finish(ctx, q, rows[i]); err != nil {
			return nil, err
		}
	}
	return rows, nil
}

// InvoicePageKey positions a page after inv.
func InvoicePageKey(inv Invoice) page.Key { return page.Key{Sort: inv.IssueDate, ID: inv.ID.String()} }

// finish computes what an invoice shows when read at q.Now(): is_overdue
// and the people it names.
func (s *Service) finish(ctx context.Context, q db.Reader, inv Invoice) (Invoice, error) {
	inv.IsOverdue = Overdue(inv.State, inv.DueDate, q.Now())
	var ids []uuid.UUID
	for _, id := range []*uuid.UUID{inv.CreatedByID, inv.ApprovalRequesterID} {
		if id != nil {
			ids = append(ids, *id)
		}
	}
	users, err := identity.GetUsers(ctx, q, ids)
	if err != nil {
		return Invoice{}, err
	}
	person := func(id *uuid.UUID) *Person {
		if id == nil {
			return nil
		}
		u, ok := users[*id]
		if !ok {
			return nil
		}
		return &Person{ID: u.ID, FirstName: u.FirstName, LastName: u.LastName}
	}
	inv.CreatedBy, inv.ApprovalRequester = person(inv.CreatedByID), person(inv.ApprovalRequesterID)
	return inv, nil
}

// change runs one change of invoice id of orgID by a in a transaction: the
// organization must admit writes, the invoice row is locked, a's role must
// reach need, then fn applies the change; the invoice is read again and
// invoice.updated appended.
func (s *Service) change(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, need organization.Role, fn func(tx *db.Tx, inv *Invoice) error) (Invoice, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Invoice, error) {
		role, err := organization.Check(ctx, tx, a, orgID, organization.Need{Write: true})
		if err != nil {
			return Invoice{}, err
		}
		inv, err := loadInvoice(ctx, tx, orgID, id, tx.ForUpdate())
		if err != nil {
			return Invoice{}, err
		}
		if !role.AtLeast(need) {
			return Invoice{}, errManagersOnly
		}
		if err := fn(tx, &inv); err != nil {
			return Invoice{}, err
		}
		return s.updated(ctx, tx, orgID, id)
	})
}

// updated reads invoice id again after a change and appends invoice.updated.
func (s *Service) updated(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID) (Invoice, error) {
	inv, err := loadInvoice(ctx, tx, orgID, id, "")
	if err != nil {
		return Invoice{}, err
	}
	if _, err := event.Append(ctx, tx, orgID, "invoice-"+id.String(), id.String(), Updated,
		map[string]string{"invoice_id": id.String()}); err != nil {
		return Invoice{}, err
	}
	return s.finish(ctx, tx, inv)
}

// move makes the named move of invoice id (see Moves); then does the
// move's own writes beside the state, an SQL SET list from $2.
func (s *Service) move(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, name string, also func(tx *db.Tx, inv *Invoice) (string, []any, error)) (Invoice, error) {
	m := moveNamed(name)
	return s.change(ctx, a, orgID, id, m.Role, func(tx *db.Tx, inv *Invoice) error {
		if inv.State != m.From {
			return apierr.Newf(apierr.Conflict, "This invoice is %s; only a %s invoice can be moved by %s.", strings.ReplaceAll(inv.State, "_", " "),
				strings.ReplaceAll(m.From, "_", " "), m.Name)
		}
		set, args := "", []any{}
		if also != nil {
			var err error
			if set, args, err = also(tx, inv); err != nil {
				return err
			}
		}
		n := len(args) + 2
		if err := setInvoice(ctx, tx, id, fmt.Sprintf("state = $%d", n)+set, append(args, m.To)...); err != nil {
			return err
		}
		return audit.Record(ctx, tx, orgID, invoiceActions[m.Name], audit.To("invoice", id))
	})
}

// invoiceActions are the audit log's actions of the invoice moves.
var invoiceActions = map[string]string{
	"submit":     audit.InvoiceSubmitted,
	"approve":    audit.InvoiceApproved,
	"return":     audit.InvoiceReturned,
	"send":       audit.InvoiceSent,
	"finalize":   audit.InvoiceFinalized,
	"deallocate": audit.InvoiceDeallocated,
}

// Submit asks for approval of a draft: any member. The invoice names the
// approval request and who asked.
func (s *Service) Submit(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "submit", func(*db.Tx, *Invoice) (string, []any, error) {
		return ", approval_request_id = $2, approval_requester_id = $3", []any{uuid.Must(uuid.NewV7()), a.UserID}, nil
	})
}

// Approve sends an invoice awaiting approval: owners and admins.
func (s *Service) Approve(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "approve", nil)
}

// Return sends an invoice awaiting approval back to draft: owners and
// admins. The answered approval request is cleared.
func (s *Service) Return(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "return", func(*db.Tx, *Invoice) (string, []any, error) {
		return ", approval_request_id = NULL, approval_requester_id = NULL", nil, nil
	})
}

// Send sends a draft without approval: owners and admins.
func (s *Service) Send(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "send", nil)
}

// Finalize closes a sent invoice settled outside the service: owners and
// admins; completed_at is set.
func (s *Service) Finalize(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "finalize", func(tx *db.Tx, _ *Invoice) (string, []any, error) {
		return ", completed_at = $2", []any{tx.Now()}, nil
	})
}

// Deallocate reverses every standing allocation of a paid invoice: owners
// and admins. Each gets a reversal entry (negative credit,
// same deposit) in the contact's allocation ledger, the deposits get the
// amounts back unallocated, and the invoice is sent again without
// accepted_amount and completed_at.
func (s *Service) Deallocate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID) (Invoice, error) {
	return s.move(ctx, a, orgID, id, "deallocate", func(tx *db.Tx, inv *Invoice) (string, []any, error) {
		standing, err := standingAllocations(ctx, tx, id)
		if err != nil {
			return "", nil, err
		}
		for _, al := range standing {
			reverses := al.ID
			rev := Allocation{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, ContactID: al.ContactID, InvoiceID: id,
				Credit: -al.Credit, Deposit: al.Deposit, Notes: "Reversed: the invoice was deallocated.", UserID: a.UserID, Reverses: &reverses}
			if err := insertAllocation(ctx, tx, rev); err != nil {
				return "", nil, err
			}
			if err := returnUnallocated(ctx, tx, al.Deposit.ID, al.Credit*coinUnits(inv.Currency)); err != nil {
				return "", nil, err
			}
		}
		return ", allocated = 0, accepted_amount = NULL, completed_at = NULL", nil, nil
	})
}

// Crypto deposits.

// DepositRequest is the body of the sandbox's crypto deposit.
type DepositRequest struct {
	Coin   string  `json:"coin"`
	Amount string  `json:"amount"`
	TxRef  *string `json:"tx_ref"`
}

// Validate checks the body's fields.
func (r DepositRequest) Validate() error {
	var f apierr.Fields
	f.Check(money.IsCoin(r.Coin), "coin", "must be USDC, USDT or EURC.")
	if money.IsCoin(r.Coin) {
		a, err := money.ParseCoin(r.Amount, r.Coin)
		var pe *money.ParseError
		switch {
		case errors.As(err, &pe):
			f.Add("amount", "amount "+pe.Reason+".")
		case err != nil || !a.IsPositive():
			f.Add("amount", "must be a positive decimal amount.")
		}
	}
	checkText(&f, "tx_ref", r.TxRef, 200, false)
	return f.Err()
}

// Deposit records coins arriving for orgID (the sandbox's side of the
// custody partner): a balanced entry from the platform's world account into
// the organization's balance in the coin, a crypto_incoming feed row, and
// the deposit, wholly unallocated.
func (s *Service) Deposit(ctx context.Context, orgID uuid.UUID, r DepositRequest) (CryptoIncoming, error) {
	amount, err := money.ParseCoin(r.Amount, r.Coin)
	if err != nil {
		return CryptoIncoming{}, apierr.InvalidField("amount", "must be a positive decimal amount.")
	}
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (CryptoIncoming, error) {
		if _, err := organization.Get(ctx, tx, orgID); err != nil {
			return CryptoIncoming{}, err
		}
		entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &orgID, Kind: "deposit", Description: "Crypto deposit",
			Postings: []ledger.Posting{
				{Account: ledger.PlatformAccount(orgID, r.Coin, ledger.World), Amount: -amount.Minor},
				{Account: ledger.OrgAccount(orgID, r.Coin, ledger.Available), Amount: amount.Minor},
			}})
		if err != nil {
			return CryptoIncoming{}, err
		}
		t, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: orgID, Type: "crypto_incoming", EntryID: &entry,
			Direction: "in", Amount: amount.Minor, Currency: r.Coin, Description: r.Coin + " received"})
		if err != nil {
			return CryptoIncoming{}, err
		}
		d := CryptoIncoming{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Coin: r.Coin, Amount: amount.Minor, TxRef: r.TxRef, TransactionID: t.ID}
		if err := insertDeposit(ctx, tx, d); err != nil {
			return CryptoIncoming{}, err
		}
		return loadDeposit(ctx, tx, orgID, d.ID)
	})
}

// ListDeposits returns a page of orgID's crypto deposits, newest first,
// each with what is left unallocated.
func (s *Service) ListDeposits(ctx context.Context, a actor.Actor, orgID uuid.UUID, req page.Request) ([]CryptoIncoming, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return nil, err
	}
	return listDeposits(ctx, q, orgID, req)
}

// DepositPageKey positions a page after d.
func DepositPageKey(d CryptoIncoming) page.Key { return page.Key{ID: d.ID.String()} }

// Allocations.

// AllocateRequest is the body of allocating part of a deposit to an invoice.
type AllocateRequest struct {
	CryptoIncomingID string  `json:"crypto_incoming_id"`
	Credit           string  `json:"credit"`
	Notes            *string `json:"notes"`
}

// Validate checks the body's fields; credit is read in the invoice's
// currency once the invoice is known.
func (r AllocateRequest) Validate() error {
	var f apierr.Fields
	_, err := uuid.Parse(r.CryptoIncomingID)
	f.Check(err == nil, "crypto_incoming_id", "must be the id of a crypto deposit.")
	f.Check(r.Credit != "", "credit", "is required.")
	checkText(&f, "notes", r.Notes, 500, true)
	return f.Err()
}

var (
	errCurrencyMismatch = apierr.New(apierr.CurrencyMismatch, "This deposit's coin cannot pay an invoice in this currency: USDC and USDT pay USD invoices, EURC pays EUR invoices.")
	errExceedsDeposit   = apierr.New(apierr.AllocationExceeds, "The credit is more than what is left unallocated of this deposit.")
	errExceedsDue       = apierr.New(apierr.AllocationExceeds, "The credit is more than what remains due on this invoice.")
)

// Allocate assigns credit of a deposit to a sent invoice: owners and
// admins. The coin must pay the invoice's currency (currency_mismatch); the
// credit may take at most what is left of the deposit and what remains due
// (allocation_exceeds), both enforced by conditional updates so concurrent
// allocations never take more. When the allocations cover the amount due,
// the invoice is paid.
func (s *Service) Allocate(ctx context.Context, a actor.Actor, orgID, id uuid.UUID, r AllocateRequest) (Allocation, error) {
	var allocationID uuid.UUID
	_, err := s.change(ctx, a, orgID, id, organization.Admin, func(tx *db.Tx, inv *Invoice) error {
		if inv.State != Sent {
			return apierr.New(apierr.Conflict, "Only a sent invoice takes allocations; this one is "+strings.ReplaceAll(inv.State, "_", " ")+".")
		}
		d, err := loadDeposit(ctx, tx, orgID, uuid.MustParse(r.CryptoIncomingID))
		if err != nil {
			return err
		}
		if !CoinPays(d.Coin, inv.Currency) {
			return errCurrencyMismatch
		}
		credit, err := money.Parse(r.Credit, inv.Currency)
		var pe *money.ParseError
		switch {
		case errors.As(err, &pe):
			return apierr.InvalidField("credit", "credit "+pe.Reason+".")
		case err != nil || !credit.IsPositive():
			return apierr.InvalidField("credit", "must be a positive decimal amount in "+inv.Currency+".")
		}
		if credit.Minor > inv.DueAmount-inv.Allocated {
			return errExceedsDue
		}
		units := coinUnits(inv.Currency)
		if credit.Minor > math.MaxInt64/units {
			return errExceedsDeposit // more than any deposit holds
		}
		took, err := takeUnallocated(ctx, tx, d.ID, credit.Minor*units)
		if err != nil {
			return err
		}
		if !took {
			return errExceedsDeposit
		}
		notes := ""
		if r.Notes != nil {
			notes = *r.Notes
		}
		allocationID = uuid.Must(uuid.NewV7())
		if err := insertAllocation(ctx, tx, Allocation{ID: allocationID, OrganizationID: orgID, ContactID: inv.Contact.ID, InvoiceID: id,
			Credit: credit.Minor, Deposit: d, Notes: notes, UserID: a.UserID}); err != nil {
			return err
		}
		allocated := inv.Allocated + credit.Minor
		if allocated == inv.DueAmount {
			// $4 is the transaction's time setInvoice stamps updated_at with.
			return setInvoice(ctx, tx, id, `allocated = $2, state = $3, accepted_amount = $2, completed_at = $4`, allocated, Paid)
		}
		return setInvoice(ctx, tx, id, `allocated = $2`, allocated)
	})
	if err != nil {
		return Allocation{}, err
	}
	return loadAllocation(ctx, s.DB.Reader(), allocationID)
}

// ListAllocations returns a page of billing contact id's allocation ledger,
// newest first: allocations and their reversals.
func (s *Service) ListAllocations(ctx context.Context, a actor.Actor, orgID, contactID uuid.UUID, req page.Request) ([]Allocation, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return nil, err
	}
	if _, err := loadContact(ctx, q, orgID, contactID, ""); err != nil {
		return nil, err
	}
	return listAllocations(ctx, q, contactID, req)
}

// AllocationPageKey positions a page after al.
func AllocationPageKey(al Allocation) page.Key { return page.Key{ID: al.ID.String()} }
