package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// Text a client sends must be valid UTF-8 without the NUL character: in JSON
// body strings, query parameters and path values alike. Such a
// string is 400 invalid_request naming the field, here in the decoding layer,
// before any of it reaches the database (PostgreSQL refuses NUL in text, and
// encoding/json would silently turn invalid UTF-8 into U+FFFD).

const (
	msgNUL       = "must not contain the NUL character (U+0000)."
	msgUTF8      = "must be valid UTF-8 text."
	msgBadKey    = "has a member name that is not valid text (it holds a NUL character or invalid UTF-8)."
	maxTextIssue = 20 // details listed at most; a body full of bad strings gets the first ones
)

// textProblem says what is wrong with s as text, or "".
func textProblem(s string) string {
	switch {
	case !utf8.ValidString(s):
		return msgUTF8
	case strings.IndexByte(s, 0) >= 0:
		return msgNUL
	}
	return ""
}

var escapedNUL = []byte(`\u0000`)

// checkJSONText refuses a JSON body with a string (a value or a member name)
// that is invalid UTF-8 or holds a NUL (written \u0000); details name each
// field as the validators do ("owner.email", "payments[0].tag"). A body
// that is not JSON passes: the decoder then reports it.
func checkJSONText(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, escapedNUL) {
		return nil // the common case: nothing to look for
	}
	w := textWalker{dec: json.NewDecoder(bytes.NewReader(body))}
	w.dec.UseNumber()
	for {
		tok, err := w.dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if len(w.issues) > 0 {
				break
			}
			if !utf8.Valid(body) {
				return apierr.InvalidField("", "The body is not valid UTF-8 text.")
			}
			return nil // not JSON: the decoder says so
		}
		end := w.dec.InputOffset()
		raw := body[w.offset:end] // the token, after any separators and spaces
		w.offset = end
		w.token(tok, raw)
		if len(w.issues) >= maxTextIssue {
			break
		}
	}
	return w.issues.Err()
}

// textWalker follows the path to each token of a JSON document.
type textWalker struct {
	dec    *json.Decoder
	offset int64
	stack  []frame
	issues apierr.Fields
}

// frame is an open object or array: its path, and where it is.
type frame struct {
	path    string
	array   bool
	index   int    // arrays: index of the next element
	key     string // objects: the member being read
	wantKey bool   // objects: the next string is a member name
}

// child is the path of the value about to be read in f.
func (f *frame) child() string {
	if f.array {
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	if f.path == "" {
		return f.key
	}
	return f.path + "." + f.key
}

func (w *textWalker) token(tok json.Token, raw []byte) {
	var top *frame
	if n := len(w.stack); n > 0 {
		top = &w.stack[n-1]
	}
	path := ""
	if top != nil && !(!top.array && top.wantKey) {
		path = top.child()
	}
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{', '[':
			w.stack = append(w.stack, frame{path: path, array: v == '[', wantKey: v == '{'})
			return // the value ends at its closing delimiter
		case '}', ']':
			w.stack = w.stack[:len(w.stack)-1]
		}
	case string:
		if top != nil && !top.array && top.wantKey {
			if textProblem(v) != "" || !utf8.Valid(raw) {
				w.issues.Add(top.path, msgBadKey)
				top.key = "?"
			} else {
				top.key = v
			}
			top.wantKey = false
			return
		}
		if !utf8.Valid(raw) {
			w.issues.Add(path, msgUTF8)
		} else if strings.IndexByte(v, 0) >= 0 {
			w.issues.Add(path, msgNUL)
		}
	}
	w.valueDone()
}

// valueDone moves the innermost container past the value just read.
func (w *textWalker) valueDone() {
	if n := len(w.stack); n > 0 {
		top := &w.stack[n-1]
		if top.array {
			top.index++
		} else {
			top.wantKey = true
		}
	}
}

// checkRequestText refuses a path value or query parameter (name or value)
// that is invalid UTF-8 or holds a NUL; names lists the route's wildcards.
func checkRequestText(r *http.Request, names []string) error {
	var f apierr.Fields
	for _, name := range names {
		if msg := textProblem(r.PathValue(name)); msg != "" {
			f.Add(name, msg)
		}
	}
	if r.URL.RawQuery != "" {
		q, _ := url.ParseQuery(r.URL.RawQuery) // what the handlers read (r.URL.Query drops malformed pairs too)
		for _, name := range slices.Sorted(maps.Keys(q)) {
			values := q[name]
			if textProblem(name) != "" {
				f.Add("", "A query parameter name is not valid text (it holds a NUL character or invalid UTF-8).")
				continue
			}
			for _, v := range values {
				if msg := textProblem(v); msg != "" {
					f.Add(name, msg)
					break
				}
			}
		}
	}
	return f.Err()
}

// wildcards lists the names of a route pattern's wildcards ("{payment_id}").
func wildcards(path string) []string {
	var names []string
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.TrimPrefix(seg, "{"), "}"))
		}
	}
	return names
}
