package audit_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/page"
)

var start = time.Date(2026, 3, 2, 9, 30, 0, 123456789, time.UTC)

// auditAppend records n entries for org, one transaction each, under an
// origin naming a person.
func auditAppend(t *testing.T, d *db.DB, org uuid.UUID, n int) {
	t.Helper()
	ctx := audit.WithOrigin(context.Background(), audit.Origin{
		Actor: audit.User(uuid.New(), "Ada Lovelace"), RequestID: "req-1", ClientAddress: "192.0.2.7"})
	for i := range n {
		err := d.Tx(ctx, func(tx *db.Tx) error {
			return audit.Record(ctx, tx, org, audit.PaymentExecuted, audit.Target{Type: "payment", ID: fmt.Sprint(i)})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

func verifyOK(t *testing.T, d *db.DB, org uuid.UUID, orgs int, entries int64) {
	t.Helper()
	rep, err := audit.Verify(context.Background(), d, org)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Broken) != 0 || rep.Organizations != orgs || rep.Entries != entries {
		t.Fatalf("verify = %+v, want %d organizations, %d entries, none broken", rep, orgs, entries)
	}
}

func TestChainAppendsAndVerifies(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		a := fixture.Organization(t, d, "Acme")
		b := fixture.Organization(t, d, "Bolt")
		auditAppend(t, d, a.ID, 3)
		clk.Advance(time.Minute)
		auditAppend(t, d, b.ID, 2)
		verifyOK(t, d, uuid.Nil, 2, 5)
		verifyOK(t, d, b.ID, 1, 2)

		// A change that rolls back leaves no entry and no gap.
		ctx := context.Background()
		err := d.Tx(ctx, func(tx *db.Tx) error {
			if err := audit.Record(ctx, tx, a.ID, audit.CardFrozen, audit.Target{Type: "card", ID: "c"}); err != nil {
				return err
			}
			return fmt.Errorf("the change fails")
		})
		if err == nil {
			t.Fatal("the failing transaction committed")
		}
		auditAppend(t, d, a.ID, 1)
		verifyOK(t, d, uuid.Nil, 2, 6)

		// The list reads newest first with the recorded fields.
		svc := audit.Service{DB: d}
		entries := auditList(t, svc, d, a.ID)
		if len(entries) != 4 || entries[0].Seq != 4 || entries[3].Seq != 1 {
			t.Fatalf("entries = %+v", entries)
		}
		e := entries[3]
		if e.Actor.Kind != audit.KindUser || e.Actor.Name != "Ada Lovelace" || e.Action != audit.PaymentExecuted ||
			e.Target != (audit.Target{Type: "payment", ID: "0"}) || *e.RequestID != "req-1" || *e.ClientAddress != "192.0.2.7" ||
			!e.OccurredAt.Equal(start.Truncate(time.Microsecond)) || len(e.Hash) != 64 {
			t.Fatalf("first entry = %+v", e)
		}
		if audit.ChainHash("", e) != e.Hash || audit.ChainHash(e.Hash, entries[2]) != entries[2].Hash {
			t.Fatal("the stored hashes are not the chain's")
		}
	})
}

// auditList reads every entry of org as one of its owners.
func auditList(t *testing.T, svc audit.Service, d *db.DB, org uuid.UUID) []audit.Entry {
	t.Helper()
	a := fixture.Join(t, d, org, uuid.NewString()+"@example.com", organization.Owner)
	out, err := svc.List(context.Background(), a, org, audit.Filter{}, page.Request{Limit: 99})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestVerifyNamesTheTamperedEntry edits the table behind the service's
// back (dropping or disabling the triggers that refuse it, as only the
// database's owner can) and expects verify to name exactly that entry.
func TestVerifyNamesTheTamperedEntry(t *testing.T) {
	cases := []struct {
		name    string
		edit    string // on entry seq 3 of 5
		blames  int64  // the seq verify names
		problem string
	}{
		{"action changed", `UPDATE audit_entries SET action = 'card.frozen' WHERE organization_id = $1 AND seq = 3`, 3, "hash mismatch"},
		{"hash changed", `UPDATE audit_entries SET hash = '` + strings.Repeat("0", 64) + `' WHERE organization_id = $1 AND seq = 3`, 3, "hash mismatch"},
		{"entry deleted", `DELETE FROM audit_entries WHERE organization_id = $1 AND seq = 3`, 4, "previous link"},
		{"last entry deleted", `DELETE FROM audit_entries WHERE organization_id = $1 AND seq = 5`, 0, "entries after seq 4 are missing"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixture.Each(t, start, func(t *testing.T, d *db.DB, _ *clock.Manual) {
				org := fixture.Organization(t, d, "Acme")
				other := fixture.Organization(t, d, "Bolt")
				auditAppend(t, d, org.ID, 5)
				auditAppend(t, d, other.ID, 2)
				ctx := context.Background()
				// The service cannot: the table refuses changes.
				err := d.Tx(ctx, func(tx *db.Tx) error { _, err := tx.ExecContext(ctx, c.edit, org.ID); return err })
				if err == nil || !strings.Contains(err.Error(), "append-only") {
					t.Fatalf("edit through the service's connection: %v, want refused", err)
				}
				auditTamper(t, d, c.edit, org.ID)

				rep, err := audit.Verify(ctx, d, uuid.Nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Broken) != 1 {
					t.Fatalf("broken = %+v, want one", rep.Broken)
				}
				b := rep.Broken[0]
				if b.OrganizationID != org.ID || b.Seq != c.blames || !strings.Contains(b.Problem, c.problem) {
					t.Fatalf("broken = %+v (%s), want seq %d: %s", b, b, c.blames, c.problem)
				}
				if c.blames != 0 {
					want := auditEntryID(t, d, org.ID, c.blames)
					if b.EntryID != want || !strings.Contains(b.String(), want.String()) {
						t.Fatalf("broken names %s, want %s", b, want)
					}
				}
			})
		})
	}
}

// auditTamper runs edit with the append-only triggers out of the way.
func auditTamper(t *testing.T, d *db.DB, edit string, org uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	err := d.Tx(ctx, func(tx *db.Tx) error {
		var stmts []string
		if d.Dialect() == db.Postgres {
			stmts = []string{`ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only`, edit,
				`ALTER TABLE audit_entries ENABLE TRIGGER audit_entries_append_only`}
		} else {
			stmts = []string{`DROP TRIGGER audit_entries_no_update`, `DROP TRIGGER audit_entries_no_delete`, edit}
		}
		for _, s := range stmts {
			args := []any{}
			if s == edit {
				args = append(args, org)
			}
			if _, err := tx.ExecContext(ctx, s, args...); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func auditEntryID(t *testing.T, d *db.DB, org uuid.UUID, seq int64) uuid.UUID {
	t.Helper()
	var id uuid.UUID
	err := d.Reader().QueryRowContext(context.Background(),
		`SELECT id FROM audit_entries WHERE organization_id = $1 AND seq = $2`, org, seq).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestConcurrentWritersKeepOneChain appends from many transactions of one
// organization at once; on PostgreSQL they really overlap, and the chain
// must still be one line (no two entries with one previous hash).
func TestConcurrentWritersKeepOneChain(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, _ *clock.Manual) {
		org := fixture.Organization(t, d, "Acme")
		const writers, each = 8, 10
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				for i := range each {
					err := d.Tx(ctx, func(tx *db.Tx) error {
						// other work of the change, before the audit entry
						if _, err := tx.ExecContext(ctx, `SELECT 1`); err != nil {
							return err
						}
						return audit.Record(ctx, tx, org.ID, audit.PaymentExecuted, audit.Target{Type: "payment", ID: fmt.Sprintf("%d-%d", w, i)})
					})
					if err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		verifyOK(t, d, org.ID, 1, writers*each)
	})
}

// TestEntriesOfOneTransactionAppendAtItsCommit: the entries a transaction
// records are appended as it commits, in the order recorded, in each of
// its organizations (several in one chain take consecutive seqs); an entry
// recorded in a savepoint that rolls back is not appended; the chains
// verify.
func TestEntriesOfOneTransactionAppendAtItsCommit(t *testing.T) {
	fixture.Each(t, start, func(t *testing.T, d *db.DB, clk *clock.Manual) {
		a := fixture.Organization(t, d, "Acme")
		b := fixture.Organization(t, d, "Bolt")
		auditAppend(t, d, a.ID, 1)
		// A name JSON escapes (<, >, &) and one it keeps as UTF-8: the chain
		// head's hash, computed by PostgreSQL, equals Verify's.
		ctx := audit.WithOrigin(context.Background(), audit.Origin{Actor: audit.User(uuid.New(), "Zoë Müller <zoe&co>")})
		err := d.Tx(ctx, func(tx *db.Tx) error {
			for i, org := range []uuid.UUID{b.ID, a.ID, b.ID, a.ID} {
				if err := audit.Record(ctx, tx, org, audit.CardFrozen, audit.Target{Type: "card", ID: fmt.Sprint(i)}); err != nil {
					return err
				}
			}
			_ = tx.Savepoint(ctx, func() error {
				if err := audit.Record(ctx, tx, a.ID, audit.CardUnfrozen, audit.Target{Type: "card", ID: "dropped"}); err != nil {
					return err
				}
				return fmt.Errorf("refused")
			})
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM audit_entries`).Scan(&n); err != nil || n != 1 {
				return fmt.Errorf("before commit %d entries (%v), want the 1 of before", n, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		verifyOK(t, d, uuid.Nil, 2, 5)
		svc := audit.Service{DB: d}
		var got []string
		for _, e := range auditList(t, svc, d, a.ID) {
			got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Target.ID))
		}
		if strings.Join(got, " ") != "3:3 2:1 1:0" {
			t.Fatalf("Acme's entries newest first = %v, want 3:3 2:1 1:0", got)
		}
		got = nil
		for _, e := range auditList(t, svc, d, b.ID) {
			got = append(got, fmt.Sprintf("%d:%s", e.Seq, e.Target.ID))
		}
		if strings.Join(got, " ") != "2:2 1:0" {
			t.Fatalf("Bolt's entries newest first = %v, want 2:2 1:0", got)
		}
	})
}
