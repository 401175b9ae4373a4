package db

import (
	"context"
	"strconv"
	"strings"
)

// Scanner is what a row scan function reads from: a *sql.Row or *sql.Rows.
type Scanner = interface{ Scan(dest ...any) error }

// QueryAll runs query in q and reads every row with scan, in order: the
// loop that each list query would otherwise write again.
func QueryAll[T any](ctx context.Context, q Reader, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Placeholders returns "$from, $from+1, …" for n values: the list of an IN
// (…) clause whose values follow from-1 other arguments.
func Placeholders(from, n int) string {
	marks := make([]string, n)
	for i := range marks {
		marks[i] = "$" + strconv.Itoa(from+i)
	}
	return strings.Join(marks, ", ")
}
