package httpapi

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/internal/platform/apierr"
)

// requestInfo travels in the request context and is filled in as the request
// passes the layers, so the access log can name the route pattern, the
// organization and the API-key lookup once the handler is done.
type requestInfo struct {
	id           string
	route        string
	orgID        string
	apiKeyLookup string
	// userID is the person of a session; sandbox is set when the sandbox
	// token was accepted.
	userID  string
	sandbox bool
	// errorType is the envelope's error.type when the answer is an error.
	errorType string
	// limits are the rate limits the request met, for the RateLimit headers.
	limits []limitSeen
	// tokenRefused: a bearer was presented and is not valid, so a 401 says
	// error="invalid_token" (RFC 6750 section 3.1).
	tokenRefused bool
}

type infoKey struct{}

func infoOf(r *http.Request) *requestInfo {
	if info, ok := r.Context().Value(infoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

var clientRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// statusWriter remembers the status written, for the log and metrics.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe is the outermost layer: it keeps or mints the request id, recovers
// panics into a 500 envelope, and writes one access-log line and the metrics.
// The log line never holds headers or bodies, so tokens and secrets cannot leak into it.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{id: r.Header.Get("X-Request-Id")}
		if !clientRequestID.MatchString(info.id) {
			info.id = uuid.Must(uuid.NewV7()).String()
		}
		r = r.WithContext(context.WithValue(r.Context(), infoKey{}, info))
		w.Header().Set("X-Request-Id", info.id)
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.logger.Error("panic", "request_id", info.id, "route", info.route, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					writeError(sw, r, s.logger, apierr.New(apierr.Internal, internalError.Message))
				}
			}
			elapsed := time.Since(start)
			route := info.route
			if route == "" {
				route = "unmatched"
			}
			s.metrics.observe(route, sw.status, elapsed)
			if !s.logger.Enabled(r.Context(), slog.LevelInfo) {
				return
			}
			attrs := []slog.Attr{
				slog.String("request_id", info.id),
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.Int("status", sw.status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("client_address", clientAddress(r)),
			}
			if info.errorType != "" && sw.status >= 400 {
				attrs = append(attrs, slog.String("error_type", info.errorType))
			}
			// Who acted: a person's id, an API key by its lookup (never
			// its secret), or the sandbox helpers' token (never itself).
			switch {
			case info.userID != "":
				attrs = append(attrs, slog.String("user_id", info.userID))
			case info.apiKeyLookup != "":
				attrs = append(attrs, slog.String("api_key", info.apiKeyLookup))
			case info.sandbox:
				attrs = append(attrs, slog.String("actor", "sandbox"))
			}
			if info.orgID != "" {
				attrs = append(attrs, slog.String("organization_id", info.orgID))
			}
			s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(sw, r)
	})
}

// dispatch runs the mux, turning its plain-text 404 and 405 answers for
// unknown routes and methods into the error envelope. The mux routes once:
// every route's handler names itself first (wrap), so what is written while
// no route is named is the mux's own answer, held back and replaced.
func (s *server) dispatch(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoOf(r)
		held := &unroutedWriter{ResponseWriter: w, info: info}
		mux.ServeHTTP(held, r)
		if info.route != "" {
			return
		}
		h := w.Header()
		h.Del("X-Content-Type-Options") // set by http.Error for its text
		h.Del("Location")               // set by the mux's redirects to a cleaned path
		if held.status == http.StatusMethodNotAllowed {
			writeError(w, r, s.logger, apierr.New(apierr.MethodNotAllowed, "This method is not allowed on this path."))
			return
		}
		h.Del("Allow")
		writeError(w, r, s.logger, apierr.New(apierr.NotFound, "There is nothing at this path."))
	})
}

// unroutedWriter drops what is written before a route names itself (the
// mux's own 404, 405 or redirect) and remembers its status.
type unroutedWriter struct {
	http.ResponseWriter
	info   *requestInfo
	status int
}

func (w *unroutedWriter) WriteHeader(code int) {
	if w.info.route == "" {
		w.status = code
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unroutedWriter) Write(b []byte) (int, error) {
	if w.info.route == "" {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

func (w *unroutedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// clientAddress is the peer's IP: the key of per-address rate limits and
// the access log's client_address. X-Forwarded-For and Forwarded are
// ignored: any client can send them, so trusting them would let one client
// take another's address budget; behind a proxy every request shows the
// proxy's address, and the limits are then the proxy's to enforce.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
