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
// On PostgreSQL an entry whose accounts all exist, each posted to once, is
// one statement (postEntry); otherwise, and on SQLite, each posting is one
// statement that finds, checks and updates its account (applyPosting),
// followed by the entry and all its postings in one statement or two.
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
	if tx.Dialect() == db.Postgres && onceEachKept(postings) {
		posted, err := postEntry(ctx, tx, id, e, postings, postingIDs)
		if posted || err != nil {
			return id, err
		}
		// An account is missing: nothing was changed or locked; the
		// postings below create it.
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

// onceEachKept reports whether postings (sorted by account) name each
// account once, every one kept for an organization: what postEntry takes.
func onceEachKept(postings []Posting) bool {
	for i, p := range postings {
		if p.Account.OrganizationID == nil || (i > 0 && p.Account.key() == postings[i-1].Account.key()) {
			return false
		}
	}
	return true
}

// postEntrySQL posts a whole entry on PostgreSQL in one statement, given
// its postings ($1 to $8, one array element each, in account order) and
// their number ($9). Nothing is locked or changed unless every account
// exists. locked then locks the accounts in account order (the sort runs
// below the row locks) and says whether each balance is within its
// posting's bounds, read from the row as locked; moved changes the
// balances only when all are, checking the bounds again; the entry and its
// postings are written only when every balance moved. It returns how many
// accounts exist, how many moved and the first posting (by ord) refused.
const postEntrySQL = `WITH v (ord, org, currency, kind, amount, lo, hi, posting_id) AS (
	SELECT * FROM unnest($1::int[], $2::uuid[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[], $8::uuid[])
), locked AS (
	SELECT a.id, v.ord, v.amount, v.currency, v.posting_id, a.balance >= v.lo AND a.balance <= v.hi AS within
	FROM ledger_accounts a JOIN v ON a.organization_id = v.org AND a.currency = v.currency AND a.kind = v.kind
	WHERE (SELECT count(*) FROM ledger_accounts a2 JOIN v v2
		ON a2.organization_id = v2.org AND a2.currency = v2.currency AND a2.kind = v2.kind) = $9
	ORDER BY v.ord
	FOR UPDATE OF a
), moved AS (
	UPDATE ledger_accounts a SET balance = a.balance + l.amount
	FROM locked l JOIN v ON v.ord = l.ord
	WHERE a.id = l.id AND a.balance >= v.lo AND a.balance <= v.hi
		AND (SELECT count(*) FROM locked) = $9 AND NOT EXISTS (SELECT 1 FROM locked WHERE NOT within)
	RETURNING l.ord
), entry AS (
	INSERT INTO journal_entries (id, organization_id, kind, description, reverses_entry_id, inserted_at)
	SELECT $10::uuid, $11::uuid, $12::text, $13::text, $14::uuid, $15::timestamptz WHERE (SELECT count(*) FROM moved) = $9
), posted AS (
	INSERT INTO postings (id, entry_id, account_id, amount, currency)
	SELECT l.posting_id, $10::uuid, l.id, l.amount, l.currency FROM locked l WHERE (SELECT count(*) FROM moved) = $9
)
SELECT (SELECT count(*) FROM locked), (SELECT count(*) FROM moved),
	COALESCE((SELECT min(ord) FROM locked WHERE NOT within), (SELECT min(ord) FROM locked WHERE ord NOT IN (SELECT ord FROM moved)), -1)`

// postEntry posts e (id, its postings sorted by account, each account once
// and kept for an organization) in one statement. It returns false, having
// changed and locked nothing, when an account does not exist yet.
func postEntry(ctx context.Context, tx *db.Tx, id uuid.UUID, e Entry, postings []Posting, postingIDs []uuid.UUID) (bool, error) {
	n := len(postings)
	ords, orgs, currencies, kinds := make([]int32, n), make([]string, n), make([]string, n), make([]string, n)
	amounts, los, his, pids := make([]int64, n), make([]int64, n), make([]int64, n), make([]string, n)
	for i, p := range postings {
		ords[i], orgs[i], currencies[i], kinds[i] = int32(i), p.Account.OrganizationID.String(), p.Account.Currency, p.Account.Kind
		amounts[i], pids[i] = p.Amount, postingIDs[i].String()
		los[i], his[i] = bounds(p.Amount, p.Account.customer())
	}
	var found, moved, refused int64
	if err := tx.QueryRowContext(ctx, postEntrySQL, ords, orgs, currencies, kinds, amounts, los, his, pids, n,
		id, e.OrganizationID, e.Kind, e.Description, e.Reverses, tx.Now()).Scan(&found, &moved, &refused); err != nil {
		return false, err
	}
	switch {
	case found < int64(n):
		return false, nil
	case moved == int64(n):
		return true, nil
	case refused >= 0 && refused < int64(n):
		return false, refusal(postings[refused])
	}
	return false, fmt.Errorf("ledger: entry %s: %d of %d balances moved and none refused", id, moved, n)
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
