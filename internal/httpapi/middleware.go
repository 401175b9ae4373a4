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

// setOrganization records the organization a request acts on, for the access log.
func setOrganization(r *http.Request, id string) { infoOf(r).orgID = id }

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
			s.metrics.observe(r.Method, route, sw.status, elapsed)
			attrs := []slog.Attr{
				slog.String("request_id", info.id),
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.Int("status", sw.status),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
			}
			if info.orgID != "" {
				attrs = append(attrs, slog.String("organization_id", info.orgID))
			}
			if info.apiKeyLookup != "" {
				attrs = append(attrs, slog.String("api_key_lookup", info.apiKeyLookup))
			}
			s.logger.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
		}()
		next.ServeHTTP(sw, r)
	})
}

// dispatch runs the mux, turning its plain-text 404 and 405 answers for
// unknown routes and methods into the error envelope.
func (s *server) dispatch(mux *http.ServeMux) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern != "" {
			mux.ServeHTTP(w, r)
			return
		}
		// Unmatched: let the mux decide between 404 and 405 (it knows the
		// methods of a path), but keep its body out of the response.
		probe := &statusProbe{header: http.Header{}}
		mux.ServeHTTP(probe, r)
		if probe.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", probe.header.Get("Allow"))
			writeError(w, r, s.logger, apierr.New(apierr.MethodNotAllowed, "This method is not allowed on this path."))
			return
		}
		writeError(w, r, s.logger, apierr.New(apierr.NotFound, "There is nothing at this path."))
	})
}

type statusProbe struct {
	header http.Header
	status int
}

func (p *statusProbe) Header() http.Header         { return p.header }
func (p *statusProbe) Write(b []byte) (int, error) { return len(b), nil }
func (p *statusProbe) WriteHeader(code int)        { p.status = code }

// clientAddress is the peer's IP: the key of per-address rate limits.
// X-Forwarded-For is not trusted; a proxy deployment would configure that.
func clientAddress(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
