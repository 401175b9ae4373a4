package page_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/page"
)

type item struct {
	Created string `json:"created"`
	ID      string `json:"id"`
}

func itemKey(it item) page.Key { return page.Key{Sort: it.Created, ID: it.ID} }

// items is a list already in (Created, ID) order, with ties on Created so
// the id tie-breaker matters.
func items(n int) []item {
	out := make([]item, n)
	for i := range out {
		out[i] = item{Created: fmt.Sprintf("2026-01-%02d", 1+i/2), ID: fmt.Sprintf("id-%03d", i)}
	}
	return out
}

// fetch plays the store: rows strictly after req.After, LIMIT req.Limit+1.
func fetch(all []item, req page.Request) []item {
	var out []item
	for _, it := range all {
		if req.After != nil {
			a := *req.After
			if it.Created < a.Sort || (it.Created == a.Sort && it.ID <= a.ID) {
				continue
			}
		}
		if len(out) == req.Limit+1 {
			break
		}
		out = append(out, it)
	}
	return out
}

func newSigner() *page.Signer { return page.NewSigner([]byte("0123456789abcdef0123456789abcdef")) }

func mustParse(t *testing.T, s *page.Signer, q url.Values, filters ...string) page.Request {
	t.Helper()
	req, err := s.Parse(q, filters...)
	if err != nil {
		t.Fatalf("Parse(%q): %v", q.Encode(), err)
	}
	return req
}

// firstCursor returns the next_cursor of the first page of a 10-item list
// requested with q.
func firstCursor(t *testing.T, s *page.Signer, q url.Values, filters ...string) string {
	t.Helper()
	req := mustParse(t, s, q, filters...)
	p := page.Build(s, req, fetch(items(10), req), itemKey)
	if p.NextCursor == nil {
		t.Fatal("first page has no next_cursor")
	}
	return *p.NextCursor
}

func wantType(t *testing.T, err error, typ apierr.Type) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s", typ)
	}
	if !apierr.Is(err, typ) {
		t.Fatalf("got %v, want type %s", err, typ)
	}
}

func TestWalk(t *testing.T) {
	s := newSigner()
	all := items(7)
	q := url.Values{"limit": {"3"}, "status": {"open"}}
	var got []item
	var sizes []int
	for range 10 {
		req := mustParse(t, s, q, "status")
		p := page.Build(s, req, fetch(all, req), itemKey)
		got = append(got, p.Data...)
		sizes = append(sizes, len(p.Data))
		if !p.HasMore {
			if p.NextCursor != nil {
				t.Fatal("last page has a next_cursor")
			}
			b, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"has_more":false,"next_cursor":null`) {
				t.Fatalf("last page JSON = %s", b)
			}
			break
		}
		if p.NextCursor == nil {
			t.Fatal("has_more without next_cursor")
		}
		q.Set("cursor", *p.NextCursor)
	}
	if fmt.Sprint(sizes) != "[3 3 1]" {
		t.Fatalf("page sizes = %v, want [3 3 1]", sizes)
	}
	if fmt.Sprint(got) != fmt.Sprint(all) {
		t.Fatalf("walked %v, want %v", got, all)
	}
}

func TestExactMultipleEndsWithoutEmptyPage(t *testing.T) {
	s := newSigner()
	all := items(4)
	req := mustParse(t, s, url.Values{"limit": {"2"}})
	p := page.Build(s, req, fetch(all, req), itemKey)
	if !p.HasMore || p.NextCursor == nil {
		t.Fatal("first page should have more")
	}
	req = mustParse(t, s, url.Values{"limit": {"2"}, "cursor": {*p.NextCursor}})
	if *req.After != itemKey(all[1]) {
		t.Fatalf("After = %+v, want key of %+v", *req.After, all[1])
	}
	p = page.Build(s, req, fetch(all, req), itemKey)
	if p.HasMore || p.NextCursor != nil || len(p.Data) != 2 {
		t.Fatalf("second page = %+v, want the last two items and no more", p)
	}
}

func TestEmptyListEncodesDataAsArray(t *testing.T) {
	s := newSigner()
	req := mustParse(t, s, url.Values{})
	for _, rows := range [][]item{nil, {}} {
		b, err := json.Marshal(page.Build(s, req, rows, itemKey))
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"data":[],"has_more":false,"next_cursor":null}`; string(b) != want {
			t.Fatalf("got %s, want %s", b, want)
		}
	}
}

func TestLimit(t *testing.T) {
	s := newSigner()
	req := mustParse(t, s, url.Values{})
	if req.Limit != 50 || req.After != nil {
		t.Fatalf("default request = %+v, want limit 50 and no cursor", req)
	}
	for _, ok := range []string{"1", "100", "37"} {
		req := mustParse(t, s, url.Values{"limit": {ok}})
		if fmt.Sprint(req.Limit) != ok {
			t.Errorf("limit %s parsed as %d", ok, req.Limit)
		}
	}
	for _, bad := range [][]string{{"0"}, {"101"}, {"abc"}, {"-1"}, {""}, {"1.5"}, {" 5"}, {"99999999999999999999"}, {"10", "20"}} {
		_, err := s.Parse(url.Values{"limit": bad})
		wantType(t, err, apierr.InvalidRequest)
		e, _ := apierr.As(err)
		fe, ok := e.Details.([]apierr.FieldError)
		if !ok || len(fe) != 1 || fe[0].Field != "limit" || fe[0].Message == "" {
			t.Errorf("limit %q: details = %#v, want one field error on limit", bad, e.Details)
		}
	}
}

func TestTamperedCursor(t *testing.T) {
	s := newSigner()
	c := firstCursor(t, s, url.Values{"limit": {"2"}})
	body, mac, _ := strings.Cut(c, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	bad := map[string]string{
		"empty":         "",
		"no dot":        body + mac,
		"body changed":  flip(body, 0) + "." + mac,
		"mac changed":   body + "." + flip(mac, 3),
		"mac truncated": body + "." + mac[:len(mac)-2],
		"mac missing":   body + ".",
		"padded":        c + "=",
		"std alphabet":  strings.NewReplacer("-", "+", "_", "/").Replace(c) + "+/",
		"not base64":    "!!!." + mac,
		"extra part":    c + ".x",
		"huge":          strings.Repeat("A", 100000) + "." + mac,
	}
	for name, cur := range bad {
		_, err := s.Parse(url.Values{"limit": {"2"}, "cursor": {cur}})
		wantType(t, err, apierr.InvalidCursor)
		if e, _ := apierr.As(err); e.Message != "The cursor is not valid for this list; start again from the first page." {
			t.Errorf("%s: message %q", name, e.Message)
		}
	}
	_, err := s.Parse(url.Values{"cursor": {c, c}})
	wantType(t, err, apierr.InvalidCursor)

	// The untouched cursor still works, whatever the limit.
	mustParse(t, s, url.Values{"limit": {"7"}, "cursor": {c}})
}

func TestCursorFromAnotherKey(t *testing.T) {
	c := firstCursor(t, page.NewSigner([]byte("another key, another deployment")), url.Values{"limit": {"2"}})
	_, err := newSigner().Parse(url.Values{"cursor": {c}})
	wantType(t, err, apierr.InvalidCursor)
}

func TestCursorBoundToFilters(t *testing.T) {
	s := newSigner()
	filters := []string{"status", "type"}
	minted := url.Values{"limit": {"2"}, "status": {"open", "paid"}, "type": {"card"}, "unrelated": {"x"}}
	c := firstCursor(t, s, minted, filters...)

	same := []url.Values{
		{"status": {"open", "paid"}, "type": {"card"}},
		{"status": {"paid", "open"}, "type": {"card"}},                 // repeated values in another order
		{"status": {"open", "paid"}, "type": {"card"}, "other": {"y"}}, // not a filter
		{"status": {"open", "paid"}, "type": {"card"}, "limit": {"9"}}, // limit may change
	}
	for _, q := range same {
		q.Set("cursor", c)
		mustParse(t, s, q, filters...)
		mustParse(t, s, q, "type", "status") // filter names in another order
	}

	other := []url.Values{
		{"status": {"open"}, "type": {"card"}},
		{"status": {"open", "paid", "paid"}, "type": {"card"}},
		{"status": {"open", "paid"}, "type": {"bank"}},
		{"status": {"open", "paid"}},
		{"status": {"open", "paid"}, "type": {"card", ""}},
		{"status": {"card"}, "type": {"open", "paid"}}, // values swapped between names
		{},
	}
	for _, q := range other {
		q.Set("cursor", c)
		_, err := s.Parse(q, filters...)
		wantType(t, err, apierr.InvalidCursor)
	}

	// A filter the caller did not use binds like an absent one, so a
	// hand-built Request pages an unfiltered list.
	c = *page.Build(s, page.Request{Limit: 1}, items(3), itemKey).NextCursor
	mustParse(t, s, url.Values{"cursor": {c}}, "status")
	mustParse(t, s, url.Values{"cursor": {c}, "status": {}})
	_, err := s.Parse(url.Values{"cursor": {c}, "status": {""}}, "status")
	wantType(t, err, apierr.InvalidCursor)
}

func TestKeyRoundTripsOddStrings(t *testing.T) {
	s := newSigner()
	for _, k := range []page.Key{{}, {Sort: "a.b", ID: "."}, {Sort: "<&>\"\\", ID: "\u2028é💷"}, {Sort: strings.Repeat("x", 600), ID: "id"}, {Sort: "\xff\xfe", ID: "\x00"}, {Sort: strings.Repeat("\u2028", 1990), ID: "id-000"}} {
		p := page.Build(s, page.Request{Limit: 1}, []page.Key{k, {}}, func(k page.Key) page.Key { return k })
		req := mustParse(t, s, url.Values{"cursor": {*p.NextCursor}})
		if *req.After != k {
			t.Errorf("round trip of %+v gave %+v", k, *req.After)
		}
	}
}

func FuzzParse(f *testing.F) {
	s := newSigner()
	valid := *page.Build(s, page.Request{Limit: 1}, items(2), itemKey).NextCursor
	f.Add(valid, "10")
	f.Add(valid+"x", "")
	f.Add("", "50")
	f.Add(".", "0")
	f.Add("e30.", "abc")
	f.Add("e30.AAAA", "100")
	f.Add(strings.Repeat(".", 50), "-1")
	f.Fuzz(func(t *testing.T, cursor, limit string) {
		req, err := s.Parse(url.Values{"cursor": {cursor}, "limit": {limit}})
		if err != nil {
			if !apierr.Is(err, apierr.InvalidCursor) && !apierr.Is(err, apierr.InvalidRequest) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if req.Limit < 1 || req.Limit > 100 || req.After == nil {
			t.Fatalf("accepted request %+v", req)
		}
		// Only a cursor this Signer minted passes, and re-minting its key
		// gives a cursor that opens to the same key.
		p := page.Build(s, page.Request{Limit: 1}, []page.Key{*req.After, {}}, func(k page.Key) page.Key { return k })
		again := mustParse(t, s, url.Values{"cursor": {*p.NextCursor}})
		if *again.After != *req.After {
			t.Fatalf("re-minted key %+v, want %+v", *again.After, *req.After)
		}
	})
}

func FuzzCursorRoundTrip(f *testing.F) {
	s := newSigner()
	f.Add("2026-01-01T00:00:00Z", "0190f0c2-0000-7000-8000-000000000000", "open")
	f.Add("", "", "")
	f.Add("\xff", ".", "a\x00b")
	f.Fuzz(func(t *testing.T, sort, id, status string) {
		if len(sort)+len(id) > 6000 {
			t.Skip("longer keys are documented as not pageable")
		}
		q := url.Values{"status": {status}}
		req := mustParse(t, s, q, "status")
		req.Limit = 1
		k := page.Key{Sort: sort, ID: id}
		p := page.Build(s, req, []page.Key{k, {}}, func(k page.Key) page.Key { return k })
		q.Set("cursor", *p.NextCursor)
		if got := mustParse(t, s, q, "status"); *got.After != k {
			t.Fatalf("round trip of %+v gave %+v", k, *got.After)
		}
		q.Set("status", status+"x")
		if _, err := s.Parse(q, "status"); !apierr.Is(err, apierr.InvalidCursor) {
			t.Fatalf("cursor accepted under another filter value: %v", err)
		}
	})
}

// TestCutResumesAfterTheLastRowRead: a page cut short by a filter applied
// after reading carries the position of the last row read, bound to the
// filters like any cursor, even with no rows at all.
func TestCutResumesAfterTheLastRowRead(t *testing.T) {
	s := newSigner()
	q := url.Values{"type": {"a"}}
	req, err := s.Parse(q, "type")
	if err != nil {
		t.Fatal(err)
	}
	p := page.Cut[item](s, req, nil, true, page.Key{Sort: "2026-01-05", ID: "id-009"})
	if len(p.Data) != 0 || !p.HasMore || p.NextCursor == nil {
		t.Fatalf("cut page %+v", p)
	}
	q.Set("cursor", *p.NextCursor)
	next, err := s.Parse(q, "type")
	if err != nil || next.After == nil || *next.After != (page.Key{Sort: "2026-01-05", ID: "id-009"}) {
		t.Fatalf("next page request %+v, %v", next, err)
	}
	q.Set("type", "b")
	if _, err := s.Parse(q, "type"); !apierr.Is(err, apierr.InvalidCursor) {
		t.Fatalf("the cursor under other filters: %v", err)
	}
	if last := page.Cut(s, req, []item{{ID: "x"}}, false, page.Key{}); last.HasMore || last.NextCursor != nil {
		t.Fatalf("last page %+v", last)
	}
}
