package db_test

import (
	"context"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// Migrations lists every migration, pending on an empty database and applied
// (with its time) once migrated; MigrateReport tells what it applied, and
// nothing the second time.
func TestStoreMigrationStatus(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			d, err := db.Open(ctx, e.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			before, err := d.Migrations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(before) < 2 {
				t.Fatalf("%d migrations listed", len(before))
			}
			for i, m := range before {
				if m.Applied || !m.AppliedAt.IsZero() {
					t.Errorf("%05d %s is applied on an empty database", m.Version, m.Name)
				}
				if m.Name == "" || (i > 0 && m.Version <= before[i-1].Version) {
					t.Errorf("migration %d: %+v (names and increasing versions expected)", i, m)
				}
			}
			if before[0].Version != 1 || before[0].Name != "foundation" {
				t.Errorf("the first migration is %05d %q, want 00001 foundation", before[0].Version, before[0].Name)
			}

			r, err := d.MigrateReport(ctx)
			if err != nil {
				t.Fatal(err)
			}
			last := before[len(before)-1].Version
			if len(r.Applied) != len(before) || r.Version != last {
				t.Fatalf("applied %d, now at %d; want %d, at %d", len(r.Applied), r.Version, len(before), last)
			}
			after, err := d.Migrations(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range after {
				if !m.Applied || m.AppliedAt.IsZero() {
					t.Errorf("%05d %s: applied %v at %v after migrating", m.Version, m.Name, m.Applied, m.AppliedAt)
				}
			}
			again, err := d.MigrateReport(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(again.Applied) != 0 || again.Version != last {
				t.Fatalf("second run applied %d, at %d; want 0, at %d", len(again.Applied), again.Version, last)
			}
		})
	}
}
