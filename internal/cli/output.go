package cli

import (
	"encoding/json"
	"fmt"
	"iter"
	"strings"
	"text/tabwriter"
	"time"
)

// jsonOut reports whether the person asked for JSON.
func (e *env) jsonOut() bool { return e.output == "json" }

// printJSON prints v as indented JSON on stdout.
func (e *env) printJSON(v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(e.out, "%s\n", b)
	return err
}

// table prints rows under header as aligned columns on stdout.
func (e *env) table(header []string, rows [][]string) error {
	w := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(w, strings.Join(r, "\t"))
	}
	return w.Flush()
}

// printList walks every page of items and prints them as JSON or as a
// table of row(item) under header.
func printList[T any](e *env, items iter.Seq2[T, error], header []string, row func(T) []string) error {
	all := []T{}
	var rows [][]string
	for item, err := range items {
		if err != nil {
			return err
		}
		all = append(all, item)
		rows = append(rows, row(item))
	}
	if e.jsonOut() {
		return e.printJSON(all)
	}
	return e.table(header, rows)
}

// fields prints label/value pairs as two aligned columns on stdout.
func (e *env) fields(pairs [][2]string) error {
	w := tabwriter.NewWriter(e.out, 0, 0, 2, ' ', 0)
	for _, p := range pairs {
		fmt.Fprintf(w, "%s:\t%s\n", p[0], p[1])
	}
	return w.Flush()
}

// money is an amount with its currency, as the API wrote it.
func money(amount, currency string) string {
	if amount == "" {
		return "-"
	}
	return amount + " " + currency
}

// when prints a time for people: UTC, to the minute.
func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") }

// whenPtr is when, or "-" for none.
func whenPtr(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return when(*t)
}

// str is *s, or "-" for none.
func str(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}
