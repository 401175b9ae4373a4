package apitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recordingTB records the failures reported to it instead of failing.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// fakeServer is a Server whose URL answers with handler, to see what the
// validation of answers makes of answers the real server would not give.
func fakeServer(t *testing.T, handler http.HandlerFunc) *Server {
	doc, router := loadDocument(t)
	hs := httptest.NewServer(handler)
	t.Cleanup(hs.Close)
	return &Server{URL: hs.URL, doc: doc, router: router, client: newClient()}
}

func TestClientValidatesEveryAnswer(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		requestID  bool
		want       string // in the failure; "" for none
	}{
		{"a healthz answer as documented", `{"status":"ok"}`, true, ""},
		{"no X-Request-Id", `{"status":"ok"}`, false, "no X-Request-Id header"},
		{"a body that is not the documented one", `{"status":"sick"}`, true, "does not match api/openapi.yaml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fakeServer(t, func(w http.ResponseWriter, r *http.Request) {
				if tc.requestID {
					w.Header().Set("X-Request-Id", "req-1")
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(tc.body))
			})
			rec := &recordingTB{TB: t}
			r, err := s.Client(rec, "").API().HealthzWithResponse(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Body) != tc.body {
				t.Errorf("the client got body %q, want %q (the validation must hand the body on)", r.Body, tc.body)
			}
			got := strings.Join(rec.errors, "\n")
			if tc.want == "" && got != "" {
				t.Errorf("failed a valid answer: %s", got)
			}
			if tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("failures %q, want one containing %q", got, tc.want)
			}
		})
	}
}
