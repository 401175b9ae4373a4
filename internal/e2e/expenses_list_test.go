package e2e_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// The expense list: newest first, each filter alone and
// combined, search that treats LIKE wildcards as text, and keyset pages
// whose cursor is bound to the filters.

func listExpenses(t *testing.T, s *apitest.Server, token, org, query string) api.ExpensePage {
	t.Helper()
	var p api.ExpensePage
	s.Get(t, expensesPath(org)+"?"+query, token).ExpectStatus(t, 200).Decode(t, &p)
	return p
}

func expenseIDs(es []api.Expense) []string {
	return idsOf(es, func(e api.Expense) string { return e.Id.String() })
}

// idsOf lists the ids of xs, in order.
func idsOf[T any](xs []T, id func(T) string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = id(x)
	}
	return out
}

// walkExpenses reads every page of the list with query and returns the ids in order.
func walkExpenses(t *testing.T, s *apitest.Server, token, org, query string) []string {
	t.Helper()
	return walk(t, query, func(q string) ([]string, bool, *string) {
		p := listExpenses(t, s, token, org, q)
		return expenseIDs(p.Data), p.HasMore, p.NextCursor
	})
}

// walk reads every page of a list, fetching each with its query (query,
// then the next cursor added), and returns the ids in order.
func walk(t *testing.T, query string, fetch func(q string) (ids []string, hasMore bool, next *string)) []string {
	t.Helper()
	var all []string
	q := query
	for pages := 0; ; pages++ {
		ids, more, next := fetch(q)
		all = append(all, ids...)
		if !more {
			if next != nil {
				t.Fatalf("last page (%s) carries a next_cursor", q)
			}
			return all
		}
		if next == nil || len(ids) == 0 || pages > 60 {
			t.Fatalf("page %d of %s: has_more with %d items and cursor %v", pages, query, len(ids), next)
		}
		q = query + "&cursor=" + url.QueryEscape(*next)
	}
}

func TestExpenseListFiltersAndPages(t *testing.T) {
	s := apitest.Start(t)
	o := newCardOrg(t, s, "acme.test")
	deposit(t, s, o.id, "USD", "100.00")
	tok := o.owner.token
	mk := func(token string, body map[string]any) string {
		advance(t, s, time.Millisecond)
		return createExpense(t, s, token, o.id, body).Id.String()
	}
	e1 := mk(o.alice.token, map[string]any{"business_name": "Café Sacher", "transaction_date": "2026-01-01"})
	e2 := mk(o.alice.token, map[string]any{"description": "Taxi to the AIRPORT", "transaction_date": "2026-01-15"})
	e3 := mk(o.bob.token, map[string]any{"receipt_number": "INV_100%", "transaction_date": "2026-01-31"})
	e4 := mk(o.bob.token, map[string]any{"business_name": "INVX1000", "transaction_date": "2026-02-01"})
	e5 := mk(o.admin.token, map[string]any{"description": `back\slash`})
	// e2 submitted, e4 approved.
	for _, id := range []string{e2, e4} {
		token := o.alice.token
		if id == e4 {
			token = o.bob.token
		}
		patchExpense(t, s, token, id, map[string]any{"category": "transport", "transaction_date": "2026-01-15"}).ExpectStatus(t, 200)
		bind(t, s, token, id, bindable(t, s, o.id, "1.00"), "card_transaction").ExpectStatus(t, 200)
		moveExpense(t, s, token, id, "submit").ExpectStatus(t, 200)
	}
	moveExpense(t, s, tok, e4, "approve").ExpectStatus(t, 200)
	patchExpense(t, s, o.bob.token, e4, map[string]any{"transaction_date": "2026-02-01"}).ExpectError(t, 409, "conflict")

	all := []string{e5, e4, e3, e2, e1}
	expectIDs(t, "all", expenseIDs(listExpenses(t, s, tok, o.id, "").Data), all...)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"status=draft", []string{e5, e3, e1}},
		{"status=submitted", []string{e2}},
		{"status=submitted&status=approved", []string{e4, e2}},
		{"status=approved&status=submitted&status=approved", []string{e4, e2}},
		{"status=paid", nil},
		{"creator_id=" + o.bob.id, []string{e4, e3}},
		{"creator_id=" + o.bob.id + "&status=draft", []string{e3}},
		// Search: any case, in business name, description or receipt number.
		{"search=sacher", []string{e1}},
		{"search=CAFÉ", []string{e1}},
		{"search=airport", []string{e2}},
		{"search=inv", []string{e4, e3}},
		// Wildcards match only themselves.
		{"search=" + url.QueryEscape("INV_"), []string{e3}},
		{"search=" + url.QueryEscape("100%"), []string{e3}},
		{"search=" + url.QueryEscape("%"), []string{e3}},
		{"search=" + url.QueryEscape("_"), []string{e3}},
		{"search=" + url.QueryEscape(`\`), []string{e5}},
		{"search=" + url.QueryEscape(`k\s`), []string{e5}},
		{"search=nothing", nil},
		// Dates are inclusive; an expense without one is left out.
		{"transaction_date_from=2026-01-15", []string{e4, e3, e2}},
		{"transaction_date_to=2026-01-15", []string{e4, e2, e1}},
		{"transaction_date_from=2026-01-15&transaction_date_to=2026-01-15", []string{e4, e2}},
		{"transaction_date_from=2026-01-31&transaction_date_to=2026-02-01", []string{e3}},
		{"transaction_date_from=2026-01-02&transaction_date_to=2026-01-14", nil},
		{"search=inv&status=draft&creator_id=" + o.bob.id + "&transaction_date_to=2026-01-31", []string{e3}},
	} {
		expectIDs(t, tc.query, expenseIDs(listExpenses(t, s, tok, o.id, tc.query).Data), tc.want...)
	}
	// A member's filters apply within their own expenses.
	expectIDs(t, "alice", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "").Data), e2, e1)
	expectIDs(t, "alice search=inv", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "search=inv").Data))
	expectIDs(t, "alice status=submitted", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "status=submitted").Data), e2)
	expectIDs(t, "alice creator_id=alice", expenseIDs(listExpenses(t, s, o.alice.token, o.id, "creator_id="+o.alice.id).Data), e2, e1)

	// Bad values name the parameter.
	for param, bad := range map[string]string{"status": "open", "creator_id": "bob", "transaction_date_from": "2026-1-1",
		"transaction_date_to": "yesterday", "limit": "0", "search": ""} {
		expectInvalidField(t, s.Get(t, expensesPath(o.id)+"?"+param+"="+bad, tok), param)
	}
	expectInvalidField(t, s.Get(t, expensesPath(o.id)+"?search=a&search=b", tok), "search")
	expectInvalidField(t, s.Get(t, expensesPath(o.id)+"?search=a%1Fb", tok), "search")
	expectInvalidField(t, s.Get(t, expensesPath(o.id)+"?transaction_date_from=2026-02-01&transaction_date_to=2026-01-01", tok), "transaction_date_to")

	// Pages walk the same expenses without repeats, with and without filters.
	expectIDs(t, "walk limit=1", walkExpenses(t, s, tok, o.id, "limit=1"), all...)
	expectIDs(t, "walk limit=2", walkExpenses(t, s, tok, o.id, "limit=2"), all...)
	expectIDs(t, "walk drafts limit=2", walkExpenses(t, s, tok, o.id, "status=draft&limit=2"), e5, e3, e1)
	expectIDs(t, "walk search limit=1", walkExpenses(t, s, tok, o.id, "search=inv&limit=1"), e4, e3)
	expectIDs(t, "alice walks", walkExpenses(t, s, o.alice.token, o.id, "limit=1"), e2, e1)

	// A cursor is bound to its filters and its list.
	first := listExpenses(t, s, tok, o.id, "status=draft&limit=1")
	if !first.HasMore || first.NextCursor == nil {
		t.Fatalf("first page: %+v", first)
	}
	cursor := url.QueryEscape(*first.NextCursor)
	s.Get(t, expensesPath(o.id)+"?status=submitted&limit=1&cursor="+cursor, tok).ExpectError(t, 400, "invalid_cursor")
	s.Get(t, expensesPath(o.id)+"?status=draft&search=a&limit=1&cursor="+cursor, tok).ExpectError(t, 400, "invalid_cursor")
	s.Get(t, expensesPath(o.id)+"?cursor=not-a-cursor", tok).ExpectError(t, 400, "invalid_cursor")
	s.Get(t, "/api/v1/organizations/"+o.id+"/cards?status=active&limit=1&cursor="+cursor, tok).ExpectError(t, 400, "invalid_cursor")
	next := listExpenses(t, s, tok, o.id, "limit=1&status=draft&cursor="+cursor)
	expectIDs(t, "second page, parameters reordered", expenseIDs(next.Data), e3)

	// A page holds 50 unless asked otherwise, and at most 100.
	for range 47 {
		createExpense(t, s, o.bob.token, o.id, nil)
	}
	if p := listExpenses(t, s, tok, o.id, ""); len(p.Data) != 50 || !p.HasMore {
		t.Fatalf("default page: %d, has_more %v", len(p.Data), p.HasMore)
	}
	if p := listExpenses(t, s, tok, o.id, "limit=100"); len(p.Data) != 52 || p.HasMore || p.NextCursor != nil {
		t.Fatalf("page of 100: %d, has_more %v", len(p.Data), p.HasMore)
	}
	expectInvalidField(t, s.Get(t, expensesPath(o.id)+"?limit=101", tok), "limit")
}
