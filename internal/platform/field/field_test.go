package field_test

import (
	"encoding/json"
	"testing"

	"github.com/strongroom/strongroom/internal/platform/field"
)

func TestOptionalTellsAbsentNullAndValueApart(t *testing.T) {
	for _, c := range []struct {
		body      string
		set       bool
		value     *string
		wantError bool
	}{
		{`{}`, false, nil, false},
		{`{"v": null}`, true, nil, false},
		{`{"v": "x"}`, true, ptr("x"), false},
		{`{"v": ""}`, true, ptr(""), false},
		{`{"v": 3}`, true, nil, true},
	} {
		var r struct {
			V field.Optional[string] `json:"v"`
		}
		err := json.Unmarshal([]byte(c.body), &r)
		if (err != nil) != c.wantError {
			t.Fatalf("%s: error %v", c.body, err)
		}
		if err != nil {
			continue
		}
		if r.V.Set != c.set || (r.V.Value == nil) != (c.value == nil) || (c.value != nil && *r.V.Value != *c.value) {
			t.Errorf("%s: got set=%v value=%v", c.body, r.V.Set, r.V.Value)
		}
	}
}

func TestIsDateTakesCalendarDatesOfBusinessYears(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-11-25": true, "2024-02-29": true, "1900-01-01": true, "2199-12-31": true,
		"2025-02-29": false, "2026-13-01": false, "0026-01-01": false, "2200-01-01": false,
		"2026-1-5": false, "2026-11-25T00:00:00Z": false, "": false,
	} {
		if got := field.IsDate(s); got != want {
			t.Errorf("IsDate(%q) = %v, want %v", s, got, want)
		}
	}
}

func ptr(s string) *string { return &s }
