package stepup

import (
	"context"
	"regexp"
	"strconv"

	"github.com/strongroom/strongroom/internal/platform/db"
)

// statement is one SQL statement with its arguments, its placeholders
// numbered from $1.
type statement struct {
	query string
	args  []any
}

// placeholder matches a $n placeholder (the statements given to
// execTogether hold no $ in a literal).
var placeholder = regexp.MustCompile(`\$(\d+)`)

// execTogether runs independent data-modifying statements in tx, in order,
// as one: on PostgreSQL as one round trip, every statement but the last a
// data-modifying WITH query of the last (each runs once and to completion,
// on the statement's one snapshot, and foreign keys are checked at its end,
// so a row may reference one inserted by an earlier statement); on SQLite,
// which has no data-modifying WITH and no round trips, one after another.
// The statements must not depend on one another's effects beyond foreign
// keys: on PostgreSQL none sees another's changes.
func execTogether(ctx context.Context, tx *db.Tx, stmts ...statement) error {
	if tx.Dialect() != db.Postgres || len(stmts) == 1 {
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st.query, st.args...); err != nil {
				return err
			}
		}
		return nil
	}
	query, args := together(stmts)
	_, err := tx.ExecContext(ctx, query, args...)
	return err
}

// together joins stmts into one PostgreSQL statement with their arguments
// in order, renumbering each statement's placeholders after the arguments
// of those before it.
func together(stmts []statement) (string, []any) {
	var query []byte
	var args []any
	for i, st := range stmts {
		renumbered := renumber(st.query, len(args))
		switch {
		case i == 0:
			query = append(query, "WITH s0 AS ("...)
		case i < len(stmts)-1:
			query = append(query, ", s"+strconv.Itoa(i)+" AS ("...)
		}
		query = append(query, renumbered...)
		if i < len(stmts)-1 {
			query = append(query, ')')
		}
		args = append(args, st.args...)
	}
	return string(query), args
}

// renumber adds offset to the number of every placeholder of query.
func renumber(query string, offset int) string {
	return placeholder.ReplaceAllStringFunc(query, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(n+offset)
	})
}
