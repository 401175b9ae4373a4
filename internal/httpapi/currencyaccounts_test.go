package httpapi_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/strongroom/strongroom/internal/httpapi"
	"github.com/strongroom/strongroom/internal/mca"
)

// The currency-account list writes its JSON without reflection; its
// answer must be the very bytes encoding/json writes of the same record,
// whatever the rows hold, and the fast way must be the one taken for the
// rows the list shows every day.
func TestCurrencyAccountListEncodesAsEncodingJSON(t *testing.T) {
	at := func(t time.Time) *time.Time { return &t }
	note := func(s string) *string { return &s }
	plain := []mca.Entry{
		{Currency: "EUR", State: mca.Active, FirstRequestedAt: at(time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)), RequestsEnabled: true},
		{Currency: "GBP", State: mca.Failed, FailureNote: note("the partner refused the account <&> ok"),
			FirstRequestedAt: at(time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC))},
		{Currency: "JPY", State: mca.Available, RequestsEnabled: true},
		{Currency: "USD", State: mca.Processing, FailureNote: note(""), FirstRequestedAt: at(time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC))},
	}
	for _, tc := range []struct {
		name     string
		entries  []mca.Entry
		appended bool
	}{
		{"none", nil, true},
		{"empty", []mca.Entry{}, true},
		{"plain", plain, true},
		{"offset time", []mca.Entry{{Currency: "EUR", State: mca.Active, FirstRequestedAt: at(time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 5400)))}}, true},
		{"quote", []mca.Entry{plain[0], {Currency: "EUR", State: mca.Failed, FailureNote: note(`say "no"`)}}, false},
		{"backslash", []mca.Entry{{Currency: "EUR", State: mca.Failed, FailureNote: note(`a\b`)}}, false},
		{"control", []mca.Entry{{Currency: "EUR", State: mca.Failed, FailureNote: note("a\nb\tc\x01\x7f")}}, false},
		{"unicode", []mca.Entry{{Currency: "EUR", State: mca.Failed, FailureNote: note("refusé \u2028 \xff")}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answer, appended, err := httpapi.EncodeCurrencyAccounts(tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			reflected, err := httpapi.ReflectCurrencyAccounts(tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(answer, reflected) {
				t.Errorf("answer\n%s\nencoding/json\n%s", answer, reflected)
			}
			if appended != tc.appended {
				t.Errorf("written without reflection: %v, want %v", appended, tc.appended)
			}
		})
	}
	// A time encoding/json refuses is refused alike: a 500, never a cut body.
	_, _, err := httpapi.EncodeCurrencyAccounts([]mca.Entry{{Currency: "EUR", FirstRequestedAt: at(time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))}})
	if err == nil {
		t.Error("a year past 9999 encoded")
	}
}

// BenchmarkCurrencyAccountList encodes a list of ten accounts as the
// server answers it and by reflection.
func BenchmarkCurrencyAccountList(b *testing.B) {
	entries := make([]mca.Entry, 10)
	for i := range entries {
		at := time.Date(2026, 11, 22, 9, 0, i, 0, time.UTC)
		entries[i] = mca.Entry{Currency: "EUR", State: mca.Active, FirstRequestedAt: &at, RequestsEnabled: true}
	}
	b.Run("answer", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := httpapi.EncodeCurrencyAccounts(entries); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := httpapi.ReflectCurrencyAccounts(entries); err != nil {
				b.Fatal(err)
			}
		}
	})
}
