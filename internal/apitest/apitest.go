// Package apitest starts the real Strongroom server (app.Run on a free
// port) for end-to-end tests and speaks HTTP to it. Every response a test
// receives is validated against api/openapi.yaml, so the document stays true.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/strongroom/strongroom/api/spec"
	"github.com/strongroom/strongroom/internal/app"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/webhooksend"
	"github.com/strongroom/strongroom/internal/statement"
)

// E2EDatabaseEnv, set to "postgres", runs test servers on the PostgreSQL of
// dbtest.PostgresEnv instead of SQLite.
const E2EDatabaseEnv = "STRONGROOM_TEST_E2E_DATABASE"

// SandboxToken is the sandbox bearer of test servers.
const SandboxToken = "sbx_test_token_for_end_to_end_tests_0123456789"

// Server is a running Strongroom server.
type Server struct {
	URL    string
	Stdout *Buffer
	// Logs holds everything the server wrote to stderr: the JSON log lines.
	Logs   *Buffer
	cancel context.CancelFunc
	done   chan error
	doc    *openapi3.T
	router routers.Router
	client *http.Client
}

// Start runs a server with the manual clock on a new SQLite database; env
// adds or overrides variables (KEY=VALUE). The server stops when t ends.
func Start(t testing.TB, env ...string) *Server {
	t.Helper()
	return start(t, context.Background(), env)
}

// StartWithResolver is Start for a server that looks webhook hosts up with
// r (app.WithWebhookResolver): a test maps names to the addresses it needs.
func StartWithResolver(t testing.TB, r webhooksend.Resolver, env ...string) *Server {
	t.Helper()
	return start(t, app.WithWebhookResolver(context.Background(), r), env)
}

func start(t testing.TB, base context.Context, env []string) *Server {
	t.Helper()
	vars := defaults(t)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	doc, router := loadDocument(t)
	s := &Server{Stdout: &Buffer{}, Logs: &Buffer{}, done: make(chan error, 1), doc: doc, router: router, client: newClient()}
	// The server checks the test's variables, not this process's, for unknown names.
	var environ []string
	for k, v := range vars {
		environ = append(environ, k+"="+v)
	}
	ctx, cancel := context.WithCancel(app.WithEnviron(base, environ))
	s.cancel = cancel
	go func() {
		s.done <- app.Run(ctx, []string{"server"}, func(k string) string { return vars[k] }, s.Stdout, s.Logs)
	}()
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	// Generous: tests start servers in parallel, and on a loaded machine
	// migrating a PostgreSQL schema alone can take many seconds.
	deadline := time.Now().Add(startTimeout)
	for s.URL == "" {
		if m := listening.FindStringSubmatch(s.Logs.String()); m != nil {
			s.URL = m[1]
			break
		}
		select {
		case err := <-s.done:
			t.Fatalf("server exited before listening: %v\n%s", err, s.Logs.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("server did not start listening in time:\n%s", s.Logs.String())
		}
	}
	t.Cleanup(func() {
		_ = s.Stop()
		checkLedger(t, vars["STRONGROOM_DATABASE"])
	})
	return s
}

// defaults are the variables of a test server: a new database (NewDatabase),
// the manual clock, and known secrets. The ledger of the database is
// checked when t ends.
func defaults(t testing.TB) map[string]string {
	vars := map[string]string{
		"STRONGROOM_ADDR":          "127.0.0.1:0",
		"STRONGROOM_DATABASE":      NewDatabase(t),
		"STRONGROOM_FILES":         "file:" + filepath.Join(t.TempDir(), "files"),
		"STRONGROOM_ENV":           "test",
		"STRONGROOM_CLOCK":         "manual",
		"STRONGROOM_SANDBOX_TOKEN": SandboxToken,
		"STRONGROOM_SECRET":        "end-to-end-test-root-secret-0123456789abcdef",
		"STRONGROOM_LOG_LEVEL":     "debug",
		// Tests sign in many times from one address, and poll for background
		// work (bill extraction reads one organization's bills one at a time)
		// faster than a person would; the rate-limit tests set their own limits.
		"STRONGROOM_RATE_LIMIT_SIGN_IN":        "600/1m",
		"STRONGROOM_RATE_LIMIT_ADDRESS":        "6000/1m",
		"STRONGROOM_RATE_LIMIT_CREDENTIAL":     "3000/1m",
		"STRONGROOM_RATE_LIMIT_WRONG_PASSWORD": "600/1m",
		"STRONGROOM_SLOW_SIGN_IN_DELAY":        "1ms",
	}
	return vars
}

// startTimeout is how long a test server may take to listen.
const startTimeout = 90 * time.Second

// newClient bounds each test request: long enough for a password sign-in
// (argon2, queued behind others') on two cores running the race detector
// and a hundred test servers at once, short enough to end a hung request.
func newClient() *http.Client { return &http.Client{Timeout: 90 * time.Second} }

// checkLedger verifies the ledger invariant (every entry balances per
// currency, balances equal the sum of their postings, no customer balance
// below zero) on the database a test server used, after every test.
func checkLedger(t testing.TB, dsn string) {
	ctx := context.Background()
	d, err := db.Open(ctx, dsn)
	if err != nil {
		t.Errorf("ledger check: %v", err)
		return
	}
	defer d.Close()
	if err := ledger.CheckInvariants(ctx, d.Reader()); err != nil {
		t.Errorf("ledger invariant broken: %v", err)
	}
	if err := reconcileStatements(ctx, d); err != nil {
		t.Errorf("statements do not reconcile with the ledger: %v", err)
	}
}

// reconcileStatements checks, for every organization and currency the
// ledger holds, that a statement of the year up to the last booked day
// closes at the ledger's available balance, and that its entries run from
// its opening to its closing balance (docs/api.md, Statements).
func reconcileStatements(ctx context.Context, d *db.DB) error {
	last, err := ledger.LastRecorded(ctx, d.Reader())
	if err != nil || last.IsZero() {
		return err
	}
	to := last.Truncate(24 * time.Hour)
	if today := time.Now().UTC().Truncate(24 * time.Hour); today.After(to) {
		to = today
	}
	accounts, err := ledger.AvailableAccounts(ctx, d.Reader())
	if err != nil {
		return err
	}
	var problems []error
	for _, a := range accounts {
		st, err := statement.Read(ctx, d.Reader(), a.OrganizationID, statement.Query{Currency: a.Currency, From: to.AddDate(0, 0, -365), To: to, Format: statement.JSON})
		if err != nil {
			return err
		}
		_, err = st.WriteTo(ctx, io.Discard) // fails unless opening + entries = closing
		st.Close()
		if err != nil {
			problems = append(problems, fmt.Errorf("organization %s %s: %w", a.OrganizationID, a.Currency, err))
		} else if st.Closing != a.Balance {
			problems = append(problems, fmt.Errorf("organization %s %s: statement closes at %d, the ledger holds %d", a.OrganizationID, a.Currency, st.Closing, a.Balance))
		}
	}
	return errors.Join(problems...)
}

// Stop stops the server as SIGTERM would and returns what Run returned.
func (s *Server) Stop() error {
	if s.cancel == nil {
		return nil
	}
	s.cancel()
	s.cancel = nil
	select {
	case err := <-s.done:
		return err
	case <-time.After(15 * time.Second):
		return fmt.Errorf("server did not stop within 15 s")
	}
}

var (
	docOnce   sync.Once
	docShared *openapi3.T
	docRouter routers.Router
	docErr    error
)

func loadDocument(t testing.TB) (*openapi3.T, routers.Router) {
	docOnce.Do(func() {
		docShared, docErr = spec.Load()
		if docErr == nil {
			docErr = docShared.Validate(context.Background())
		}
		if docErr == nil {
			docRouter, docErr = legacy.NewRouter(docShared)
		}
	})
	if docErr != nil {
		t.Fatalf("api/openapi.yaml: %v", docErr)
	}
	return docShared, docRouter
}

// Response is a response whose body has been read.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Request describes one call.
type Request struct {
	Method, Path string
	// Body is encoded as JSON unless it is a string or []byte (sent as is)
	// or another io.Reader (sent as is, chunked: no Content-Length).
	Body   any
	Bearer string
	Header map[string]string
}

// Do sends req and fails t when the response does not match the OpenAPI document.
func (s *Server) Do(t testing.TB, req Request) *Response {
	t.Helper()
	var body io.Reader
	switch b := req.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	case io.Reader:
		body = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	hr, err := http.NewRequest(req.Method, s.URL+req.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if req.Bearer != "" {
		hr.Header.Set("Authorization", "Bearer "+req.Bearer)
	}
	for k, v := range req.Header {
		hr.Header.Set(k, v)
	}
	resp, err := s.client.Do(hr)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.Path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := &Response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
	s.check(t, hr, r)
	return r
}

// Get is Do for a GET.
func (s *Server) Get(t testing.TB, path, bearer string) *Response {
	t.Helper()
	return s.Do(t, Request{Method: "GET", Path: path, Bearer: bearer})
}

// Post is Do for a POST with a JSON body.
func (s *Server) Post(t testing.TB, path, bearer string, body any) *Response {
	t.Helper()
	return s.Do(t, Request{Method: "POST", Path: path, Bearer: bearer, Body: body})
}

// validate checks r against the operation the document gives for hr. A
// response to a path or method the document does not know must be the error envelope.
func (s *Server) validate(hr *http.Request, r *Response) error {
	if r.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	route, params, err := s.router.FindRoute(hr)
	if err != nil {
		if r.Status != http.StatusNotFound && r.Status != http.StatusMethodNotAllowed {
			return fmt.Errorf("operation not in the document (%v) yet answered %d", err, r.Status)
		}
		if s.doc.Components == nil || s.doc.Components.Schemas["Error"] == nil {
			return fmt.Errorf("components.schemas.Error is missing")
		}
		var v any
		if err := json.Unmarshal(r.Body, &v); err != nil {
			return err
		}
		return s.doc.Components.Schemas["Error"].Value.VisitJSON(v)
	}
	validate := func(route *routers.Route, excludeBody bool) error {
		input := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
			Status:                 r.Status,
			Header:                 r.Header,
			Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true, ExcludeResponseBody: excludeBody},
		}
		input.SetBodyBytes(r.Body)
		return openapi3filter.ValidateResponse(context.Background(), input)
	}
	if !bodyValidatedAsOpenAPI30(route, r) {
		return validate(route, false)
	}
	// The status and headers as the document's version says; the body by
	// the validator kin-openapi would end up using for its schema anyway,
	// without compiling the schema for JSON Schema 2020-12 first.
	if err := validate(route, true); err != nil {
		return err
	}
	as30 := *route
	as30.Spec = docAs30()
	return validate(&as30, false)
}

// JSON decodes the body into a generic map.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return m
}

// Decode decodes the body into v.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode body: %v\n%s", err, r.Body)
	}
}

// ErrorBody is the error envelope.
type ErrorBody struct {
	Error struct {
		Type      string `json:"type"`
		Message   string `json:"message"`
		RequestID string `json:"request_id"`
		Details   []struct {
			Field   string `json:"field"`
			Message string `json:"message"`
		} `json:"details"`
		StepUp map[string]any `json:"step_up"`
	} `json:"error"`
}

// ExpectError fails t unless r is the error envelope with status and type,
// carrying the same request id as the x-request-id header.
func (r *Response) ExpectError(t testing.TB, status int, typ string) ErrorBody {
	t.Helper()
	var e ErrorBody
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("want an error envelope, got %d %s", r.Status, r.Body)
	}
	if r.Status != status || e.Error.Type != typ {
		t.Fatalf("got %d %q, want %d %q; body %s", r.Status, e.Error.Type, status, typ, r.Body)
	}
	if e.Error.Message == "" {
		t.Errorf("error.message is empty")
	}
	if id := r.Header.Get("X-Request-Id"); id == "" || id != e.Error.RequestID {
		t.Errorf("x-request-id %q != error.request_id %q", id, e.Error.RequestID)
	}
	return e
}

// ExpectStatus fails t unless r has status.
func (r *Response) ExpectStatus(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	return r
}

// Buffer is an io.Writer safe for the server's concurrent writes.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
