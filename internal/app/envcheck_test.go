package app

import (
	"reflect"
	"testing"
)

// A STRONGROOM_* variable that is no setting is named, with the setting it
// is closest to when that is at most two edits away; settings, the client
// commands' variables and the tests' are let be.
func TestUnknownVariables(t *testing.T) {
	got := unknownVariables([]string{
		"STRONGROOM_DATABSE=sqlite:x.db",       // one missing
		"STRONGROOM_LOGLEVEL=debug",            // one missing
		"STRONGROOM_RATE_LIMIT_ADRESS=10/1m",   // one missing
		"STRONGROOM_COLOUR=blue",               // nothing close
		"STRONGROOM_DATABASE=sqlite:y.db",      // a setting
		"STRONGROOM_URL=http://127.0.0.1:1",    // the client's
		"STRONGROOM_TOKEN=x",                   // the client's
		"STRONGROOM_TEST_POSTGRES=postgres://", // the tests'
		"PATH=/bin",
		"STRONGROOM_COLOUR=again", // once
		"strongroom_addr=x",       // not ours: names are case-sensitive
	})
	want := []unknownVariable{
		{"STRONGROOM_COLOUR", ""},
		{"STRONGROOM_DATABSE", "STRONGROOM_DATABASE"},
		{"STRONGROOM_LOGLEVEL", "STRONGROOM_LOG_LEVEL"},
		{"STRONGROOM_RATE_LIMIT_ADRESS", "STRONGROOM_RATE_LIMIT_ADDRESS"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestEditDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"ADDR", "ADDR", 0}, {"ADDR", "ADR", 1}, {"DATABSE", "DATABASE", 1}, {"ADRD", "ADDR", 2},
		{"ABC", "XYZ", 3}, {"A", "ABCDEFG", 3}, {"KITTEN", "SITTING", 3},
	} {
		if got := editDistance(c.a, c.b, 3); got != c.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}
