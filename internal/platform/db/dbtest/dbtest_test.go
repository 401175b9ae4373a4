package dbtest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// A copy of the template holds every migration, and copies are independent:
// what one test writes another does not see, even when they run at once.
func TestMigratedCopiesAreReadyAndIndependent(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			for i := range 4 {
				t.Run(fmt.Sprint("copy", i), func(t *testing.T) {
					t.Parallel()
					ctx := context.Background()
					d := dbtest.Open(t, e.Migrated(t))
					if err := d.Ready(ctx); err != nil {
						t.Fatalf("Ready: %v", err)
					}
					var n int
					if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM organizations`).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n != 0 {
						t.Fatalf("copy %d starts with %d organizations, want 0", i, n)
					}
					if err := d.Tx(ctx, func(tx *db.Tx) error {
						_, err := tx.ExecContext(ctx, `INSERT INTO organizations (id, name, inserted_at, updated_at) VALUES ($1, 'x', $2, $2)`,
							uuid.New(), tx.Now())
						return err
					}); err != nil {
						t.Fatal(err)
					}
				})
			}
		})
	}
}

func BenchmarkNewDatabase(b *testing.B) {
	for _, e := range dbtest.Engines() {
		b.Run(e.Name+"/migrate", func(b *testing.B) {
			for range b.N {
				dbtest.Open(b, e.DSN(b))
			}
		})
		b.Run(e.Name+"/copy", func(b *testing.B) {
			for range b.N {
				dbtest.Open(b, e.Migrated(b))
			}
		})
	}
}
