package db

import (
	"context"
	"regexp"
	"strconv"
)

// Statement is one SQL statement with its arguments, its placeholders
// numbered from $1.
type Statement struct {
	Query string
	Args  []any
}

// placeholder matches a $n placeholder (statements given to ExecTogether
// hold no $ in a literal).
var placeholder = regexp.MustCompile(`\$(\d+)`)

// ExecTogether runs independent statements in tx, in order, as one: on
// PostgreSQL as one round trip, every statement but the last a
// data-modifying WITH query of the last (each runs once and to completion,
// on the statement's one snapshot, and foreign keys are checked at its end,
// so a row may reference one inserted by an earlier statement); on SQLite,
// which has no data-modifying WITH and no round trips, one after another.
// The statements must not depend on one another's effects beyond foreign
// keys: on PostgreSQL none sees another's changes.
func (tx *Tx) ExecTogether(ctx context.Context, stmts ...Statement) error {
	if tx.db.dialect != Postgres || len(stmts) == 1 {
		for _, st := range stmts {
			if _, err := tx.ExecContext(ctx, st.Query, st.Args...); err != nil {
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
func together(stmts []Statement) (string, []any) {
	var query []byte
	var args []any
	for i, st := range stmts {
		switch {
		case i == 0 && len(stmts) > 1:
			query = append(query, "WITH s0 AS ("...)
		case i > 0 && i < len(stmts)-1:
			query = append(query, ", s"+strconv.Itoa(i)+" AS ("...)
		case i > 0:
			query = append(query, ' ')
		}
		query = append(query, Renumber(st.Query, len(args))...)
		if i < len(stmts)-1 {
			query = append(query, ')')
		}
		args = append(args, st.Args...)
	}
	return string(query), args
}

// Renumber adds offset to the number of every placeholder of query, for a
// statement joined after others' arguments (query holds no $ in a literal).
func Renumber(query string, offset int) string {
	return placeholder.ReplaceAllStringFunc(query, func(p string) string {
		n, _ := strconv.Atoi(p[1:])
		return "$" + strconv.Itoa(n+offset)
	})
}
