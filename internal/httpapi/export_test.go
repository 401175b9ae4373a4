package httpapi

import (
	"log/slog"
	"net/http"
)

// Observe exposes the outermost middleware to tests that need a handler the
// real routes do not have (one that panics).
func Observe(logger *slog.Logger, h http.Handler) http.Handler {
	s := &server{logger: logger}
	return s.observe(h)
}

// Decode exposes the strict JSON decoder to its fuzz test.
var Decode = decode
