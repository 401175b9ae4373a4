// Package insight sums an organization's money over time (docs/api.md,
// Insights): what came in, what went out, what its cards spent, and the
// net of the three, per currency, for each period of a date range.
//
// The database keeps the sums per organization, UTC day and currency as
// the feed grows (ledger.DailySums); this package resolves the range, cuts
// it into periods and folds the days into them.
package insight

import (
	"fmt"
	"slices"
	"time"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// Groupings are the lengths of a period.
const (
	Day     = "day"
	Week    = "week"
	Month   = "month"
	Quarter = "quarter"
	Year    = "year"
)

// Groupings lists them in the order the API documents them.
var Groupings = []string{Day, Week, Month, Quarter, Year}

// DefaultGrouping is the grouping when none is asked for.
const DefaultGrouping = Month

// Presets are the named ranges, each relative to the UTC date of the
// service clock.
var Presets = []string{"current_month", "previous_month", "current_quarter", "previous_quarter", "current_year",
	"previous_year", "last_30_days", "last_90_days", "last_12_months", "ytd"}

// DefaultPreset is the range with neither a preset nor dates: the trailing
// twelve whole months.
const DefaultPreset = "last_12_months"

// MaxPeriods is the most periods one answer holds.
const MaxPeriods = 1000

// Range is a resolved date range: inclusive civil dates (midnight UTC).
type Range struct {
	Start, End time.Time
	Grouping   string
	// Preset names the preset the range came from; nil for explicit dates.
	Preset *string
}

// Period is one period of a range: its label and the days of it inside the
// range, [Start, End) (midnight UTC).
type Period struct {
	Label      string
	Start, End time.Time
}

// Date returns the civil date of t in UTC, as midnight UTC.
func Date(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// PresetRange returns the inclusive dates of preset on the day today, or
// false for an unknown preset.
func PresetRange(preset string, today time.Time) (start, end time.Time, ok bool) {
	today = Date(today)
	y, m, _ := today.Date()
	month := time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	quarter := startOf(Quarter, today)
	year := time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	dayBefore := func(t time.Time) time.Time { return t.AddDate(0, 0, -1) }
	switch preset {
	case "current_month":
		return month, today, true
	case "previous_month":
		return month.AddDate(0, -1, 0), dayBefore(month), true
	case "current_quarter":
		return quarter, today, true
	case "previous_quarter":
		return quarter.AddDate(0, -3, 0), dayBefore(quarter), true
	case "current_year", "ytd":
		return year, today, true
	case "previous_year":
		return year.AddDate(-1, 0, 0), dayBefore(year), true
	case "last_30_days":
		return today.AddDate(0, 0, -29), today, true
	case "last_90_days":
		return today.AddDate(0, 0, -89), today, true
	case "last_12_months":
		return month.AddDate(0, -12, 0), dayBefore(month), true
	}
	return time.Time{}, time.Time{}, false
}

// Query is what a client asks for: a preset or explicit dates (or neither),
// and a grouping ("" for the default).
type Query struct {
	Preset     string
	Start, End *time.Time
	GroupBy    string
}

// Resolve checks q and returns its range on the day today. Errors are
// invalid_request naming the parameter: an unknown preset or grouping, a
// preset together with dates, one date without the other, a start after the
// end, or more than MaxPeriods periods.
func Resolve(q Query, today time.Time) (Range, error) {
	var errs apierr.Fields
	r := Range{Grouping: q.GroupBy}
	if r.Grouping == "" {
		r.Grouping = DefaultGrouping
	}
	if !slices.Contains(Groupings, r.Grouping) {
		errs.Add("group_by", "must be day, week, month, quarter or year.")
	}
	switch {
	case q.Preset != "" && (q.Start != nil || q.End != nil):
		errs.Add("preset", "cannot be combined with start_date or end_date; send a preset or dates.")
	case q.Preset != "" || (q.Start == nil && q.End == nil):
		preset := q.Preset
		if preset == "" {
			preset = DefaultPreset
		}
		var ok bool
		if r.Start, r.End, ok = PresetRange(preset, today); !ok {
			errs.Add("preset", "must be one of current_month, previous_month, current_quarter, previous_quarter, current_year, previous_year, last_30_days, last_90_days, last_12_months, ytd.")
		}
		r.Preset = &preset
	case q.Start == nil:
		errs.Add("start_date", "is required with end_date.")
	case q.End == nil:
		errs.Add("end_date", "is required with start_date.")
	default:
		r.Start, r.End = Date(*q.Start), Date(*q.End)
		if r.Start.After(r.End) {
			errs.Add("end_date", "must not be before start_date.")
		}
	}
	if err := errs.Err(); err != nil {
		return Range{}, err
	}
	if n := Count(r); n > MaxPeriods {
		return Range{}, apierr.InvalidField("group_by", fmt.Sprintf("gives %d periods over this range; at most %d are allowed: choose a longer grouping or a shorter range.", n, MaxPeriods))
	}
	return r, nil
}

// startOf returns the first day of the period of grouping g that holds d.
func startOf(g string, d time.Time) time.Time {
	y, m, day := d.Date()
	switch g {
	case Week: // ISO weeks start on Monday
		return time.Date(y, m, day-(int(d.Weekday())+6)%7, 0, 0, 0, 0, time.UTC)
	case Month:
		return time.Date(y, m, 1, 0, 0, 0, 0, time.UTC)
	case Quarter:
		return time.Date(y, (m-1)/3*3+1, 1, 0, 0, 0, 0, time.UTC)
	case Year:
		return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(y, m, day, 0, 0, 0, 0, time.UTC)
}

// next returns the first day of the period after the one starting at start.
func next(g string, start time.Time) time.Time {
	switch g {
	case Week:
		return start.AddDate(0, 0, 7)
	case Month:
		return start.AddDate(0, 1, 0)
	case Quarter:
		return start.AddDate(0, 3, 0)
	case Year:
		return start.AddDate(1, 0, 0)
	}
	return start.AddDate(0, 0, 1)
}

// Label names the period of grouping g that holds d: "2026-11-23",
// "2026-W48" (ISO week and week-year), "2026-11", "2026-Q4", "2026".
func Label(g string, d time.Time) string {
	y, m, _ := d.Date()
	switch g {
	case Week:
		wy, w := d.ISOWeek()
		return fmt.Sprintf("%04d-W%02d", wy, w)
	case Month:
		return fmt.Sprintf("%04d-%02d", y, int(m))
	case Quarter:
		return fmt.Sprintf("%04d-Q%d", y, (int(m)+2)/3)
	case Year:
		return fmt.Sprintf("%04d", y)
	}
	return d.Format(time.DateOnly)
}

// Count returns how many periods r has, without listing them.
func Count(r Range) int {
	first, last := startOf(r.Grouping, r.Start), startOf(r.Grouping, r.End)
	days := int((last.Unix() - first.Unix()) / 86400)
	months := func() int { return (last.Year()-first.Year())*12 + int(last.Month()) - int(first.Month()) }
	switch r.Grouping {
	case Week:
		return days/7 + 1
	case Month:
		return months() + 1
	case Quarter:
		return months()/3 + 1
	case Year:
		return last.Year() - first.Year() + 1
	}
	return days + 1
}

// Periods lists the periods of r in order. The first and the last are cut to
// the range: they hold only its days.
func Periods(r Range) []Period {
	end := r.End.AddDate(0, 0, 1)
	out := make([]Period, 0, Count(r))
	for p := startOf(r.Grouping, r.Start); p.Before(end); p = next(r.Grouping, p) {
		out = append(out, Period{Label: Label(r.Grouping, p), Start: later(p, r.Start), End: earlier(next(r.Grouping, p), end)})
	}
	return out
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
