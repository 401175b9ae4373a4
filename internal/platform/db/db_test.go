package db_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

const insertStatement = `INSERT INTO organizations (id, name, status, inserted_at, updated_at) VALUES ($1, $2, $3, $4, $4)`

// ownTx is a Querier whose every statement is a transaction of its own
// (the read handle cannot write).
type ownTx struct {
	db.Reader
	d *db.DB
}

func (o ownTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.InTx(ctx, o.d, func(tx *db.Tx) (sql.Result, error) { return tx.ExecContext(ctx, query, args...) })
}

func insertOrg(ctx context.Context, q db.Querier, id uuid.UUID, status string) error {
	_, err := q.ExecContext(ctx, insertStatement, id, "Acme", status, time.Now().UTC())
	return err
}

func insertUser(ctx context.Context, q db.Querier, id uuid.UUID, email string) error {
	now := time.Now().UTC()
	_, err := q.ExecContext(ctx, `INSERT INTO users (id, email, email_normalized, password_hash, inserted_at, updated_at)
		VALUES ($1, $2, $2, 'x', $3, $3)`, id, email, now)
	return err
}

// It migrates empty databases (not copies of a migrated one, as most tests
// get), so every migration runs here on both engines.
func TestStoreMigrateIsReadyAndIdempotent(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			d := dbtest.Open(t, e.DSN(t))
			ctx := context.Background()
			if err := d.Ready(ctx); err != nil {
				t.Fatalf("Ready after migrate: %v", err)
			}
			if err := d.Migrate(ctx); err != nil {
				t.Fatalf("second Migrate: %v", err)
			}
		})
	}
}

func TestStoreReadyReportsPendingMigrations(t *testing.T) {
	for _, e := range dbtest.Engines() {
		t.Run(e.Name, func(t *testing.T) {
			ctx := context.Background()
			d, err := db.Open(ctx, e.DSN(t))
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if err := d.Ready(ctx); err == nil {
				t.Fatal("Ready on an unmigrated database: want an error")
			}
		})
	}
}

func TestStoreTxCommitsAndRollsBack(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		kept, dropped := uuid.New(), uuid.New()
		if err := d.Tx(ctx, func(tx *db.Tx) error { return insertOrg(ctx, tx, kept, "active") }); err != nil {
			t.Fatal(err)
		}
		boom := errors.New("boom")
		err := d.Tx(ctx, func(tx *db.Tx) error {
			if err := insertOrg(ctx, tx, dropped, "active"); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Tx error = %v, want boom", err)
		}
		func() {
			defer func() { _ = recover() }()
			_ = d.Tx(ctx, func(tx *db.Tx) error {
				_ = insertOrg(ctx, tx, dropped, "active")
				panic("mid-transaction")
			})
		}()
		var n int
		if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM organizations`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("organizations = %d, want only the committed one", n)
		}
	})
}

func TestStoreConstraintsMapToNames(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		q := ownTx{d.Reader(), d}
		org, user := uuid.New(), uuid.New()
		if err := insertOrg(ctx, q, org, "active"); err != nil {
			t.Fatal(err)
		}
		if err := insertUser(ctx, q, user, "a@example.com"); err != nil {
			t.Fatal(err)
		}
		cases := []struct {
			name string
			kind db.ConstraintKind
			err  error
		}{
			{"users_email_key", db.Unique, insertUser(ctx, q, uuid.New(), "a@example.com")},
			{"organizations_status_check", db.Check, insertOrg(ctx, q, uuid.New(), "sleeping")},
			{"organizations_pkey", db.Unique, insertOrg(ctx, q, org, "active")},
		}
		member := func(orgID, userID uuid.UUID) error {
			_, err := q.ExecContext(ctx, `INSERT INTO memberships (organization_id, user_id, role, inserted_at) VALUES ($1, $2, 'owner', $3)`,
				orgID, userID, time.Now().UTC())
			return err
		}
		if err := member(org, user); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			name string
			kind db.ConstraintKind
			err  error
		}{"memberships_pkey", db.Unique, member(org, user)})
		for _, c := range cases {
			ce, ok := db.Constraint(c.err)
			if !ok {
				t.Errorf("%s: error %v is not a constraint violation", c.name, c.err)
				continue
			}
			if ce.Name != c.name || ce.Kind != c.kind {
				t.Errorf("violation = %s %q, want %s %q", ce.Kind, ce.Name, c.kind, c.name)
			}
			if !db.IsConstraint(c.err, c.name) {
				t.Errorf("IsConstraint(%q) = false", c.name)
			}
		}
		fkErr := member(uuid.New(), user)
		if ce, ok := db.Constraint(fkErr); !ok || ce.Kind != db.ForeignKey {
			t.Errorf("unknown organization in membership: %v, want a foreign-key violation", fkErr)
		}
	})
}

func TestStoreTimesRoundTripInUTC(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, d *db.DB) {
		ctx := context.Background()
		at := time.Date(2026, 11, 22, 10, 30, 15, 123456000, time.UTC)
		id := uuid.New()
		if _, err := (ownTx{d.Reader(), d}).ExecContext(ctx, `INSERT INTO organizations (id, name, inserted_at, updated_at) VALUES ($1, 'x', $2, $2)`, id, at); err != nil {
			t.Fatal(err)
		}
		var got time.Time
		var gotID uuid.UUID
		var requires bool
		if err := d.Reader().QueryRowContext(ctx, `SELECT id, inserted_at, requires_totp FROM organizations WHERE id = $1`, id).Scan(&gotID, &got, &requires); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(at) || gotID != id || requires {
			t.Fatalf("round trip = %v %v %v, want %v %v false", gotID, got, requires, id, at)
		}
	})
}

func TestOpenRefusesUnknownDatabaseKinds(t *testing.T) {
	if _, err := db.Open(context.Background(), "mysql://root:hunter2@localhost/x"); err == nil {
		t.Fatal("want an error for a mysql URL")
	}
}

// On SQLite the read handle's connections are query-only: even a write
// sent as a query (INSERT … RETURNING) fails and changes nothing, so every
// write goes through the single writer.
func TestSQLiteReaderCannotWrite(t *testing.T) {
	d := dbtest.Open(t, dbtest.MigratedSQLiteDSN(t))
	ctx := context.Background()
	var id uuid.UUID
	err := d.Reader().QueryRowContext(ctx, `INSERT INTO organizations (id, name, inserted_at, updated_at) VALUES ($1, 'x', $2, $2) RETURNING id`,
		uuid.New(), time.Now().UTC()).Scan(&id)
	if err == nil {
		t.Fatal("the read handle wrote a row")
	}
	var n int
	if err := d.Reader().QueryRowContext(ctx, `SELECT count(*) FROM organizations`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("organizations = %d, %v; want none", n, err)
	}
}

// A file path is a name, not a URI: a '#', '?' or '%' in a directory
// (a subtest named "#00") must not cut the name short or become a query.
func TestSQLiteOpensPathsWithURICharacters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "case#00 ?x=1 50%")
	path := filepath.Join(dir, "strongroom.db")
	d, err := db.Open(ctx, "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not where it was named: %v", err)
	}
}
