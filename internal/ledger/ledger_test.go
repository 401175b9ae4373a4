package ledger_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// TestBalancesStopAtTheEdgeOfInt64: a posting that would take a balance past
// ±math.MaxInt64 is refused with ErrBalanceLimit and changes nothing, on
// both engines (PostgreSQL used to fail the statement, SQLite to store a
// float); a customer balance still never goes below zero.
func TestBalancesStopAtTheEdgeOfInt64(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
		org, _ := fixture.Member(t, d, now, organization.Owner)
		move := func(amount int64) error {
			return d.Tx(ctx, func(tx *db.Tx) error {
				_, err := ledger.Post(ctx, tx, now, ledger.Entry{OrganizationID: &org.ID, Kind: "deposit", Description: "test",
					Postings: []ledger.Posting{
						{Account: ledger.PlatformAccount("EUR", ledger.World), Amount: -amount},
						{Account: ledger.OrgAccount(org.ID, "EUR", ledger.Available), Amount: amount},
					}})
				return err
			})
		}
		if err := move(math.MaxInt64 - 1); err != nil {
			t.Fatal(err)
		}
		if err := move(2); !errors.Is(err, ledger.ErrBalanceLimit) {
			t.Fatalf("past the edge: %v; want ErrBalanceLimit", err)
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
		if err := ledger.CheckInvariants(ctx, d.Reader()); err != nil {
			t.Fatal(err)
		}
	})
}
