package apitest

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client"
)

// Client returns a client of the server that sends bearer ("" for none).
// Every response it receives is validated against api/openapi.yaml exactly
// as [Server.Do] validates them, and a mismatch fails t. By default the
// client does not retry (a test sees the 429 the server answered) and
// polls a step-up every 20 ms; opts come after these defaults and may
// change them.
func (s *Server) Client(t testing.TB, bearer string, opts ...client.Option) *client.Client {
	t.Helper()
	all := []client.Option{
		client.WithHTTP(s.ValidatingHTTP(t)),
		client.WithMaxRetries(0),
		client.WithStepUpPollInterval(20 * time.Millisecond),
	}
	if bearer != "" {
		all = append(all, client.WithToken(bearer))
	}
	c, err := client.New(s.URL, append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// ValidatingHTTP is an http.Client whose every response is validated
// against api/openapi.yaml as [Server.Do] validates them; a mismatch fails t.
func (s *Server) ValidatingHTTP(t testing.TB) *http.Client {
	return &http.Client{Transport: &validating{s: s, t: t, next: s.client.Transport}, Timeout: s.client.Timeout}
}

// validating is a RoundTripper that checks every answer against the document.
type validating struct {
	s    *Server
	t    testing.TB
	next http.RoundTripper
}

func (v *validating) RoundTrip(req *http.Request) (*http.Response, error) {
	next := v.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	v.s.check(v.t, req, &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw})
	return resp, nil
}

// check fails t when r, the answer to hr, does not match the document.
func (s *Server) check(t testing.TB, hr *http.Request, r *Response) {
	t.Helper()
	if err := s.validate(hr, r); err != nil {
		t.Errorf("%s %s → %d does not match api/openapi.yaml: %v\nbody: %s", hr.Method, hr.URL.RequestURI(), r.Status, err, r.Body)
	}
}

// ExpectClientError fails t unless err is a [*client.Error] with status
// and type, carrying a message and the request id, as [Response.ExpectError]
// checks an envelope.
func ExpectClientError(t testing.TB, err error, status int, typ string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("want a %d %s error, got %v", status, typ, err)
	}
	if e.StatusCode != status || e.Type != typ {
		t.Fatalf("got %d %q, want %d %q: %v", e.StatusCode, e.Type, status, typ, err)
	}
	if e.Message == "" {
		t.Errorf("error.message is empty")
	}
	if e.RequestID == "" {
		t.Errorf("error.request_id is empty")
	}
	return e
}
