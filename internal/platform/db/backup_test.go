package db_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// A backup holds what was committed, is the owner's alone, refuses to
// replace a file unless told to, and leaves no temporary file behind.
func TestStoreBackupSQLite(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.MigratedSQLiteDSN(t)
	d := dbtest.Open(t, dsn)
	if err := d.Tx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ('backup_probe', 'first')`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	dest := filepath.Join(dir, "copy.db")
	if err := db.BackupSQLite(ctx, dsn, dest, false); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(dest)
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm&0o077 != 0 {
		t.Errorf("the copy's mode is %v; it holds secrets and must be the owner's alone", perm)
	}
	if got := backupProbe(t, dest); got != "first" {
		t.Fatalf("the copy holds %q, want the committed row", got)
	}

	if err := d.Tx(ctx, func(tx *db.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE settings SET value = 'second' WHERE key = 'backup_probe'`)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	err = db.BackupSQLite(ctx, dsn, dest, false)
	if err == nil || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("an existing destination: got %v, want a refusal naming --force", err)
	}
	if got := backupProbe(t, dest); got != "first" {
		t.Fatalf("a refused backup changed the existing file: %q", got)
	}
	if err := db.BackupSQLite(ctx, dsn, dest, true); err != nil {
		t.Fatal(err)
	}
	if got := backupProbe(t, dest); got != "second" {
		t.Fatalf("with overwrite the copy holds %q, want the newer row", got)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "copy.db" && !strings.HasPrefix(e.Name(), "copy.db-") {
			t.Errorf("left behind in the destination's directory: %s", e.Name())
		}
	}

	if err := db.BackupSQLite(ctx, dsn, strings.TrimPrefix(dsn, "sqlite:"), true); err == nil {
		t.Error("a backup onto the database itself was not refused")
	}
	if err := db.BackupSQLite(ctx, "sqlite:"+filepath.Join(dir, "missing.db"), filepath.Join(dir, "x.db"), false); err == nil {
		t.Error("a backup of a database that does not exist was not refused")
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("backing up a missing database created it")
	}
	if err := db.BackupSQLite(ctx, "postgres://app@127.0.0.1:1/x", filepath.Join(dir, "pg.db"), false); !errors.Is(err, db.ErrBackupNotSQLite) {
		t.Errorf("a PostgreSQL database: got %v, want ErrBackupNotSQLite", err)
	}
}

// backupProbe opens a backup as the server would (migrating it) and reads
// the probe row.
func backupProbe(t *testing.T, path string) string {
	t.Helper()
	copied, err := db.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer copied.Close()
	if err := copied.Ready(context.Background()); err != nil {
		t.Fatalf("the copy is not ready: %v", err)
	}
	var v string
	if err := copied.Reader().QueryRowContext(context.Background(), `SELECT value FROM settings WHERE key = 'backup_probe'`).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}
