package bill

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/money"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var errNotFound = apierr.NotFoundf("Bill")

// fieldColumns are the fields people and the extraction job fill, in the
// order of (*Bill).fields.
var fillable = []string{"amount_minor", "currency", "bill_number", "issue_date", "due_date", "supplier_name", "supplier_tax_id",
	"payment_reference", "payment_contact_id", "account_holder_name", "account_number", "iban", "swift_code", "aba_code", "bank_code",
	"bank_name", "bank_country_alpha2", "branch_code", "bsb_code", "cnaps", "ifsc_code", "sort_code", "document_type",
	"payment_means", "extraction_format", "extraction_from_text"}

var (
	fieldColumns = strings.Join(fillable, ", ")
	billColumns  = `id, organization_id, created_by_id, file_id, status, ` + fieldColumns +
		`, approval_request_id, fiat_outgoing_id, extraction_failed_at, inserted_at, updated_at`
	// fieldSets assigns the fields from $5 on (saveFields).
	fieldSets = func() string {
		sets := make([]string, len(fillable))
		for i, c := range fillable {
			sets[i] = c + " = $" + strconv.Itoa(i+5)
		}
		return strings.Join(sets, ", ")
	}()
)

// fields are pointers to b's fillable fields, in fieldColumns order; minor
// holds the amount in minor units.
func (b *Bill) fields(minor **int64) []any {
	k := &b.Bank
	return []any{minor, &b.Currency, &b.BillNumber, &b.IssueDate, &b.DueDate, &b.SupplierName, &b.SupplierTaxID, &b.PaymentReference,
		&b.PaymentContactID, &k.AccountHolderName, &k.AccountNumber, &k.IBAN, &k.SwiftCode, &k.ABACode, &k.BankCode, &k.BankName,
		&k.BankCountryAlpha2, &k.BranchCode, &k.BSBCode, &k.CNAPS, &k.IFSCCode, &k.SortCode, &b.DocumentType,
		&b.PaymentMeans, &b.Extraction.Format, (*fieldList)(&b.Extraction.FromText)}
}

// fieldList is a list of field names stored as a JSON array in a TEXT
// column.
type fieldList []string

// Scan reads the JSON array.
func (l *fieldList) Scan(src any) error {
	var b []byte
	switch v := src.(type) {
	case string:
		b = []byte(v)
	case []byte:
		b = v
	case nil:
		*l = nil
		return nil
	default:
		return fmt.Errorf("bill: field list of type %T", src)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("bill: field list: %w", err)
	}
	*l = out
	return nil
}

// Value writes the JSON array ("[]" when empty).
func (l fieldList) Value() (driver.Value, error) {
	if len(l) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal([]string(l))
	return string(b), err
}

func scanBill(row db.Scanner) (Bill, error) {
	var b Bill
	var minor *int64
	dest := append([]any{&b.ID, &b.OrganizationID, &b.CreatedByID, &b.FileID, &b.Status}, b.fields(&minor)...)
	dest = append(dest, &b.ApprovalRequestID, &b.FiatOutgoingID, &b.ExtractionFailedAt, &b.InsertedAt, &b.UpdatedAt)
	err := row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return Bill{}, errNotFound
	}
	if err != nil {
		return Bill{}, err
	}
	if minor != nil && b.Currency != nil {
		b.Amount = &money.Amount{Minor: *minor, Currency: *b.Currency}
	}
	b.InsertedAt, b.UpdatedAt = b.InsertedAt.UTC(), b.UpdatedAt.UTC()
	if b.ExtractionFailedAt != nil {
		t := b.ExtractionFailedAt.UTC()
		b.ExtractionFailedAt = &t
	}
	return b, nil
}

// values are b's fillable fields as statement arguments, in fillable order.
func (b Bill) values() []any {
	var minor *int64
	if b.Amount != nil {
		minor = &b.Amount.Minor
	}
	k := b.Bank
	return []any{minor, b.Currency, b.BillNumber, b.IssueDate, b.DueDate, b.SupplierName, b.SupplierTaxID, b.PaymentReference,
		b.PaymentContactID, k.AccountHolderName, k.AccountNumber, k.IBAN, k.SwiftCode, k.ABACode, k.BankCode, k.BankName,
		k.BankCountryAlpha2, k.BranchCode, k.BSBCode, k.CNAPS, k.IFSCCode, k.SortCode, cmp.Or(b.DocumentType, Invoice),
		b.PaymentMeans, b.Extraction.Format, fieldList(b.Extraction.FromText)}
}

func insertBill(ctx context.Context, q db.Querier, b Bill) error {
	args := append([]any{b.ID, b.OrganizationID, b.CreatedByID, b.FileID, b.Status, b.InsertedAt}, b.values()...)
	_, err := q.ExecContext(ctx, `INSERT INTO bills (id, organization_id, created_by_id, file_id, status, inserted_at, updated_at, `+fieldColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $6, `+db.Placeholders(7, len(args)-6)+`)`, args...)
	return err
}

// saveFields writes b's fillable fields, status and extraction time.
func saveFields(ctx context.Context, q db.Querier, b Bill) error {
	args := append([]any{b.ID, b.Status, b.ExtractionFailedAt, b.UpdatedAt}, b.values()...)
	_, err := q.ExecContext(ctx, `UPDATE bills SET status = $2, extraction_failed_at = $3, updated_at = $4, `+fieldSets+` WHERE id = $1`, args...)
	return err
}

func loadBill(ctx context.Context, q db.Reader, id uuid.UUID, lock string) (Bill, error) {
	return scanBill(q.QueryRowContext(ctx, `SELECT `+billColumns+` FROM bills WHERE id = $1`+lock, id))
}

// setPayment moves bill id to status with the payment fields given (both
// nil to clear them).
func setPayment(ctx context.Context, q db.Querier, b Bill) error {
	_, err := q.ExecContext(ctx, `UPDATE bills SET status = $2, approval_request_id = $3, fiat_outgoing_id = $4, updated_at = $5 WHERE id = $1`,
		b.ID, b.Status, b.ApprovalRequestID, b.FiatOutgoingID, b.UpdatedAt)
	return err
}

// listBills reads a page of orgID's bills matching f, newest first.
func listBills(ctx context.Context, q db.Reader, orgID uuid.UUID, f ListFilter, req page.Request) ([]Bill, error) {
	var status, search, folded *string
	if f.Status != nil {
		s := string(*f.Status)
		status = &s
	}
	if f.Search != nil {
		// The engines' lower() may fold ASCII letters only: the pattern is
		// tried folded by Go (MÜLLER finds Müller) and folded as the
		// column is (ÖKO finds ÖKO).
		s, l := "%"+escapeLike(*f.Search)+"%", "%"+escapeLike(strings.ToLower(*f.Search))+"%"
		search, folded = &s, &l
	}
	return db.QueryAll(ctx, q, scanBill, `SELECT `+billColumns+` FROM bills
		WHERE organization_id = $1 AND (id < $2 OR $2 IS NULL)
		AND (status = $3 OR $3 IS NULL)
		AND (due_date >= $4 OR $4 IS NULL) AND (due_date <= $5 OR $5 IS NULL)
		AND (lower(supplier_name) LIKE lower(CAST($6 AS TEXT)) ESCAPE '\' OR lower(bill_number) LIKE lower(CAST($6 AS TEXT)) ESCAPE '\'
			OR lower(supplier_name) LIKE $7 ESCAPE '\' OR lower(bill_number) LIKE $7 ESCAPE '\' OR $6 IS NULL)
		ORDER BY id DESC LIMIT $8`, orgID, req.AfterUUID(), status, f.DueDateFrom, f.DueDateTo, search, folded, req.Limit+1)
}

// escapeLike makes s match itself in a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}
