package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// maxBody is the largest JSON body accepted (uploads have their own limit).
const maxBody = 1 << 20

// validator is implemented by request types that check their own fields
// after decoding (required fields, ranges, enums).
type validator interface {
	Validate() error
}

// decode reads a JSON body into dst strictly: unknown fields, trailing data,
// wrong types, strings holding NUL or invalid UTF-8, and bodies over 1 MiB
// are refused with a typed error whose details name the field. It then runs
// dst's Validate, if it has one.
func decode(r *http.Request, dst any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		if mt, _, err := mime.ParseMediaType(ct); err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return apierr.InvalidField("", "The body must be JSON (Content-Type: application/json).")
		}
	}
	body, err := readBody(r)
	if err != nil {
		return err
	}
	return decodeBytes(body, dst)
}

// decodeOptional is decode for a body that may be left out: an empty body
// leaves dst as it is.
func decodeOptional(r *http.Request, dst any) error {
	body, err := readBody(r)
	if err != nil || len(bytes.TrimSpace(body)) == 0 {
		return err
	}
	return decodeBytes(body, dst)
}

// readBody reads a body of at most 1 MiB; a larger one is payload_too_large.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, apierr.New(apierr.PayloadTooLarge, "The request body is larger than 1 MiB.")
		}
		return nil, apierr.InvalidField("", "The request body could not be read.")
	}
	return body, nil
}

// decodeBytes is decode for a body already read.
func decodeBytes(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.InvalidField("", "A JSON object body is required.")
	}
	if err := checkJSONText(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return decodeError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return apierr.InvalidField("", "The body must hold a single JSON value; unexpected data follows it.")
	}
	if v, ok := dst.(validator); ok {
		return v.Validate()
	}
	return nil
}

// noBody refuses a body on an operation that takes none, so a client that
// thinks it is sending options learns they are ignored.
func noBody(r *http.Request) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, 64))
	if err != nil {
		return apierr.InvalidField("", "The request body could not be read.")
	}
	if t := bytes.TrimSpace(b); len(t) > 0 && string(t) != "{}" && string(t) != "null" {
		return apierr.InvalidField("", "This operation takes no body.")
	}
	return nil
}

// decodeError turns encoding/json's errors into field details.
func decodeError(err error) error {
	var syntax *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax), errors.Is(err, io.ErrUnexpectedEOF):
		return apierr.InvalidField("", "The body is not valid JSON.")
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return apierr.InvalidField("", "The body must be a JSON object.")
		}
		return apierr.InvalidField(field, fmt.Sprintf("must be %s.", jsonKind(typeErr.Type.Kind().String())))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		// encoding/json reports unknown fields only through this message.
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return apierr.InvalidField(field, "is not a known field.")
	}
	var ae *apierr.Error
	if errors.As(err, &ae) { // from a field type's UnmarshalJSON
		return ae
	}
	return apierr.InvalidField("", "The body could not be decoded: "+err.Error())
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	}
	return "of another type"
}

// list is an answer holding every item at once (no pages).
type list[T any] struct {
	Data []T `json:"data"`
}

// writeJSON answers with v encoded as JSON and status. It encodes before
// it writes anything: a value that cannot be encoded returns an error
// (which the handler returns, so the client gets a logged 500 envelope)
// instead of a status with an empty or cut body.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	body, err := encodeJSON(v)
	if err != nil {
		return fmt.Errorf("encode the %d response: %w", status, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // a client gone mid-answer has nothing to be told
	return nil
}

// jsonAppender is an answer that writes its own JSON without reflection
// (appended to b; given nil, it makes room for the whole answer and its
// final newline), byte for byte what encodeJSON writes of it otherwise; where it cannot
// (ok false: a string that needs escaping, say) encodeJSON's general way
// writes it. For the answers programs poll.
type jsonAppender interface {
	appendJSON(b []byte) (_ []byte, ok bool)
}

// encodeJSON is the encoding of every JSON answer: HTML characters left as
// they are, one value per body ending in a newline.
func encodeJSON(v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok {
		if b, ok := a.appendJSON(nil); ok {
			return append(b, '\n'), nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
