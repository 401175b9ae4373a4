package expense

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs expenses. Every operation is one transaction stamped with
// tx.Now(); changes lock the expense's row first, so two moves of one
// expense are decided one after the other.
type Service struct {
	DB *db.DB
	// Files keeps the receipts' files and signs the paths to their bytes.
	Files *file.Service
}

var (
	errCreatorOnly  = apierr.New(apierr.Forbidden, "Only the person who created this expense can submit it.")
	errManagersOnly = apierr.New(apierr.Forbidden, "Only an owner or admin of the organization can approve, reject or mark expenses paid.")
	errTooLarge     = apierr.New(apierr.UnprocessableEntity, "This would take the expense's total beyond the largest amount it can hold.")
)

// viewer is who is looking at an expense: their role and whether they created it.
type viewer struct {
	role    organization.Role
	creator bool
}

func (v viewer) manager() bool { return v.role.AtLeast(organization.Admin) }

// access applies the policy to a's use of expense e: not_found unless a is
// a member of its organization and, as a member, created it; then the
// organization's status for an operation that writes.
func access(ctx context.Context, q db.Reader, a actor.Actor, e Expense, write bool) (viewer, error) {
	role, creator, err := organization.Own(ctx, q, a, e.OrganizationID, &e.CreatedBy.ID, organization.Need{Write: write}, errNotFound)
	return viewer{role: role, creator: creator}, err
}

// complete fills what the expenses' rows do not hold: the creators'
// names, the bindings with their feed rows, the receipts with paths signed
// from q.Now(), and the totals.
func (s *Service) complete(ctx context.Context, q db.Reader, es []Expense) ([]Expense, error) {
	ids := make([]uuid.UUID, len(es))
	var people []uuid.UUID
	for i, e := range es {
		ids[i] = e.ID
		people = append(people, e.CreatedBy.ID)
	}
	bindings, err := bindingsOf(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	var payments []uuid.UUID
	for _, bs := range bindings {
		for _, b := range bs {
			if b.TargetType == FiatOutgoing || b.TargetType == CryptoOutgoing {
				payments = append(payments, b.TargetID)
			}
		}
	}
	rows, err := ledger.PaymentRows(ctx, q, payments)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(people, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	users, err := identity.GetUsers(ctx, q, slices.Compact(people))
	if err != nil {
		return nil, err
	}
	receipts, err := s.receipts(ctx, q, es, ids)
	if err != nil {
		return nil, err
	}
	for i := range es {
		e := &es[i]
		e.Receipts = receipts[e.ID]
		if u, ok := users[e.CreatedBy.ID]; ok {
			e.CreatedBy.FirstName, e.CreatedBy.LastName = u.FirstName, u.LastName
		}
		e.Bindings = bindings[e.ID]
		if e.Bindings == nil {
			e.Bindings = []Binding{}
		}
		for j := range e.Bindings {
			b := &e.Bindings[j]
			switch b.TargetType {
			case CardTransaction:
				b.TransactionID = &b.TargetID
			case FiatOutgoing, CryptoOutgoing:
				if row, ok := rows[b.TargetID]; ok {
					b.TransactionID = &row
				}
			}
		}
		if e.TotalsBill, e.TotalsLocal, err = totals(e.Bindings, e.Bill, e.Local); err != nil {
			return nil, err
		}
	}
	return es, nil
}

// receipts reads the receipts of es (whose ids are ids) with their files,
// with paths signed from q.Now().
func (s *Service) receipts(ctx context.Context, q db.Reader, es []Expense, ids []uuid.UUID) (map[uuid.UUID][]Receipt, error) {
	out := map[uuid.UUID][]Receipt{}
	rows, err := receiptsOf(ctx, q, ids)
	if err != nil || len(rows) == 0 {
		return out, err
	}
	// One read per organization: a page holds one organization's expenses.
	byOrg := map[uuid.UUID][]uuid.UUID{}
	for _, e := range es {
		for _, r := range rows[e.ID] {
			byOrg[e.OrganizationID] = append(byOrg[e.OrganizationID], r.FileID)
		}
	}
	files := map[uuid.UUID]file.File{}
	for org, fileIDs := range byOrg {
		got, err := s.Files.Load(ctx, q, org, fileIDs)
		if err != nil {
			return nil, err
		}
		maps.Copy(files, got)
	}
	for id, rs := range rows {
		for _, r := range rs {
			f, ok := files[r.FileID]
			if !ok {
				return nil, errors.New("expense: a receipt's file is missing")
			}
			out[id] = append(out[id], s.receipt(r, f, q.Now()))
		}
	}
	return out, nil
}

// receipt is receipt row r of file f, with paths signed from now.
func (s *Service) receipt(r receipt, f file.File, now time.Time) Receipt {
	out := Receipt{ID: r.ID, ExpenseID: r.ExpenseID, FileID: f.ID, FileName: f.Name, FileSize: f.Size, MimeType: f.MimeType,
		URL: s.Files.DownloadLink(f, now).URL}
	if l := s.Files.ThumbnailLink(f, now); l != nil {
		out.ThumbnailURL = &l.URL
	}
	return out
}

func (s *Service) completeOne(ctx context.Context, q db.Reader, e Expense) (Expense, error) {
	es, err := s.complete(ctx, q, []Expense{e})
	if err != nil {
		return Expense{}, err
	}
	return es[0], nil
}

// Create files a draft expense of orgID for a, with the fields r sends.
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, r Fields) (Expense, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Expense, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, organization.Need{Write: true}); err != nil {
			return Expense{}, err
		}
		e := Expense{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Status: Draft, CreatedBy: Person{ID: a.UserID}, InsertedAt: tx.Now()}
		r.apply(&e)
		if err := insertExpense(ctx, tx, e); err != nil {
			return Expense{}, err
		}
		return s.reread(ctx, tx, e.ID)
	})
}

func (s *Service) reread(ctx context.Context, tx *db.Tx, id uuid.UUID) (Expense, error) {
	e, err := loadExpense(ctx, tx, id, "")
	if err != nil {
		return Expense{}, err
	}
	return s.completeOne(ctx, tx, e)
}

// Get returns expense id as a sees it.
func (s *Service) Get(ctx context.Context, a actor.Actor, id uuid.UUID) (Expense, error) {
	q := s.DB.Reader()
	e, err := loadExpense(ctx, q, id, "")
	if err != nil {
		return Expense{}, err
	}
	if _, err := access(ctx, q, a, e, false); err != nil {
		return Expense{}, err
	}
	return s.completeOne(ctx, q, e)
}

// List returns a page of orgID's expenses, newest first; a member sees
// only their own.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f ListFilter, req page.Request) ([]Expense, error) {
	q := s.DB.Reader()
	role, err := organization.Check(ctx, q, a, orgID, organization.Need{})
	if err != nil {
		return nil, err
	}
	if !role.AtLeast(organization.Admin) {
		if f.CreatorID != nil && *f.CreatorID != a.UserID {
			return nil, nil
		}
		f.CreatorID = &a.UserID
	}
	es, err := listExpenses(ctx, q, orgID, f, req)
	if err != nil {
		return nil, err
	}
	return s.complete(ctx, q, es)
}

// PageKey positions a page after e.
func PageKey(e Expense) page.Key { return page.Key{ID: e.ID.String()} }

// change runs one change of expense id by a in a transaction: the row is
// locked, a's access checked (a change always writes), then fn applies the
// change to the expense it is given; the expense is read again and returned.
func (s *Service) change(ctx context.Context, a actor.Actor, id uuid.UUID, fn func(tx *db.Tx, e *Expense, v viewer) error) (Expense, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Expense, error) {
		e, err := loadExpense(ctx, tx, id, tx.ForUpdate())
		if err != nil {
			return Expense{}, err
		}
		v, err := access(ctx, tx, a, e, true)
		if err != nil {
			return Expense{}, err
		}
		if err := fn(tx, &e, v); err != nil {
			return Expense{}, err
		}
		return s.reread(ctx, tx, id)
	})
}

// edit is change for an edit of an expense still open to edits (draft,
// pending, working or rejected; else conflict): a pending expense, filed
// from a card purchase, becomes working on its first edit.
func (s *Service) edit(ctx context.Context, a actor.Actor, id uuid.UUID, fn func(tx *db.Tx, e *Expense) error) (Expense, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Expense, error) {
		ed, err := s.OpenEdit(ctx, tx, a, id)
		if err != nil {
			return Expense{}, err
		}
		if err := fn(tx, &ed.e); err != nil {
			return Expense{}, err
		}
		return s.closeEdit(ctx, tx, ed)
	})
}

// Editing is an expense locked in a transaction for an edit its actor may
// make (OpenEdit), for AddBinding.
type Editing struct{ e Expense }

// OrganizationID is the organization of the expense being edited.
func (ed Editing) OrganizationID() uuid.UUID { return ed.e.OrganizationID }

// OpenEdit locks expense id in tx for an edit by a: not_found unless a may
// change it (see access), conflict unless it is still open to edits.
func (s *Service) OpenEdit(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Editing, error) {
	e, err := loadExpense(ctx, tx, id, tx.ForUpdate())
	if err != nil {
		return Editing{}, err
	}
	if _, err := access(ctx, tx, a, e, true); err != nil {
		return Editing{}, err
	}
	if !editable(e.Status) {
		return Editing{}, apierr.Newf(apierr.Conflict, "This expense is %s: it can be changed only while draft, pending, working or rejected.", e.Status)
	}
	return Editing{e: e}, nil
}

// closeEdit stores the edited expense, working now if it was pending, and
// reads it again.
func (s *Service) closeEdit(ctx context.Context, tx *db.Tx, ed Editing) (Expense, error) {
	if ed.e.Status == Pending {
		ed.e.Status = Working
	}
	if err := updateExpense(ctx, tx, ed.e); err != nil {
		return Expense{}, err
	}
	return s.reread(ctx, tx, ed.e.ID)
}

// Update changes the fields r sends: at least one.
func (s *Service) Update(ctx context.Context, a actor.Actor, id uuid.UUID, r Fields) (Expense, error) {
	if r.empty() {
		return Expense{}, apierr.InvalidField("", "Send at least one field to change.")
	}
	return s.edit(ctx, a, id, func(tx *db.Tx, e *Expense) error {
		r.apply(e)
		return nil
	})
}

// Delete removes a draft expense with its bindings and returns it as it
// was; any other status is a conflict.
func (s *Service) Delete(ctx context.Context, a actor.Actor, id uuid.UUID) (Expense, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Expense, error) {
		e, err := loadExpense(ctx, tx, id, tx.ForUpdate())
		if err != nil {
			return Expense{}, err
		}
		if _, err := access(ctx, tx, a, e, true); err != nil {
			return Expense{}, err
		}
		if e.Status != Draft {
			return Expense{}, apierr.Newf(apierr.Conflict, "Only a draft expense can be deleted; this one is %s.", e.Status)
		}
		if e, err = s.completeOne(ctx, tx, e); err != nil {
			return Expense{}, err
		}
		return e, deleteExpense(ctx, tx, id)
	})
}

// decide runs an owner's or admin's move of expense id: approve, reject
// or mark-paid.
func (s *Service) decide(ctx context.Context, a actor.Actor, id uuid.UUID, move string, reason *string) (Expense, error) {
	return s.change(ctx, a, id, func(tx *db.Tx, e *Expense, v viewer) error {
		if !v.manager() {
			return errManagersOnly
		}
		to, err := next(move, e.Status)
		if err != nil {
			return err
		}
		if err := setStatus(ctx, tx, id, to, reason); err != nil {
			return err
		}
		return audit.Record(ctx, tx, e.OrganizationID, expenseActions[move], audit.To("expense", id))
	})
}

// expenseActions are the audit log's actions of the expense moves.
var expenseActions = map[string]string{
	"submit":    audit.ExpenseSubmitted,
	"approve":   audit.ExpenseApproved,
	"reject":    audit.ExpenseRejected,
	"mark-paid": audit.ExpenseMarkedPaid,
}

// Submit sends the creator's expense for approval: it needs a category, a
// transaction date and at least one binding or receipt (expense_incomplete).
func (s *Service) Submit(ctx context.Context, a actor.Actor, id uuid.UUID) (Expense, error) {
	return s.change(ctx, a, id, func(tx *db.Tx, e *Expense, v viewer) error {
		if !v.creator {
			return errCreatorOnly
		}
		to, err := next("submit", e.Status)
		if err != nil {
			return err
		}
		bindings, err := bindingsOf(ctx, tx, []uuid.UUID{e.ID})
		if err != nil {
			return err
		}
		e.Bindings = bindings[e.ID]
		receipts, err := receiptsOf(ctx, tx, []uuid.UUID{e.ID})
		if err != nil {
			return err
		}
		if m := missing(*e, len(receipts[e.ID])); len(m) > 0 {
			return errIncomplete(m)
		}
		if err := setStatus(ctx, tx, id, to, nil); err != nil {
			return err
		}
		return audit.Record(ctx, tx, e.OrganizationID, expenseActions["submit"], audit.To("expense", id))
	})
}

// Approve approves a submitted expense: owners and admins.
func (s *Service) Approve(ctx context.Context, a actor.Actor, id uuid.UUID) (Expense, error) {
	return s.decide(ctx, a, id, "approve", nil)
}

// RejectRequest is the body of rejecting an expense.
type RejectRequest struct {
	Reason *string `json:"reason"`
}

// MaxReason is the longest rejection reason, in characters.
const MaxReason = 500

// Validate checks the reason: at most MaxReason characters.
func (r RejectRequest) Validate() error {
	var f apierr.Fields
	if r.Reason != nil {
		f.Check(utf8.RuneCountInString(*r.Reason) <= MaxReason, "reason", "must be at most "+strconv.Itoa(MaxReason)+" characters.")
		f.Check(!hasControl(*r.Reason, true), "reason", "must not hold control characters.")
	}
	return f.Err()
}

// Reject sends a submitted expense back to its creator with a reason:
// owners and admins. A rejected expense can be edited and submitted again.
func (s *Service) Reject(ctx context.Context, a actor.Actor, id uuid.UUID, r RejectRequest) (Expense, error) {
	return s.decide(ctx, a, id, "reject", r.Reason)
}

// MarkPaid records that an approved expense was paid back: owners and admins.
func (s *Service) MarkPaid(ctx context.Context, a actor.Actor, id uuid.UUID) (Expense, error) {
	return s.decide(ctx, a, id, "mark-paid", nil)
}

// BindRequest is the body of binding a transaction to an expense.
type BindRequest struct {
	TargetID   *string `json:"target_id"`
	TargetType *string `json:"target_type"`
}

// Validate checks both fields: required, a UUID and a target type.
func (r BindRequest) Validate() error {
	var f apierr.Fields
	if r.TargetID == nil {
		f.Add("target_id", "is required.")
	} else if _, err := uuid.Parse(*r.TargetID); err != nil {
		f.Add("target_id", "must be a transaction id (a UUID).")
	}
	f.Check(r.TargetType != nil && slices.Contains(TargetTypes, *r.TargetType), "target_type",
		"is required: card_transaction, fiat_outgoing, crypto_outgoing or internal_transfer.")
	return f.Err()
}

// AddBinding binds target t, found in the organization of the expense
// being edited (Target, or a payment by internal/flow/binding), to it and
// returns the expense. t must be bound to no expense (else conflict,
// decided by the database between concurrent binds); a binding that would
// take the totals beyond what they hold is refused.
func (s *Service) AddBinding(ctx context.Context, tx *db.Tx, ed Editing, t Binding) (Expense, error) {
	e := ed.e
	t.ID, t.ExpenseID = uuid.Must(uuid.NewV7()), e.ID
	current, err := bindingsOf(ctx, tx, []uuid.UUID{e.ID})
	if err != nil {
		return Expense{}, err
	}
	if _, _, err := totals(append(current[e.ID], t), e.Bill, e.Local); errors.Is(err, money.ErrOverflow) {
		return Expense{}, errTooLarge
	} else if err != nil {
		return Expense{}, err
	}
	if err := insertBinding(ctx, tx, e.OrganizationID, t); err != nil {
		return Expense{}, err
	}
	return s.closeEdit(ctx, tx, ed)
}

// Unbind removes binding bindingID of the expense.
func (s *Service) Unbind(ctx context.Context, a actor.Actor, id, bindingID uuid.UUID) (Expense, error) {
	return s.edit(ctx, a, id, func(tx *db.Tx, e *Expense) error {
		return deleteBinding(ctx, tx, e.ID, bindingID)
	})
}

// ReceiptRequest is the body of attaching a receipt.
type ReceiptRequest struct {
	FileID *string `json:"file_id"`
}

// Validate requires file_id, a UUID.
func (r ReceiptRequest) Validate() error {
	if r.FileID == nil {
		return apierr.InvalidField("file_id", "is required.")
	}
	if _, err := uuid.Parse(*r.FileID); err != nil {
		return apierr.InvalidField("file_id", "must be a file id (a UUID).")
	}
	return nil
}

// AddReceipt attaches a stored file of the expense's organization as a
// receipt: not_found for another's or an unknown file, file_not_stored
// while its bytes are not uploaded, conflict when it already is the
// receipt of any expense (decided by the database between concurrent calls).
func (s *Service) AddReceipt(ctx context.Context, a actor.Actor, id uuid.UUID, r ReceiptRequest) (Expense, error) {
	return s.edit(ctx, a, id, func(tx *db.Tx, e *Expense) error {
		f, err := s.Files.Stored(ctx, tx, e.OrganizationID, uuid.MustParse(*r.FileID))
		if err != nil {
			return err
		}
		return insertReceipt(ctx, tx, e.OrganizationID, e.ID, f.ID)
	})
}

// RemoveReceipt detaches receipt receiptID of the expense; the file stays.
func (s *Service) RemoveReceipt(ctx context.Context, a actor.Actor, id, receiptID uuid.UUID) (Expense, error) {
	return s.edit(ctx, a, id, func(tx *db.Tx, e *Expense) error {
		return deleteReceipt(ctx, tx, e.ID, receiptID)
	})
}

// NoTarget is the answer to binding a transaction of kind that the
// organization does not have.
func NoTarget(kind string) error {
	return apierr.Newf(apierr.NotFound, "The organization has no %s transaction with this id.", kind)
}

// Target finds the transaction of the organization of the expense being
// edited that a binding of kind names, and what it counts for: a card
// transaction by its feed row, a refund negative. Anything else, another
// organization's included, is not found; internal transfers do not exist
// yet, so none is ever found. Payments (fiat_outgoing, crypto_outgoing)
// are the payment feature's to find: internal/flow/binding finds them.
func Target(ctx context.Context, tx *db.Tx, ed Editing, kind string, id uuid.UUID) (Binding, error) {
	if kind != CardTransaction {
		return Binding{}, NoTarget(kind)
	}
	t, err := ledger.Get(ctx, tx, ed.OrganizationID(), id)
	if apierr.Is(err, apierr.NotFound) || (err == nil && t.Type != CardTransaction) {
		return Binding{}, NoTarget(kind)
	}
	if err != nil {
		return Binding{}, err
	}
	total := money.Amount{Minor: t.Amount, Currency: t.Currency}
	if t.Direction == "in" {
		total = total.Neg()
	}
	return Binding{TargetID: t.ID, TargetType: kind, Total: total}, nil
}

// FileCardPurchase files the approved card purchase of feed row
// transactionID as an expense of the cardholder holderID, at pending and
// bound to that row, in tx, the authorization's own transaction: merchant
// as business name, the purchase's amount and currency as the bill, the
// day of the purchase as the transaction date. total is the row's amount.
func (s *Service) FileCardPurchase(ctx context.Context, tx *db.Tx, orgID, holderID, transactionID uuid.UUID, total, bill money.Amount, merchant string) error {
	date := tx.Now().UTC().Format("2006-01-02")
	e := Expense{ID: uuid.Must(uuid.NewV7()), OrganizationID: orgID, Status: Pending, CreatedBy: Person{ID: holderID},
		BusinessName: &merchant, TransactionDate: &date, Bill: &bill, InsertedAt: tx.Now()}
	if err := insertExpense(ctx, tx, e); err != nil {
		return err
	}
	return insertBinding(ctx, tx, orgID, Binding{ID: uuid.Must(uuid.NewV7()), ExpenseID: e.ID, TargetID: transactionID,
		TargetType: CardTransaction, Total: total})
}
