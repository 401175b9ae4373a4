package e2e_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"testing"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/internal/apitest"
)

// The happy paths go through the Go client (package client), as an
// integrator's code would, on a transport that validates every answer
// against api/openapi.yaml (apitest.Server.Client). What a typed client
// cannot send (unknown fields, malformed JSON, wrong types, missing
// headers) stays on apitest.Server.Do.

// answer is an answer of the generated client: its status, and the
// HTTPResponse and Body fields every one of them has.
type answer interface{ StatusCode() int }

// ok fails t unless the generated call r, err answered status, and returns r.
func ok[R answer](t testing.TB, status int) func(r R, err error) R {
	return func(r R, err error) R {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if r.StatusCode() != status {
			v := reflect.ValueOf(r).Elem()
			resp, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
			body, _ := v.FieldByName("Body").Interface().([]byte)
			t.Fatalf("%s %s: status %d, want %d; body %s", resp.Request.Method, resp.Request.URL.Path, r.StatusCode(), status, body)
		}
		return r
	}
}

// uuidOf parses the UUID of an identifier kept as a string.
func uuidOf(t testing.TB, s string) uuid.UUID {
	t.Helper()
	u, err := uuid.Parse(s)
	if err != nil {
		t.Fatalf("%q is not a UUID", s)
	}
	return u
}

// sandboxClient is a client with the sandbox token.
func sandboxClient(t testing.TB, s *apitest.Server) *client.Client {
	return s.Client(t, sbx)
}

func ptr[T any](v T) *T { return &v }

// decodeMessage decodes the whole realtime message m (its envelope and
// data) into v, one of the client's messages such as
// client.BillEventAppendedMessage.
func decodeMessage(t testing.TB, m apitest.Message, v any) {
	t.Helper()
	raw, err := json.Marshal(m)
	if err == nil {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		t.Fatalf("decode %s message: %v\n%s", m.Type, err, m.Data)
	}
}
