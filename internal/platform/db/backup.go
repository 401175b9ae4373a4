package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrBackupNotSQLite is BackupSQLite asked to copy a PostgreSQL database,
// which its own tools (pg_dump) back up.
var ErrBackupNotSQLite = errors.New("database: backup copies an SQLite database; back PostgreSQL up with pg_dump")

// BackupSQLite writes a consistent copy of the SQLite database of dsn
// ("sqlite:PATH") to dest while other connections (a running server) keep
// writing: SQLite's VACUUM INTO reads one snapshot of the database in a
// single read transaction, so the copy holds every transaction committed
// before it began and nothing of one committed later, and writers are not
// held up (WAL). The copy is written to a temporary file beside dest
// (readable by its owner alone: it holds the database's secrets), checked,
// flushed to disk, then moved to dest; an existing dest is refused unless
// overwrite is set, so a half-written or stale file is never left at dest.
func BackupSQLite(ctx context.Context, dsn, dest string, overwrite bool) error {
	src, ok := strings.CutPrefix(dsn, "sqlite:")
	if !ok {
		if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
			return ErrBackupNotSQLite
		}
		return fmt.Errorf("database %q: expected sqlite:PATH", redactDSN(dsn))
	}
	srcInfo, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("backup: the database %s: %w", src, err)
	}
	if !srcInfo.Mode().IsRegular() {
		return fmt.Errorf("backup: the database %s is not a file", src)
	}
	if dest == "" {
		return errors.New("backup: no destination path")
	}
	if info, err := os.Stat(dest); err == nil {
		if os.SameFile(info, srcInfo) {
			return fmt.Errorf("backup: %s is the database itself", dest)
		}
		if !overwrite {
			return fmt.Errorf("backup: %s exists; choose another path or pass --force to replace it", dest)
		}
		if !info.Mode().IsRegular() {
			return fmt.Errorf("backup: %s exists and is not a file", dest)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}

	tmpFile, err := os.CreateTemp(filepath.Dir(dest), "."+filepath.Base(dest)+".*.tmp")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	tmp := tmpFile.Name()
	tmpFile.Close()
	done := false
	defer func() {
		if !done {
			os.Remove(tmp)
		}
	}()

	if err := vacuumInto(ctx, src, tmp); err != nil {
		return err
	}
	if err := checkCopy(ctx, tmp); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if overwrite {
		err = os.Rename(tmp, dest)
	} else {
		// A hard link fails when dest appeared meanwhile, where a rename
		// would replace it.
		err = os.Link(tmp, dest)
		if err == nil {
			os.Remove(tmp)
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("backup: %s exists; choose another path or pass --force to replace it", dest)
		}
		return fmt.Errorf("backup: %w", err)
	}
	done = true
	if err := syncFile(filepath.Dir(dest)); err != nil {
		return fmt.Errorf("backup: the copy is at %s but its directory was not flushed: %w", dest, err)
	}
	return nil
}

// vacuumInto copies the database at src into the empty file tmp.
func vacuumInto(ctx context.Context, src, tmp string) error {
	// A connection of its own that waits for a busy writer rather than
	// failing. It only reads the database (query_only would refuse VACUUM
	// INTO, which writes the other file).
	conn, err := sql.Open("sqlite", sqliteURI(src)+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	conn.SetMaxOpenConns(1)
	var tables int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'goose_db_version'`).Scan(&tables); err != nil {
		return fmt.Errorf("backup: read %s: %w", src, err)
	}
	if tables == 0 {
		return fmt.Errorf("backup: %s is not a Strongroom database (no migrations recorded)", src)
	}
	if _, err := conn.ExecContext(ctx, `VACUUM INTO $1`, tmp); err != nil {
		return fmt.Errorf("backup: copy %s: %w", src, err)
	}
	return nil
}

// checkCopy opens the copy and runs SQLite's quick check over it.
func checkCopy(ctx context.Context, path string) error {
	conn, err := sql.Open("sqlite", sqliteURI(path)+"?_pragma=query_only(1)")
	if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	defer conn.Close()
	var result string
	if err := conn.QueryRowContext(ctx, `PRAGMA quick_check`).Scan(&result); err != nil {
		return fmt.Errorf("backup: check the copy: %w", err)
	}
	if result != "ok" {
		return fmt.Errorf("backup: the copy fails SQLite's check: %s", result)
	}
	return nil
}

// syncFile flushes a file or directory to disk.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
