// Package page implements keyset pagination with opaque, signed cursors.
//
// Lists page on (sort value, id) rather than OFFSET so a page costs the same
// however deep the client has walked and rows inserted meanwhile neither
// repeat nor vanish. The cursor is signed so clients cannot steer the query
// with hand-made positions or come to depend on the cursor's layout, and it
// is bound to the list's filter values because a position is only meaningful
// within the result set it was taken from.
package page

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// Limits of the limit query parameter (docs/api.md, Pagination).
const (
	DefaultLimit = 50
	MaxLimit     = 100
)

// maxKeyLen caps len(Sort)+len(ID) so that, together with maxCursorLen, an
// arbitrary cursor string causes bounded work before its MAC is checked.
// Sort values (timestamps, amounts, names, ids) are far below it, and the
// cursor of a longer key would not survive the URL limits of common proxies.
const maxKeyLen = 6000

// maxCursorLen is the encoded length of a maxKeyLen key: version byte, two
// length varints (at most 3 bytes each at this size), the key in base64, a
// dot and the 43-character MAC.
const maxCursorLen = ((1+2*3+maxKeyLen)*4+2)/3 + 1 + 43

// Key is a keyset position: the sort value of the last item and its id (tie-breaker).
type Key struct {
	Sort string
	ID   string
}

// Signer mints and checks cursors. It takes a key derived for cursors
// alone, so a cursor MAC can never stand in for a session or API-key MAC.
type Signer struct {
	key []byte
}

// NewSigner returns a Signer using key for HMAC-SHA-256. It panics on an
// empty key, because unsigned cursors would silently accept any position.
func NewSigner(key []byte) *Signer {
	if len(key) == 0 {
		panic("page: NewSigner with an empty key")
	}
	return &Signer{key: slices.Clone(key)}
}

// Request is a validated page request. Store code fetches Limit+1 rows
// strictly after After (nil: from the start) so Build can tell whether
// another page exists without a COUNT.
type Request struct {
	Limit int
	After *Key
	// binding is the digest of the filter values the request was made
	// with; Build signs it into the next cursor. Empty when no filter has
	// a value, so a Request{Limit: n} built by hand pages an unfiltered list.
	binding []byte
}

// Page is one page of a list as the API returns it.
type Page[T any] struct {
	Data       []T     `json:"data"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
}

// Parse reads `limit` and `cursor` from q. filters names the query
// parameters the list filters on; the cursor must have been minted for the
// same values of those parameters (each parameter's values in any order),
// since resuming one result set's position in another would skip or repeat
// rows without any error.
//
// Errors: invalid_request for a bad limit, invalid_cursor for a cursor that
// is malformed, not signed by this Signer's key, or minted under other
// filter values.
func (s *Signer) Parse(q url.Values, filters ...string) (Request, error) {
	req := Request{Limit: DefaultLimit, binding: bind(q, filters)}
	if vs, ok := q["limit"]; ok {
		if len(vs) != 1 {
			return Request{}, apierr.InvalidField("limit", "limit must be given only once.")
		}
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > MaxLimit {
			return Request{}, apierr.InvalidField("limit", "limit must be a whole number from 1 to 100.")
		}
		req.Limit = n
	}
	if vs, ok := q["cursor"]; ok {
		if len(vs) != 1 {
			return Request{}, invalidCursor()
		}
		k, ok := s.open(vs[0], req.binding)
		if !ok {
			return Request{}, invalidCursor()
		}
		req.After = &k
	}
	return req, nil
}

// Build turns the rows fetched with LIMIT req.Limit+1 into a page: the
// extra row only signals that more exist, so it is dropped and the cursor
// points at the last row the client actually receives.
//
// A cursor is only minted for keys with len(Sort)+len(ID) up to 6000
// bytes; Parse refuses longer ones, so sort on short columns.
//
// It panics when req.Limit < 1: such a Request did not come from Parse and
// no correct page can be made from it.
func Build[T any](s *Signer, req Request, rows []T, key func(T) Key) Page[T] {
	if req.Limit < 1 {
		panic("page: Build with Limit < 1")
	}
	p := Page[T]{Data: rows}
	if len(rows) > req.Limit {
		p.Data = rows[:req.Limit:req.Limit]
		p.HasMore = true
		c := s.seal(key(p.Data[len(p.Data)-1]), req.binding)
		p.NextCursor = &c
	}
	if p.Data == nil {
		// Clients iterate data unconditionally; null would break them.
		p.Data = []T{}
	}
	return p
}

// Cut is a page of a list whose rows are filtered after they are read
// (each checked against what the viewer may see), so that reading stops
// after a bounded number of rows: data holds at most req.Limit rows that
// passed, and when more rows may follow, next is the position of the last
// row read (passed or not), where the next page resumes. A page may then
// hold fewer rows than the limit, even none, and still have more.
func Cut[T any](s *Signer, req Request, data []T, more bool, next Key) Page[T] {
	if req.Limit < 1 {
		panic("page: Cut with Limit < 1")
	}
	p := Page[T]{Data: data, HasMore: more}
	if len(p.Data) > req.Limit {
		panic("page: Cut with more rows than the limit")
	}
	if more {
		c := s.seal(next, req.binding)
		p.NextCursor = &c
	}
	if p.Data == nil {
		p.Data = []T{}
	}
	return p
}

func invalidCursor() error {
	return apierr.New(apierr.InvalidCursor, "The cursor is not valid for this list; start again from the first page.")
}

// cursorVersion leads every cursor body so the layout can change later
// without old cursors being misread.
const cursorVersion = 1

// encodeKey lays out a key as version, then length-prefixed sort value and
// id. Binary rather than JSON keeps cursors short and carries any bytes
// exactly (JSON would replace invalid UTF-8 and move the position).
func encodeKey(k Key) []byte {
	b := make([]byte, 0, 1+2*binary.MaxVarintLen64+len(k.Sort)+len(k.ID))
	b = append(b, cursorVersion)
	b = binary.AppendUvarint(b, uint64(len(k.Sort)))
	b = append(b, k.Sort...)
	b = binary.AppendUvarint(b, uint64(len(k.ID)))
	return append(b, k.ID...)
}

func decodeKey(b []byte) (Key, bool) {
	if len(b) == 0 || b[0] != cursorVersion {
		return Key{}, false
	}
	b = b[1:]
	next := func() (string, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || n > uint64(len(b)-w) {
			return "", false
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, true
	}
	sort, ok1 := next()
	id, ok2 := next()
	if !ok1 || !ok2 || len(b) != 0 {
		return Key{}, false
	}
	return Key{Sort: sort, ID: id}, true
}

var b64 = base64.RawURLEncoding.Strict()

// seal mints a cursor: base64url(body) "." base64url(mac). The binding
// is covered by the MAC but not carried, since Parse recomputes it from the
// request anyway.
func (s *Signer) seal(k Key, binding []byte) string {
	body := encodeKey(k)
	return b64.EncodeToString(body) + "." + b64.EncodeToString(s.mac(body, binding))
}

// open checks a cursor and returns its key.
func (s *Signer) open(cursor string, binding []byte) (Key, bool) {
	if len(cursor) > maxCursorLen {
		return Key{}, false
	}
	bodyPart, macPart, ok := strings.Cut(cursor, ".")
	if !ok {
		return Key{}, false
	}
	body, err := b64.DecodeString(bodyPart)
	if err != nil {
		return Key{}, false
	}
	got, err := b64.DecodeString(macPart)
	if err != nil {
		return Key{}, false
	}
	if !hmac.Equal(got, s.mac(body, binding)) {
		return Key{}, false
	}
	return decodeKey(body)
}

func (s *Signer) mac(body, binding []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	// The length prefix keeps binding and body from running into each other.
	h.Write([]byte{byte(len(binding))})
	h.Write(binding)
	h.Write(body)
	return h.Sum(nil)
}

// bind digests the values of the filter parameters. Names are sorted and
// each parameter's values sorted too, so neither the order the handler
// lists filters in nor the order a client repeats a parameter matters;
// every string is length-prefixed so name and value boundaries cannot be
// shifted to make two different filter sets collide. A parameter without
// values filters nothing and is left out, so it binds like an absent one.
func bind(q url.Values, filters []string) []byte {
	names := slices.Clone(filters)
	slices.Sort(names)
	names = slices.Compact(names)

	var buf []byte
	put := func(s string) {
		buf = binary.AppendUvarint(buf, uint64(len(s)))
		buf = append(buf, s...)
	}
	for _, name := range names {
		vs := q[name]
		if len(vs) == 0 {
			continue
		}
		vs = slices.Clone(vs)
		slices.Sort(vs)
		put(name)
		buf = binary.AppendUvarint(buf, uint64(len(vs)))
		for _, v := range vs {
			put(v)
		}
	}
	if buf == nil {
		return nil
	}
	sum := sha256.Sum256(buf)
	return sum[:]
}

// AfterUUID is the position of a list ordered by time-ordered UUID ids
// alone: nil on the first page. Store code passes it as a parameter of
// `(id < $n OR $n IS NULL)`.
func (r Request) AfterUUID() *uuid.UUID {
	if r.After == nil {
		return nil
	}
	id, err := uuid.Parse(r.After.ID)
	if err != nil {
		// Cursors are signed, so an id that does not parse was minted by a
		// list of another kind; treat it as the end of this one.
		id = uuid.Nil
	}
	return &id
}
