// Package ledger is Strongroom's double-entry book of money. Every journal
// entry's postings sum to zero per currency; postings are never changed or
// deleted (a correction is a new entry that reverses); account balances are
// kept in the transaction that posts, and customer balances can never go
// below zero, by a conditional update and a CHECK constraint behind it.
package ledger

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/db"
)

// Account kinds. available and pending belong to an organization (its money,
// free and held for payments in flight); world (money outside Strongroom)
// and fees belong to the platform.
const (
	Available = "available"
	Pending   = "pending"
	World     = "world"
	Fees      = "fees"
)

// Account names one ledger account. Every account is kept for one
// organization, the platform's too (PlatformAccount); OrganizationID is nil
// only for the platform accounts entries used before those were kept per
// organization, which a reversal of such an entry still posts to.
type Account struct {
	OrganizationID *uuid.UUID
	Currency       string
	Kind           string
}

// OrgAccount is an organization's account of kind in currency.
func OrgAccount(orgID uuid.UUID, currency, kind string) Account {
	return Account{OrganizationID: &orgID, Currency: currency, Kind: kind}
}

// PlatformAccount is the platform's account of kind in currency for the
// money of one organization: money from and to the outside world, and the
// fees it paid. Kept per organization, so no organization's volume can fill
// the bounds of an account another one posts to, nor queue every
// organization's entries behind one locked row.
func PlatformAccount(orgID uuid.UUID, currency, kind string) Account {
	return Account{OrganizationID: &orgID, Currency: currency, Kind: kind}
}

func (a Account) customer() bool { return a.Kind == Available || a.Kind == Pending }

// Posting moves Amount (minor units, signed) into Account.
type Posting struct {
	Account Account
	Amount  int64
}

// Entry is one journal entry.
type Entry struct {
	OrganizationID *uuid.UUID
	Kind           string // deposit, payment, fee, settlement, reversal
	Description    string
	Reverses       *uuid.UUID
	Postings       []Posting
}

// ErrInsufficientFunds is returned when a posting would take a customer account below zero.
var ErrInsufficientFunds = apierr.New(apierr.InsufficientFunds, "The balance is not enough for this payment and its fee.")

// ErrBalanceLimit is returned when a posting would take an account's balance
// beyond what int64 minor units hold. Amounts have at most 15 digits before
// the decimal point, so only a very long run of the largest amounts gets
// here; the entry is refused and nothing overflows or is stored as a float.
var ErrBalanceLimit = apierr.New(apierr.UnprocessableEntity, "This would take a balance beyond the largest amount the ledger can hold.")

// ErrUnbalanced is a defect: an entry whose postings do not sum to zero per currency.
var ErrUnbalanced = errors.New("ledger: entry does not balance")

// Post writes e in tx, stamped with tx.Now(), and updates the balances.
// Postings are applied in a fixed account order, so concurrent entries lock
// accounts in the same order. It returns ErrUnbalanced for an entry whose
// postings do not sum to zero per currency or hold a zero amount,
// ErrInsufficientFunds when a customer balance would go below zero and
// ErrBalanceLimit when a balance would leave int64; then nothing of the entry
// is kept once tx rolls back. An account is created on its first posting.
//
// Each posting is one statement that finds, checks and updates its account
// (applyPosting), then the entry and all its postings are written at once:
// one statement on PostgreSQL, two on SQLite. (One statement for the whole
// entry on PostgreSQL, locking its accounts in a sorted CTE, was measured
// slower under contention than these: bench/RESULTS.md, issue 28.)
func Post(ctx context.Context, tx *db.Tx, e Entry) (uuid.UUID, error) {
	sums := map[string]int64{}
	for _, p := range e.Postings {
		if p.Amount == 0 {
			return uuid.Nil, fmt.Errorf("%w: zero posting", ErrUnbalanced)
		}
		sums[p.Account.Currency] += p.Amount
	}
	for cur, sum := range sums {
		if sum != 0 {
			return uuid.Nil, fmt.Errorf("%w: %s off by %d", ErrUnbalanced, cur, sum)
		}
	}
	id := uuid.Must(uuid.NewV7())
	postings := append([]Posting(nil), e.Postings...)
	sort.SliceStable(postings, func(i, j int) bool { return postings[i].Account.key() < postings[j].Account.key() })
	postingIDs := make([]uuid.UUID, len(postings))
	for i := range postingIDs {
		postingIDs[i] = uuid.Must(uuid.NewV7())
	}
	accounts := make([]uuid.UUID, len(postings))
	for i, p := range postings {
		var err error
		if accounts[i], err = applyPosting(ctx, tx, p); err != nil {
			return uuid.Nil, err
		}
	}
	if err := insertEntry(ctx, tx, id, e, postings, postingIDs, accounts); err != nil {
		return uuid.Nil, err
	}
	return id, nil
}

// refusal is the error of a posting its account's bounds refuse.
func refusal(p Posting) error {
	if p.Account.customer() && p.Amount < 0 {
		return ErrInsufficientFunds
	}
	return ErrBalanceLimit
}

// applyPosting adds p to its account's balance, which may change only
// while it stays within [lo, hi] before the change: the bounds are computed
// here, so the database never evaluates a sum that overflows (PostgreSQL
// would fail the statement; SQLite would store a float). It returns the
// account's id. One statement finds, checks and updates the account; only
// when it changes nothing is the account looked for, to tell a missing
// account (created here, then updated) from a refused posting.
func applyPosting(ctx context.Context, tx *db.Tx, p Posting) (uuid.UUID, error) {
	a := p.Account
	lo, hi := bounds(p.Amount, a.customer())
	update := func() (uuid.UUID, error) {
		var id uuid.UUID
		if a.OrganizationID == nil {
			return id, tx.QueryRowContext(ctx, `UPDATE ledger_accounts SET balance = balance + $3
				WHERE organization_id IS NULL AND currency = $1 AND kind = $2 AND balance >= $4 AND balance <= $5 RETURNING id`,
				a.Currency, a.Kind, p.Amount, lo, hi).Scan(&id)
		}
		return id, tx.QueryRowContext(ctx, `UPDATE ledger_accounts SET balance = balance + $4
			WHERE organization_id = $1 AND currency = $2 AND kind = $3 AND balance >= $5 AND balance <= $6 RETURNING id`,
			*a.OrganizationID, a.Currency, a.Kind, p.Amount, lo, hi).Scan(&id)
	}
	id, err := update()
	if !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	if _, err := findAccount(ctx, tx, a); !errors.Is(err, sql.ErrNoRows) {
		if err != nil {
			return uuid.Nil, err
		}
		return uuid.Nil, refusal(p)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_accounts (id, organization_id, currency, kind, balance, inserted_at)
		VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT DO NOTHING`, uuid.Must(uuid.NewV7()), a.OrganizationID, a.Currency, a.Kind, tx.Now()); err != nil {
		return uuid.Nil, err
	}
	id, err = update()
	if errors.Is(err, sql.ErrNoRows) {
		return uuid.Nil, refusal(p)
	}
	return id, err
}

// insertEntry writes the entry and its postings, whose balances have moved:
// on PostgreSQL in one statement, on SQLite in two.
func insertEntry(ctx context.Context, tx *db.Tx, id uuid.UUID, e Entry, postings []Posting, postingIDs, accounts []uuid.UUID) error {
	args := []any{id, e.OrganizationID, e.Kind, e.Description, e.Reverses, tx.Now()}
	values := ""
	for i, p := range postings {
		if i > 0 {
			values += ", "
		}
		values += fmt.Sprintf("($%d, $1, $%d, $%d, $%d)", len(args)+1, len(args)+2, len(args)+3, len(args)+4)
		args = append(args, postingIDs[i], accounts[i], p.Amount, p.Account.Currency)
	}
	postingsSQL := `INSERT INTO postings (id, entry_id, account_id, amount, currency) VALUES ` + values
	if tx.Dialect() == db.Postgres {
		_, err := tx.ExecContext(ctx, `WITH entry AS (INSERT INTO journal_entries (id, organization_id, kind, description, reverses_entry_id, inserted_at)
			VALUES ($1, $2, $3, $4, $5, $6)) `+postingsSQL, args...)
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO journal_entries (id, organization_id, kind, description, reverses_entry_id, inserted_at)
		VALUES ($1, $2, $3, $4, $5, $6)`, args[:6]...); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, postingsSQL, args...)
	return err
}

// bounds returns the range a balance must be in before amount is added, so
// that the sum stays within ±math.MaxInt64 and, for a customer account, is
// not negative. amount is never math.MinInt64 (see package money).
func bounds(amount int64, customer bool) (lo, hi int64) {
	lo, hi = -math.MaxInt64, math.MaxInt64
	if amount > 0 {
		hi -= amount
	} else {
		lo -= amount
	}
	if customer && -amount > lo {
		lo = -amount
	}
	return lo, hi
}

func (a Account) key() string {
	org := ""
	if a.OrganizationID != nil {
		org = a.OrganizationID.String()
	}
	return org + "/" + a.Currency + "/" + a.Kind
}

// findAccount returns the account's id, sql.ErrNoRows when it does not exist.
func findAccount(ctx context.Context, tx *db.Tx, a Account) (uuid.UUID, error) {
	var id uuid.UUID
	if a.OrganizationID == nil {
		return id, tx.QueryRowContext(ctx, `SELECT id FROM ledger_accounts WHERE organization_id IS NULL AND currency = $1 AND kind = $2`,
			a.Currency, a.Kind).Scan(&id)
	}
	return id, tx.QueryRowContext(ctx, `SELECT id FROM ledger_accounts WHERE organization_id = $1 AND currency = $2 AND kind = $3`,
		*a.OrganizationID, a.Currency, a.Kind).Scan(&id)
}

// Reverse posts the mirror of entry id: a new entry, the original untouched.
// Its errors are Post's.
func Reverse(ctx context.Context, tx *db.Tx, id uuid.UUID, description string) (uuid.UUID, error) {
	var orgID *uuid.UUID
	if err := tx.QueryRowContext(ctx, `SELECT organization_id FROM journal_entries WHERE id = $1`, id).Scan(&orgID); err != nil {
		return uuid.Nil, err
	}
	mirror := func(row db.Scanner) (Posting, error) {
		var p Posting
		err := row.Scan(&p.Account.OrganizationID, &p.Account.Currency, &p.Account.Kind, &p.Amount)
		p.Amount = -p.Amount
		return p, err
	}
	postings, err := db.QueryAll(ctx, tx, mirror, `SELECT a.organization_id, a.currency, a.kind, p.amount
		FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE p.entry_id = $1`, id)
	if err != nil {
		return uuid.Nil, err
	}
	return Post(ctx, tx, Entry{OrganizationID: orgID, Kind: "reversal", Description: description, Reverses: &id, Postings: postings})
}

// Balance is an organization's money in one currency.
type Balance struct {
	Currency  string
	Available int64
	Pending   int64
}

// Balances lists the organization's balances by currency.
func Balances(ctx context.Context, q db.Reader, orgID uuid.UUID) ([]Balance, error) {
	rows, err := q.QueryContext(ctx, `SELECT currency, kind, balance FROM ledger_accounts
		WHERE organization_id = $1 AND kind IN ('available', 'pending') ORDER BY currency`, orgID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Balance
	for rows.Next() {
		var cur, kind string
		var bal int64
		if err := rows.Scan(&cur, &kind, &bal); err != nil {
			return nil, err
		}
		if len(out) == 0 || out[len(out)-1].Currency != cur {
			out = append(out, Balance{Currency: cur})
		}
		if kind == Available {
			out[len(out)-1].Available = bal
		} else {
			out[len(out)-1].Pending = bal
		}
	}
	return out, rows.Err()
}

// AvailableBalance returns the organization's free balance in currency.
func AvailableBalance(ctx context.Context, q db.Reader, orgID uuid.UUID, currency string) (int64, error) {
	var bal int64
	err := q.QueryRowContext(ctx, `SELECT balance FROM ledger_accounts WHERE organization_id = $1 AND currency = $2 AND kind = 'available'`,
		orgID, currency).Scan(&bal)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return bal, err
}

// CheckInvariants verifies the whole book: every entry balances per
// currency, every balance equals the sum of its postings, no customer
// balance is negative, and the kept day sums of the feed (DaySums) add up
// to the feed's rows per organization and currency. Tests run it after every test that moves money.
func CheckInvariants(ctx context.Context, q db.Reader) error {
	var problems []error
	rows, err := q.QueryContext(ctx, `SELECT entry_id, currency, SUM(amount) FROM postings GROUP BY entry_id, currency HAVING SUM(amount) <> 0`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, cur string
		var sum int64
		if err := rows.Scan(&id, &cur, &sum); err != nil {
			rows.Close()
			return err
		}
		problems = append(problems, fmt.Errorf("entry %s does not balance in %s (off by %d)", id, cur, sum))
	}
	rows.Close()
	rows, err = q.QueryContext(ctx, `SELECT a.id, a.kind, a.balance, COALESCE((SELECT SUM(p.amount) FROM postings p WHERE p.account_id = a.id), 0)
		FROM ledger_accounts a`)
	if err != nil {
		return err
	}
	for rows.Next() {
		var id, kind string
		var bal, sum int64
		if err := rows.Scan(&id, &kind, &bal, &sum); err != nil {
			rows.Close()
			return err
		}
		if bal != sum {
			problems = append(problems, fmt.Errorf("account %s: balance %d but postings sum to %d", id, bal, sum))
		}
		if (kind == Available || kind == Pending) && bal < 0 {
			problems = append(problems, fmt.Errorf("customer account %s is negative: %d", id, bal))
		}
	}
	rows.Close()
	if err := checkDaySums(ctx, q, &problems); err != nil {
		return err
	}
	return errors.Join(problems...)
}
