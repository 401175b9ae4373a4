// Package internal_test checks rules that span the feature packages.
package internal_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// owners names the one package that writes SQL naming each table
// (docs/architecture.md, Conventions). Others call that package.
var owners = map[string]string{
	"settings":                 "app",
	"organizations":            "organization",
	"memberships":              "organization",
	"users":                    "identity",
	"devices":                  "identity",
	"sign_in_challenges":       "identity",
	"sessions":                 "identity",
	"realtime_tickets":         "identity",
	"totp_used_steps":          "identity",
	"totp_enrollments":         "identity",
	"device_trusts":            "identity",
	"passkeys":                 "identity",
	"passkey_ceremonies":       "identity",
	"audit_entries":            "audit",
	"audit_chain_heads":        "audit",
	"domain_events":            "platform/event",
	"event_consumers":          "platform/event",
	"jobs":                     "platform/job",
	"idempotency_keys":         "platform/idempotency",
	"rate_limits":              "platform/ratelimit",
	"outbox_messages":          "platform/outbox",
	"sign_in_failures":         "identity",
	"sudo_sessions":            "stepup",
	"step_up_authentications":  "stepup",
	"assurance_challenges":     "stepup",
	"approval_credentials":     "stepup",
	"step_up_code_failures":    "stepup",
	"step_up_lockouts":         "stepup",
	"api_keys":                 "apikey",
	"webhook_endpoints":        "webhook",
	"webhook_deliveries":       "webhook",
	"currency_accounts":        "mca",
	"currency_account_history": "mca",
	"ledger_accounts":          "ledger",
	"journal_entries":          "ledger",
	"postings":                 "ledger",
	"transactions":             "ledger",
	"transaction_day_sums":     "ledger",
	"payment_contacts":         "payment",
	"quotes":                   "payment",
	"approvals":                "payment",
	"payment_batches":          "payment",
	"payments":                 "payment",
	"payment_requests":         "paymentrequest",
	"cards":                    "card",
	"card_spend":               "card",
	"card_authorizations":      "card",
	"card_activation_failures": "card",
	"card_activation_guards":   "card",
	"wallet_provider_keys":     "sandbox",
	"sandbox_card_letters":     "sandbox",
	"files":                    "file",
	"bills":                    "bill",
	"billing_contacts":         "invoicing",
	"billing_invoices":         "invoicing",
	"crypto_incoming":          "invoicing",
	"billing_allocations":      "invoicing",

	"subscription_acknowledgements": "onboarding",
	"identity_checks":               "onboarding",
	"identity_check_links":          "onboarding",
	"expenses":                      "expense",
	"expense_bindings":              "expense",
	"expense_receipts":              "expense",
}

// createTable finds the tables a migration creates, dropTable those it drops.
var (
	createTable = regexp.MustCompile(`(?i)\bcreate\s+table\s+(?:if\s+not\s+exists\s+)?([a-z_][a-z0-9_]*)`)
	dropTable   = regexp.MustCompile(`(?i)\bdrop\s+table\s+(?:if\s+exists\s+)?([a-z_][a-z0-9_]*)`)
)

// tableRef finds the names that follow a keyword introducing a table: FROM
// (with DELETE FROM), JOIN, INTO, UPDATE and TABLE (ALTER, LOCK, TRUNCATE).
// A FROM may list several tables separated by commas, each with an alias.
var tableRef = regexp.MustCompile(`(?i)\b(?:from|join|into|update|table)\s+([a-z_][a-z0-9_.]*(?:\s+(?:as\s+)?[a-z_][a-z0-9_]*)?(?:\s*,\s*[a-z_][a-z0-9_.]*(?:\s+(?:as\s+)?[a-z_][a-z0-9_]*)?)*)`)

// migrationTables lists every table the migrations of both engines create
// and no later migration drops (no table is created again once dropped).
func migrationTables(t *testing.T) map[string]bool {
	t.Helper()
	tables, dropped := map[string]bool{}, map[string]bool{}
	files, err := filepath.Glob(filepath.Join("..", "migrations", "*", "*.sql"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no migrations found (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
			tables[strings.ToLower(m[1])] = true
		}
		for _, m := range dropTable.FindAllStringSubmatch(string(b), -1) {
			dropped[strings.ToLower(m[1])] = true
		}
	}
	for table := range dropped {
		delete(tables, table)
	}
	return tables
}

// TestEveryTableHasAnOwner keeps the owner map complete and current.
func TestEveryTableHasAnOwner(t *testing.T) {
	tables := migrationTables(t)
	for table := range tables {
		if _, ok := owners[table]; !ok {
			t.Errorf("a migration creates table %s, which has no owner in owners: name the package that alone writes its SQL", table)
		}
	}
	for table := range owners {
		if !tables[table] {
			t.Errorf("owners names table %s, which no migration creates", table)
		}
	}
}

// reference is a table named in a string literal of a package.
type reference struct {
	pkg, table string
	pos        token.Position
}

// references parses every non-test Go file under dir and returns the tables
// of tables named in its string literals, with the package (its path below
// dir) that names them.
func references(t *testing.T, dir string, tables map[string]bool) []reference {
	t.Helper()
	fset := token.NewFileSet()
	var out []reference
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg, err := filepath.Rel(dir, filepath.Dir(path))
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			text, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
				return true
			}
			for _, m := range tableRef.FindAllStringSubmatchIndex(text, -1) {
				pos := fset.Position(lit.Pos())
				pos.Column = 0 // file:line is enough
				if strings.HasPrefix(lit.Value, "`") {
					// A raw string keeps its lines: point at the one naming the table.
					pos.Line += strings.Count(text[:m[2]], "\n")
				}
				for _, item := range strings.Split(text[m[2]:m[3]], ",") {
					name := strings.ToLower(strings.Fields(item)[0])
					// A qualified name (schema.table) counts by its last part.
					name = name[strings.LastIndexByte(name, '.')+1:]
					if tables[name] {
						out = append(out, reference{pkg: filepath.ToSlash(pkg), table: name, pos: pos})
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTablesAreNamedOnlyByTheirOwner fails when a package's SQL names a
// table another package owns: it must call that package instead.
func TestTablesAreNamedOnlyByTheirOwner(t *testing.T) {
	tables := migrationTables(t)
	refs := references(t, ".", tables)
	if len(refs) == 0 {
		t.Fatal("no SQL found under internal/: the scanner is broken")
	}
	var violations []string
	for _, r := range refs {
		if owner, ok := owners[r.table]; ok && owner != r.pkg {
			violations = append(violations, r.pkg+": "+r.pos.String()+": names table "+r.table+", owned by "+owner)
		}
	}
	slices.Sort(violations)
	for _, v := range slices.Compact(violations) {
		t.Error(v)
	}
}
