package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strongroom/strongroom/internal/httpapi"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db/dbtest"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

type failingLimiter struct{}

func (failingLimiter) Allow(context.Context, string, ratelimit.Rule) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("database unreachable")
}

// everyRequest are limits that take a token from every request and refuse
// none: a burst of 1000 s at a million a second, so that a request whose
// clock reading waited behind others (the store reads the time before its
// statement) still finds room.
var everyRequest = httpapi.Limits{
	PerAddress: ratelimit.Rule{Name: "address", Rate: 1e6, Burst: 1e9},
	SignIn:     ratelimit.Rule{Name: "sign-in", Rate: 1e6, Burst: 1e9},
}

// A limit that cannot be checked refuses the request: an unreachable
// database never lifts the address or sign-in limits. The health probe
// answers on this process's own buckets, so it tells the truth meanwhile.
func TestUndecidedLimitRefuses(t *testing.T) {
	var logs bytes.Buffer
	h := httpapi.New(httpapi.Deps{
		Logger:       slog.New(slog.NewJSONHandler(&logs, nil)),
		Clock:        clock.System{},
		Limiter:      failingLimiter{},
		LocalLimiter: ratelimit.NewMemory(nil),
		Limits:       everyRequest,
	})
	for _, r := range []*http.Request{
		httptest.NewRequest("GET", "/api/v1/me", nil),
		httptest.NewRequest("POST", "/api/v1/auth/sign-in", strings.NewReader(`{"email":"a@b.test","password":"x"}`)),
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != http.StatusTooManyRequests || !strings.Contains(rec.Body.String(), `"rate_limited"`) || rec.Header().Get("Retry-After") != "5" {
			t.Fatalf("%s %s: %d %s (Retry-After %q), want 429 rate_limited after 5 s", r.Method, r.URL.Path, rec.Code, rec.Body, rec.Header().Get("Retry-After"))
		}
	}
	if !strings.Contains(logs.String(), "rate limit undecided") || !strings.Contains(logs.String(), "database unreachable") {
		t.Fatalf("the failure was not logged:\n%s", logs.String())
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("/healthz: %d, want 200", rec.Code)
	}
}

// BenchmarkAddressLimit measures what the address limit costs a request:
// GET /api/v1/me without a bearer (answered 401 right after the limit) with
// the limits off, the per-process buckets of before, and the buckets shared
// through each database (the per-process ones in front). "one" is one client
// address (every request updates one row), "many" a new address every 64
// requests.
func BenchmarkAddressLimit(b *testing.B) {
	keys, err := keyring.New([]byte("rate-limit-benchmark-root-secret-0123456789"))
	if err != nil {
		b.Fatal(err)
	}
	limiters := []struct {
		name string
		new  func(b *testing.B) ratelimit.Limiter
	}{
		{"off", func(*testing.B) ratelimit.Limiter { return nil }},
		{"memory", func(*testing.B) ratelimit.Limiter { return ratelimit.NewMemory(nil) }},
	}
	for _, e := range dbtest.Engines() {
		limiters = append(limiters, struct {
			name string
			new  func(b *testing.B) ratelimit.Limiter
		}{"shared-" + e.Name, func(b *testing.B) ratelimit.Limiter {
			d := dbtest.Open(b, e.Migrated(b))
			return ratelimit.Layered{Local: ratelimit.NewMemory(nil), Shared: ratelimit.NewStore(d, clock.System{}, keys)}
		}})
	}
	for _, l := range limiters {
		for _, spread := range []string{"serial", "one", "many"} {
			b.Run(l.name+"/"+spread, func(b *testing.B) {
				limiter := l.new(b)
				h := httpapi.New(httpapi.Deps{
					Logger:       slog.New(slog.NewJSONHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn})),
					Clock:        clock.System{},
					Limiter:      limiter,
					LocalLimiter: ratelimit.NewMemory(nil),
					Limits:       everyRequest,
				})
				var client atomic.Int64
				b.SetParallelism(16) // 32 clients on 2 cores, as bench/load runs
				b.ReportAllocs()
				b.ResetTimer()
				if spread == "serial" { // one client: the latency a request gains
					for b.Loop() {
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/me", nil))
						if rec.Code != http.StatusUnauthorized {
							b.Fatalf("status %d: %s", rec.Code, rec.Body)
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					addr := "192.0.2.1:4000"
					for i := 0; pb.Next(); i++ {
						if spread == "many" && i%64 == 0 {
							n := client.Add(1)
							addr = fmt.Sprintf("10.%d.%d.%d:4000", n>>16&255, n>>8&255, n&255)
						}
						r := httptest.NewRequest("GET", "/api/v1/me", nil)
						r.RemoteAddr = addr
						rec := httptest.NewRecorder()
						h.ServeHTTP(rec, r)
						if rec.Code != http.StatusUnauthorized {
							b.Errorf("status %d: %s", rec.Code, rec.Body)
							return
						}
					}
				})
			})
		}
	}
}
