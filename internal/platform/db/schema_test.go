package db_test

import (
	"context"
	"database/sql"

	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

// schema is what both engines must agree on: tables, their columns with a
// type family and nullability, indexes (name, table, unique) and named
// constraints. Store code maps errors by constraint name, so a name present
// on one engine only is a bug waiting for the other.
type schema struct {
	columns     map[string]string // "table.column" → "family null|not null"
	indexes     map[string]string // index name → "table unique|plain"
	constraints map[string]string // constraint name → table
}

// TestSchemaIsTheSameOnBothEngines migrates SQLite and PostgreSQL and
// compares what they built.
func TestSchemaIsTheSameOnBothEngines(t *testing.T) {
	if os.Getenv(dbtest.PostgresEnv) == "" {
		t.Skip(dbtest.PostgresEnv + " is not set")
	}
	sqliteDSN, pgDSN := dbtest.SQLiteDSN(t), dbtest.PostgresDSN(t)
	dbtest.Open(t, sqliteDSN)
	dbtest.Open(t, pgDSN)

	lite := readSQLiteSchema(t, strings.TrimPrefix(sqliteDSN, "sqlite:"))
	pg := readPostgresSchema(t, pgDSN)
	if len(lite.columns) == 0 || len(pg.columns) == 0 {
		t.Fatalf("read no columns (sqlite %d, postgres %d)", len(lite.columns), len(pg.columns))
	}
	for column, why := range engineSpecific {
		if _, ok := pg.columns[column]; !ok {
			t.Errorf("column %s is listed as PostgreSQL-only (%s) but PostgreSQL lacks it", column, why)
		}
		delete(pg.columns, column)
	}
	for index, why := range engineSpecificIndexes {
		if _, ok := pg.indexes[index]; !ok {
			t.Errorf("index %s is listed as PostgreSQL-only (%s) but PostgreSQL lacks it", index, why)
		}
		delete(pg.indexes, index)
	}
	compare(t, "column", lite.columns, pg.columns)
	compare(t, "index", lite.indexes, pg.indexes)
	compare(t, "constraint", lite.constraints, pg.constraints)
}

// engineSpecific lists the columns one engine has for a reason of its own.
var engineSpecific = map[string]string{
	"domain_events.tx_id": "the realtime tail reads only events of transactions older than every running one; SQLite has one writer",
}

// engineSpecificIndexes lists the indexes over engineSpecific columns.
var engineSpecificIndexes = map[string]string{
	"domain_events_position_idx": "the realtime tail reads events in (tx_id, seq) order; SQLite follows seq, its primary key",
}

func compare(t *testing.T, what string, lite, pg map[string]string) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(lite)) {
		switch p, ok := pg[k]; {
		case !ok:
			t.Errorf("%s %s: only on SQLite (%s)", what, k, lite[k])
		case p != lite[k]:
			t.Errorf("%s %s: SQLite %q, PostgreSQL %q", what, k, lite[k], p)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(pg)) {
		if _, ok := lite[k]; !ok {
			t.Errorf("%s %s: only on PostgreSQL (%s)", what, k, pg[k])
		}
	}
}

// family groups declared types that hold the same values: SQLite stores
// UUIDs as text and booleans as integers.
func family(declared string) string {
	switch t := strings.ToLower(declared); t {
	case "text", "uuid", "character varying", "jsonb", "json":
		return "text"
	case "integer", "bigint", "smallint", "boolean", "xid8":
		return "integer"
	case "timestamp", "timestamp with time zone", "timestamptz":
		return "timestamp"
	case "date":
		return "date"
	case "blob", "bytea":
		return "bytes"
	default:
		return "unknown:" + t
	}
}

func nullability(notNull bool) string {
	if notNull {
		return "not null"
	}
	return "null"
}

func uniqueness(unique bool) string {
	if unique {
		return "unique"
	}
	return "plain"
}

// namedConstraint finds "CONSTRAINT name" clauses in SQLite's stored DDL,
// the only place SQLite keeps constraint names.
var namedConstraint = regexp.MustCompile(`(?i)\bCONSTRAINT\s+"?(\w+)"?`)

func readSQLiteSchema(t *testing.T, path string) schema {
	t.Helper()
	conn, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	s := schema{columns: map[string]string{}, indexes: map[string]string{}, constraints: map[string]string{}}
	tables := map[string]string{} // name → DDL
	rows, err := conn.QueryContext(ctx, `SELECT name, sql FROM sqlite_master
		WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version'`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		tables[name] = ddl
	}
	rows.Close()
	for table, ddl := range tables {
		for _, m := range namedConstraint.FindAllStringSubmatch(ddl, -1) {
			s.constraints[m[1]] = table
		}
		cols, err := conn.QueryContext(ctx, `SELECT name, type, "notnull", pk FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for cols.Next() {
			var name, typ string
			var notNull, pk int
			if err := cols.Scan(&name, &typ, &notNull, &pk); err != nil {
				t.Fatal(err)
			}
			s.columns[table+"."+name] = family(typ) + " " + nullability(notNull == 1 || pk > 0)
			if pk > 0 {
				// PostgreSQL names the primary key; SQLite's error mapping calls it the same.
				s.constraints[table+"_pkey"] = table
			}
		}
		cols.Close()
		idx, err := conn.QueryContext(ctx, `SELECT name, "unique", origin FROM pragma_index_list(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for idx.Next() {
			var name, origin string
			var unique int
			if err := idx.Scan(&name, &unique, &origin); err != nil {
				t.Fatal(err)
			}
			if origin == "pk" {
				continue // the primary key, recorded with the columns
			}
			s.indexes[name] = table + " " + uniqueness(unique == 1)
		}
		idx.Close()
	}
	return s
}

func readPostgresSchema(t *testing.T, dsn string) schema {
	t.Helper()
	conn, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	s := schema{columns: map[string]string{}, indexes: map[string]string{}, constraints: map[string]string{}}
	scanAll := func(query string, each func(r *sql.Rows) error) {
		t.Helper()
		rows, err := conn.QueryContext(ctx, query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				t.Fatal(err)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	scanAll(`SELECT c.table_name, c.column_name, c.data_type, c.is_nullable = 'NO'
		FROM information_schema.columns c JOIN information_schema.tables t
		  ON t.table_schema = c.table_schema AND t.table_name = c.table_name AND t.table_type = 'BASE TABLE'
		WHERE c.table_schema = current_schema() AND c.table_name <> 'goose_db_version'`,
		func(r *sql.Rows) error {
			var table, column, typ string
			var notNull bool
			if err := r.Scan(&table, &column, &typ, &notNull); err != nil {
				return err
			}
			s.columns[table+"."+column] = family(typ) + " " + nullability(notNull)
			return nil
		})
	// Indexes that back a constraint are compared as constraints.
	scanAll(`SELECT i.relname, t.relname, x.indisunique
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
		WHERE t.relnamespace = current_schema()::regnamespace AND t.relname <> 'goose_db_version'
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)`,
		func(r *sql.Rows) error {
			var index, table string
			var unique bool
			if err := r.Scan(&index, &table, &unique); err != nil {
				return err
			}
			s.indexes[index] = table + " " + uniqueness(unique)
			return nil
		})
	// Foreign keys are left out: SQLite reports them without a name, so no
	// code can map them by name.
	scanAll(`SELECT c.conname, t.relname FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
		WHERE c.connamespace = current_schema()::regnamespace AND c.contype IN ('c', 'u', 'p', 'x')
		  AND t.relname <> 'goose_db_version'`,
		func(r *sql.Rows) error {
			var name, table string
			if err := r.Scan(&name, &table); err != nil {
				return err
			}
			s.constraints[name] = table
			return nil
		})
	return s
}
