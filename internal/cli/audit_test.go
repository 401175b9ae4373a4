package cli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/audit"
	"github.com/strongroom/strongroom/internal/fixture"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// TestAuditVerifyExitCodes runs `strongroom audit verify` on a database
// with two organizations' chains: 0 while they hold, 1 naming the entry
// once one is edited behind the service's back, 2 for a bad command line.
func TestAuditVerifyExitCodes(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.Migrated(t)
			d := dbtest.Open(t, dsn)
			ctx := context.Background()
			acme := fixture.Organization(t, d, "Acme")
			bolt := fixture.Organization(t, d, "Bolt")
			for i, org := range []uuid.UUID{acme.ID, acme.ID, acme.ID, bolt.ID} {
				err := d.Tx(ctx, func(tx *db.Tx) error {
					return audit.Record(ctx, tx, org, audit.CardFrozen, audit.Target{Type: "card", ID: fmt.Sprint(i)})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			run := func(args ...string) (int, string, string) {
				var out, errw bytes.Buffer
				getenv := func(k string) string {
					if k == "STRONGROOM_DATABASE" {
						return dsn
					}
					return ""
				}
				code := Run(ctx, args, getenv, strings.NewReader(""), &out, &errw)
				return code, out.String(), errw.String()
			}
			if code, out, errw := run("audit", "verify"); code != ExitOK || !strings.Contains(out, "verified 4 entries of 2 organizations") {
				t.Fatalf("verify: %d %q %q", code, out, errw)
			}
			if code, out, _ := run("audit", "verify", "--organization", bolt.ID.String()); code != ExitOK || !strings.Contains(out, "verified 1 entries of 1 organizations") {
				t.Fatalf("verify one: %d %q", code, out)
			}
			for _, args := range [][]string{{"audit"}, {"audit", "check"}, {"audit", "verify", "--organization", "acme"}, {"audit", "verify", "extra"}} {
				if code, _, _ := run(args...); code != ExitUsage {
					t.Fatalf("%v: exit %d, want %d", args, code, ExitUsage)
				}
			}

			// Edit the second entry's action as the database's owner would.
			var id uuid.UUID
			var at time.Time
			err := d.Tx(ctx, func(tx *db.Tx) error {
				stmts := []string{`DROP TRIGGER audit_entries_no_update`}
				if d.Dialect() == db.Postgres {
					stmts = []string{`ALTER TABLE audit_entries DISABLE TRIGGER audit_entries_append_only`}
				}
				for _, s := range stmts {
					if _, err := tx.ExecContext(ctx, s); err != nil {
						return err
					}
				}
				return tx.QueryRowContext(ctx, `UPDATE audit_entries SET action = 'card.unfrozen'
					WHERE organization_id = $1 AND seq = 2 RETURNING id, occurred_at`, acme.ID).Scan(&id, &at)
			})
			if err != nil {
				t.Fatal(err)
			}
			code, out, errw := run("audit", "verify")
			if code != ExitError || !strings.Contains(out, "organization "+acme.ID.String()+": entry "+id.String()) ||
				!strings.Contains(out, "hash mismatch") || !strings.Contains(out, at.UTC().Format(time.RFC3339Nano)) ||
				strings.Contains(out, bolt.ID.String()) {
				t.Fatalf("verify after the edit: %d %q %q", code, out, errw)
			}
			if code, _, _ := run("audit", "verify", "--organization", bolt.ID.String()); code != ExitOK {
				t.Fatalf("the other organization's chain: exit %d", code)
			}
		})
	}
}
