// Command load measures Strongroom end to end: it starts the real server
// in-process (app.Run, SQLite by default, manual clock, rate limits off),
// prepares data through the sandbox, then drives one scenario with
// concurrent clients and prints throughput and latency percentiles.
//
//	go run ./bench/load -scenario signin -c 4 -rounds 5 -users 40
//	go run ./bench/load -scenario bare -c 32 -d 10s
package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/app"
)

const sandboxToken = "sbx_load_tool_token_0123456789abcdef"

func main() {
	scenario := flag.String("scenario", "signin", "signin (password + authenticator code), payments (executed and approved end to end), cards (sandbox card authorizations over -cards cards), accounts (currency-account list with an API key, beside the bare handler) or bare (a bare net/http JSON handler)")
	concurrency := flag.Int("c", 4, "concurrent clients")
	duration := flag.Duration("d", 10*time.Second, "how long to run (bare)")
	rounds := flag.Int("rounds", 5, "rounds of sign-ins, one per user per round (signin)")
	users := flag.Int("users", 40, "users signing in each round (signin)")
	cards := flag.Int("cards", 1, "cards the authorizations are spread over (cards)")
	database := flag.String("database", "", "STRONGROOM_DATABASE (default: a new SQLite file)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (server and clients) to this file")
	flag.Parse()
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "load:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if err := run(*scenario, *concurrency, *duration, *rounds, *users, *cards, *database); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(scenario string, concurrency int, duration time.Duration, rounds, users, cards int, database string) error {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}, Timeout: 30 * time.Second}
	switch scenario {
	case "bare":
		url, stop, err := startBare()
		if err != nil {
			return err
		}
		defer stop()
		res := forDuration(concurrency, duration, func() error { return get(client, url+"/bare", "") })
		res.print("bare net/http JSON handler")
		return nil
	case "accounts":
		bareURL, stopBare, err := startBare()
		if err != nil {
			return err
		}
		bare := forDuration(concurrency, duration, func() error { return get(client, bareURL+"/bare", "") })
		stopBare()
		srv, err := startServer(database)
		if err != nil {
			return err
		}
		defer srv.stop()
		org, key, err := apiKey(client, srv)
		if err != nil {
			return err
		}
		url := srv.url + "/api/v1/organizations/" + org + "/multi-currency-accounts"
		if err := get(client, url, key); err != nil {
			return err
		}
		res := forDuration(concurrency, duration, func() error { return get(client, url, key) })
		bare.print("bare net/http JSON handler")
		res.print("GET multi-currency-accounts with an API key")
		fmt.Printf("ratio: %.0f%% of the bare handler's requests per second\n",
			100*float64(len(res.latencies))/res.elapsed.Seconds()/(float64(len(bare.latencies))/bare.elapsed.Seconds()))
		return nil
	case "payments":
		srv, err := startServer(database)
		if err != nil {
			return err
		}
		defer srv.stop()
		return payments(client, srv, concurrency, duration)
	case "cards":
		srv, err := startServer(database)
		if err != nil {
			return err
		}
		defer srv.stop()
		return authorizations(client, srv, concurrency, duration, cards)
	case "signin":
		srv, err := startServer(database)
		if err != nil {
			return err
		}
		defer srv.stop()
		return signIns(client, srv, concurrency, rounds, users)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

type server struct {
	url  string
	stop func()
}

// startServer runs the real server on a free port until stop.
func startServer(database string) (*server, error) {
	dir, err := os.MkdirTemp("", "strongroom-load")
	if err != nil {
		return nil, err
	}
	if database == "" {
		database = "sqlite:" + filepath.Join(dir, "load.db")
	}
	env := map[string]string{
		"STRONGROOM_ADDR": "127.0.0.1:0", "STRONGROOM_DATABASE": database, "STRONGROOM_CLOCK": "manual",
		"STRONGROOM_SANDBOX_TOKEN": sandboxToken, "STRONGROOM_SECRET": "load-tool-root-secret-0123456789abcdef",
		"STRONGROOM_LOG_LEVEL": "warn", "STRONGROOM_RATE_LIMIT_ADDRESS": "off", "STRONGROOM_RATE_LIMIT_CREDENTIAL": "off",
		"STRONGROOM_RATE_LIMIT_SIGN_IN": "off", "STRONGROOM_RATE_LIMIT_WRONG_PASSWORD": "off",
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	stop := func() { cancel(); <-done; os.RemoveAll(dir) }
	stderr := &syncBuffer{}
	go func() {
		done <- app.Run(ctx, []string{"server"}, func(k string) string { return env[k] }, io.Discard, stderr)
	}()
	listening := regexp.MustCompile(`listening on (http://\S+)`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(stderr.String()); m != nil {
			return &server{url: m[1], stop: stop}, nil
		}
		select {
		case err := <-done:
			cancel()
			return nil, fmt.Errorf("server exited: %v\n%s", err, stderr.String())
		default:
		}
	}
	stop()
	return nil, errors.New("server did not start")
}

// startBare serves a minimal JSON handler: the ceiling of this machine and tool.
func startBare() (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /bare", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": []map[string]string{{"currency": "EUR", "state": "active"}}})
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// authorizations issues cards to one organization with money enough, then
// asks approved purchases of them in turn for duration.
func authorizations(client *http.Client, srv *server, concurrency int, duration time.Duration, cards int) error {
	o, err := newOwner(client, srv)
	if err != nil {
		return err
	}
	if err := post(client, srv.url+"/api/v1/sandbox/organizations/"+o.orgID+"/deposits", sandboxToken,
		map[string]any{"currency": "USD", "amount": "100000000.00"}, nil); err != nil {
		return err
	}
	urls := make([]string, cards)
	for i := range urls {
		var c struct{ ID string }
		if err := post(client, srv.url+"/api/v1/sandbox/organizations/"+o.orgID+"/cards", sandboxToken,
			map[string]any{"monthly_limit": 1000000}, &c); err != nil {
			return err
		}
		urls[i] = srv.url + "/api/v1/sandbox/cards/" + c.ID + "/authorizations"
	}
	var next atomic.Int64
	res := forDuration(concurrency, duration, func() error {
		var d struct {
			Approved      bool    `json:"approved"`
			DeclineReason *string `json:"decline_reason"`
		}
		url := urls[int(next.Add(1))%cards]
		if err := post(client, url, sandboxToken, map[string]any{"amount": "0.01", "currency": "USD", "merchant": "Load Shop", "channel": "online"}, &d); err != nil {
			return err
		}
		if !d.Approved {
			return fmt.Errorf("declined: %v", *d.DeclineReason)
		}
		return nil
	})
	res.print(fmt.Sprintf("sandbox card authorizations over %d card(s)", cards))
	return nil
}

func signIns(client *http.Client, srv *server, concurrency, rounds, users int) error {
	org, err := newOwner(client, srv)
	if err != nil {
		return err
	}
	type account struct{ email, secret string }
	accounts := make([]account, users)
	for i := range accounts {
		var u struct {
			TOTPSecret string `json:"totp_secret"`
		}
		email := fmt.Sprintf("user%d@load.test", i)
		if err := post(client, srv.url+"/api/v1/sandbox/organizations/"+org.orgID+"/users", sandboxToken,
			map[string]any{"email": email, "password": "load test password", "role": "member"}, &u); err != nil {
			return err
		}
		accounts[i] = account{email, u.TOTPSecret}
	}
	var all results
	for range rounds {
		var clock struct {
			Now time.Time `json:"now"`
		}
		// Each code works once per user and 30-second step: a new round is a new step.
		if err := post(client, srv.url+"/api/v1/sandbox/clock/advance", sandboxToken, map[string]any{"seconds": 30}, &clock); err != nil {
			return err
		}
		next := make(chan account, len(accounts))
		for _, a := range accounts {
			next <- a
		}
		close(next)
		res := forEach(concurrency, next, func(a account) error {
			var step1 struct {
				Status         string `json:"status"`
				ChallengeToken string `json:"challenge_token"`
			}
			if err := post(client, srv.url+"/api/v1/auth/sign-in", "", map[string]any{"email": a.email, "password": "load test password"}, &step1); err != nil {
				return err
			}
			code, err := totp.GenerateCode(a.secret, clock.Now)
			if err != nil {
				return err
			}
			var step2 struct{ Status string }
			if err := post(client, srv.url+"/api/v1/auth/mfa", "", map[string]any{"challenge_token": step1.ChallengeToken, "code": code}, &step2); err != nil {
				return err
			}
			if step2.Status != "authenticated" {
				return fmt.Errorf("mfa: %s", step2.Status)
			}
			return nil
		})
		all.merge(res)
	}
	all.print(fmt.Sprintf("sign-in (password + code), %d users × %d rounds", users, rounds))
	return nil
}

// owner is the owner of a new sandbox organization, signing in with the
// authenticator the sandbox gave them.
type owner struct {
	client *http.Client
	srv    *server
	orgID  string
	secret string
}

func newOwner(client *http.Client, srv *server) (*owner, error) {
	var org struct {
		Organization struct{ ID string } `json:"organization"`
		Owner        struct {
			TOTPSecret string `json:"totp_secret"`
		} `json:"owner"`
	}
	err := post(client, srv.url+"/api/v1/sandbox/organizations", sandboxToken, map[string]any{
		"name": "Load Ltd", "owner": map[string]any{"email": "owner@load.test", "password": "load test password"},
	}, &org)
	return &owner{client: client, srv: srv, orgID: org.Organization.ID, secret: org.Owner.TOTPSecret}, err
}

// code moves the manual clock to the next 30-second step (each code works
// once per step) and returns the authenticator's code for it.
func (o *owner) code() (string, error) {
	var clock struct {
		Now time.Time `json:"now"`
	}
	if err := post(o.client, o.srv.url+"/api/v1/sandbox/clock/advance", sandboxToken, map[string]any{"seconds": 30}, &clock); err != nil {
		return "", err
	}
	return totp.GenerateCode(o.secret, clock.Now)
}

// signIn signs the owner in from platform and returns the session token.
func (o *owner) signIn(platform string) (string, error) {
	var step1 struct {
		ChallengeToken string `json:"challenge_token"`
	}
	if err := post(o.client, o.srv.url+"/api/v1/auth/sign-in", "", map[string]any{
		"email": "owner@load.test", "password": "load test password", "platform": platform}, &step1); err != nil {
		return "", err
	}
	code, err := o.code()
	if err != nil {
		return "", err
	}
	var session struct{ Token string }
	err = post(o.client, o.srv.url+"/api/v1/auth/mfa", "", map[string]any{"challenge_token": step1.ChallengeToken, "code": code}, &session)
	return session.Token, err
}

// apiKey makes an organization and a balances:read key, answering the
// key's step-up with the owner's authenticator code.
func apiKey(client *http.Client, srv *server) (string, string, error) {
	o, err := newOwner(client, srv)
	if err != nil {
		return "", "", err
	}
	token, err := o.signIn("web")
	if err != nil {
		return "", "", err
	}
	keysURL := srv.url + "/api/v1/organizations/" + o.orgID + "/api-keys"
	body := map[string]any{"name": "load", "role": "member", "scopes": []string{"balances:read"}}
	err = post(client, keysURL, token, body, nil)
	var stepUp struct {
		Error struct {
			StepUp struct{ ID string } `json:"step_up"`
		} `json:"error"`
	}
	if se, ok := err.(*statusError); !ok || se.status != 403 || json.Unmarshal(se.body, &stepUp) != nil {
		return "", "", fmt.Errorf("create key: want a step-up, got %v", err)
	}
	code, err := o.code()
	if err != nil {
		return "", "", err
	}
	if err := post(client, srv.url+"/api/v1/auth/step-up/complete", token,
		map[string]any{"sudo_session_id": stepUp.Error.StepUp.ID, "method": "totp", "code": code}, nil); err != nil {
		return "", "", err
	}
	var key struct{ Secret string }
	if err := post(client, keysURL, token, body, &key); err != nil {
		return "", "", err
	}
	return o.orgID, key.Secret, nil
}

// postWithStepUp makes a step-up-gated call: the first answer is a step-up,
// answered with the owner's authenticator code, then the call is made again.
func (o *owner) postWithStepUp(token, url string, body map[string]any) error {
	err := post(o.client, url, token, body, nil)
	var stepUp struct {
		Error struct {
			StepUp struct{ ID string } `json:"step_up"`
		} `json:"error"`
	}
	if se, ok := err.(*statusError); !ok || se.status != 403 || json.Unmarshal(se.body, &stepUp) != nil {
		return fmt.Errorf("%s: want a step-up, got %v", url, err)
	}
	code, err := o.code()
	if err != nil {
		return err
	}
	if err := post(o.client, o.srv.url+"/api/v1/auth/step-up/complete", token,
		map[string]any{"sudo_session_id": stepUp.Error.StepUp.ID, "method": "totp", "code": code}, nil); err != nil {
		return err
	}
	return post(o.client, url, token, body, nil)
}

type statusError struct {
	url    string
	status int
	body   []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("POST %s: %d %s", e.url, e.status, e.body) }

// payments executes and approves payments end to end: quote, execute,
// approve (answered by a step-up), and the signed approval in the app.
func payments(client *http.Client, srv *server, concurrency int, duration time.Duration) error {
	o, err := newOwner(client, srv)
	if err != nil {
		return err
	}
	orgID := o.orgID
	if err := post(client, srv.url+"/api/v1/sandbox/organizations/"+orgID+"/deposits", sandboxToken,
		map[string]any{"currency": "EUR", "amount": "100000000.00"}, nil); err != nil {
		return err
	}
	web, err := o.signIn("web")
	if err != nil {
		return err
	}
	app, err := o.signIn("ios")
	if err != nil {
		return err
	}
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	if err := o.postWithStepUp(app, srv.url+"/api/v1/me/approval-credential",
		map[string]any{"public_key": base64.RawURLEncoding.EncodeToString(pub), "label": "load"}); err != nil {
		return err
	}
	var contact struct{ ID string }
	if err := post(client, srv.url+"/api/v1/organizations/"+orgID+"/payment-contacts", web, map[string]any{
		"name": "Supplier", "currency": "EUR", "rail": "fiat", "iban": "DE89370400440532013000"}, &contact); err != nil {
		return err
	}
	res := forDuration(concurrency, duration, func() error {
		var quote struct{ ID string }
		if err := post(client, srv.url+"/api/v1/payments/preflight", web, map[string]any{"organization_id": orgID, "rail": "fiat",
			"payment_contact_id": contact.ID, "source_currency": "EUR", "amount": "10.00", "amount_side": "send"}, &quote); err != nil {
			return err
		}
		var payment struct {
			ApprovalRequestID string `json:"approval_request_id"`
		}
		if err := post(client, srv.url+"/api/v1/payments/execute", web, map[string]any{"quote_id": quote.ID, "payout_reason": "PYR002",
			"statement_description": "Load test"}, &payment); err != nil {
			return err
		}
		err := post(client, srv.url+"/api/v1/approvals/"+payment.ApprovalRequestID+"/approve", web, nil, nil)
		var stepUp struct {
			Error struct {
				StepUp struct {
					MatchCode string `json:"match_code"`
				} `json:"step_up"`
			} `json:"error"`
		}
		if se, ok := err.(*statusError); !ok || se.status != 403 || json.Unmarshal(se.body, &stepUp) != nil {
			return fmt.Errorf("approve: want a step-up, got %v", err)
		}
		// The app finds the challenge of this approval in its inbox.
		var inbox struct {
			Data []struct {
				ID             string  `json:"id"`
				ApprovalID     *string `json:"approval_id"`
				SigningPayload string  `json:"signing_payload"`
			} `json:"data"`
		}
		if err := getJSON(client, srv.url+"/api/v1/me/challenges?limit=100", app, &inbox); err != nil {
			return err
		}
		for _, c := range inbox.Data {
			if c.ApprovalID == nil || *c.ApprovalID != payment.ApprovalRequestID {
				continue
			}
			payload, _ := base64.RawURLEncoding.DecodeString(c.SigningPayload)
			return post(client, srv.url+"/api/v1/me/challenges/"+c.ID+"/approve", app, map[string]any{
				"match_code": stepUp.Error.StepUp.MatchCode, "signature": base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, payload))}, nil)
		}
		return errors.New("the approval's challenge is not in the app inbox")
	})
	res.print("payment executed and approved end to end (quote, execute, approve, app approval)")
	return nil
}

func getJSON(client *http.Client, url, bearer string, out any) error {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return json.Unmarshal(b, out)
}

func post(client *http.Client, url, bearer string, body, out any) error {
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return &statusError{url, resp.StatusCode, b}
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

func get(client *http.Client, url, bearer string) error {
	req, _ := http.NewRequest("GET", url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("GET %s: %d", url, resp.StatusCode)
	}
	return nil
}

type results struct {
	latencies []time.Duration
	errors    int
	firstErr  error
	elapsed   time.Duration
}

func (r *results) merge(o results) {
	r.latencies = append(r.latencies, o.latencies...)
	r.errors += o.errors
	if r.firstErr == nil {
		r.firstErr = o.firstErr
	}
	r.elapsed += o.elapsed
}

func (r results) print(name string) {
	slices.Sort(r.latencies)
	pct := func(p float64) time.Duration {
		if len(r.latencies) == 0 {
			return 0
		}
		return r.latencies[min(len(r.latencies)-1, int(p*float64(len(r.latencies))))]
	}
	fmt.Printf("%s\n  operations: %d ok, %d failed in %v\n  throughput: %.1f/s\n  latency:    p50 %v  p90 %v  p99 %v  max %v\n",
		name, len(r.latencies), r.errors, r.elapsed.Round(time.Millisecond), float64(len(r.latencies))/r.elapsed.Seconds(),
		pct(0.5).Round(10*time.Microsecond), pct(0.9).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	if r.firstErr != nil {
		fmt.Printf("  first error: %v\n", r.firstErr)
	}
}

// forDuration runs op from c clients until d has passed.
func forDuration(c int, d time.Duration, op func() error) results {
	stop := time.Now().Add(d)
	work := make(chan struct{})
	go func() {
		for time.Now().Before(stop) {
			work <- struct{}{}
		}
		close(work)
	}()
	return forEach(c, work, func(struct{}) error { return op() })
}

// forEach runs op on every item from c clients, timing each call.
func forEach[T any](c int, items <-chan T, op func(T) error) results {
	var mu sync.Mutex
	var out results
	var wg sync.WaitGroup
	start := time.Now()
	for range c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range items {
				t0 := time.Now()
				err := op(it)
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					out.errors++
					if out.firstErr == nil {
						out.firstErr = err
					}
				} else {
					out.latencies = append(out.latencies, d)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	out.elapsed = time.Since(start)
	return out
}

// syncBuffer keeps the head of the server's stderr (enough to find the
// listening line and start-up errors) and drops the access log after it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() < 64<<10 {
		s.b.Write(p)
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
