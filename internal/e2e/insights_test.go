package e2e_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
	"github.com/strongroom/strongroom/internal/platform/money"
)

func insightsPath(org, query string) string {
	return "/api/v1/organizations/" + org + "/insights?" + query
}

func getInsights(t *testing.T, s *apitest.Server, token, org, query string) api.Insights {
	t.Helper()
	var out api.Insights
	s.Get(t, insightsPath(org, query), token).ExpectStatus(t, http.StatusOK).Decode(t, &out)
	return out
}

// show writes a list of amounts as "1000.00 EUR, 5.00 USD" ("-" when empty).
func show(as []api.AssetMoney) string {
	if as == nil {
		return "null"
	}
	if len(as) == 0 {
		return "-"
	}
	var out []string
	for _, a := range as {
		out = append(out, a.Amount+" "+a.Currency)
	}
	return strings.Join(out, ", ")
}

// line is a period (or the summary) as one line: in | out | payments | net.
func sumsLine(s api.InsightSums) string {
	return show(s.Incoming) + " | " + show(s.Outgoing) + " | " + show(s.Payments) + " | " + show(s.Net)
}

func lines(r api.Insights) []string {
	var out []string
	for _, p := range r.Periods {
		out = append(out, p.Period+": "+sumsLine(api.InsightSums{Incoming: p.Incoming, Outgoing: p.Outgoing, Payments: p.Payments, Net: p.Net}))
	}
	return out
}

func expectLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(got, "\n     "), strings.Join(want, "\n     "))
	}
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// toNextDay moves the manual clock to 01:00 UTC of the next day, so that what
// a test does next (a few minutes of clock) stays on one UTC date.
func toNextDay(t *testing.T, s *apitest.Server) time.Time {
	t.Helper()
	n := now(t, s)
	next := time.Date(n.Year(), n.Month(), n.Day()+1, 1, 0, 0, 0, time.UTC)
	return advance(t, s, next.Sub(n))
}

// advanceTo moves the manual clock forward to at.
func advanceTo(t *testing.T, s *apitest.Server, at time.Time) time.Time {
	t.Helper()
	n := now(t, s)
	if at.Before(n) {
		t.Fatalf("cannot move the clock back from %v to %v", n, at)
	}
	return advance(t, s, at.Sub(n))
}

func minor(t *testing.T, a api.Money) int64 {
	t.Helper()
	m, err := money.Parse(a.Amount, a.Currency)
	if err != nil {
		t.Fatal(err)
	}
	return m.Minor
}

func eur(minor int64) string { return money.Amount{Minor: minor, Currency: "EUR"}.String() + " EUR" }

// TestInsightsSumTheFeed: deposits are incoming; payments and their fees are
// outgoing, less the reversal of a failed one (in the period it fails);
// card purchases less refunds are payments; net is the difference; zero
// sums are left out; quiet periods hold empty lists; a period cut by the
// range counts only its days inside the range.
func TestInsightsSumTheFeed(t *testing.T) {
	s := apitest.Start(t)
	// Day A starts now, early enough that the day's work stays on it.
	dayA := toNextDay(t, s)
	p := newPayer(t, s, "ada@acme.test", "")
	deposit(t, s, p.org, "EUR", "1000.00")
	deposit(t, s, p.org, "USD", "200.00")

	// Day A: one payment completes, one fails the same day, a third is
	// approved now and fails on day D.
	done := p.pay(t, s, "100.00")
	p.approveInApp(t, s, done.ApprovalRequestId.String())
	failed := p.pay(t, s, "50.00")
	p.approveInApp(t, s, failed.ApprovalRequestId.String())
	late := p.pay(t, s, "20.00")
	p.approveInApp(t, s, late.ApprovalRequestId.String())
	for _, pay := range []api.Payment{done, failed, late} {
		eventually(t, "the rail takes the payment", func() bool { return getPayment(t, s, p.web, pay.Id.String()).Status == "processing" })
	}
	s.Post(t, "/api/v1/sandbox/payments/"+done.Id.String()+"/settle", sbx, map[string]any{"outcome": "completed"}).ExpectStatus(t, 200)
	s.Post(t, "/api/v1/sandbox/payments/"+failed.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectStatus(t, 200)
	// Card spend: 30.00 bought, 5.00 refunded.
	card := cardFor(t, s, p.org, p.userID, 1000)
	expectApproved(t, purchase(t, s, card.Id.String(), "30.00"), "out", "30.00")
	expectApproved(t, authorize(t, s, card.Id.String(), "5.00", "USD", "online", "refund"), "in", "5.00")

	// Day B: 10.00 USD arrives and the card spends exactly that: USD nets to
	// zero and is left out of net.
	toNextDay(t, s)
	deposit(t, s, p.org, "USD", "10.00")
	expectApproved(t, purchase(t, s, card.Id.String(), "10.00"), "out", "10.00")
	// Day C: a purchase and its refund: payments sum to zero, left out.
	toNextDay(t, s)
	expectApproved(t, purchase(t, s, card.Id.String(), "7.00"), "out", "7.00")
	expectApproved(t, authorize(t, s, card.Id.String(), "7.00", "USD", "online", "refund"), "in", "7.00")
	// Day D: the third payment fails; its amount and fee come back.
	toNextDay(t, s)
	s.Post(t, "/api/v1/sandbox/payments/"+late.Id.String()+"/settle", sbx, map[string]any{"outcome": "failed"}).ExpectStatus(t, 200)
	// Day E stays quiet; the range ends then.
	// Sessions end after 30 idle minutes: sign in again.
	dayE := toNextDay(t, s)
	p.web = signInFully(t, s, p.email, p.secret)

	lateDebit := minor(t, late.Debited) // amount and fee
	outA := minor(t, done.Debited) + lateDebit
	r := getInsights(t, s, p.web, p.org, "group_by=day&start_date="+day(dayA)+"&end_date="+day(dayE))
	if r.DateRange.StartDate.String() != day(dayA) || r.DateRange.EndDate.String() != day(dayE) || r.DateRange.Grouping != "day" || r.DateRange.Preset != nil {
		t.Errorf("date_range = %+v", r.DateRange)
	}
	expectLines(t, "days", lines(r),
		day(dayA)+": 1000.00 EUR, 200.00 USD | "+eur(outA)+" | 25.00 USD | "+eur(100000-outA)+", 175.00 USD",
		day(dayA.AddDate(0, 0, 1))+": 10.00 USD | - | 10.00 USD | -",
		day(dayA.AddDate(0, 0, 2))+": - | - | - | -",
		day(dayA.AddDate(0, 0, 3))+": - | "+eur(-lateDebit)+" | - | "+eur(lateDebit),
		day(dayE)+": - | - | - | -",
	)
	expectLines(t, "summary", []string{sumsLine(r.Summary)},
		"1000.00 EUR, 210.00 USD | "+eur(minor(t, done.Debited))+" | 35.00 USD | "+eur(100000-minor(t, done.Debited))+", 175.00 USD")
	// Day A: 2 deposits, 3 payments × (amount + fee), 1 reversal, 2 card rows;
	// day B: 2; day C: 2; day D: 1 reversal.
	if r.TransactionCount != 16 {
		t.Errorf("transaction_count = %d, want 16", r.TransactionCount)
	}

	// The same range by year: one period (or two across a new year) with
	// the same total as the summary.
	byYear := getInsights(t, s, p.web, p.org, "group_by=year&start_date="+day(dayA)+"&end_date="+day(dayE))
	if byYear.Summary.Net == nil || sumsLine(byYear.Summary) != sumsLine(r.Summary) || byYear.TransactionCount != 16 {
		t.Errorf("by year: %s, %d rows", sumsLine(byYear.Summary), byYear.TransactionCount)
	}
	// A range starting on day B cuts day A off its period: only B..E count.
	cut := getInsights(t, s, p.web, p.org, "group_by=year&start_date="+day(dayA.AddDate(0, 0, 1))+"&end_date="+day(dayE))
	if cut.Periods[0].Period != fmt.Sprint(dayA.AddDate(0, 0, 1).Year()) {
		t.Errorf("first period %s", cut.Periods[0].Period)
	}
	expectLines(t, "cut summary", []string{sumsLine(cut.Summary)}, "10.00 USD | "+eur(-lateDebit)+" | 10.00 USD | "+eur(lateDebit))
	if cut.TransactionCount != 5 {
		t.Errorf("cut transaction_count = %d, want 5", cut.TransactionCount)
	}
	// A range before anything happened: every list empty.
	quiet := getInsights(t, s, p.web, p.org, "group_by=month&start_date=2020-01-01&end_date=2020-03-31")
	expectLines(t, "quiet months", lines(quiet), "2020-01: - | - | - | -", "2020-02: - | - | - | -", "2020-03: - | - | - | -")
	if quiet.TransactionCount != 0 || sumsLine(quiet.Summary) != "- | - | - | -" {
		t.Errorf("quiet summary %s, %d rows", sumsLine(quiet.Summary), quiet.TransactionCount)
	}

	// Any member may read; another organization's person gets 404; an API
	// key is refused.
	_, memberSecret := addUser(t, s, p.org, "bob@acme.test", "member", true)
	member := signInFully(t, s, "bob@acme.test", memberSecret)
	if got := getInsights(t, s, member, p.org, "group_by=day&start_date="+day(dayA)+"&end_date="+day(dayE)); sumsLine(got.Summary) != sumsLine(r.Summary) {
		t.Errorf("member sees %s", sumsLine(got.Summary))
	}
	stranger := createOrg(t, s, "eve@evil.test")
	eve := signInFully(t, s, "eve@evil.test", *stranger.Owner.TotpSecret)
	s.Get(t, insightsPath(p.org, ""), eve).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, insightsPath(p.org, "preset=ytd"), eve).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, insightsPath("0190f5c2-8a6e-7d3a-9b1e-2f4c6a8e0b12", ""), p.web).ExpectError(t, http.StatusNotFound, "not_found")
	s.Get(t, insightsPath(p.org, ""), "").ExpectError(t, http.StatusUnauthorized, "not_authenticated")
	if got := getInsights(t, s, eve, stranger.Organization.Id.String(), "preset=ytd"); got.TransactionCount != 0 || sumsLine(got.Summary) != "- | - | - | -" {
		t.Errorf("eve's own organization: %s", sumsLine(got.Summary))
	}
}

// TestInsightsAcrossTheYearEnd: ISO weeks belong to the year of their
// Thursday, so the last days of a year can be in week 53 (or 1 of the next
// year) and the first days of a year in the last week of the year before.
func TestInsightsAcrossTheYearEnd(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	n := now(t, s)
	eve := time.Date(n.Year(), 12, 31, 12, 0, 0, 0, time.UTC)
	if !eve.After(n) {
		eve = eve.AddDate(1, 0, 0)
	}
	advanceTo(t, s, eve)
	deposit(t, s, org.Organization.Id.String(), "EUR", "1.00")
	advance(t, s, 24*time.Hour) // 1 January
	deposit(t, s, org.Organization.Id.String(), "EUR", "2.00")
	advance(t, s, 3*24*time.Hour) // 4 January
	deposit(t, s, org.Organization.Id.String(), "EUR", "4.00")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)

	y := eve.Year()
	from, to := fmt.Sprintf("%d-12-24", y), fmt.Sprintf("%d-01-10", y+1)
	r := getInsights(t, s, token, org.Organization.Id.String(), "group_by=week&start_date="+from+"&end_date="+to)
	// The real calendar, week by week.
	var want []string
	sums := map[string]int64{}
	for _, c := range []struct {
		at    time.Time
		minor int64
	}{{eve, 100}, {eve.AddDate(0, 0, 1), 200}, {eve.AddDate(0, 0, 4), 400}} {
		wy, w := c.at.ISOWeek()
		sums[fmt.Sprintf("%04d-W%02d", wy, w)] += c.minor
	}
	start, _ := time.Parse(time.DateOnly, from)
	end, _ := time.Parse(time.DateOnly, to)
	seen := map[string]bool{}
	for d := start; !d.After(end); d = d.AddDate(0, 0, 1) {
		wy, w := d.ISOWeek()
		label := fmt.Sprintf("%04d-W%02d", wy, w)
		if seen[label] {
			continue
		}
		seen[label] = true
		if m := sums[label]; m != 0 {
			want = append(want, label+": "+eur(m)+" | - | - | "+eur(m))
		} else {
			want = append(want, label+": - | - | - | -")
		}
	}
	expectLines(t, "weeks", lines(r), want...)
	if y == 2026 { // Thursday 2026-12-31 and Friday 2027-01-01 share 2026-W53; 2027-W01 is 4 to 10 January
		expectLines(t, "weeks of 2026/27", lines(r),
			"2026-W52: - | - | - | -",
			"2026-W53: 3.00 EUR | - | - | 3.00 EUR",
			"2027-W01: 4.00 EUR | - | - | 4.00 EUR")
	}
	// Years, months and quarters are calendar ones, cut to the range.
	expectLines(t, "years", lines(getInsights(t, s, token, org.Organization.Id.String(), "group_by=year&start_date="+from+"&end_date="+to)),
		fmt.Sprintf("%d: 1.00 EUR | - | - | 1.00 EUR", y), fmt.Sprintf("%d: 6.00 EUR | - | - | 6.00 EUR", y+1))
	expectLines(t, "quarters", lines(getInsights(t, s, token, org.Organization.Id.String(), "group_by=quarter&start_date="+from+"&end_date="+to)),
		fmt.Sprintf("%d-Q4: 1.00 EUR | - | - | 1.00 EUR", y), fmt.Sprintf("%d-Q1: 6.00 EUR | - | - | 6.00 EUR", y+1))
	expectLines(t, "months", lines(getInsights(t, s, token, org.Organization.Id.String(), "start_date="+from+"&end_date="+to)),
		fmt.Sprintf("%d-12: 1.00 EUR | - | - | 1.00 EUR", y), fmt.Sprintf("%d-01: 6.00 EUR | - | - | 6.00 EUR", y+1))
	days := getInsights(t, s, token, org.Organization.Id.String(), fmt.Sprintf("group_by=day&start_date=%d-12-31&end_date=%d-01-02", y, y+1))
	expectLines(t, "days", lines(days),
		fmt.Sprintf("%d-12-31: 1.00 EUR | - | - | 1.00 EUR", y), fmt.Sprintf("%d-01-01: 2.00 EUR | - | - | 2.00 EUR", y+1),
		fmt.Sprintf("%d-01-02: - | - | - | -", y+1))

	// On 4 January the presets look back across the year end.
	presets := map[string]string{
		"current_month":    fmt.Sprintf("%d-01-01 %d-01-04", y+1, y+1),
		"previous_month":   fmt.Sprintf("%d-12-01 %d-12-31", y, y),
		"current_quarter":  fmt.Sprintf("%d-01-01 %d-01-04", y+1, y+1),
		"previous_quarter": fmt.Sprintf("%d-10-01 %d-12-31", y, y),
		"current_year":     fmt.Sprintf("%d-01-01 %d-01-04", y+1, y+1),
		"ytd":              fmt.Sprintf("%d-01-01 %d-01-04", y+1, y+1),
		"previous_year":    fmt.Sprintf("%d-01-01 %d-12-31", y, y),
		"last_30_days":     fmt.Sprintf("%d-12-06 %d-01-04", y, y+1),
		"last_90_days":     fmt.Sprintf("%d-10-07 %d-01-04", y, y+1),
		"last_12_months":   fmt.Sprintf("%d-01-01 %d-12-31", y, y),
	}
	for preset, want := range presets {
		got := getInsights(t, s, token, org.Organization.Id.String(), "preset="+preset)
		if got.DateRange.StartDate.String()+" "+got.DateRange.EndDate.String() != want || got.DateRange.Preset == nil || string(*got.DateRange.Preset) != preset {
			t.Errorf("%s on %d-01-04: %+v, want %s", preset, y+1, got.DateRange, want)
		}
	}
	if got := getInsights(t, s, token, org.Organization.Id.String(), "preset=ytd&group_by=week"); strings.Join(lines(got), "\n") !=
		fmt.Sprintf("%s: 2.00 EUR | - | - | 2.00 EUR\n%d-W01: 4.00 EUR | - | - | 4.00 EUR", weekOf(time.Date(y+1, 1, 1, 0, 0, 0, 0, time.UTC)), y+1) {
		t.Errorf("ytd by week: %v", lines(got))
	}
}

func weekOf(d time.Time) string {
	wy, w := d.ISOWeek()
	return fmt.Sprintf("%04d-W%02d", wy, w)
}

// TestInsightsPresetsFollowTheClock: every preset, on the UTC date of the
// service clock, as the clock moves; with neither a preset nor dates the
// range is the last twelve whole months.
func TestInsightsPresetsFollowTheClock(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	for _, step := range []time.Duration{0, 17 * 24 * time.Hour, 45 * 24 * time.Hour} {
		advance(t, s, step)
		token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
		today := now(t, s).UTC()
		y, m, d := today.Date()
		date := func(y int, m time.Month, d int) string {
			return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Format(time.DateOnly)
		}
		q := (int(m)-1)/3*3 + 1
		want := map[string]string{
			"current_month":    date(y, m, 1) + " " + date(y, m, d),
			"previous_month":   date(y, m-1, 1) + " " + date(y, m, 0),
			"current_quarter":  date(y, time.Month(q), 1) + " " + date(y, m, d),
			"previous_quarter": date(y, time.Month(q-3), 1) + " " + date(y, time.Month(q), 0),
			"current_year":     date(y, 1, 1) + " " + date(y, m, d),
			"ytd":              date(y, 1, 1) + " " + date(y, m, d),
			"previous_year":    date(y-1, 1, 1) + " " + date(y-1, 12, 31),
			"last_30_days":     date(y, m, d-29) + " " + date(y, m, d),
			"last_90_days":     date(y, m, d-89) + " " + date(y, m, d),
			"last_12_months":   date(y-1, m, 1) + " " + date(y, m, 0),
		}
		for preset, dates := range want {
			for _, group := range []string{"day", "week", "month", "quarter", "year"} {
				got := getInsights(t, s, token, org.Organization.Id.String(), "preset="+preset+"&group_by="+group)
				if got.DateRange.StartDate.String()+" "+got.DateRange.EndDate.String() != dates || string(*got.DateRange.Preset) != preset || string(got.DateRange.Grouping) != group {
					t.Errorf("%s by %s on %s: %+v, want %s", preset, group, day(today), got.DateRange, dates)
				}
				if len(got.Periods) == 0 || got.Periods[0].Period != label(group, got.DateRange.StartDate.String()) ||
					got.Periods[len(got.Periods)-1].Period != label(group, got.DateRange.EndDate.String()) {
					t.Errorf("%s by %s: periods %v", preset, group, lines(got))
				}
			}
		}
		def := getInsights(t, s, token, org.Organization.Id.String(), "")
		if def.DateRange.StartDate.String()+" "+def.DateRange.EndDate.String() != want["last_12_months"] || def.DateRange.Grouping != "month" ||
			def.DateRange.Preset == nil || *def.DateRange.Preset != "last_12_months" || len(def.Periods) != 12 {
			t.Errorf("default on %s: %+v, %d periods", day(today), def.DateRange, len(def.Periods))
		}
	}
}

// label is the period label of grouping for a date, the test's own way.
func label(grouping, date string) string {
	d, _ := time.Parse(time.DateOnly, date)
	switch grouping {
	case "week":
		return weekOf(d)
	case "month":
		return d.Format("2006-01")
	case "quarter":
		return fmt.Sprintf("%d-Q%d", d.Year(), (int(d.Month())-1)/3+1)
	case "year":
		return d.Format("2006")
	}
	return date
}

// TestInsightsRefuseBadQueries: each refusal is 400 invalid_request naming
// the parameter.
func TestInsightsRefuseBadQueries(t *testing.T) {
	s := apitest.Start(t)
	org := createOrg(t, s, "ada@acme.test")
	token := signInFully(t, s, "ada@acme.test", *org.Owner.TotpSecret)
	for query, field := range map[string]string{
		"preset=last_week":      "preset",
		"preset=":               "preset",
		"preset=ytd&preset=ytd": "preset",
		"group_by=hour":         "group_by",
		"group_by=":             "group_by",
		"preset=ytd&start_date=2026-01-01&end_date=2026-02-01":     "preset",
		"preset=ytd&end_date=2026-02-01":                           "preset",
		"start_date=2026-01-01":                                    "end_date",
		"end_date=2026-01-01":                                      "start_date",
		"start_date=2026-01-02&end_date=2026-01-01":                "end_date",
		"start_date=2026-1-2&end_date=2026-01-03":                  "start_date",
		"start_date=2026-01-01&end_date=2026-02-30":                "end_date",
		"start_date=2026-01-01T00:00:00Z&end_date=2026-02-01":      "start_date",
		"start_date=2024-01-01&end_date=2026-09-27&group_by=day":   "group_by",
		"start_date=2000-01-03&end_date=2019-03-04&group_by=week":  "group_by",
		"start_date=0001-01-01&end_date=9999-12-31&group_by=month": "group_by",
		"date_start=2026-01-01":                                    "date_start",
		"limit=10":                                                 "limit",
	} {
		r := s.Do(t, apitest.Request{Method: "GET", Path: "/api/v1/organizations/" + org.Organization.Id.String() + "/insights?" + query, Bearer: token})
		e := r.ExpectError(t, http.StatusBadRequest, "invalid_request")
		found := false
		for _, d := range e.Error.Details {
			found = found || d.Field == field
		}
		if !found {
			t.Errorf("%s: details %+v, want one for %s", query, e.Error.Details, field)
		}
	}
	// Exactly 1,000 days is allowed.
	if got := getInsights(t, s, token, org.Organization.Id.String(), "start_date=2024-01-01&end_date=2026-09-26&group_by=day"); len(got.Periods) != 1000 {
		t.Errorf("1,000 days: %d periods", len(got.Periods))
	}
}
