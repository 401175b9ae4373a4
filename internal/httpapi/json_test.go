package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/strongroom/strongroom/internal/httpapi"
	"github.com/strongroom/strongroom/internal/platform/money"
)

// A record that cannot be encoded (here a money object in a coin, which
// money.Amount refuses to encode) is a defect of the server's: the answer
// is a logged 500 with the error envelope and the request id, never the
// handler's 200 with an empty or cut body.
func TestUnencodableRecordIsALoggedInternalError(t *testing.T) {
	var logs bytes.Buffer
	record := struct {
		Total money.Amount `json:"total"`
	}{money.Amount{Minor: 100_000_000, Currency: "USDC"}}
	h := httpapi.ServeRecord(slog.New(slog.NewJSONHandler(&logs, nil)), record)
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/api/v1/record", nil)
	req.Header.Set("X-Request-Id", "encode-test-1")
	h.ServeHTTP(rec, req)

	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d with body %q, want 500", rec.Code, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var body struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("body %q is not the error envelope alone: %v", rec.Body.String(), err)
	}
	if body.Error.Type != "internal_error" || body.Error.Message == "" || body.Error.RequestID != "encode-test-1" {
		t.Fatalf("envelope %+v, want internal_error with the request id", body.Error)
	}
	if strings.Contains(rec.Body.String(), "USDC") {
		t.Errorf("the encoding error reached the client: %s", rec.Body.String())
	}
	var logged bool
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		var entry map[string]any
		if err := json.Unmarshal([]byte(line), &entry); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if entry["level"] == "ERROR" && entry["request_id"] == "encode-test-1" && strings.Contains(entry["error"].(string), "USDC") {
			logged = true
		}
	}
	if !logged {
		t.Fatalf("the encoding failure was not logged as an error with the request id:\n%s", logs.String())
	}
}

// A record that encodes is written whole with its status.
func TestRecordIsEncodedWithItsStatus(t *testing.T) {
	h := httpapi.ServeRecord(slog.New(slog.DiscardHandler), map[string]string{"note": "<b>&</b>"})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/record", nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "{\"note\":\"<b>&</b>\"}\n" {
		t.Fatalf("%d %q, want 200 with the record, HTML characters as they are", rec.Code, rec.Body.String())
	}
}
