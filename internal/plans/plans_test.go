// Package plans_test runs a representative workload through the real
// server, captures every distinct statement it sends to the database, and
// asks the engine how it would run each one: a statement that must read a
// whole growing table (or a whole index of one) fails the test, because it
// slows down as history piles up.
//
// SQLite answers EXPLAIN QUERY PLAN: a "SCAN t" line (whole table, or whole
// index with USING INDEX) of a growing table fails; a SEARCH uses an index
// to find a range. PostgreSQL answers EXPLAIN with enable_seqscan off: a
// Seq Scan left means no index can serve the query, and an index scan whose
// condition does not constrain the index's first key reads the whole index.
// A statement that reads a whole table on purpose goes on the allowed list
// with its reason. It runs on PostgreSQL when STRONGROOM_TEST_POSTGRES is set:
//
//	go test -count=1 ./internal/plans/                # failures only
//	go test -count=1 ./internal/plans/ -v -args -plans # every statement's plan
//	STRONGROOM_PLANS_DATABASE=DSN go test -count=1 ./internal/plans/ # on a seeded copy
package plans_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
)

var showPlans = flag.Bool("plans", false, "log every captured statement with its plan")

// smallTables stay small whatever the history: reading them whole is fine.
var smallTables = map[string]bool{
	"goose_db_version":     true, // one row per migration
	"settings":             true, // a handful of keys (secrets, seeded flags)
	"wallet_provider_keys": true, // one key per wallet provider
}

// allowed are statements that read whole tables on purpose, by a fragment
// of their text, with the reason.
var allowed = []struct{ fragment, reason string }{
	{"SELECT count(*) FROM (SELECT 1 FROM organizations LIMIT 1)",
		"start-up check that the database is empty before seeding the demo: stops at the first row"},
	{"WHERE j.status = 'running' AND j.locked_until < $2 AND j.attempts < j.max_attempts AND j.fair_key IS NOT NULL",
		"taking back a keyed job whose lease ran out sorts the running keyed jobs (at most the runners' " +
			"concurrency in every instance), never the backlog: due jobs are claimed in their index's order"},
	{"WHERE organization_id = $1 AND occurred_at >= $2",
		"a realtime resumption sorts one organization's events of the resumption window, not its history"},
	{"WHERE (user_id = $1 OR $1 IS NULL)",
		"the sandbox outbox (never in live): newest messages first, one page, filtered as they are read"},
}

// capture records each distinct statement with the first arguments it ran with.
type capture struct {
	mu    sync.Mutex
	order []string
	args  map[string][]any
}

func (c *capture) observe(query string, args []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.args[query]; ok {
		return
	}
	c.order = append(c.order, query)
	c.args[query] = slices.Clone(args)
}

// DatabaseEnv, when set, names a migrated database (a copy of one filled
// by bench/seed, say) that the test runs on instead of new empty ones, so
// the planners see the statistics of real history. The workload adds to it.
const DatabaseEnv = "STRONGROOM_PLANS_DATABASE"

func TestHotQueriesUseIndexes(t *testing.T) {
	engines := dbtest.Engines()
	if dsn := os.Getenv(DatabaseEnv); dsn != "" {
		engines = []dbtest.Engine{{Name: "given", DSN: func(testing.TB) string { return dsn }}}
	}
	for _, e := range engines {
		t.Run(e.Name, func(t *testing.T) {
			dsn := e.DSN(t)
			c := &capture{args: map[string][]any{}}
			stop := db.ObserveQueries(c.observe)
			s := apitest.Start(t, "STRONGROOM_DATABASE="+dsn)
			workload(t, s)
			stop()
			if t.Failed() {
				return
			}
			if err := s.Stop(); err != nil {
				t.Fatal(err)
			}
			checkPlans(t, dsn, c)
		})
	}
}

func checkPlans(t *testing.T, dsn string, c *capture) {
	ctx := context.Background()
	d, err := db.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var pool *sql.DB
	for _, p := range d.Pools() {
		pool = p
	}
	conn, err := pool.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if d.Dialect() == db.Postgres {
		// A sequential scan that remains means no index can serve the query.
		if _, err := conn.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
			t.Fatal(err)
		}
	}
	explained, failures := 0, 0
	for _, q := range c.order {
		if !explainable(q) {
			continue
		}
		explained++
		var plan string
		var scans []string
		if d.Dialect() == db.Postgres {
			plan, scans, err = explainPostgres(ctx, conn, q, c.args[q])
		} else {
			plan, scans, err = explainSQLite(ctx, conn, q, c.args[q])
		}
		if err != nil {
			t.Errorf("explain %s\n%v", q, err)
			continue
		}
		if *showPlans {
			t.Logf("%s\n%s", oneLine(q), plan)
		}
		if len(scans) == 0 {
			continue
		}
		if reason := allowedReason(q); reason != "" {
			t.Logf("allowed (%s): %s", reason, oneLine(q))
			continue
		}
		failures++
		t.Errorf("full scan of %s:\n%s\nplan:\n%s", strings.Join(scans, ", "), q, plan)
	}
	t.Logf("%d distinct statements captured, %d explained, %d failing", len(c.order), explained, failures)
	if explained < 100 {
		t.Errorf("only %d statements explained: the workload or the capture broke", explained)
	}
}

var dml = regexp.MustCompile(`(?is)^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b`)

func explainable(q string) bool { return dml.MatchString(q) }

func allowedReason(q string) string {
	for _, a := range allowed {
		if strings.Contains(q, a.fragment) {
			return a.reason
		}
	}
	return ""
}

var spaces = regexp.MustCompile(`\s+`)

func oneLine(q string) string { return spaces.ReplaceAllString(strings.TrimSpace(q), " ") }

// sqliteScan matches a plan line reading a whole table or index: "SCAN t",
// "SCAN t USING INDEX i", "SCAN t USING COVERING INDEX i" (a SEARCH uses
// an index to find a range instead).
var sqliteScan = regexp.MustCompile(`^SCAN (\w+)`)

// limited matches a statement that reads one page. A page that must first
// sort every row matching its filter (an organization's whole history, say)
// grows with the history as a scan does: an index in the page's order
// serves it instead.
var limited = regexp.MustCompile(`(?i)\bLIMIT\b`)

func explainSQLite(ctx context.Context, conn *sql.Conn, q string, args []any) (string, []string, error) {
	rows, err := conn.QueryContext(ctx, "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	var plan strings.Builder
	var scans []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", nil, err
		}
		fmt.Fprintf(&plan, "  %s\n", detail)
		if m := sqliteScan.FindStringSubmatch(detail); m != nil && growing(m[1]) {
			scans = append(scans, m[1])
		}
		if detail == "USE TEMP B-TREE FOR ORDER BY" && limited.MatchString(q) {
			scans = append(scans, "every matching row, sorted before the LIMIT")
		}
	}
	return plan.String(), scans, rows.Err()
}

// growing tells whether name is a table that grows with history (not a
// small table, nor a CTE or subquery alias).
func growing(name string) bool {
	return tables[name] && !smallTables[name]
}

// tables are the schema's tables, filled from the migrations' CREATE TABLE.
var tables = func() map[string]bool {
	out := map[string]bool{}
	for _, n := range schemaTables() {
		out[n] = true
	}
	return out
}()

type pgNode struct {
	NodeType  string   `json:"Node Type"`
	Relation  string   `json:"Relation Name"`
	Index     string   `json:"Index Name"`
	IndexCond string   `json:"Index Cond"`
	Plans     []pgNode `json:"Plans"`
}

// leadingKey returns the first key of a PostgreSQL index (a column or an
// expression), as plans print it.
func leadingKey(ctx context.Context, conn *sql.Conn, index string) (string, error) {
	var key string
	err := conn.QueryRowContext(ctx, `SELECT pg_get_indexdef($1::regclass, 1, true)`, index).Scan(&key)
	return key, err
}

// usesLeadingKey tells whether an index condition constrains the index's
// first key: without it PostgreSQL 15 reads the whole index (it has no skip
// scan), which is how a full scan hides once enable_seqscan is off.
func usesLeadingKey(cond, key string) bool {
	return regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(key) + `[\s,)]`).MatchString(cond)
}

func explainPostgres(ctx context.Context, conn *sql.Conn, q string, args []any) (string, []string, error) {
	var raw []byte
	if err := conn.QueryRowContext(ctx, "EXPLAIN (FORMAT JSON) "+q, args...).Scan(&raw); err != nil {
		return "", nil, err
	}
	var top []struct {
		Plan pgNode `json:"Plan"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return "", nil, err
	}
	var text strings.Builder
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+q, args...)
	if err != nil {
		return "", nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return "", nil, err
		}
		fmt.Fprintf(&text, "  %s\n", line)
	}
	if err := rows.Err(); err != nil {
		return "", nil, err
	}
	var scans []string
	// (A Sort under a Limit is not judged here: on the test's nearly empty
	// tables PostgreSQL sorts a few rows rather than walk an index in order,
	// so it says nothing about history. SQLite's planner does not look at
	// table sizes, so its sorts are judged.)
	var walk func(n pgNode) error
	walk = func(n pgNode) error {
		switch n.NodeType {
		case "Seq Scan":
			// enable_seqscan is off: a Seq Scan left means no index serves the query.
			if growing(n.Relation) {
				scans = append(scans, n.Relation+" (Seq Scan)")
			}
		case "Index Scan", "Index Only Scan", "Bitmap Index Scan":
			table := n.Relation
			if table == "" { // a bitmap index scan names its index only
				if err := conn.QueryRowContext(ctx, `SELECT indrelid::regclass::text FROM pg_index WHERE indexrelid = $1::regclass`, n.Index).Scan(&table); err != nil {
					return err
				}
			}
			if !growing(table) {
				break
			}
			// An index read end to end (no condition, or none on its first
			// key) is a full scan in index order.
			key, err := leadingKey(ctx, conn, n.Index)
			if err != nil {
				return err
			}
			if !usesLeadingKey(n.IndexCond, key) {
				scans = append(scans, table+" (whole index "+n.Index+")")
			}
		}
		for _, c := range n.Plans {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range top {
		if err := walk(p.Plan); err != nil {
			return "", nil, err
		}
	}
	sort.Strings(scans)
	return text.String(), slices.Compact(scans), nil
}
