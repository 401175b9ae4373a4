package db_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

func TestObserveQueriesSeesReadsAndTransactionsUntilStopped(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		var mu sync.Mutex
		var seen []string
		var seenArgs [][]any
		stop := db.ObserveQueries(func(q string, args []any) {
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, q)
			seenArgs = append(seenArgs, slices.Clone(args))
		})
		const read = `SELECT count(*) FROM organizations WHERE name = $1`
		const write = `SELECT count(*) FROM organizations WHERE name <> $1`
		var n int
		if err := d.Reader().QueryRowContext(ctx, read, "Acme").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if err := d.Tx(ctx, func(tx *db.Tx) error {
			return tx.QueryRowContext(ctx, write, "Bcme").Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		stop()
		if err := d.Reader().QueryRowContext(ctx, read, "after").Scan(&n); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if !slices.Equal(seen, []string{read, write}) {
			t.Fatalf("observed %q, want the read and the transaction's query only", seen)
		}
		if seenArgs[0][0] != "Acme" || seenArgs[1][0] != "Bcme" {
			t.Errorf("observed arguments %v", seenArgs)
		}
	})
}
