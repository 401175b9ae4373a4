package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/strongroom/strongroom/internal/apitest"
)

// passed sends n requests, the i-th to servers[i%len(servers)], and counts
// those not refused with 429.
func passed(t *testing.T, servers []*apitest.Server, n int, send func(s *apitest.Server, i int) *apitest.Response) int {
	t.Helper()
	count := 0
	for i := range n {
		r := send(servers[i%len(servers)], i)
		switch r.Status {
		case http.StatusTooManyRequests:
			r.ExpectError(t, http.StatusTooManyRequests, "rate_limited")
		default:
			count++
		}
	}
	return count
}

// instances starts n servers with env on one new database.
func instances(t *testing.T, n int, env ...string) []*apitest.Server {
	t.Helper()
	env = append([]string{"STRONGROOM_DATABASE=" + apitest.NewDatabase(t)}, env...)
	servers := make([]*apitest.Server, n)
	for i := range servers {
		servers[i] = apitest.Start(t, env...)
	}
	return servers
}

// The address and sign-in limits are one budget for a client whichever
// instance its requests reach: alternating between two servers on one
// database grants what one server grants, not twice as much. The limits
// refill hourly: they read the real time, and a slow machine must not see
// a token come back during the test.
func TestRateLimitsAreSharedByInstances(t *testing.T) {
	t.Parallel()
	env := []string{"STRONGROOM_RATE_LIMIT_SIGN_IN=4/1h", "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=3/1h"}
	one, two := instances(t, 1, env...), instances(t, 2, env...)

	// Sign-in requests per client address (unknown emails: no password budget involved).
	wrongEmail := func(s *apitest.Server, i int) *apitest.Response {
		return s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": fmt.Sprintf("guess%d@acme.test", i), "password": "wrong"})
	}
	if got, want := passed(t, two, 12, wrongEmail), passed(t, one, 12, wrongEmail); got != want || want != 4 {
		t.Fatalf("sign-in requests passed: %d on two instances, %d on one; want 4 on both", got, want)
	}

	// Wrong passwords per email and address (kept in the database before this change).
	one, two = instances(t, 1, "STRONGROOM_RATE_LIMIT_SIGN_IN=off", "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=3/1h"),
		instances(t, 2, "STRONGROOM_RATE_LIMIT_SIGN_IN=off", "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD=3/1h")
	createOrg(t, one[0], "ada@acme.test")
	createOrg(t, two[0], "ada@acme.test")
	wrongPassword := func(s *apitest.Server, _ int) *apitest.Response {
		return s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@acme.test", "password": "wrong"})
	}
	if got, want := passed(t, two, 8, wrongPassword), passed(t, one, 8, wrongPassword); got != want || want != 3 {
		t.Fatalf("wrong passwords checked: %d on two instances, %d on one; want 3 on both", got, want)
	}
}

func TestAddressLimitIsSharedByInstances(t *testing.T) {
	t.Parallel()
	env := "STRONGROOM_RATE_LIMIT_ADDRESS=6/1h"
	one, two := instances(t, 1, env), instances(t, 2, env)
	me := func(s *apitest.Server, _ int) *apitest.Response { return s.Get(t, "/api/v1/me", "") }
	if got, want := passed(t, two, 15, me), passed(t, one, 15, me); got != want || want != 6 {
		t.Fatalf("requests passed: %d on two instances, %d on one; want 6 on both", got, want)
	}
	// Each instance's health probe answers on its own budget, without the database.
	for _, s := range two {
		s.Get(t, "/healthz", "").ExpectStatus(t, http.StatusOK)
	}
}
