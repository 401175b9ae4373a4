package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrNotFound is returned by store code when a row does not exist.
var ErrNotFound = sql.ErrNoRows

// ConstraintKind says what sort of constraint a write violated.
type ConstraintKind string

// The kinds of constraint violation both engines report.
const (
	Unique     ConstraintKind = "unique"
	ForeignKey ConstraintKind = "foreign_key"
	Check      ConstraintKind = "check"
	NotNull    ConstraintKind = "not_null"
)

// ConstraintError is a write refused by a database constraint. Name is the
// constraint's (or unique index's) name from the migrations, identical on
// both engines, so store code maps violations by name, never by message.
type ConstraintError struct {
	Kind ConstraintKind
	Name string
	err  error
}

func (e *ConstraintError) Error() string {
	return fmt.Sprintf("%s constraint %q violated: %v", e.Kind, e.Name, e.err)
}

func (e *ConstraintError) Unwrap() error { return e.err }

// Constraint returns the constraint violation err reports, if it reports one.
func Constraint(err error) (*ConstraintError, bool) {
	var ce *ConstraintError
	if errors.As(err, &ce) {
		return ce, true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		kind, ok := map[string]ConstraintKind{
			"23505": Unique, "23503": ForeignKey, "23514": Check, "23502": NotNull,
		}[pgErr.Code]
		if !ok {
			return nil, false
		}
		name := pgErr.ConstraintName
		if kind == NotNull {
			name = pgErr.TableName + "." + pgErr.ColumnName
		}
		return &ConstraintError{Kind: kind, Name: name, err: err}, true
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		return sqliteConstraint(sqErr)
	}
	return nil, false
}

// IsConstraint reports whether err violates the constraint called name.
func IsConstraint(err error, name string) bool {
	ce, ok := Constraint(err)
	return ok && ce.Name == name
}

// SQLite names only CHECK constraints in its messages; a UNIQUE violation
// lists the columns instead ("UNIQUE constraint failed: users.email_normalized").
// Migrate reads the unique indexes from the schema so the columns map back to
// the index name, the same name PostgreSQL reports.
var (
	sqliteUniqueMu    sync.RWMutex
	sqliteUniqueNames = map[string]string{}
)

var sqliteConstraintDetail = regexp.MustCompile(`^.*constraint failed: (.+?)(?: \(\d+\))?$`)

func sqliteConstraint(e *sqlite.Error) (*ConstraintError, bool) {
	var kind ConstraintKind
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		kind = Unique
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		kind = ForeignKey
	case sqlite3.SQLITE_CONSTRAINT_CHECK:
		kind = Check
	case sqlite3.SQLITE_CONSTRAINT_NOTNULL:
		kind = NotNull
	default:
		return nil, false
	}
	var detail string
	if m := sqliteConstraintDetail.FindStringSubmatch(e.Error()); m != nil {
		detail = m[1]
	}
	name := detail
	if kind == Unique {
		sqliteUniqueMu.RLock()
		if n, ok := sqliteUniqueNames[detail]; ok {
			name = n
		}
		sqliteUniqueMu.RUnlock()
	}
	return &ConstraintError{Kind: kind, Name: name, err: e}, true
}

func loadSQLiteUniqueIndexes(ctx context.Context, q *sql.DB) error {
	rows, err := q.QueryContext(ctx, `
		SELECT m.tbl_name, il.name, ii.name
		FROM sqlite_master m
		JOIN pragma_index_list(m.tbl_name) il
		JOIN pragma_index_info(il.name) ii
		WHERE m.type = 'table' AND il."unique" = 1
		ORDER BY m.tbl_name, il.name, ii.seqno`)
	if err != nil {
		return fmt.Errorf("database: read unique indexes: %w", err)
	}
	defer rows.Close()
	columns := map[string][]string{}
	for rows.Next() {
		var table, index string
		var column *string // NULL for an expression, which SQLite reports by index name instead
		if err := rows.Scan(&table, &index, &column); err != nil {
			return err
		}
		if column == nil {
			continue
		}
		columns[index] = append(columns[index], table+"."+*column)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	sqliteUniqueMu.Lock()
	defer sqliteUniqueMu.Unlock()
	for index, cols := range columns {
		// Primary keys appear as sqlite_autoindex_<table>_N; call them <table>_pkey like PostgreSQL.
		name := index
		if strings.HasPrefix(index, "sqlite_autoindex_") {
			name = strings.SplitN(cols[0], ".", 2)[0] + "_pkey"
		}
		sqliteUniqueNames[strings.Join(cols, ", ")] = name
	}
	return nil
}
