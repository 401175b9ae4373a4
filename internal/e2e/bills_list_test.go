package e2e_test

import (
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// TestListBillsFiltersAndPages checks listBills: status, inclusive due
// dates, a case-insensitive search over supplier and number in which % and
// _ are plain characters, and cursor pagination newest first.
func TestListBillsFiltersAndPages(t *testing.T) {
	s := apitest.Start(t)
	p := newPayer(t, s, "ada@acme.test", "1000.00")
	mk := func(fields map[string]any) api.Bill {
		return patchBillOK(t, s, p.web, blankBill(t, s, p.web, p.org).Id.String(), fields)
	}
	a := mk(map[string]any{"supplier_name": "Müller Maschinenbau GmbH", "bill_number": "RE-2026-0117", "due_date": "2026-02-14"})
	b := mk(map[string]any{"supplier_name": "ACME 100% Widgets", "bill_number": "INV_7", "due_date": "2026-02-15"})
	c := mk(map[string]any{"supplier_name": "Acme 100 Widgets", "bill_number": "INV-7", "due_date": "2026-02-28"})
	d := mk(map[string]any{"supplier_name": "ÖKO Harbour Print Ltd", "bill_number": "HLP-10231"})
	s.Post(t, billPath(d.Id.String(), "cancel"), p.web, nil).ExpectStatus(t, 200)
	e := payableBill(t, s, p, "10.00") // Müller again, due 2026-02-14
	payBill(t, s, p, e)
	patchBillOK(t, s, p.web, a.Id.String(), map[string]any{"supplier_name": "Müller Maschinenbau GmbH"})

	list := func(query string) []string {
		t.Helper()
		var pg api.BillPage
		s.Get(t, billsPath(p.org)+"?"+query, p.web).ExpectStatus(t, 200).Decode(t, &pg)
		var ids []string
		for _, x := range pg.Data {
			ids = append(ids, x.Id.String())
		}
		return ids
	}
	cases := []struct {
		query string
		want  []string // newest first
	}{
		{"", []string{e.Id.String(), d.Id.String(), c.Id.String(), b.Id.String(), a.Id.String()}},
		{"status=extracted", []string{c.Id.String(), b.Id.String(), a.Id.String()}},
		{"status=cancelled", []string{d.Id.String()}},
		{"status=payment_requested", []string{e.Id.String()}},
		{"status=extracting", nil},
		{"due_date_from=2026-02-15", []string{c.Id.String(), b.Id.String()}},
		{"due_date_to=2026-02-15", []string{e.Id.String(), b.Id.String(), a.Id.String()}},
		{"due_date_from=2026-02-14&due_date_to=2026-02-14", []string{e.Id.String(), a.Id.String()}},
		{"due_date_from=2026-02-16&due_date_to=2026-02-27", nil},
		{"search=acme", []string{c.Id.String(), b.Id.String()}},
		{"search=WIDGETS", []string{c.Id.String(), b.Id.String()}},
		{"search=" + url.QueryEscape("100%"), []string{b.Id.String()}},
		{"search=" + url.QueryEscape("%"), []string{b.Id.String()}},
		{"search=INV_7", []string{b.Id.String()}},
		{"search=_", []string{b.Id.String()}},
		{"search=inv-7", []string{c.Id.String()}},
		{"search=re-2026", []string{e.Id.String(), a.Id.String()}},
		{"search=hlp", []string{d.Id.String()}},
		{"search=" + url.QueryEscape("ÖKO Harbour"), []string{d.Id.String()}},
		{"search=" + url.QueryEscape("ÖKO harbour"), []string{d.Id.String()}},
		{"search=" + url.QueryEscape("müller"), []string{e.Id.String(), a.Id.String()}},
		{"search=" + url.QueryEscape("MÜLLER maschinenbau"), []string{e.Id.String(), a.Id.String()}},
		{"search=nobody", nil},
		{"status=extracted&search=acme&due_date_to=2026-02-20", []string{b.Id.String()}},
	}
	for _, tc := range cases {
		if got := list(tc.query); !slices.Equal(got, tc.want) {
			t.Errorf("?%s = %v, want %v", tc.query, got, tc.want)
		}
	}
	for _, bad := range []string{"status=paid", "due_date_from=2026-02-30", "due_date_to=14.02.2026", "search=" + strings.Repeat("x", 101), "limit=0", "limit=101"} {
		s.Get(t, billsPath(p.org)+"?"+bad, p.web).ExpectError(t, 400, "invalid_request")
	}

	// Pages of two, newest first, until has_more is false.
	walk := func(query string) []string {
		t.Helper()
		var ids []string
		path := billsPath(p.org) + "?limit=2" + query
		for pages := 0; ; pages++ {
			var pg api.BillPage
			s.Get(t, path, p.web).ExpectStatus(t, 200).Decode(t, &pg)
			if len(pg.Data) > 2 {
				t.Fatalf("page of %d bills with limit 2", len(pg.Data))
			}
			for _, x := range pg.Data {
				ids = append(ids, x.Id.String())
			}
			if !pg.HasMore {
				if pg.NextCursor != nil {
					t.Fatal("last page carries a next_cursor")
				}
				return ids
			}
			if pages > 5 || pg.NextCursor == nil {
				t.Fatal("the walk does not end")
			}
			path = billsPath(p.org) + "?limit=2" + query + "&cursor=" + url.QueryEscape(*pg.NextCursor)
		}
	}
	if got, want := walk(""), []string{e.Id.String(), d.Id.String(), c.Id.String(), b.Id.String(), a.Id.String()}; !slices.Equal(got, want) {
		t.Fatalf("walk = %v, want %v", got, want)
	}
	if got, want := walk("&status=extracted"), []string{c.Id.String(), b.Id.String(), a.Id.String()}; !slices.Equal(got, want) {
		t.Fatalf("walk of extracted = %v, want %v", got, want)
	}
	// A cursor is bound to its filters and must be one of ours.
	var first api.BillPage
	s.Get(t, billsPath(p.org)+"?limit=2&search=acme", p.web).ExpectStatus(t, 200).Decode(t, &first)
	if first.NextCursor != nil {
		t.Fatal("two acme bills fit on one page of two")
	}
	s.Get(t, billsPath(p.org)+"?limit=1&search=acme", p.web).ExpectStatus(t, 200).Decode(t, &first)
	s.Get(t, billsPath(p.org)+"?limit=1&search=widgets&cursor="+url.QueryEscape(*first.NextCursor), p.web).ExpectError(t, 400, "invalid_cursor")
	s.Get(t, billsPath(p.org)+"?cursor=forged", p.web).ExpectError(t, 400, "invalid_cursor")
}
