package db

import (
	"context"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
)

// Migration is one of the embedded migrations and whether the database
// holds it.
type Migration struct {
	Version int64
	// Name is the file's name without its number and extension:
	// 00039_payments_status_idx.sql → payments_status_idx.
	Name    string
	Applied bool
	// AppliedAt is when it was applied, as the database recorded it (zero
	// when pending).
	AppliedAt time.Time
}

// MigrateResult is what MigrateReport did.
type MigrateResult struct {
	// Applied are the migrations applied now, in order (none when the
	// database was up to date).
	Applied []Migration
	// Version is the newest migration the database holds now.
	Version int64
}

// MigrateReport applies pending migrations, each in its own transaction, and
// tells which it applied. On PostgreSQL instances starting at once take
// turns (an advisory lock of the schema); the later ones find nothing to do.
func (d *DB) MigrateReport(ctx context.Context) (MigrateResult, error) {
	results, err := d.migrations.Up(ctx)
	if err != nil {
		return MigrateResult{}, fmt.Errorf("database: migrate: %w", err)
	}
	var r MigrateResult
	for _, res := range results {
		r.Applied = append(r.Applied, Migration{Version: res.Source.Version, Name: migrationName(res.Source.Path), Applied: true})
	}
	if r.Version, err = d.migrations.GetDBVersion(ctx); err != nil {
		return MigrateResult{}, fmt.Errorf("database: migrate: %w", err)
	}
	if d.dialect == SQLite {
		if err := loadSQLiteUniqueIndexes(ctx, d.read); err != nil {
			return MigrateResult{}, err
		}
	}
	return r, nil
}

// Migrations lists every embedded migration in order, applied or pending.
// It changes nothing but goose's version table, which it creates in an
// empty database (every migration is then pending).
func (d *DB) Migrations(ctx context.Context) ([]Migration, error) {
	status, err := d.migrations.Status(ctx)
	if err != nil {
		return nil, fmt.Errorf("database: migration status: %w", err)
	}
	out := make([]Migration, 0, len(status))
	for _, s := range status {
		m := Migration{Version: s.Source.Version, Name: migrationName(s.Source.Path), Applied: s.State == goose.StateApplied}
		if m.Applied && !s.AppliedAt.IsZero() {
			m.AppliedAt = s.AppliedAt.UTC()
		}
		out = append(out, m)
	}
	return out, nil
}

// migrationName is a migration file's name without its number and extension.
func migrationName(file string) string {
	name := strings.TrimSuffix(path.Base(file), path.Ext(file))
	if _, rest, ok := strings.Cut(name, "_"); ok {
		return rest
	}
	return name
}
