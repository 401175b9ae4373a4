package insight_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/insight"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/money"
)

func date(s string) time.Time {
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return d
}

func datePtr(s string) *time.Time {
	d := date(s)
	return &d
}

func TestLabels(t *testing.T) {
	for _, c := range []struct {
		grouping, day, want string
	}{
		{insight.Day, "2026-11-23", "2026-11-23"},
		{insight.Week, "2026-11-23", "2026-W48"}, // a Monday
		{insight.Week, "2026-11-29", "2026-W48"}, // its Sunday
		{insight.Week, "2026-11-30", "2026-W49"},
		// 2026 starts on a Thursday, so it has 53 ISO weeks; the last one
		// runs from Monday 2026-12-28 to Sunday 2027-01-03.
		{insight.Week, "2026-12-28", "2026-W53"},
		{insight.Week, "2026-12-31", "2026-W53"},
		{insight.Week, "2027-01-01", "2026-W53"},
		{insight.Week, "2027-01-03", "2026-W53"},
		{insight.Week, "2027-01-04", "2027-W01"},
		// 2024-12-30 (a Monday) is already in 2025's first week.
		{insight.Week, "2024-12-30", "2025-W01"},
		{insight.Week, "2025-01-05", "2025-W01"},
		{insight.Week, "2025-12-28", "2025-W52"},
		{insight.Month, "2026-02-28", "2026-02"},
		{insight.Quarter, "2026-01-01", "2026-Q1"},
		{insight.Quarter, "2026-03-31", "2026-Q1"},
		{insight.Quarter, "2026-04-01", "2026-Q2"},
		{insight.Quarter, "2026-09-30", "2026-Q3"},
		{insight.Quarter, "2026-11-23", "2026-Q4"},
		{insight.Year, "2026-11-23", "2026"},
	} {
		if got := insight.Label(c.grouping, date(c.day)); got != c.want {
			t.Errorf("Label(%s, %s) = %s, want %s", c.grouping, c.day, got, c.want)
		}
	}
}

func TestPresets(t *testing.T) {
	for _, c := range []struct {
		today, preset, start, end string
	}{
		{"2026-11-25", "current_month", "2026-11-01", "2026-11-25"},
		{"2026-11-01", "current_month", "2026-11-01", "2026-11-01"},
		{"2026-11-25", "previous_month", "2026-10-01", "2026-10-31"},
		{"2026-03-31", "previous_month", "2026-02-01", "2026-02-28"},
		{"2024-03-15", "previous_month", "2024-02-01", "2024-02-29"},
		{"2026-01-10", "previous_month", "2025-12-01", "2025-12-31"},
		{"2026-11-25", "current_quarter", "2026-10-01", "2026-11-25"},
		{"2026-03-31", "current_quarter", "2026-01-01", "2026-03-31"},
		{"2026-11-25", "previous_quarter", "2026-07-01", "2026-09-30"},
		{"2026-02-14", "previous_quarter", "2025-10-01", "2025-12-31"},
		{"2026-11-25", "current_year", "2026-01-01", "2026-11-25"},
		{"2026-11-25", "ytd", "2026-01-01", "2026-11-25"},
		{"2026-11-25", "previous_year", "2025-01-01", "2025-12-31"},
		{"2026-11-25", "last_30_days", "2026-10-27", "2026-11-25"},
		{"2026-03-01", "last_30_days", "2026-01-31", "2026-03-01"},
		{"2026-11-25", "last_90_days", "2026-08-28", "2026-11-25"},
		{"2026-11-25", "last_12_months", "2025-11-01", "2026-10-31"},
		{"2026-01-01", "last_12_months", "2025-01-01", "2025-12-31"},
	} {
		// Any time of the day is that UTC day.
		today := date(c.today).Add(23*time.Hour + 59*time.Minute)
		r, err := insight.Resolve(insight.Query{Preset: c.preset}, today)
		if err != nil {
			t.Fatalf("%s on %s: %v", c.preset, c.today, err)
		}
		if got := r.Start.Format(time.DateOnly) + " " + r.End.Format(time.DateOnly); got != c.start+" "+c.end {
			t.Errorf("%s on %s = %s, want %s %s", c.preset, c.today, got, c.start, c.end)
		}
		if r.Preset == nil || *r.Preset != c.preset || r.Grouping != "month" {
			t.Errorf("%s: preset %v grouping %s", c.preset, r.Preset, r.Grouping)
		}
	}
	// Neither a preset nor dates: the trailing twelve whole months.
	r, err := insight.Resolve(insight.Query{GroupBy: "quarter"}, date("2026-11-25"))
	if err != nil || r.Start != date("2025-11-01") || r.End != date("2026-10-31") || *r.Preset != "last_12_months" || r.Grouping != "quarter" {
		t.Errorf("default = %+v, %v", r, err)
	}
	// Explicit dates give no preset.
	r, err = insight.Resolve(insight.Query{Start: datePtr("2026-02-03"), End: datePtr("2026-02-03")}, date("2026-11-25"))
	if err != nil || r.Preset != nil || r.Start != date("2026-02-03") || r.End != date("2026-02-03") {
		t.Errorf("explicit = %+v, %v", r, err)
	}
}

func TestResolveRefuses(t *testing.T) {
	today := date("2026-11-25")
	for _, c := range []struct {
		name  string
		q     insight.Query
		field string
	}{
		{"unknown preset", insight.Query{Preset: "last_week"}, "preset"},
		{"unknown grouping", insight.Query{GroupBy: "hour"}, "group_by"},
		{"preset and dates", insight.Query{Preset: "ytd", Start: datePtr("2026-01-01"), End: datePtr("2026-02-01")}, "preset"},
		{"preset and one date", insight.Query{Preset: "ytd", End: datePtr("2026-02-01")}, "preset"},
		{"start alone", insight.Query{Start: datePtr("2026-01-01")}, "end_date"},
		{"end alone", insight.Query{End: datePtr("2026-01-01")}, "start_date"},
		{"start after end", insight.Query{Start: datePtr("2026-01-02"), End: datePtr("2026-01-01")}, "end_date"},
		{"1,001 days", insight.Query{Start: datePtr("2024-01-01"), End: datePtr("2026-09-27"), GroupBy: "day"}, "group_by"},
		{"1,001 weeks", insight.Query{Start: datePtr("2000-01-03"), End: datePtr("2019-03-04"), GroupBy: "week"}, "group_by"},
		{"1,001 months", insight.Query{Start: datePtr("1900-01-01"), End: datePtr("1983-05-01"), GroupBy: "month"}, "group_by"},
		{"1,001 years", insight.Query{Start: datePtr("1000-01-01"), End: datePtr("2000-12-31"), GroupBy: "year"}, "group_by"},
		{"all of time by day", insight.Query{Start: datePtr("0001-01-01"), End: datePtr("9999-12-31"), GroupBy: "day"}, "group_by"},
	} {
		_, err := insight.Resolve(c.q, today)
		e, ok := apierr.As(err)
		var details []apierr.FieldError
		if ok {
			details, _ = e.Details.([]apierr.FieldError)
		}
		if !ok || e.Type != apierr.InvalidRequest || len(details) == 0 || details[0].Field != c.field {
			t.Errorf("%s: %v (%+v)", c.name, err, e)
		}
	}
	// Exactly 1,000 periods are allowed.
	for _, q := range []insight.Query{
		{Start: datePtr("2024-01-01"), End: datePtr("2026-09-26"), GroupBy: "day"},
		{Start: datePtr("2000-01-03"), End: datePtr("2019-03-03"), GroupBy: "week"},
		{Start: datePtr("1900-01-31"), End: datePtr("1983-04-01"), GroupBy: "month"},
		{Start: datePtr("1000-06-01"), End: datePtr("1999-01-01"), GroupBy: "year"},
	} {
		r, err := insight.Resolve(q, today)
		if err != nil || len(insight.Periods(r)) != 1000 {
			t.Errorf("%+v: %v", q, err)
		}
	}
}

func labels(ps []insight.Period) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Label+"["+p.Start.Format(time.DateOnly)+","+p.End.Format(time.DateOnly)+")")
	}
	return strings.Join(out, " ")
}

func TestPeriodsAreCutByTheRange(t *testing.T) {
	for _, c := range []struct {
		start, end, grouping, want string
	}{
		{"2026-11-29", "2026-12-01", "day", "2026-11-29[2026-11-29,2026-11-30) 2026-11-30[2026-11-30,2026-12-01) 2026-12-01[2026-12-01,2026-12-02)"},
		{"2026-12-30", "2027-01-05", "week", "2026-W53[2026-12-30,2027-01-04) 2027-W01[2027-01-04,2027-01-06)"},
		{"2026-01-15", "2026-03-02", "month", "2026-01[2026-01-15,2026-02-01) 2026-02[2026-02-01,2026-03-01) 2026-03[2026-03-01,2026-03-03)"},
		{"2026-02-10", "2026-08-10", "quarter", "2026-Q1[2026-02-10,2026-04-01) 2026-Q2[2026-04-01,2026-07-01) 2026-Q3[2026-07-01,2026-08-11)"},
		{"2025-12-31", "2026-01-01", "year", "2025[2025-12-31,2026-01-01) 2026[2026-01-01,2026-01-02)"},
		{"2026-05-05", "2026-05-05", "year", "2026[2026-05-05,2026-05-06)"},
	} {
		r, err := insight.Resolve(insight.Query{Start: datePtr(c.start), End: datePtr(c.end), GroupBy: c.grouping}, date("2026-11-25"))
		if err != nil {
			t.Fatal(err)
		}
		if got := labels(insight.Periods(r)); got != c.want {
			t.Errorf("%s..%s by %s:\n got %s\nwant %s", c.start, c.end, c.grouping, got, c.want)
		}
		if n := insight.Count(r); n != len(insight.Periods(r)) {
			t.Errorf("Count = %d, Periods has %d", n, len(insight.Periods(r)))
		}
	}
}

func amounts(as []money.Amount) string {
	var out []string
	for _, a := range as {
		out = append(out, a.String()+" "+a.Currency)
	}
	return strings.Join(out, ", ")
}

func TestFoldSumsPerCurrencyAndLeavesZeroOut(t *testing.T) {
	r, err := insight.Resolve(insight.Query{Start: datePtr("2026-11-29"), End: datePtr("2026-12-02"), GroupBy: "month"}, date("2026-12-02"))
	if err != nil {
		t.Fatal(err)
	}
	days := []ledger.DaySums{
		{Day: date("2026-11-28"), Currency: "EUR", Incoming: 99999, Count: 1}, // outside the range
		{Day: date("2026-11-29"), Currency: "USD", Incoming: 500, Payments: 500, Count: 2},
		{Day: date("2026-11-30"), Currency: "EUR", Incoming: 100000, Outgoing: 10100, Count: 3},
		{Day: date("2026-11-30"), Currency: "JPY", Outgoing: 1000, Count: 1},
		{Day: date("2026-12-01"), Currency: "EUR", Outgoing: -10100, Count: 1},
		{Day: date("2026-12-01"), Currency: "GBP", Incoming: 1, Count: 1},
	}
	res, err := insight.Fold(r, days)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Periods) != 2 || res.Periods[0].Label != "2026-11" || res.Periods[1].Label != "2026-12" {
		t.Fatalf("periods = %+v", res.Periods)
	}
	nov, dec := res.Periods[0], res.Periods[1]
	for _, c := range []struct{ what, got, want string }{
		{"nov incoming", amounts(nov.Incoming), "1000.00 EUR, 5.00 USD"},
		{"nov outgoing", amounts(nov.Outgoing), "101.00 EUR, 1000 JPY"},
		{"nov payments", amounts(nov.Payments), "5.00 USD"},
		{"nov net", amounts(nov.Net), "899.00 EUR, -1000 JPY"}, // USD nets to zero
		{"dec incoming", amounts(dec.Incoming), "0.01 GBP"},
		{"dec outgoing", amounts(dec.Outgoing), "-101.00 EUR"},
		{"dec net", amounts(dec.Net), "101.00 EUR, 0.01 GBP"},
		{"summary outgoing", amounts(res.Summary.Outgoing), "1000 JPY"}, // EUR out and back
		{"summary net", amounts(res.Summary.Net), "1000.00 EUR, 0.01 GBP, -1000 JPY"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.what, c.got, c.want)
		}
	}
	if dec.Payments == nil || len(dec.Payments) != 0 {
		t.Errorf("quiet payments = %#v, want an empty list", dec.Payments)
	}
	if res.TransactionCount != 8 {
		t.Errorf("transaction_count = %d, want 8", res.TransactionCount)
	}
}

func TestFoldRefusesSumsBeyondInt64(t *testing.T) {
	r, _ := insight.Resolve(insight.Query{Start: datePtr("2026-11-01"), End: datePtr("2026-11-02")}, date("2026-11-25"))
	big := int64(1) << 62
	_, err := insight.Fold(r, []ledger.DaySums{
		{Day: date("2026-11-01"), Currency: "EUR", Incoming: big},
		{Day: date("2026-11-02"), Currency: "EUR", Incoming: big},
	})
	if !errors.Is(err, insight.ErrSumLimit) {
		t.Errorf("sum beyond int64: %v", err)
	}
	_, err = insight.Fold(r, []ledger.DaySums{{Day: date("2026-11-01"), Currency: "EUR", Incoming: -big, Outgoing: big}})
	if !errors.Is(err, insight.ErrSumLimit) {
		t.Errorf("net beyond int64: %v", err)
	}
}
