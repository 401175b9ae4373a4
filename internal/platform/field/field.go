// Package field holds building blocks of request fields shared by the
// features: a PATCH field that may be absent, null or set, and civil dates.
package field

import (
	"encoding/json"
	"time"
)

// Optional is a PATCH field: absent (Set false), null (Set, Value nil) or a value.
type Optional[T any] struct {
	Set   bool
	Value *T
}

// UnmarshalJSON records that the field was sent, as null or a value.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Value = nil
		return nil
	}
	o.Value = new(T)
	return json.Unmarshal(b, o.Value)
}

// IsDate reports whether s is a calendar date as YYYY-MM-DD in the years
// 1900 to 2199 (the range of business dates; a typo such as 0026 is refused).
func IsDate(s string) bool {
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Year() >= 1900 && t.Year() <= 2199
}
