package httpapi

// The RateLimit-Policy and RateLimit response headers, as the IETF httpapi
// working group's draft "RateLimit header fields for HTTP"
// (draft-ietf-httpapi-ratelimit-headers-11) defines them: each a
// Structured Fields list with one item per policy the request passed
// through, named by what it limits:
//
//	RateLimit-Policy: "address";q=1200;w=60, "credential";q=600;w=60
//	RateLimit: "address";r=1187;t=1, "credential";r=590;t=1
//
// q is the rule's burst and w the seconds it takes to refill; r is what
// the bucket would pass at once after this request and t the whole seconds
// until it gains its next token (the draft's effective window: until then
// no more than r pass). On a 429, r is 0 and t equals Retry-After.

import (
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/strongroom/strongroom/internal/platform/ratelimit"
)

// Policy names: what each limit counts requests by.
const (
	policyAddress    = "address"
	policySignIn     = "sign-in"
	policyCredential = "credential"
)

// limitSeen is one limit a request passed through (or was refused by).
type limitSeen struct {
	policy   string
	rule     ratelimit.Rule
	decision ratelimit.Decision
}

// setRateLimitHeaders writes the headers of the limits the request met, if any.
func setRateLimitHeaders(h http.Header, seen []limitSeen) {
	if len(seen) == 0 {
		return
	}
	policies := make([]string, 0, len(seen))
	states := make([]string, 0, len(seen))
	for _, l := range seen {
		window := max(int64(math.Round(float64(max(l.rule.Burst, 1))/l.rule.Rate)), 1)
		policies = append(policies, strconv.Quote(l.policy)+";q="+strconv.Itoa(max(l.rule.Burst, 1))+";w="+strconv.FormatInt(window, 10))
		states = append(states, strconv.Quote(l.policy)+";r="+strconv.Itoa(max(l.decision.Remaining, 0))+";t="+strconv.FormatInt(wholeSeconds(l.decision.Reset), 10))
	}
	h.Set("RateLimit-Policy", strings.Join(policies, ", "))
	h.Set("RateLimit", strings.Join(states, ", "))
}

// wholeSeconds rounds d up to whole seconds, as Retry-After does, so a
// client that waits t finds the token there.
func wholeSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(ratelimit.RetryAfterSeconds(d))
}
