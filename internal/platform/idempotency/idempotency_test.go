package idempotency_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/idempotency"
)

type payout struct {
	ID     string
	Amount int64
}

func TestKeyReplaysItsFirstResultForADay(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			clk := clock.NewManual(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
			d := dbtest.Open(t, e.Migrated(t), db.WithClock(clk))
			ctx := context.Background()
			created := 0
			do := func(k idempotency.Key, amount int64) (payout, bool, error) {
				var replayed bool
				out, err := db.InTx(ctx, d, func(tx *db.Tx) (payout, error) {
					p, r, err := idempotency.Do(ctx, tx, k, func() (payout, error) {
						created++
						return payout{ID: "p" + string(rune('0'+created)), Amount: amount}, nil
					})
					replayed = r
					return p, err
				})
				return out, replayed, err
			}
			hash := func(v any) string {
				h, err := idempotency.HashInput(v)
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			k := idempotency.Key{Scope: "organization:a", Key: "inv-118", InputHash: hash(map[string]int{"amount": 100})}

			first, replayed, err := do(k, 100)
			if err != nil || replayed || first.ID != "p1" {
				t.Fatalf("first = %+v, %v, %v", first, replayed, err)
			}
			again, replayed, err := do(k, 100)
			if err != nil || !replayed || again != first || created != 1 {
				t.Fatalf("replay = %+v, %v, %v (created %d); want the first result", again, replayed, err, created)
			}

			other := k
			other.InputHash = hash(map[string]int{"amount": 101})
			if _, _, err := do(other, 101); !apierr.Is(err, apierr.IdempotencyKeyReused) {
				t.Fatalf("another input under the key: %v, want idempotency_key_reused", err)
			}
			elsewhere := k
			elsewhere.Scope = "organization:b"
			if p, replayed, err := do(elsewhere, 100); err != nil || replayed || p.ID != "p2" {
				t.Fatalf("same key in another scope = %+v, %v, %v; want a new result", p, replayed, err)
			}

			clk.Advance(idempotency.Window)
			if p, replayed, err := do(k, 100); err != nil || replayed || p.ID != "p3" {
				t.Fatalf("after the window = %+v, %v, %v; want a new result", p, replayed, err)
			}
		})
	}
}

func TestFailedCreateStoresNothing(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		k := idempotency.Key{Scope: "organization:a", Key: "k", InputHash: "h"}
		refused := errors.New("refused")
		_, err := db.InTx(ctx, d, func(tx *db.Tx) (payout, error) {
			p, _, err := idempotency.Do(ctx, tx, k, func() (payout, error) { return payout{}, refused })
			return p, err
		})
		if !errors.Is(err, refused) {
			t.Fatalf("Do = %v", err)
		}
		_, err = db.InTx(ctx, d, func(tx *db.Tx) (bool, error) {
			_, ok, err := idempotency.Replay[payout](ctx, tx, k)
			if ok {
				t.Error("a failed create left a record")
			}
			return ok, err
		})
		if err != nil {
			t.Fatal(err)
		}
	})
}
