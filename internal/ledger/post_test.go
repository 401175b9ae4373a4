package ledger_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// balanceOf is the balance of one account, found by its key.
func balanceOf(t *testing.T, d *db.DB, a ledger.Account) int64 {
	t.Helper()
	var bal int64
	var err error
	if a.OrganizationID == nil {
		err = d.Reader().QueryRowContext(context.Background(), `SELECT balance FROM ledger_accounts
			WHERE organization_id IS NULL AND currency = $1 AND kind = $2`, a.Currency, a.Kind).Scan(&bal)
	} else {
		err = d.Reader().QueryRowContext(context.Background(), `SELECT balance FROM ledger_accounts
			WHERE organization_id = $1 AND currency = $2 AND kind = $3`, *a.OrganizationID, a.Currency, a.Kind).Scan(&bal)
	}
	if err != nil {
		t.Fatalf("balance of %+v: %v", a, err)
	}
	return bal
}

// TestPostCreatesMissingAccountsAndMovesEachBalanceOnce: an entry whose
// accounts are all new, one whose accounts are partly new (created where the
// lookup of the entry's accounts finds none) and one whose accounts all exist
// each move every balance exactly once; an account kept for no
// organization (as entries before per-organization platform accounts used)
// is created and posted to, and its entry reversed.
func TestPostCreatesMissingAccountsAndMovesEachBalanceOnce(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		id := fixture.Organization(t, d, "Acme").ID
		available := ledger.OrgAccount(id, "EUR", ledger.Available)
		pending := ledger.OrgAccount(id, "EUR", ledger.Pending)
		world := ledger.PlatformAccount(id, "EUR", ledger.World)
		hold := func(minor int64) ledger.Entry {
			return ledger.Entry{OrganizationID: &id, Kind: "payment", Description: "hold", Postings: []ledger.Posting{
				{Account: available, Amount: -minor}, {Account: pending, Amount: minor}}}
		}
		mustPost(t, d, deposit(id, "EUR", 10000)) // both accounts new
		mustPost(t, d, hold(3000))                // pending new, available not
		mustPost(t, d, hold(1000))                // both there
		if a, p, w := balanceOf(t, d, available), balanceOf(t, d, pending), balanceOf(t, d, world); a != 6000 || p != 4000 || w != -10000 {
			t.Fatalf("available %d, pending %d, world %d; want 6000, 4000, -10000", a, p, w)
		}
		if b := book(t, d, id); b.Entries != 3 || b.Postings != 6 {
			t.Fatalf("%d entries, %d postings; want 3, 6", b.Entries, b.Postings)
		}

		legacy := ledger.Account{Currency: "EUR", Kind: ledger.World}
		old := mustPost(t, d, ledger.Entry{OrganizationID: &id, Kind: "deposit", Description: "old", Postings: []ledger.Posting{
			{Account: legacy, Amount: -500}, {Account: available, Amount: 500}}})
		if l, a := balanceOf(t, d, legacy), balanceOf(t, d, available); l != -500 || a != 6500 {
			t.Fatalf("legacy world %d, available %d; want -500, 6500", l, a)
		}
		if _, err := db.InTx(context.Background(), d, func(tx *db.Tx) (uuid.UUID, error) {
			return ledger.Reverse(context.Background(), tx, old, "undo")
		}); err != nil {
			t.Fatal(err)
		}
		if l, a := balanceOf(t, d, legacy), balanceOf(t, d, available); l != 0 || a != 6000 {
			t.Fatalf("after the reversal: legacy world %d, available %d; want 0, 6000", l, a)
		}
		checkInvariants(t, d)
	})
}

// TestWriteMovesEachAccountOnceForSeveralEntries: the entries of one Write
// (a payment's debit and fee) are written together and each account's
// balance moves once, by their sum, when Move runs; entries that each fit
// the balance but not together are refused with ErrInsufficientFunds and
// nothing of them is kept.
func TestWriteMovesEachAccountOnceForSeveralEntries(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		id := fixture.Organization(t, d, "Acme").ID
		available := ledger.OrgAccount(id, "EUR", ledger.Available)
		pending := ledger.OrgAccount(id, "EUR", ledger.Pending)
		fees := ledger.PlatformAccount(id, "EUR", ledger.Fees)
		mustPost(t, d, deposit(id, "EUR", 100))
		debitAndFee := func(amount, fee int64) []ledger.Entry {
			return []ledger.Entry{
				{OrganizationID: &id, Kind: "payment", Description: "debit", Postings: []ledger.Posting{{available, -amount}, {pending, amount}}},
				{OrganizationID: &id, Kind: "fee", Description: "fee", Postings: []ledger.Posting{{available, -fee}, {fees, fee}}},
			}
		}
		write := func(entries []ledger.Entry) ([]uuid.UUID, error) {
			return db.InTx(ctx, d, func(tx *db.Tx) ([]uuid.UUID, error) {
				w, err := ledger.Write(ctx, tx, entries...)
				if err != nil {
					return nil, err
				}
				return w.IDs, w.Move(ctx, tx)
			})
		}

		if _, err := write(debitAndFee(1, 1)); err != nil { // creates the accounts
			t.Fatal(err)
		}
		var updates, statements atomic.Int64
		t.Cleanup(db.ObserveQueries(func(query string, _ []any) {
			statements.Add(1)
			if strings.Contains(query, "UPDATE ledger_accounts") {
				updates.Add(1)
			}
		}))
		ids, err := write(debitAndFee(59, 29))
		if err != nil || len(ids) != 2 || ids[0] == ids[1] {
			t.Fatalf("write: %v, %v", ids, err)
		}
		if n := updates.Load(); n != 3 {
			t.Errorf("%d balance updates for two entries over three accounts; want 3", n)
		}
		// On PostgreSQL the accounts are looked up in the statement that
		// writes the entries and their postings; SQLite looks them up, then
		// writes each entry and the postings.
		want := int64(7)
		if d.Dialect() == db.Postgres {
			want = 4
		}
		if n := statements.Load(); n != want {
			t.Errorf("%d statements to write two entries and move three balances; want %d", n, want)
		}
		if a, p, f := balanceOf(t, d, available), balanceOf(t, d, pending), balanceOf(t, d, fees); a != 10 || p != 60 || f != 30 {
			t.Fatalf("available %d, pending %d, fees %d; want 10, 60, 30", a, p, f)
		}
		var kinds []string
		for _, entry := range ids {
			var kind string
			if err := d.Reader().QueryRowContext(ctx, `SELECT kind FROM journal_entries WHERE id = $1`, entry).Scan(&kind); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, kind)
		}
		if fmt.Sprint(kinds) != "[payment fee]" {
			t.Errorf("entries %v; want the ids in the order given", kinds)
		}

		before := book(t, d, id)
		if _, err := write(debitAndFee(6, 6)); !errors.Is(err, ledger.ErrInsufficientFunds) {
			t.Fatalf("6 + 6 from 10: %v; want ErrInsufficientFunds", err)
		}
		if after := book(t, d, id); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("the book changed from %+v to %+v", before, after)
		}
		checkInvariants(t, d)
	})
}

// TestPostRefusesThePostingThatBreaksItsBounds: when the posting its
// account refuses is not the first in account order, the error is still
// that posting's, and nothing of the entry is kept, on an entry whose
// accounts all exist as on one with a new account.
func TestPostRefusesThePostingThatBreaksItsBounds(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		id := fixture.Organization(t, d, "Acme").ID
		mustPost(t, d, deposit(id, "EUR", 100))
		available := ledger.OrgAccount(id, "EUR", ledger.Available)
		pending := ledger.OrgAccount(id, "EUR", ledger.Pending)
		fees := ledger.PlatformAccount(id, "EUR", ledger.Fees)
		mustPost(t, d, ledger.Entry{OrganizationID: &id, Kind: "payment", Description: "hold", Postings: []ledger.Posting{
			{Account: available, Amount: -40}, {Account: pending, Amount: 40}}})
		before := book(t, d, id)
		cases := []struct {
			name     string
			postings []ledger.Posting
		}{
			// available sorts before pending, fees between them.
			{"pending short, its accounts all there", []ledger.Posting{{available, 41}, {pending, -41}}},
			{"pending short, fees new", []ledger.Posting{{fees, 41}, {pending, -41}}},
			{"pending short, third of three", []ledger.Posting{{available, 20}, {fees, 21}, {pending, -41}}},
		}
		for _, c := range cases {
			_, err := post(d, ledger.Entry{OrganizationID: &id, Kind: "payment", Description: c.name, Postings: c.postings})
			if !errors.Is(err, ledger.ErrInsufficientFunds) {
				t.Errorf("%s: %v; want ErrInsufficientFunds", c.name, err)
			}
			if after := book(t, d, id); fmt.Sprint(after) != fmt.Sprint(before) {
				t.Errorf("%s: the book changed from %+v to %+v", c.name, before, after)
			}
		}
		checkInvariants(t, d)
	})
}

// TestConcurrentTransfersKeepTheBook: workers moving money back and forth
// among a few organizations at once (each transfer an entry and its two
// feed rows, as a payment) neither deadlock nor lose or make money: every
// transfer either commits or is refused for insufficient funds, and the
// book holds after.
func TestConcurrentTransfersKeepTheBook(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		const orgs, funding, workers, transfers = 4, 1000, 8, 40
		ids := make([]uuid.UUID, orgs)
		for i := range ids {
			ids[i] = fixture.Organization(t, d, fmt.Sprintf("Org %d", i)).ID
			mustPost(t, d, deposit(ids[i], "EUR", funding))
		}
		transfer := func(from, to uuid.UUID, amount int64) error {
			return d.Tx(ctx, func(tx *db.Tx) error {
				entry, err := ledger.Post(ctx, tx, ledger.Entry{OrganizationID: &from, Kind: "payment", Description: "transfer",
					Postings: []ledger.Posting{
						{Account: ledger.OrgAccount(from, "EUR", ledger.Available), Amount: -amount},
						{Account: ledger.OrgAccount(to, "EUR", ledger.Available), Amount: amount},
					}})
				if err != nil {
					return err
				}
				if _, err := ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: from, Type: "fiat_outgoing", EntryID: &entry,
					Direction: "out", Amount: amount, Currency: "EUR", Description: "transfer"}); err != nil {
					return err
				}
				_, err = ledger.Record(ctx, tx, ledger.Transaction{OrganizationID: to, Type: "deposit", EntryID: &entry,
					Direction: "in", Amount: amount, Currency: "EUR", Description: "transfer"})
				return err
			})
		}
		var wg sync.WaitGroup
		errs := make(chan error, workers*transfers)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range transfers {
					p := rand.Perm(orgs)
					if err := transfer(ids[p[0]], ids[p[1]], 1+rand.Int64N(400)); err != nil && !errors.Is(err, ledger.ErrInsufficientFunds) {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var total int64
		for _, id := range ids {
			total += balanceOf(t, d, ledger.OrgAccount(id, "EUR", ledger.Available))
		}
		if total != orgs*funding {
			t.Errorf("the organizations hold %d together; want %d", total, orgs*funding)
		}
		checkInvariants(t, d)
	})
}
