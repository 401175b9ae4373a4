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
	"strings"

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

// Post writes e in tx, stamped with tx.Now(), and updates the balances
// (Write, then Move). It returns ErrUnbalanced for an entry whose postings
// do not sum to zero per currency or hold a zero amount,
// ErrInsufficientFunds when a customer balance would go below zero and
// ErrBalanceLimit when a balance would leave int64; then nothing of the
// entry is kept once tx (or the savepoint it runs in) rolls back. An
// account is created on its first posting.
func Post(ctx context.Context, tx *db.Tx, e Entry) (uuid.UUID, error) {
	w, err := Write(ctx, tx, e)
	if err != nil {
		return uuid.Nil, err
	}
	return w.IDs[0], w.Move(ctx, tx)
}

// Written is entries whose rows are written (Write) and whose balances have
// not moved yet: Move moves them. The transaction must not commit without
// Move (CheckInvariants would find balances that are not the sums of their
// postings).
type Written struct {
	// IDs are the entries' ids, in the order given to Write.
	IDs []uuid.UUID
	// moves are the balance changes, one per account, in account order.
	moves []move
}

// move is what the entries add to one account's balance.
type move struct {
	account Account
	id      uuid.UUID
	amount  int64
}

// Write validates entries and writes their rows and postings, stamped with
// tx.Now(), creating the accounts they post to for the first time: on
// PostgreSQL in one statement, whatever the number of entries, when the
// accounts exist (writeEntries). The
// balances move in Move, which the caller runs as late as its transaction
// allows: moving a balance locks its account until the commit, and every
// other writer of the account (each approval of the organization) waits for
// it, so rows that depend on the entries (feed rows, a payment naming its
// debit) are best written between the two.
func Write(ctx context.Context, tx *db.Tx, entries ...Entry) (*Written, error) {
	w := &Written{IDs: make([]uuid.UUID, len(entries))}
	if len(entries) == 0 {
		return w, nil
	}
	net := map[string]*move{}
	var accounts []Account
	for i, e := range entries {
		if err := balanced(e); err != nil {
			return nil, err
		}
		w.IDs[i] = uuid.Must(uuid.NewV7())
		for _, p := range e.Postings {
			m := net[p.Account.key()]
			if m == nil {
				m = &move{account: p.Account}
				net[p.Account.key()] = m
				accounts = append(accounts, p.Account)
			}
			if (p.Amount > 0 && m.amount > math.MaxInt64-p.Amount) || (p.Amount < 0 && m.amount < -math.MaxInt64-p.Amount) {
				return nil, refusal(Posting{Account: p.Account, Amount: p.Amount})
			}
			m.amount += p.Amount
		}
	}
	ids, err := writeEntries(ctx, tx, w.IDs, entries, accounts)
	if err != nil {
		return nil, err
	}
	for key, m := range net {
		m.id = ids[key]
		if m.amount != 0 {
			w.moves = append(w.moves, *m)
		}
	}
	// Accounts are locked in one order by every writer, so two of them
	// never wait for each other.
	sort.Slice(w.moves, func(i, j int) bool { return w.moves[i].account.key() < w.moves[j].account.key() })
	return w, nil
}

// writeEntries writes the entries and their postings and returns the ids of
// accounts by key, creating those that do not exist yet. On PostgreSQL the
// accounts are looked up in the statement that writes the entries
// (insertWhereAccountsExist), which writes nothing when one is missing: then
// the missing ones are created and the statement runs again. On SQLite the
// lookup is a statement of its own (resolveAccounts).
func writeEntries(ctx context.Context, tx *db.Tx, ids []uuid.UUID, entries []Entry, accounts []Account) (map[string]uuid.UUID, error) {
	if tx.Dialect() != db.Postgres {
		found, err := resolveAccounts(ctx, tx, accounts)
		if err != nil {
			return nil, err
		}
		return found, insertEntries(ctx, tx, ids, entries, found)
	}
	for range 2 {
		found, err := insertWhereAccountsExist(ctx, tx, ids, entries, accounts)
		if err != nil || len(found) == len(accounts) {
			return found, err
		}
		if err := createAccounts(ctx, tx, accounts, found); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("ledger: accounts missing just after they were created")
}

// accountsWhere is the condition that selects accounts from ledger_accounts,
// its parameters numbered from $first, and their arguments.
func accountsWhere(accounts []Account, first int) (string, []any) {
	var where []string
	var args []any
	for _, a := range accounts {
		n := first + len(args)
		if a.OrganizationID == nil {
			where = append(where, fmt.Sprintf("(organization_id IS NULL AND currency = $%d AND kind = $%d)", n, n+1))
			args = append(args, a.Currency, a.Kind)
			continue
		}
		where = append(where, fmt.Sprintf("(organization_id = $%d AND currency = $%d AND kind = $%d)", n, n+1, n+2))
		args = append(args, *a.OrganizationID, a.Currency, a.Kind)
	}
	return strings.Join(where, " OR "), args
}

// scanAccountIDs reads rows of (id, organization_id, currency, kind) into
// ids by account key.
func scanAccountIDs(rows *sql.Rows, ids map[string]uuid.UUID) error {
	defer rows.Close()
	for rows.Next() {
		var id uuid.UUID
		var a Account
		if err := rows.Scan(&id, &a.OrganizationID, &a.Currency, &a.Kind); err != nil {
			return err
		}
		ids[a.key()] = id
	}
	return rows.Err()
}

// insertWhereAccountsExist is one PostgreSQL statement that looks accounts
// up and, only when every one exists, writes the entries and their postings
// (their account ids taken from the lookup). It returns the accounts found.
func insertWhereAccountsExist(ctx context.Context, tx *db.Tx, ids []uuid.UUID, entries []Entry, accounts []Account) (map[string]uuid.UUID, error) {
	where, args := accountsWhere(accounts, 1)
	args = append(args, int64(len(accounts)))
	all := fmt.Sprintf("(SELECT count(*) FROM account) = $%d", len(args))
	var entryRows, postingRows []string
	for i, e := range entries {
		n := len(args)
		entryRows = append(entryRows, fmt.Sprintf("($%d::uuid, $%d::uuid, $%d::text, $%d::text, $%d::uuid, $%d::timestamptz)", n+1, n+2, n+3, n+4, n+5, n+6))
		args = append(args, ids[i], e.OrganizationID, e.Kind, e.Description, e.Reverses, tx.Now())
		for _, p := range e.Postings {
			n := len(args)
			postingRows = append(postingRows, fmt.Sprintf("($%d::uuid, $%d::uuid, $%d::uuid, $%d::text, $%d::text, $%d::bigint)", n+1, n+2, n+3, n+4, n+5, n+6))
			args = append(args, uuid.Must(uuid.NewV7()), ids[i], p.Account.OrganizationID, p.Account.Currency, p.Account.Kind, p.Amount)
		}
	}
	rows, err := tx.QueryContext(ctx, `WITH account AS (
			SELECT id, organization_id, currency, kind FROM ledger_accounts WHERE `+where+`),
		entry AS (INSERT INTO journal_entries (id, organization_id, kind, description, reverses_entry_id, inserted_at)
			SELECT * FROM (VALUES `+strings.Join(entryRows, ", ")+`) AS e WHERE `+all+`),
		posting AS (INSERT INTO postings (id, entry_id, account_id, amount, currency)
			SELECT v.id, v.entry_id, account.id, v.amount, v.currency
			FROM (VALUES `+strings.Join(postingRows, ", ")+`) AS v (id, entry_id, organization_id, currency, kind, amount)
			JOIN account ON account.organization_id IS NOT DISTINCT FROM v.organization_id
				AND account.currency = v.currency AND account.kind = v.kind
			WHERE `+all+`)
		SELECT id, organization_id, currency, kind FROM account`, args...)
	if err != nil {
		return nil, err
	}
	found := make(map[string]uuid.UUID, len(accounts))
	return found, scanAccountIDs(rows, found)
}

// createAccounts creates those of accounts not among found (by key),
// each with a zero balance; one created meanwhile by another transaction
// is left as it is.
func createAccounts(ctx context.Context, tx *db.Tx, accounts []Account, found map[string]uuid.UUID) error {
	for _, a := range accounts {
		if _, ok := found[a.key()]; ok {
			continue
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO ledger_accounts (id, organization_id, currency, kind, balance, inserted_at)
			VALUES ($1, $2, $3, $4, 0, $5) ON CONFLICT DO NOTHING`, uuid.Must(uuid.NewV7()), a.OrganizationID, a.Currency, a.Kind, tx.Now()); err != nil {
			return err
		}
	}
	return nil
}

// balanced returns ErrUnbalanced unless e's postings are all non-zero and
// sum to zero per currency.
func balanced(e Entry) error {
	sums := map[string]int64{}
	for _, p := range e.Postings {
		if p.Amount == 0 {
			return fmt.Errorf("%w: zero posting", ErrUnbalanced)
		}
		sums[p.Account.Currency] += p.Amount
	}
	for cur, sum := range sums {
		if sum != 0 {
			return fmt.Errorf("%w: %s off by %d", ErrUnbalanced, cur, sum)
		}
	}
	if len(e.Postings) == 0 {
		return fmt.Errorf("%w: no postings", ErrUnbalanced)
	}
	return nil
}

// Move adds the written entries to their accounts' balances, one statement
// an account in account order, each changing the balance only while it
// stays within its bounds: ErrInsufficientFunds for a customer account that
// would go below zero, ErrBalanceLimit for one that would leave int64.
// (One statement for every account, locking them in a sorted CTE, was
// measured slower under contention: bench/RESULTS.md, issue 28.)
func (w *Written) Move(ctx context.Context, tx *db.Tx) error {
	for _, m := range w.moves {
		lo, hi := bounds(m.amount, m.account.customer())
		res, err := tx.ExecContext(ctx, `UPDATE ledger_accounts SET balance = balance + $2 WHERE id = $1 AND balance >= $3 AND balance <= $4`,
			m.id, m.amount, lo, hi)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			if err != nil {
				return err
			}
			return refusal(Posting{Account: m.account, Amount: m.amount})
		}
	}
	w.moves = nil
	return nil
}

// refusal is the error of a posting its account's bounds refuse.
func refusal(p Posting) error {
	if p.Account.customer() && p.Amount < 0 {
		return ErrInsufficientFunds
	}
	return ErrBalanceLimit
}

// resolveAccounts returns the ids of accounts by key, in one statement when
// they all exist; those that do not are created first.
func resolveAccounts(ctx context.Context, tx *db.Tx, accounts []Account) (map[string]uuid.UUID, error) {
	where, args := accountsWhere(accounts, 1)
	found := make(map[string]uuid.UUID, len(accounts))
	for range 2 {
		rows, err := tx.QueryContext(ctx, `SELECT id, organization_id, currency, kind FROM ledger_accounts WHERE `+where, args...)
		if err != nil {
			return nil, err
		}
		if err := scanAccountIDs(rows, found); err != nil || len(found) == len(accounts) {
			return found, err
		}
		if err := createAccounts(ctx, tx, accounts, found); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("ledger: accounts missing just after they were created")
}

// insertEntries writes the entries and their postings on SQLite: an entry
// a statement, then the postings in one. (A multi-row insert into a table
// other tables refer to makes SQLite plan a scan of each referring table,
// for the foreign keys; SQLite has no round trips to save.)
func insertEntries(ctx context.Context, tx *db.Tx, ids []uuid.UUID, entries []Entry, accounts map[string]uuid.UUID) error {
	var postingRows [][]any
	for i, e := range entries {
		entrySQL, args := db.Values(`INSERT INTO journal_entries (id, organization_id, kind, description, reverses_entry_id, inserted_at)`, 1,
			[][]any{{ids[i], e.OrganizationID, e.Kind, e.Description, e.Reverses, tx.Now()}})
		if _, err := tx.ExecContext(ctx, entrySQL, args...); err != nil {
			return err
		}
		for _, p := range e.Postings {
			postingRows = append(postingRows, []any{uuid.Must(uuid.NewV7()), ids[i], accounts[p.Account.key()], p.Amount, p.Account.Currency})
		}
	}
	postingsSQL, args := db.Values(`INSERT INTO postings (id, entry_id, account_id, amount, currency)`, 1, postingRows)
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
