package app

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

//go:generate go test -run ^TestOperationsDocConfiguration$ -update .

var update = flag.Bool("update", false, "rewrite the generated tables of docs/operations.md")

const operationsDoc = "../../docs/operations.md"

// settingsTable is the configuration reference of docs/operations.md, made
// from a list of settings.
func settingsTable(list []setting, flags bool) string {
	var b strings.Builder
	if flags {
		b.WriteString("| Variable | Flag | Default | Meaning |\n|---|---|---|---|\n")
	} else {
		b.WriteString("| Variable | Default | Meaning |\n|---|---|---|\n")
	}
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, s := range list {
		def := "none"
		if s.def != "" {
			def = "`" + cell(s.def) + "`"
		}
		help := cell(s.help)
		if flags {
			fmt.Fprintf(&b, "| `%s` | `--%s` | %s | %s |\n", s.env, flagName(s.env), def, help)
		} else {
			fmt.Fprintf(&b, "| `%s` | %s | %s |\n", s.env, def, help)
		}
	}
	return b.String()
}

// replaceBetween puts body between the lines of doc starting with
// "<!-- NAME:begin" and "<!-- NAME:end".
func replaceBetween(t *testing.T, doc, name, body string) string {
	t.Helper()
	begin, end := "<!-- "+name+":begin", "<!-- "+name+":end"
	i := strings.Index(doc, begin)
	j := strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no %s … %s markers", operationsDoc, begin, end)
	}
	i += strings.Index(doc[i:], "\n") + 1
	return doc[:i] + body + doc[j:]
}

// The configuration reference of docs/operations.md is the list of
// settings the server reads, so it never misses one; go generate
// ./internal/app/ rewrites it.
func TestOperationsDocConfiguration(t *testing.T) {
	raw, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	want := replaceBetween(t, doc, "settings", settingsTable(knownSettings, true))
	want = replaceBetween(t, want, "client-variables", settingsTable(clientVariables, false))
	if want == doc {
		return
	}
	if *update {
		if err := os.WriteFile(operationsDoc, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s lists other settings than internal/app/config.go: run go generate ./internal/app/", operationsDoc)
}

// The README's configuration table names every setting too (its wording is
// its own).
func TestReadmeListsEverySetting(t *testing.T) {
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range knownSettings {
		if !strings.Contains(string(raw), "| `"+s.env+"` |") {
			t.Errorf("README.md, Configuration: no row for %s", s.env)
		}
	}
}
