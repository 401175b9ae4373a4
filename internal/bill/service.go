package bill

import (
	"context"
	"io"
	"slices"
	"strconv"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/actor"
	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/field"
	"github.com/strongroom/strongroom/internal/platform/job"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

// Service runs bills. Any member of an organization may read, create and
// edit its bills; paying one takes an approver, as every payment does.
type Service struct {
	DB    *db.DB
	Files *file.Service
}

// EventAppended is the event type of a bill's extraction progress and
// result, delivered on the organization's realtime channel (docs/api.md,
// Realtime).
const EventAppended = "bill.event_appended"

// The events of a bill's history, in EventAppended's data.
const (
	ExtractionStarted   = "extraction_started"
	ExtractionCompleted = "extraction_completed"
	ExtractionFailed    = "extraction_failed"
	// PaymentRequested and PaymentReleased record a payment for the bill
	// and its end (rejected, cancelled or failed); they stay in the bill's
	// history and are not sent to the realtime channel.
	PaymentRequestedEvent = "bill.payment_requested"
	PaymentReleasedEvent  = "bill.payment_released"
)

// appendEvent records typ with data in bill b's history.
func appendEvent(ctx context.Context, tx *db.Tx, b Bill, typ string, data map[string]any) error {
	data["bill_id"] = b.ID
	_, err := event.Append(ctx, tx, b.OrganizationID, "bill-"+b.ID.String(), b.ID.String(), typ, data)
	return err
}

// CreateRequest is the body of createBill.
type CreateRequest struct {
	FileID string `json:"file_id"`
}

// Validate checks the body's fields.
func (r CreateRequest) Validate() error {
	_, err := uuid.Parse(r.FileID)
	if err != nil {
		return apierr.InvalidField("file_id", "is required: the id of a stored file of the organization.")
	}
	return nil
}

var writes = organization.Need{Write: true}

// Create opens a bill on a stored file of orgID and starts its extraction.
func (s *Service) Create(ctx context.Context, a actor.Actor, orgID uuid.UUID, r CreateRequest) (Bill, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Bill, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, writes); err != nil {
			return Bill{}, err
		}
		f, err := s.Files.Stored(ctx, tx, orgID, uuid.MustParse(r.FileID))
		if err != nil {
			return Bill{}, err
		}
		return open(ctx, tx, a, f)
	})
}

// Upload stores body, a file sent with the request, and opens a bill on it
// (uploadBill). name and declared are the part's file name and type.
func (s *Service) Upload(ctx context.Context, a actor.Actor, orgID uuid.UUID, name, declared string, body io.Reader) (Bill, error) {
	// Checked before the bytes are kept, and again in the transaction.
	if _, err := organization.Check(ctx, s.DB.Reader(), a, orgID, writes); err != nil {
		return Bill{}, err
	}
	staged, err := s.Files.Stage(ctx, orgID, a.UserID, name, declared, body)
	if err != nil {
		return Bill{}, err
	}
	b, err := db.InTx(ctx, s.DB, func(tx *db.Tx) (Bill, error) {
		if _, err := organization.Check(ctx, tx, a, orgID, writes); err != nil {
			return Bill{}, err
		}
		f, err := s.Files.Record(ctx, tx, staged)
		if err != nil {
			return Bill{}, err
		}
		return open(ctx, tx, a, f)
	})
	if err != nil {
		s.Files.Discard(staged)
	}
	return b, err
}

// open creates a bill at extracting on stored file f, with the job that
// reads it, in tx.
func open(ctx context.Context, tx *db.Tx, a actor.Actor, f file.File) (Bill, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return Bill{}, err
	}
	b := Bill{ID: id, OrganizationID: f.OrganizationID, CreatedByID: a.UserID, FileID: &f.ID, Status: Extracting, DocumentType: Invoice,
		InsertedAt: tx.Now().UTC(), UpdatedAt: tx.Now().UTC()}
	if err := insertBill(ctx, tx, b); err != nil {
		return Bill{}, err
	}
	if err := appendEvent(ctx, tx, b, EventAppended, map[string]any{"event": ExtractionStarted}); err != nil {
		return Bill{}, err
	}
	if _, err := job.Enqueue(ctx, tx, extractJob, extractPayload{BillID: id},
		job.FairKey(f.OrganizationID.String())); err != nil {
		return Bill{}, err
	}
	return b, audit.Record(ctx, tx, b.OrganizationID, audit.BillCreated, audit.To("bill", id))
}

// access checks that a may see (or, write, change) bill b: not_found
// unless a is a member of its organization.
func access(ctx context.Context, q db.Reader, a actor.Actor, b Bill, write bool) error {
	_, err := organization.Check(ctx, q, a, b.OrganizationID, organization.Need{Write: write})
	return organization.Hide(err, errNotFound)
}

// Get returns bill id.
func (s *Service) Get(ctx context.Context, a actor.Actor, id uuid.UUID) (Bill, error) {
	q := s.DB.Reader()
	b, err := loadBill(ctx, q, id, "")
	if err != nil {
		return Bill{}, err
	}
	return b, access(ctx, q, a, b, false)
}

// List returns a page of orgID's bills matching f, newest first.
func (s *Service) List(ctx context.Context, a actor.Actor, orgID uuid.UUID, f ListFilter, req page.Request) ([]Bill, error) {
	q := s.DB.Reader()
	if _, err := organization.Check(ctx, q, a, orgID, organization.Need{}); err != nil {
		return nil, err
	}
	return listBills(ctx, q, orgID, f, req)
}

// PageKey positions a page after b.
func PageKey(b Bill) page.Key { return page.Key{ID: b.ID.String()} }

// change runs fn on bill id, locked, in one transaction, once a may change
// it, and returns the bill as fn left it.
func (s *Service) change(ctx context.Context, a actor.Actor, id uuid.UUID, fn func(tx *db.Tx, b *Bill) error) (Bill, error) {
	return db.InTx(ctx, s.DB, func(tx *db.Tx) (Bill, error) {
		b, err := lockBill(ctx, tx, a, id)
		if err != nil {
			return Bill{}, err
		}
		if err := fn(tx, &b); err != nil {
			return Bill{}, err
		}
		return b, nil
	})
}

// lockBill returns bill id locked in tx, once a may change it, updated at
// tx.Now().
func lockBill(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Bill, error) {
	b, err := loadBill(ctx, tx, id, tx.ForUpdate())
	if err != nil {
		return Bill{}, err
	}
	if err := access(ctx, tx, a, b, true); err != nil {
		return Bill{}, err
	}
	b.UpdatedAt = tx.Now().UTC()
	return b, nil
}

func errNotEditable(b Bill) error {
	return apierr.Newf(apierr.Conflict, "This bill is %s; its fields can no longer be changed.", b.Status)
}

// Editable returns bill id locked in tx for a, who may change it: not_found
// unless a is a member of its organization, conflict while a payment is
// requested for it or once it is cancelled.
func (s *Service) Editable(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID) (Bill, error) {
	b, err := lockBill(ctx, tx, a, id)
	if err == nil && !b.editable() {
		err = errNotEditable(b)
	}
	return b, err
}

// Update changes the fields r sends (one left out keeps its value, null
// clears it), in the caller's transaction tx: not while a payment is
// requested or once cancelled (conflict). The payment
// contact r may set is the caller's to check in tx: a payment contact of the
// bill's organization (the bill-payment flow, internal/flow/billpay, does).
func (s *Service) Update(ctx context.Context, tx *db.Tx, a actor.Actor, id uuid.UUID, r PatchRequest) (Bill, error) {
	b, err := s.Editable(ctx, tx, a, id)
	if err != nil {
		return Bill{}, err
	}
	if err := r.apply(&b); err != nil {
		return Bill{}, err
	}
	if err := saveFields(ctx, tx, b); err != nil {
		return Bill{}, err
	}
	return b, audit.Record(ctx, tx, b.OrganizationID, audit.BillUpdated, audit.To("bill", b.ID))
}

// SetContact makes contactID, a payment contact of b's organization, the
// payment contact of bill b as Editable returned it in tx.
func (s *Service) SetContact(ctx context.Context, tx *db.Tx, b Bill, contactID uuid.UUID) (Bill, error) {
	b.PaymentContactID = &contactID
	return b, saveFields(ctx, tx, b)
}

// apply sets on b the fields r sends. The amount is read at the precision
// of the bill's currency (as changed by r), which it cannot be without.
func (r PatchRequest) apply(b *Bill) error {
	for _, f := range []struct {
		o   field.Optional[string]
		dst **string
	}{
		{r.BillNumber, &b.BillNumber}, {r.IssueDate, &b.IssueDate}, {r.DueDate, &b.DueDate}, {r.SupplierName, &b.SupplierName},
		{r.SupplierTaxID, &b.SupplierTaxID}, {r.PaymentReference, &b.PaymentReference},
		{r.AccountHolderName, &b.Bank.AccountHolderName}, {r.AccountNumber, &b.Bank.AccountNumber}, {r.IBAN, &b.Bank.IBAN},
		{r.SwiftCode, &b.Bank.SwiftCode}, {r.ABACode, &b.Bank.ABACode}, {r.BankCode, &b.Bank.BankCode}, {r.BankName, &b.Bank.BankName},
		{r.BankCountryAlpha2, &b.Bank.BankCountryAlpha2}, {r.BranchCode, &b.Bank.BranchCode}, {r.BSBCode, &b.Bank.BSBCode},
		{r.CNAPS, &b.Bank.CNAPS}, {r.IFSCCode, &b.Bank.IFSCCode}, {r.SortCode, &b.Bank.SortCode},
	} {
		if f.o.Set {
			*f.dst = f.o.Value
		}
	}
	b.Extraction.FromText = slices.DeleteFunc(b.Extraction.FromText, func(name string) bool { return r.sets(name) })
	if r.PaymentContactID.Set {
		b.PaymentContactID = nil
		if v := r.PaymentContactID.Value; v != nil {
			id := uuid.MustParse(*v)
			b.PaymentContactID = &id
		}
	}
	var amount *string
	if b.Amount != nil {
		s := b.Amount.String()
		amount = &s
	}
	if r.Amount.Set {
		amount = r.Amount.Value
	}
	if r.Currency.Set {
		b.Currency = r.Currency.Value
	}
	b.Amount = nil
	if amount == nil {
		return nil
	}
	if b.Currency == nil {
		return apierr.InvalidField("amount", "needs a currency: send currency with it.")
	}
	v, err := money.Parse(*amount, *b.Currency)
	if err != nil {
		digits, _ := money.Digits(*b.Currency)
		return apierr.InvalidField("amount", "must be a decimal string of at least zero with at most "+
			strconv.Itoa(digits)+" decimals for "+*b.Currency+", such as \""+money.Amount{Minor: 125000, Currency: *b.Currency}.String()+"\".")
	}
	b.Amount = &v
	return nil
}

// sets reports whether r sends the bill field name (as the API names it).
func (r PatchRequest) sets(name string) bool {
	switch name {
	case "amount":
		return r.Amount.Set
	case "currency":
		return r.Currency.Set
	case "bill_number":
		return r.BillNumber.Set
	case "issue_date":
		return r.IssueDate.Set
	case "due_date":
		return r.DueDate.Set
	case "supplier_name":
		return r.SupplierName.Set
	case "supplier_tax_id":
		return r.SupplierTaxID.Set
	case "payment_reference":
		return r.PaymentReference.Set
	case "iban":
		return r.IBAN.Set
	case "swift_code":
		return r.SwiftCode.Set
	case "account_number":
		return r.AccountNumber.Set
	case "sort_code":
		return r.SortCode.Set
	case "aba_code":
		return r.ABACode.Set
	case "account_holder_name":
		return r.AccountHolderName.Set
	}
	return false
}

// Cancel ends a bill that will not be paid: from extracting or extracted.
func (s *Service) Cancel(ctx context.Context, a actor.Actor, id uuid.UUID) (Bill, error) {
	return s.change(ctx, a, id, func(tx *db.Tx, b *Bill) error {
		if b.Status != Extracting && b.Status != Extracted {
			return apierr.Newf(apierr.Conflict, "This bill is %s; only a bill that is extracting or extracted can be cancelled.", b.Status)
		}
		b.Status = Cancelled
		if err := setPayment(ctx, tx, *b); err != nil {
			return err
		}
		return audit.Record(ctx, tx, b.OrganizationID, audit.BillCancelled, audit.To("bill", b.ID))
	})
}

// Find answers not_found unless bill id is orgID's.
func (s *Service) Find(ctx context.Context, tx *db.Tx, orgID, id uuid.UUID) error {
	b, err := loadBill(ctx, tx, id, "")
	if err == nil && b.OrganizationID != orgID {
		err = errNotFound
	}
	return err
}

func mismatch(format string, args ...any) error {
	return apierr.Newf(apierr.BillMismatch, format, args...)
}

// Payment is a payment made for a bill, as Request checks it against the
// bill.
type Payment struct {
	OrganizationID uuid.UUID
	BillID         uuid.UUID
	PaymentID      uuid.UUID
	ApprovalID     uuid.UUID
	ContactID      uuid.UUID
	// Amount is what the payment delivers.
	Amount money.Amount
}

// Request moves the bill to payment_requested for payment p, in the
// transaction tx that made p: the bill must be extracted, and p must pay
// its payment contact exactly its amount in its currency (bill_mismatch;
// bill_not_payable for a credit note). Another organization's bill is
// not_found.
func (s *Service) Request(ctx context.Context, tx *db.Tx, p Payment) error {
	b, err := loadBill(ctx, tx, p.BillID, tx.ForUpdate())
	if err == nil && b.OrganizationID != p.OrganizationID {
		err = errNotFound
	}
	switch {
	case err != nil:
		return err
	case b.DocumentType == CreditNote:
		return apierr.New(apierr.BillNotPayable, "This bill is a credit note: the supplier owes the amount back, so it cannot be paid.")
	case b.Status == PaymentRequested:
		return mismatch("A payment is already requested for this bill.")
	case b.Status != Extracted:
		return mismatch("This bill is %s; only an extracted bill can be paid.", b.Status)
	case b.PaymentContactID == nil:
		return mismatch("This bill has no payment contact yet: create one from the bill or set payment_contact_id.")
	case *b.PaymentContactID != p.ContactID:
		return mismatch("The quote pays another contact than the bill's payment contact.")
	case b.Amount == nil:
		return mismatch("This bill has no amount yet: set its amount and currency first.")
	case *b.Amount != p.Amount:
		return mismatch("The quote delivers %s %s; the bill is for %s %s.", p.Amount, p.Amount.Currency, b.Amount, b.Amount.Currency)
	}
	b.Status, b.ApprovalRequestID, b.FiatOutgoingID, b.UpdatedAt = PaymentRequested, &p.ApprovalID, &p.PaymentID, tx.Now().UTC()
	if err := setPayment(ctx, tx, b); err != nil {
		return err
	}
	return appendEvent(ctx, tx, b, PaymentRequestedEvent, map[string]any{"payment_id": p.PaymentID, "approval_request_id": p.ApprovalID})
}

// Release returns the bill to extracted when payment paymentID, which was
// rejected, cancelled or failed in tx, is the one it waits for.
func (s *Service) Release(ctx context.Context, tx *db.Tx, id, paymentID uuid.UUID) error {
	b, err := loadBill(ctx, tx, id, tx.ForUpdate())
	if err != nil || b.Status != PaymentRequested || b.FiatOutgoingID == nil || *b.FiatOutgoingID != paymentID {
		return err
	}
	b.Status, b.ApprovalRequestID, b.FiatOutgoingID, b.UpdatedAt = Extracted, nil, nil, tx.Now().UTC()
	if err := setPayment(ctx, tx, b); err != nil {
		return err
	}
	return appendEvent(ctx, tx, b, PaymentReleasedEvent, map[string]any{"payment_id": paymentID})
}
