package ledger_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// post writes e in a transaction of its own and returns the entry's id.
func post(d *db.DB, e ledger.Entry) (uuid.UUID, error) {
	ctx := context.Background()
	return db.InTx(ctx, d, func(tx *db.Tx) (uuid.UUID, error) { return ledger.Post(ctx, tx, e) })
}

// deposit is an entry moving minor units of cur from the world into the
// organization's available balance (a negative amount moves them back).
func deposit(orgID uuid.UUID, cur string, minor int64) ledger.Entry {
	return ledger.Entry{OrganizationID: &orgID, Kind: "deposit", Description: "test", Postings: []ledger.Posting{
		{Account: ledger.PlatformAccount(orgID, cur, ledger.World), Amount: -minor},
		{Account: ledger.OrgAccount(orgID, cur, ledger.Available), Amount: minor},
	}}
}

// mustPost posts e and fails the test when the ledger refuses it.
func mustPost(t *testing.T, d *db.DB, e ledger.Entry) uuid.UUID {
	t.Helper()
	id, err := post(d, e)
	if err != nil {
		t.Fatalf("post %s: %v", e.Kind, err)
	}
	return id
}

// booked is what the book holds: its entries and postings (counted) and
// the organization's balances.
type booked struct {
	Entries, Postings int
	Balances          []ledger.Balance
}

func book(t *testing.T, d *db.DB, orgID uuid.UUID) booked {
	t.Helper()
	ctx := context.Background()
	var b booked
	q := d.Reader()
	if err := q.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM journal_entries), (SELECT count(*) FROM postings)`).Scan(&b.Entries, &b.Postings); err != nil {
		t.Fatal(err)
	}
	var err error
	if b.Balances, err = ledger.Balances(ctx, q, orgID); err != nil {
		t.Fatal(err)
	}
	return b
}

func checkInvariants(t *testing.T, d *db.DB) {
	t.Helper()
	if err := ledger.CheckInvariants(context.Background(), d.Reader()); err != nil {
		t.Fatal(err)
	}
}

// TestPostRefusesWhatBreaksTheRules: an entry that does not balance per
// currency, holds a zero posting, or would take a customer balance below
// zero is refused, and nothing of it is written.
func TestPostRefusesWhatBreaksTheRules(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		org, _ := fixture.Member(t, d, organization.Owner)
		id := org.ID
		mustPost(t, d, deposit(id, "EUR", 10000))
		world := func(cur string) ledger.Account { return ledger.PlatformAccount(id, cur, ledger.World) }
		available := func(cur string) ledger.Account { return ledger.OrgAccount(id, cur, ledger.Available) }
		pending := ledger.OrgAccount(id, "EUR", ledger.Pending)
		cases := []struct {
			name     string
			postings []ledger.Posting
			want     error
		}{
			{"off by one", []ledger.Posting{{world("EUR"), -100}, {available("EUR"), 99}}, ledger.ErrUnbalanced},
			{"balanced in one currency, not in the other", []ledger.Posting{{world("EUR"), -100}, {available("EUR"), 100}, {world("USD"), -5}},
				ledger.ErrUnbalanced},
			{"zero in all but across currencies", []ledger.Posting{{world("EUR"), -100}, {available("USD"), 100}}, ledger.ErrUnbalanced},
			{"a single posting", []ledger.Posting{{available("EUR"), 100}}, ledger.ErrUnbalanced},
			{"zero postings", []ledger.Posting{{world("EUR"), 0}, {available("EUR"), 0}}, ledger.ErrUnbalanced},
			{"a zero posting beside a balanced pair", []ledger.Posting{{world("EUR"), -1}, {available("EUR"), 1}, {pending, 0}}, ledger.ErrUnbalanced},
			{"more than the available balance", []ledger.Posting{{available("EUR"), -10001}, {world("EUR"), 10001}}, ledger.ErrInsufficientFunds},
			{"from an empty pending balance", []ledger.Posting{{pending, -1}, {available("EUR"), 1}}, ledger.ErrInsufficientFunds},
			{"from a currency never held", []ledger.Posting{{available("USD"), -1}, {world("USD"), 1}}, ledger.ErrInsufficientFunds},
			{"spent twice in one entry", []ledger.Posting{{available("EUR"), -6000}, {pending, 6000}, {available("EUR"), -6000}, {world("EUR"), 6000}},
				ledger.ErrInsufficientFunds},
		}
		before := book(t, d, id)
		for _, c := range cases {
			_, err := post(d, ledger.Entry{OrganizationID: &id, Kind: "payment", Description: c.name, Postings: c.postings})
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v; want %v", c.name, err, c.want)
			}
			if after := book(t, d, id); !reflect.DeepEqual(after, before) {
				t.Errorf("%s: the book changed from %+v to %+v", c.name, before, after)
			}
		}
		// Down to exactly zero is allowed.
		mustPost(t, d, deposit(id, "EUR", -10000))
		checkInvariants(t, d)
	})
}

// TestBalancesStopAtTheEdgeOfInt64: a posting that would take a balance past
// ±math.MaxInt64 is refused with ErrBalanceLimit and changes nothing, on
// both engines (PostgreSQL used to fail the statement, SQLite to store a
// float); a customer balance still never goes below zero; and one
// organization at the edge leaves every other's accounts alone.
func TestBalancesStopAtTheEdgeOfInt64(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, _ := fixture.Member(t, d, organization.Owner)
		move := func(amount int64) error {
			_, err := post(d, deposit(org.ID, "EUR", amount))
			return err
		}
		if err := move(math.MaxInt64 - 1); err != nil {
			t.Fatal(err)
		}
		if err := move(2); !errors.Is(err, ledger.ErrBalanceLimit) {
			t.Fatalf("past the edge: %v; want ErrBalanceLimit", err)
		}
		// The world account at its edge is this organization's alone: another
		// organization's deposits of the currency go on.
		other := fixture.Organization(t, d, "Globex")
		if _, err := post(d, deposit(other.ID, "EUR", math.MaxInt64-1)); err != nil {
			t.Fatalf("another organization's deposit: %v", err)
		}
		if err := move(1); err != nil {
			t.Fatalf("up to the edge: %v", err)
		}
		if err := move(-math.MaxInt64); err != nil { // all of it back
			t.Fatal(err)
		}
		if err := move(-1); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("below zero: %v; want ErrInsufficientFunds", err)
		}
		bal, err := ledger.AvailableBalance(ctx, d.Reader(), org.ID, "EUR")
		if err != nil || bal != 0 {
			t.Fatalf("balance %d, %v", bal, err)
		}
		checkInvariants(t, d)
	})
}

// posting is one posting as stored, for comparing entries.
type posting struct {
	Kind, Currency string
	Amount         int64
}

func postingsOf(t *testing.T, d *db.DB, entryID uuid.UUID) []posting {
	t.Helper()
	rows, err := d.Reader().QueryContext(context.Background(), `SELECT a.kind, a.currency, p.amount
		FROM postings p JOIN ledger_accounts a ON a.id = p.account_id WHERE p.entry_id = $1 ORDER BY a.kind, a.currency`, entryID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []posting
	for rows.Next() {
		var p posting
		if err := rows.Scan(&p.Kind, &p.Currency, &p.Amount); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReversalIsANewEntryThatMirrorsTheOriginal: reversing posts a new entry
// with every posting of the original negated and pointing back at it; the
// original keeps its postings, and the balances return to what they were.
func TestReversalIsANewEntryThatMirrorsTheOriginal(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, _ := fixture.Member(t, d, organization.Owner)
		id := org.ID
		mustPost(t, d, deposit(id, "EUR", 10000))
		before := book(t, d, id)
		paid := mustPost(t, d, ledger.Entry{OrganizationID: &id, Kind: "payment", Description: "Payment to Westminster Supplies",
			Postings: []ledger.Posting{
				{Account: ledger.OrgAccount(id, "EUR", ledger.Available), Amount: -2600},
				{Account: ledger.OrgAccount(id, "EUR", ledger.Pending), Amount: 2500},
				{Account: ledger.PlatformAccount(id, "EUR", ledger.Fees), Amount: 100},
			}})
		original := postingsOf(t, d, paid)

		reversal, err := db.InTx(ctx, d, func(tx *db.Tx) (uuid.UUID, error) {
			return ledger.Reverse(ctx, tx, paid, "Reversal of payment to Westminster Supplies")
		})
		if err != nil {
			t.Fatal(err)
		}
		if reversal == paid {
			t.Fatal("the reversal reused the original entry")
		}
		mirrored := postingsOf(t, d, reversal)
		if len(mirrored) != len(original) {
			t.Fatalf("reversal postings %+v, original %+v", mirrored, original)
		}
		for i, p := range original {
			if want := (posting{p.Kind, p.Currency, -p.Amount}); mirrored[i] != want {
				t.Errorf("reversal posting %d = %+v, want %+v", i, mirrored[i], want)
			}
		}
		if again := postingsOf(t, d, paid); !reflect.DeepEqual(again, original) {
			t.Errorf("the original changed: %+v, was %+v", again, original)
		}
		var kind string
		var reverses uuid.UUID
		if err := d.Reader().QueryRowContext(ctx, `SELECT kind, reverses_entry_id FROM journal_entries WHERE id = $1`, reversal).
			Scan(&kind, &reverses); err != nil || kind != "reversal" || reverses != paid {
			t.Errorf("reversal entry: kind %q, reverses %s (%v); want reversal of %s", kind, reverses, err, paid)
		}
		after := book(t, d, id)
		if !reflect.DeepEqual(after.Balances, before.Balances) || after.Entries != before.Entries+2 {
			t.Errorf("after the reversal: %+v; before the payment: %+v", after, before)
		}
		checkInvariants(t, d)
	})
}

// TestBalancesAreListedPerCurrency: an organization sees one balance per
// currency it holds, ordered by code, with what is free and what is held;
// not another organization's, nor the platform's accounts.
func TestBalancesAreListedPerCurrency(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		org, _ := fixture.Member(t, d, organization.Owner)
		other := fixture.Organization(t, d, "Globex")
		id := org.ID
		if bs, err := ledger.Balances(ctx, d.Reader(), id); err != nil || len(bs) != 0 {
			t.Fatalf("before any money: %+v, %v; want none", bs, err)
		}
		mustPost(t, d, deposit(id, "USD", 500))
		mustPost(t, d, deposit(id, "EUR", 10000))
		mustPost(t, d, deposit(id, "JPY", 1000))
		mustPost(t, d, deposit(other.ID, "GBP", 700))
		mustPost(t, d, ledger.Entry{OrganizationID: &id, Kind: "fee", Description: "fee", Postings: []ledger.Posting{
			{Account: ledger.OrgAccount(id, "EUR", ledger.Available), Amount: -3100},
			{Account: ledger.OrgAccount(id, "EUR", ledger.Pending), Amount: 3000},
			{Account: ledger.PlatformAccount(id, "EUR", ledger.Fees), Amount: 100},
		}})
		bs, err := ledger.Balances(ctx, d.Reader(), id)
		if err != nil {
			t.Fatal(err)
		}
		want := []ledger.Balance{{Currency: "EUR", Available: 6900, Pending: 3000}, {Currency: "JPY", Available: 1000}, {Currency: "USD", Available: 500}}
		if !reflect.DeepEqual(bs, want) {
			t.Fatalf("balances = %+v, want %+v", bs, want)
		}
		for _, b := range want {
			if got, err := ledger.AvailableBalance(ctx, d.Reader(), id, b.Currency); err != nil || got != b.Available {
				t.Errorf("available %s = %d, %v; want %d", b.Currency, got, err, b.Available)
			}
		}
		if got, err := ledger.AvailableBalance(ctx, d.Reader(), id, "GBP"); err != nil || got != 0 {
			t.Errorf("available GBP (another organization's) = %d, %v; want 0", got, err)
		}
		checkInvariants(t, d)
	})
}

// TestCheckInvariantsFindsTampering: a book changed behind the ledger's back
// (a balance that no longer sums its postings, a posting that unbalances
// its entry) is reported.
func TestCheckInvariantsFindsTampering(t *testing.T) {
	cases := []struct {
		name, tamper, want string
	}{
		{"a balance", `UPDATE ledger_accounts SET balance = balance + 1 WHERE kind = 'available'`, "but postings sum to"},
		{"a platform balance", `UPDATE ledger_accounts SET balance = balance - 7 WHERE kind = 'world'`, "but postings sum to"},
		{"a posting", `UPDATE postings SET amount = amount + 1 WHERE amount > 0`, "does not balance"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, d *db.DB) {
				ctx := context.Background()
				org, _ := fixture.Member(t, d, organization.Owner)
				mustPost(t, d, deposit(org.ID, "EUR", 10000))
				checkInvariants(t, d)
				if err := d.Tx(ctx, func(tx *db.Tx) error {
					_, err := tx.ExecContext(ctx, c.tamper)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				err := ledger.CheckInvariants(ctx, d.Reader())
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("after tampering with %s: %v; want a problem saying %q", c.name, err, c.want)
				}
			})
		})
	}
}
