package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/strongroom/strongroom/internal/httpapi"
	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// invalidFields returns the fields of an invalid_request, or fails t.
func invalidFields(t *testing.T, err error) []string {
	t.Helper()
	e, ok := apierr.As(err)
	if !ok || e.Type != apierr.InvalidRequest {
		t.Fatalf("error %v; want invalid_request", err)
	}
	var fields []string
	for _, d := range e.Details.([]apierr.FieldError) {
		fields = append(fields, d.Field)
	}
	return fields
}

// TestDecodeRefusesNULAndInvalidUTF8 covers the strings encoding/json lets
// through: the \u0000 escape (a NUL, which PostgreSQL refuses in text) and
// bytes that are not UTF-8 (which encoding/json silently turns into U+FFFD).
func TestDecodeRefusesNULAndInvalidUTF8(t *testing.T) {
	bodies := httpapi.RequestBodies()
	for _, tc := range []struct {
		typ, body string
		fields    []string // the details' fields, in order
	}{
		{"identity.SignInRequest", `{"email": "ada\u0000@acme.test", "password": "correct horse battery"}`, []string{"email"}},
		{"identity.SignInRequest", "{\"email\": \"ada@acme.test\", \"password\": \"x\", \"device_name\": \"Ada\xff\"}", []string{"device_name"}},
		{"identity.SignInRequest", `{"email": "ada@acme.test", "password": "x", "trust_tokens": ["a", "b\u0000"]}`, []string{"trust_tokens[1]"}},
		{"sandbox.NewOrganization", `{"name": "Acme\u0000", "owner": {"email": "a@b.test", "password": "correct horse", "first_name": "A\u0000"}}`,
			[]string{"name", "owner.first_name"}},
		{"sandbox.NewOrganization", "{\"name\": \"Acme\", \"owner\": {\"email\": \"a\xc3\x28@b.test\", \"password\": \"correct horse\"}}", []string{"owner.email"}},
		{"payment.BatchRequest", `{"organization_id": "x", "payments": [{"quote_id": "q"}, {"quote_id": "q", "tag": "\u0000"}]}`, []string{"payments[1].tag"}},
		{"payment.ExecuteRequest", `{"quote_id": "q", "internal_notes": "\\u0000 is fine, \u0000 is not"}`, []string{"internal_notes"}},
		{"payment.RejectRequest", "{\"reason\": \"\xed\xa0\x80\"}", []string{"reason"}}, // an encoded surrogate is not UTF-8
		{"mca.RequestBody", `{"currencies": ["EUR", "US\u0000"]}`, []string{"currencies[1]"}},
		{"apikey.CreateRequest", `{"name\u0000": "x"}`, []string{""}},                                   // a member name
		{"stepup.CredentialRequest", "{\"public_key\": \"k\", \"label\": \"\x80\"}", []string{"label"}}, // a lone continuation byte
	} {
		dst := bodies[tc.typ]()
		err := httpapi.DecodeBytes([]byte(tc.body), dst)
		if got := invalidFields(t, err); !slices.Equal(got, tc.fields) {
			t.Errorf("%s %q: fields %q; want %q (%v)", tc.typ, tc.body, got, tc.fields, err)
		}
	}
	// A body with bytes that are not UTF-8 outside any string is not JSON at all.
	err := httpapi.DecodeBytes([]byte("{\"reason\": \"x\"}\xff"), bodies["payment.RejectRequest"]())
	if got := invalidFields(t, err); !slices.Equal(got, []string{""}) {
		t.Errorf("fields %q", got)
	}
	// Paths through nested objects and arrays.
	for body, want := range map[string][]string{
		`{"a": {"b": [1, {"c": "\u0000"}, "x\u0000"]}, "d": "y\u0000", "e": [[], {}, ["\u0000"]]}`: {"a.b[1].c", "a.b[2]", "d", "e[2][0]"},
		"[\"\\u0000\", {\"k\xff\": 1}, {\"ok\": \"\\u0000\"}]":                                     {"[0]", "[1]", "[2].ok"},
	} {
		var v any
		if got := invalidFields(t, httpapi.DecodeBytes([]byte(body), &v)); !slices.Equal(got, want) {
			t.Errorf("%q: fields %q; want %q", body, got, want)
		}
	}
	// Text that is merely unusual is kept: an escaped backslash before u0000, other escapes, astral characters.
	var ok struct {
		Name string `json:"name"`
	}
	if err := httpapi.DecodeBytes([]byte(`{"name": "\\u0000 \u0001 \ud83d\ude00 Müller"}`), &ok); err != nil || ok.Name != "\\u0000 \x01 😀 Müller" {
		t.Errorf("decoded %q, %v", ok.Name, err)
	}
}

func TestRequestTextInPathAndQuery(t *testing.T) {
	for _, tc := range []struct {
		target, path string
		fields       []string
	}{
		{"/x?status=pending&limit=10", "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", nil},
		{"/x?search=M%C3%BCller", "ok", nil},
		{"/x?status=a%00b", "ok", []string{"status"}},
		{"/x?cursor=%FF", "ok", []string{"cursor"}},
		{"/x?type=deposit&type=%C3%28", "ok", []string{"type"}},
		{"/x?a%00=1", "ok", []string{""}},
		{"/x", "a\x00b", []string{"payment_id"}},
		{"/x?kind=%00", "\xff", []string{"payment_id", "kind"}},
	} {
		r := httptest.NewRequest("GET", tc.target, nil)
		r.SetPathValue("payment_id", tc.path)
		err := httpapi.CheckRequestText(r, []string{"payment_id"})
		if tc.fields == nil {
			if err != nil {
				t.Errorf("%s %q: %v", tc.target, tc.path, err)
			}
			continue
		}
		if got := invalidFields(t, err); !slices.Equal(got, tc.fields) {
			t.Errorf("%s %q: fields %q; want %q", tc.target, tc.path, got, tc.fields)
		}
	}
}

// checkStrings fails t when a string reachable from v is not valid UTF-8
// or holds a NUL: what a decoded request may never carry to the database.
func checkStrings(t *testing.T, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			checkStrings(t, v.Elem(), path)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				checkStrings(t, v.Field(i), path+"."+v.Type().Field(i).Name)
			}
		}
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 { // raw bytes (json.RawMessage) are checked by their own decoders
			return
		}
		for i := 0; i < v.Len(); i++ {
			checkStrings(t, v.Index(i), path+"[]")
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			checkStrings(t, k, path+"{key}")
			checkStrings(t, v.MapIndex(k), path+"{}")
		}
	case reflect.String:
		if s := v.String(); !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
			t.Fatalf("decoded %s = %q", path, s)
		}
	}
}

// FuzzDecodeRequests decodes any body into every real request type: the
// answer is success or a 4xx error, never a panic or a 5xx, and what is
// decoded holds only valid text.
func FuzzDecodeRequests(f *testing.F) {
	bodies := httpapi.RequestBodies()
	names := make([]string, 0, len(bodies))
	for name := range bodies {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, seed := range []string{
		`{"email": "ada@acme.test", "password": "correct horse battery", "platform": "ios", "device_name": "iPhone"}`,
		`{"name": "Acme", "owner": {"email": "a@b.test", "password": "correct horse battery"}}`,
		`{"organization_id": "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", "payments": [{"quote_id": "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", "tag": "x"}]}`,
		`{"organization_id": "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", "payments": [{"quote_id": 1}]}`,
		`{"organization_id": "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", "rail": "fiat", "payment_contact_id": "01a20cc8-2d18-7b5e-a2f6-fb93ba88ced0", "source_currency": "EUR", "amount": "1000000000000000", "amount_side": "send"}`,
		`{"currency": "KWD", "amount": "999999999999999.999"}`,
		`{"name": "M\u0000", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00"}`,
		"{\"reason\": \"\xff\"}",
		`{"currencies": ["EUR", "USD"]}`,
		`{"seconds": 9223372036854775807}`,
		`{"status": "banned"}`,
		`{"sudo_session_id": "x", "method": "totp", "code": "123456"}`,
		`{"match_code": "123", "signature": "AAAA"}`,
		`{"ceremony_id": "x", "label": "Key", "credential": {"id": "x"}}`,
		`[]`, `null`, `""`, `{}`, `{"a":`, `{"name": "x"} {"name": "y"}`,
	} {
		for i := range names {
			f.Add(seed, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		name := names[int(which)%len(names)]
		dst := bodies[name]()
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		err := httpapi.Decode(r, dst)
		if err != nil {
			e, ok := apierr.As(err)
			if !ok {
				t.Fatalf("%s %q: untyped error %v (a 500)", name, body, err)
			}
			if status := httpapi.StatusOf(e.Type); status < 400 || status >= 500 {
				t.Fatalf("%s %q: %s answers %d", name, body, e.Type, status)
			}
			if e.Message == "" {
				t.Fatalf("%s %q: %s without a message", name, body, e.Type)
			}
			return
		}
		checkStrings(t, reflect.ValueOf(dst), name)
	})
}

// FuzzRequestText: any path value and query string is accepted as valid
// text or refused with 400 invalid_request, and what is accepted is text.
func FuzzRequestText(f *testing.F) {
	for _, seed := range [][2]string{{"status=pending", "x"}, {"a=%00", "x"}, {"cursor=%FF", "\x00"}, {"%zz=1&b", "ü"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, query, value string) {
		r := httptest.NewRequest("GET", "/x", nil)
		r.URL.RawQuery = query
		r.SetPathValue("id", value)
		err := httpapi.CheckRequestText(r, []string{"id"})
		if err != nil {
			if e, ok := apierr.As(err); !ok || httpapi.StatusOf(e.Type) != http.StatusBadRequest {
				t.Fatalf("%q %q: %v", query, value, err)
			}
			return
		}
		checkStrings(t, reflect.ValueOf(r.URL.Query()), "query")
		checkStrings(t, reflect.ValueOf(r.PathValue("id")), "path")
	})
}
