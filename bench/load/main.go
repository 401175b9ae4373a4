// Command load measures Strongroom end to end: it starts the real server
// in-process (app.Run, SQLite by default, manual clock, rate limits off),
// prepares data through the sandbox, then drives one scenario with
// concurrent clients of the Go client (package client) and prints
// throughput and latency percentiles. Every run signs up users and
// organizations of its own, so runs can follow one another on one -database.
//
//	go run ./bench/load -scenario signin -c 4 -rounds 5 -users 40
//	go run ./bench/load -scenario bare -c 32 -d 10s
//	go run ./bench/load -scenario webhooks -c 8 -events 5000
//	go run ./bench/load -scenario ledger -c 8 -d 8s -database postgres://…
//
// The ledger scenario alone runs no server: it opens the database itself
// and posts transfers through package ledger (see ledgerTransfers).
package main

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/app"
)

const (
	sandboxToken = "sbx_load_tool_token_0123456789abcdef"
	password     = "load test password"
)

func main() {
	scenario := flag.String("scenario", "signin", "signin (password + authenticator code), payments (executed and approved end to end), cards (sandbox card authorizations over -cards cards), webhooks (-events events delivered to -endpoints endpoints of a local receiver that verifies every signature), accounts (currency-account list with an API key, beside the bare handler), ledger (transfers among -accounts accounts through the ledger package alone, no server: balance check, entry, feed rows) or bare (a bare net/http JSON handler)")
	concurrency := flag.Int("c", 4, "concurrent clients")
	duration := flag.Duration("d", 10*time.Second, "how long to run (bare, accounts, payments, cards, ledger)")
	rounds := flag.Int("rounds", 5, "rounds of sign-ins, one per user per round (signin)")
	users := flag.Int("users", 40, "users signing in each round (signin)")
	cards := flag.Int("cards", 1, "cards the authorizations are spread over (cards)")
	ledgerAccounts := flag.Int("accounts", 10, "accounts the transfers pick two of at random (ledger; 10 as pgledger's performance_check)")
	wh := webhookFlags{}
	flag.IntVar(&wh.events, "events", 2000, "events made (webhooks)")
	flag.IntVar(&wh.endpoints, "endpoints", 1, "webhook endpoints at the receiver (webhooks): each deposit is delivered to every one, pings are spread over them")
	flag.StringVar(&wh.source, "source", "deposit", "what makes the events (webhooks): deposit (sandbox deposits, transaction.created through the fan-out) or ping (sandbox pings, webhook.ping to one endpoint)")
	flag.DurationVar(&wh.wait, "wait", 30*time.Second, "give up when no delivery has arrived for this long (webhooks)")
	database := flag.String("database", "", "STRONGROOM_DATABASE, or the database the ledger scenario opens (default: a new SQLite file)")
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
	if err := run(*scenario, *concurrency, *duration, *rounds, *users, *cards, *ledgerAccounts, wh, *database); err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run(scenario string, concurrency int, duration time.Duration, rounds, users, cards, ledgerAccounts int, wh webhookFlags, database string) error {
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency * 2}, Timeout: 30 * time.Second}
	switch scenario {
	case "bare":
		url, stop, err := startBare()
		if err != nil {
			return err
		}
		defer stop()
		res := forDuration(concurrency, duration, func() error { return get(hc, url+"/bare", "") })
		res.print("bare net/http JSON handler")
		return nil
	case "accounts":
		bareURL, stopBare, err := startBare()
		if err != nil {
			return err
		}
		bare := forDuration(concurrency, duration, func() error { return get(hc, bareURL+"/bare", "") })
		stopBare()
		e, stop, err := start(database, hc)
		if err != nil {
			return err
		}
		defer stop()
		org, key, err := apiKey(e)
		if err != nil {
			return err
		}
		c, err := e.client(key)
		if err != nil {
			return err
		}
		list := func() error { _, err := c.CurrencyAccounts(context.Background(), org.String()); return err }
		if err := list(); err != nil {
			return err
		}
		res := forDuration(concurrency, duration, list)
		bare.print("bare net/http JSON handler")
		res.print("GET multi-currency-accounts with an API key")
		fmt.Printf("ratio: %.0f%% of the bare handler's requests per second\n",
			100*float64(len(res.latencies))/res.elapsed.Seconds()/(float64(len(bare.latencies))/bare.elapsed.Seconds()))
		return nil
	case "payments":
		e, stop, err := start(database, hc)
		if err != nil {
			return err
		}
		defer stop()
		return payments(e, concurrency, duration, database)
	case "cards":
		e, stop, err := start(database, hc)
		if err != nil {
			return err
		}
		defer stop()
		return authorizations(e, concurrency, duration, cards)
	case "webhooks":
		e, stop, err := start(database, hc)
		if err != nil {
			return err
		}
		defer stop()
		return webhookDeliveries(e, concurrency, wh.events, wh.endpoints, wh.source, wh.wait)
	case "ledger":
		return ledgerTransfers(database, concurrency, duration, ledgerAccounts)
	case "signin":
		e, stop, err := start(database, hc)
		if err != nil {
			return err
		}
		defer stop()
		return signIns(e, concurrency, rounds, users)
	}
	return fmt.Errorf("unknown scenario %q", scenario)
}

// start runs the server and returns the clients' environment and stop.
func start(database string, hc *http.Client) (*env, func(), error) {
	srv, err := startServer(database)
	if err != nil {
		return nil, nil, err
	}
	e, err := newEnv(srv.url, hc)
	if err != nil {
		srv.stop()
		return nil, nil, err
	}
	return e, srv.stop, nil
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
func authorizations(e *env, concurrency int, duration time.Duration, cards int) error {
	ctx := context.Background()
	o, err := e.newOwner()
	if err != nil {
		return err
	}
	if err := e.deposit(o.orgID, "USD"); err != nil {
		return err
	}
	ids := make([]api.CardId, cards)
	for i := range ids {
		r, err := e.sandbox.API().SandboxCreateCardWithResponse(ctx, o.orgID, nil, api.SandboxNewCard{MonthlyLimit: 1000000})
		if err := check(r, err); err != nil {
			return err
		}
		ids[i] = r.JSON201.Id
	}
	var next atomic.Int64
	res := forDuration(concurrency, duration, func() error {
		r, err := e.sandbox.API().SandboxAuthorizeCardWithResponse(ctx, ids[int(next.Add(1))%cards], nil, api.SandboxCardAuthorization{
			Amount: "0.01", Currency: api.SandboxCardAuthorizationCurrencyUSD, Merchant: "Load Shop", Channel: api.SandboxCardAuthorizationChannelOnline})
		if err := check(r, err); err != nil {
			return err
		}
		if !r.JSON200.Approved {
			return fmt.Errorf("declined: %v", *r.JSON200.DeclineReason)
		}
		return nil
	})
	res.print(fmt.Sprintf("sandbox card authorizations over %d card(s)", cards))
	return nil
}

func signIns(e *env, concurrency, rounds, users int) error {
	ctx := context.Background()
	org, err := e.newOwner()
	if err != nil {
		return err
	}
	type account struct {
		email, secret string
		c             *client.Client
	}
	accounts := make([]account, users)
	for i := range accounts {
		email := fmt.Sprintf("user%d-%s@load.test", i, e.run)
		r, err := e.sandbox.API().SandboxAddOrganizationUserWithResponse(ctx, org.orgID, nil, api.SandboxNewMember{
			Email: email, Password: ptr(password), Role: api.RoleMember})
		if err := check(r, err); err != nil {
			return err
		}
		c, err := e.client("")
		if err != nil {
			return err
		}
		accounts[i] = account{email, *r.JSON201.TotpSecret, c}
	}
	var all results
	for range rounds {
		// Each code works once per user and 30-second step: a new round is a new step.
		now, err := e.advance()
		if err != nil {
			return err
		}
		next := make(chan account, len(accounts))
		for _, a := range accounts {
			next <- a
		}
		close(next)
		res := forEach(concurrency, next, func(a account) error {
			_, err := a.c.Login(ctx, client.Credentials{Email: a.email, Password: password,
				Code: func(context.Context) (string, error) { return totp.GenerateCode(a.secret, now) }})
			return err
		})
		all.merge(res)
	}
	all.print(fmt.Sprintf("sign-in (password + code), %d users × %d rounds", users, rounds))
	return nil
}

// env is the server under load and the clients' shared HTTP connections.
type env struct {
	url string
	hc  *http.Client
	// run makes the emails and names of this run unique, so that runs
	// follow one another on one -database.
	run     string
	sandbox *client.Client
}

func newEnv(url string, hc *http.Client) (*env, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	e := &env{url: url, hc: hc, run: hex.EncodeToString(b[:])}
	var err error
	e.sandbox, err = e.client(sandboxToken)
	return e, err
}

// client is a client of the server sending token, on the shared
// connections; it does not retry, so every failure is counted.
func (e *env) client(token string, opts ...client.Option) (*client.Client, error) {
	return client.New(e.url, append([]client.Option{client.WithHTTP(e.hc), client.WithToken(token), client.WithMaxRetries(0)}, opts...)...)
}

// advance moves the manual clock to the next 30-second step and returns
// the time it shows.
func (e *env) advance() (time.Time, error) {
	r, err := e.sandbox.API().SandboxAdvanceClockWithResponse(context.Background(), nil, api.SandboxClockAdvance{Seconds: 30})
	if err := check(r, err); err != nil {
		return time.Time{}, err
	}
	return r.JSON200.Now, nil
}

// deposit gives the organization money enough in currency.
func (e *env) deposit(orgID api.OrganizationId, currency api.CurrencyCode) error {
	r, err := e.sandbox.API().SandboxDepositWithResponse(context.Background(), orgID, nil,
		api.SandboxDeposit{Currency: currency, Amount: "100000000.00"})
	return check(r, err)
}

// owner is the owner of a new sandbox organization, signing in with the
// authenticator the sandbox gave them.
type owner struct {
	e      *env
	orgID  api.OrganizationId
	email  string
	secret string
}

func (e *env) newOwner() (*owner, error) {
	email := "owner-" + e.run + "@load.test"
	r, err := e.sandbox.API().SandboxCreateOrganizationWithResponse(context.Background(), nil, api.SandboxNewOrganization{
		Name: "Load Ltd " + e.run, Owner: api.SandboxPerson{Email: email, Password: ptr(password)},
	})
	if err := check(r, err); err != nil {
		return nil, err
	}
	return &owner{e: e, orgID: r.JSON201.Organization.Id, email: email, secret: *r.JSON201.Owner.TotpSecret}, nil
}

// code moves the manual clock to the next 30-second step (each code works
// once per step) and returns the authenticator's code for it.
func (o *owner) code(context.Context) (string, error) {
	now, err := o.e.advance()
	if err != nil {
		return "", err
	}
	return totp.GenerateCode(o.secret, now)
}

// signIn signs the owner in from platform and returns a client of that
// session. Its step-ups are answered with the authenticator code when
// stepUpWithCode is set; otherwise a gated call fails with the challenge.
func (o *owner) signIn(platform string, stepUpWithCode bool) (*client.Client, error) {
	var opts []client.Option
	if stepUpWithCode {
		opts = append(opts, client.WithStepUp(func(ctx context.Context, _ *api.StepUpChallenge) (client.StepUpAnswer, error) {
			code, err := o.code(ctx)
			return client.StepUpAnswer{Method: client.StepUpTOTP, Code: code}, err
		}))
	}
	c, err := o.e.client("", opts...)
	if err != nil {
		return nil, err
	}
	_, err = c.Login(context.Background(), client.Credentials{Email: o.email, Password: password, Platform: platform, Code: o.code})
	return c, err
}

// apiKey makes an organization and a balances:read key, answering the
// key's step-up with the owner's authenticator code.
func apiKey(e *env) (api.OrganizationId, string, error) {
	o, err := e.newOwner()
	if err != nil {
		return api.OrganizationId{}, "", err
	}
	web, err := o.signIn("web", true)
	if err != nil {
		return api.OrganizationId{}, "", err
	}
	key, err := web.CreateAPIKey(context.Background(), o.orgID.String(), api.ApiKeyCreation{
		Name: "load", Role: api.ApiKeyRequestedRoleMember, Scopes: []api.ApiKeyScope{api.ApiKeyScopeBalancesRead}})
	if err != nil {
		return api.OrganizationId{}, "", fmt.Errorf("create key: %w", err)
	}
	return o.orgID, key.Secret, nil
}

// payments executes and approves payments end to end: quote, execute,
// approve (answered by a step-up), and the signed approval in the app.
func payments(e *env, concurrency int, duration time.Duration, database string) error {
	ctx := context.Background()
	o, err := e.newOwner()
	if err != nil {
		return err
	}
	orgID := o.orgID
	if err := e.deposit(orgID, "EUR"); err != nil {
		return err
	}
	web, err := o.signIn("web", false)
	if err != nil {
		return err
	}
	app, err := o.signIn("ios", true)
	if err != nil {
		return err
	}
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	cr, err := app.API().RegisterApprovalCredentialWithResponse(ctx, nil, api.ApprovalCredentialRegistration{
		PublicKey: base64.RawURLEncoding.EncodeToString(pub), Label: "load"})
	if err := check(cr, err); err != nil {
		return err
	}
	contact, err := web.API().CreatePaymentContactWithResponse(ctx, orgID, nil, api.PaymentContactCreation{
		Name: "Supplier", Currency: "EUR", Rail: api.RailFiat, Iban: ptr("DE89370400440532013000")})
	if err := check(contact, err); err != nil {
		return err
	}
	counter := startPGCounter(database)
	res := forDuration(concurrency, duration, func() error {
		quote, err := web.API().CreatePaymentQuoteWithResponse(ctx, nil, api.PaymentQuoteRequest{OrganizationId: orgID, Rail: api.RailFiat,
			PaymentContactId: contact.JSON201.Id, SourceCurrency: "EUR", Amount: "10.00", AmountSide: api.PaymentQuoteRequestAmountSideSend})
		if err := check(quote, err); err != nil {
			return err
		}
		payment, err := web.ExecutePayment(ctx, api.PaymentExecution{QuoteId: quote.JSON201.Id, PayoutReason: ptr("PYR002"),
			StatementDescription: ptr("Load test")}, nil)
		if err != nil {
			return err
		}
		if payment.ApprovalRequestId == nil {
			return errors.New("execute: the payment has no approval request")
		}
		approval := *payment.ApprovalRequestId
		r, err := web.API().ApprovePaymentWithResponse(ctx, approval, nil, api.EmptyObject{})
		err = check(r, err)
		var stepUp *client.Error
		if !errors.As(err, &stepUp) || stepUp.Type != client.TypeStepUpRequired || stepUp.StepUp == nil || stepUp.StepUp.MatchCode == nil {
			return fmt.Errorf("approve: want a step-up, got %v", err)
		}
		// The app finds the challenge of this approval in its inbox.
		inbox, err := app.API().ListChallengesWithResponse(ctx, &api.ListChallengesParams{Limit: ptr(100)})
		if err := check(inbox, err); err != nil {
			return err
		}
		for _, c := range inbox.JSON200.Data {
			if c.ApprovalId == nil || *c.ApprovalId != approval {
				continue
			}
			payload, _ := base64.RawURLEncoding.DecodeString(c.SigningPayload)
			r, err := app.API().ApproveChallengeWithResponse(ctx, c.Id, nil, api.ChallengeApproval{
				MatchCode: stepUp.StepUp.MatchCode, Signature: base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, payload))})
			return check(r, err)
		}
		return errors.New("the approval's challenge is not in the app inbox")
	})
	res.print("payment executed and approved end to end (quote, execute, approve, app approval)")
	counter.per(len(res.latencies))
	return nil
}

// answer is a generated response: its HTTP response and read body.
type answer interface{ StatusCode() int }

// check returns err, or the answer as a *client.Error when it is a failure.
func check(r answer, err error) error {
	if err != nil {
		return err
	}
	v := reflect.ValueOf(r).Elem()
	resp, _ := v.FieldByName("HTTPResponse").Interface().(*http.Response)
	body, _ := v.FieldByName("Body").Interface().([]byte)
	return client.ErrorFromResponse(resp, body)
}

func ptr[T any](v T) *T { return &v }

// get fetches url from the bare handler and drops the answer.
func get(hc *http.Client, url, bearer string) error {
	req, _ := http.NewRequest("GET", url, nil)
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := hc.Do(req)
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
