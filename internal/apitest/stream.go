package apitest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/getkin/kin-openapi/openapi3filter"
)

// Message is one message of a realtime stream, already validated against
// the document's RealtimeMessage.
type Message struct {
	ID             string          `json:"id"`
	Type           string          `json:"type"`
	OrganizationID string          `json:"organization_id"`
	OccurredAt     time.Time       `json:"occurred_at"`
	Data           json.RawMessage `json:"data"`
	// EventID is the SSE event's id: field (server-sent events only).
	EventID string `json:"-"`
}

// Decode decodes the message's data into v.
func (m Message) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(m.Data, v); err != nil {
		t.Fatalf("decode %s data: %v\n%s", m.Type, err, m.Data)
	}
}

// Stream is an open realtime connection: server-sent events or a WebSocket.
type Stream struct {
	// Header is the header of the response that opened the stream.
	Header   http.Header
	messages chan Message
	done     chan struct{}
	err      error // why the stream ended, once done is closed
	stop     context.CancelFunc
	skip     map[string]bool // message ids Next and Pending pass over
}

// Skip makes Next and Pending pass over the messages with these ids: those
// the test knows were committed before the stream opened, which a new
// connection may still carry.
func (st *Stream) Skip(ids ...string) {
	if st.skip == nil {
		st.skip = map[string]bool{}
	}
	for _, id := range ids {
		st.skip[id] = true
	}
}

// Events opens server-sent events at path (Accept: text/event-stream) with
// bearer and the extra header; the answer must be 200 as the document says.
// Every message is validated against RealtimeMessage. The stream is closed
// when t ends.
func (s *Server) Events(t testing.TB, path, bearer string, header map[string]string) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	hr.Header.Set("Accept", "text/event-stream")
	if bearer != "" {
		hr.Header.Set("Authorization", "Bearer "+bearer)
	}
	for k, v := range header {
		hr.Header.Set(k, v)
	}
	resp, err := (&http.Client{}).Do(hr) // no timeout: the stream lasts
	if err != nil {
		cancel()
		t.Fatalf("GET %s: %v", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		cancel()
		t.Fatalf("GET %s (event stream) → %d, want 200", path, resp.StatusCode)
	}
	if err := s.validateOpening(hr, resp); err != nil {
		t.Errorf("GET %s → %d does not match api/openapi.yaml: %v", path, resp.StatusCode, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type %q, want text/event-stream", ct)
	}
	st := s.newStream(resp.Header, cancel)
	go func() {
		defer resp.Body.Close()
		st.finish(s.readEvents(ctx, bufio.NewScanner(resp.Body), st.messages))
	}()
	t.Cleanup(st.Close)
	return st
}

// WebSocket opens a WebSocket at path with bearer; the answer must be 101
// as the document says. Every message is validated against RealtimeMessage.
// The stream is closed when t ends.
func (s *Server) WebSocket(t testing.TB, path, bearer string) *Stream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	header := http.Header{}
	if bearer != "" {
		header.Set("Authorization", "Bearer "+bearer)
	}
	dialCtx, dialCancel := context.WithTimeout(ctx, 10*time.Second)
	defer dialCancel()
	conn, resp, err := websocket.Dial(dialCtx, "ws"+strings.TrimPrefix(s.URL, "http")+path, &websocket.DialOptions{HTTPHeader: header})
	if err != nil {
		cancel()
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("WebSocket %s: %v (status %d)", path, err, status)
	}
	conn.SetReadLimit(1 << 20)
	hr, _ := http.NewRequest(http.MethodGet, s.URL+path, nil)
	if err := s.validateOpening(hr, resp); err != nil {
		t.Errorf("WebSocket %s → %d does not match api/openapi.yaml: %v", path, resp.StatusCode, err)
	}
	st := s.newStream(resp.Header, cancel)
	go func() {
		defer conn.CloseNow()
		for {
			_, raw, err := conn.Read(ctx)
			if err != nil {
				st.finish(err)
				return
			}
			m, err := s.message(raw)
			if err != nil {
				st.finish(err)
				return
			}
			select {
			case st.messages <- m:
			case <-ctx.Done():
				st.finish(ctx.Err())
				return
			}
		}
	}()
	t.Cleanup(st.Close)
	return st
}

func (s *Server) newStream(h http.Header, cancel context.CancelFunc) *Stream {
	return &Stream{Header: h, messages: make(chan Message, 1000), done: make(chan struct{}), stop: cancel}
}

func (st *Stream) finish(err error) {
	st.err = err
	close(st.done)
}

// validateOpening checks the status and headers of the response that
// opened a stream (its body is the stream itself).
func (s *Server) validateOpening(hr *http.Request, resp *http.Response) error {
	if resp.Header.Get("X-Request-Id") == "" {
		return fmt.Errorf("no X-Request-Id header")
	}
	route, params, err := s.router.FindRoute(hr)
	if err != nil {
		return err
	}
	return openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route},
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, ExcludeResponseBody: true, MultiError: true},
	})
}

// message decodes raw and validates it against RealtimeMessage.
func (s *Server) message(raw []byte) (Message, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return Message{}, fmt.Errorf("message is not JSON: %w: %s", err, raw)
	}
	schema := s.doc.Components.Schemas["RealtimeMessage"]
	if schema == nil {
		return Message{}, errors.New("components.schemas.RealtimeMessage is missing")
	}
	if err := schema.Value.VisitJSON(v); err != nil {
		return Message{}, fmt.Errorf("message does not match RealtimeMessage: %w\n%s", err, raw)
	}
	var m Message
	err := json.Unmarshal(raw, &m)
	return m, err
}

// readEvents parses server-sent events: an event's id: and data: lines end
// at a blank line; comment lines (keep-alives) are skipped.
func (s *Server) readEvents(ctx context.Context, sc *bufio.Scanner, out chan<- Message) error {
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var id, data string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "data: "):
			if data != "" {
				return fmt.Errorf("event with two data lines")
			}
			data = strings.TrimPrefix(line, "data: ")
		case line == "":
			if data == "" {
				continue
			}
			m, err := s.message([]byte(data))
			if err != nil {
				return err
			}
			m.EventID = id
			select {
			case out <- m:
			case <-ctx.Done():
				return ctx.Err()
			}
			id, data = "", ""
		default:
			return fmt.Errorf("unexpected line in event stream: %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return errors.New("event stream ended")
}

// Next returns the next message, failing t when none comes within wait or
// the stream ends first.
func (st *Stream) Next(t testing.TB, wait time.Duration) Message {
	t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m := <-st.messages:
			if !st.skip[m.ID] {
				return m
			}
		case <-st.done:
			// Messages that arrived before the end come first.
			if m, ok := st.take(); ok {
				return m
			}
			t.Fatalf("stream ended before the next message: %v", st.err)
			return Message{}
		case <-timer.C:
			t.Fatalf("no message within %s", wait)
			return Message{}
		}
	}
}

// take returns the next message not skipped, without waiting.
func (st *Stream) take() (Message, bool) {
	for {
		select {
		case m := <-st.messages:
			if !st.skip[m.ID] {
				return m, true
			}
		default:
			return Message{}, false
		}
	}
}

// Ended waits up to wait for the server to end the stream and returns why
// the client saw it end (for a WebSocket, a websocket.CloseError).
func (st *Stream) Ended(t testing.TB, wait time.Duration) error {
	t.Helper()
	select {
	case <-st.done:
		return st.err
	case <-time.After(wait):
		t.Fatalf("stream still open after %s", wait)
		return nil
	}
}

// Close closes the client side of the stream.
func (st *Stream) Close() { st.stop() }

// Pending returns the messages received and not yet taken by Next, without
// waiting: after Ended, what the server sent before it ended the stream.
func (st *Stream) Pending() []Message {
	var out []Message
	for {
		m, ok := st.take()
		if !ok {
			return out
		}
		out = append(out, m)
	}
}
