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
)

func TestPanicBecomesInternalErrorEnvelope(t *testing.T) {
	var logs bytes.Buffer
	h := httpapi.Observe(slog.New(slog.NewJSONHandler(&logs, nil)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("database password is hunter2")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/boom", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	var body struct {
		Error struct {
			Type      string `json:"type"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body.Error.Type != "internal_error" || body.Error.RequestID == "" || body.Error.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("envelope = %+v", body.Error)
	}
	if strings.Contains(rec.Body.String(), "hunter2") {
		t.Fatal("the panic's text reached the client")
	}
	if !strings.Contains(logs.String(), `"msg":"panic"`) || !strings.Contains(logs.String(), body.Error.RequestID) {
		t.Fatalf("the panic was not logged with the request id:\n%s", logs.String())
	}
}

type fuzzBody struct {
	Name   string            `json:"name"`
	Count  *int              `json:"count"`
	Tags   []string          `json:"tags"`
	Nested *struct{ A bool } `json:"nested"`
}

func FuzzDecode(f *testing.F) {
	for _, seed := range []string{`{"name":"x"}`, `{"count": 1.5}`, `{"nested": {"A": true}} []`, `{"unknown": 1}`, "", "null", `"str"`, `{"tags": [1]}`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		var dst fuzzBody
		// Any input is either decoded or refused with a typed error; never a panic.
		_ = httpapi.Decode(r, &dst)
	})
}
