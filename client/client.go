// Package client is the Go client of the Strongroom API: one method of
// [Client] per operation a person or program calls, named after what it
// does, taking IDs as strings and answering the API's records.
//
//	c, err := client.New("https://strongroom.example", client.WithAPIKey(key))
//	accounts, err := c.CurrencyAccounts(ctx, orgID)
//
// The records and request bodies (api.Payment, api.BillUpdate, …) and their
// enum constants are the types of package
// github.com/strongroom/strongroom/client/api, generated from
// api/openapi.yaml; import it beside this one. What the helpers add, so that
// no caller writes it again:
//
//   - signing in: password, then the authenticator code, authenticator setup
//     during sign-in, reuse of a device ([Client.Login]); or an API key as
//     bearer ([WithAPIKey]);
//   - errors as [*Error], with the envelope's type, message, request id,
//     details, the HTTP status and the step-up challenge (use errors.As);
//   - step-up: a call answered 403 step_up_required is shown to the
//     caller's [StepUpFunc], answered (the app: polled until it is no
//     longer pending; a code: completed), then retried once;
//   - lists as iterators over every page ([Client.Transactions],
//     [Client.Bills], …: range over them; stopping the range stops
//     fetching);
//   - 429: waits Retry-After (capped, stopped by the context) and retries;
//   - an Idempotency-Key on every payment execute, yours or a fresh one, so
//     a retry after a lost answer never pays twice;
//   - waiting: [Client.WaitBill] for a bill's extraction,
//     [Client.WaitPayment] for a payment's approval, [Client.WaitStepUp].
//
// The helpers by area (see docs/api.md for what each operation does):
//
//   - signing in and the person: Login, SignIn, CompleteMFA,
//     SetupSignInAuthenticator, ActivateSignInAuthenticator, SignOut, Me,
//     Devices, SetupAuthenticator, ActivateAuthenticator, Passkeys,
//     BeginPasskeyRegistration, RegisterPasskey, RemovePasskey;
//   - step-up and the approving app: StepUpStatus, WaitStepUp,
//     CompleteStepUp, RequestStepUpEmail, ExitStepUp,
//     RegisterApprovalCredential, Challenges, ApproveChallenge,
//     DeclineChallenge;
//   - organization: CurrencyAccounts, RequestCurrencyAccounts, Balances,
//     Transactions, Transaction, Insights, APIKeys, CreateAPIKey,
//     UpdateAPIKey, RotateAPIKey, RevokeAPIKey;
//   - events: Events, Event, Follow (the realtime channel);
//   - payments: PaymentsConfig, PaymentContacts, PaymentContact,
//     CreatePaymentContact, CreatePaymentQuote, ExecutePayment, Payment,
//     WaitPayment, CancelPayment, CreatePaymentBatch, PaymentBatch,
//     Approvals, ApprovePayment, RejectPayment;
//   - bills and files: UploadBill, CreateBill, Bills, Bill, WaitBill,
//     UpdateBill, CancelBill, CreateBillPaymentContact, UploadFile,
//     CreateFile, File, UploadFileContent, DownloadFileContent;
//   - cards: Cards, Card, UpdateCard, FreezeCard, UnfreezeCard,
//     OrderPhysicalCard, ActivateCard, SetCardPIN,
//     ProvisionCardToMobileWallet;
//   - expenses: Expenses, Expense, CreateExpense, UpdateExpense,
//     DeleteExpense, SubmitExpense, ApproveExpense, RejectExpense,
//     MarkExpensePaid, BindExpense, UnbindExpense, AddExpenseReceipt,
//     RemoveExpenseReceipt;
//   - invoicing: BillingContacts, BillingContact, CreateBillingContact,
//     UpdateBillingContact, DeleteBillingContact, BillingAllocations,
//     Invoices, Invoice, CreateInvoice, UpdateInvoice, SubmitInvoice,
//     ApproveInvoice, ReturnInvoice, SendInvoice, FinalizeInvoice,
//     AllocateInvoice, DeallocateInvoice, CryptoIncoming;
//   - onboarding: PersonalQuestionnaireOptions, SubscriptionAcknowledgement,
//     AcknowledgeSubscription, CreateIdentityCheckToken;
//   - the sandbox (a server started with the sandbox on, with its token as
//     bearer): the methods named Sandbox….
//
// [Client.API] is the generated low-level client, for an operation without
// a helper; its calls get the same bearer, 429 handling, step-up and
// idempotency key.
package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/strongroom/strongroom/client/api"
)

// Defaults of the options.
const (
	DefaultMaxRetryWait       = 30 * time.Second
	DefaultMaxRetries         = 3
	DefaultStepUpPollInterval = 2 * time.Second
)

// Client calls a Strongroom server. It is safe for concurrent use; the
// bearer it sends can change (signing in sets it).
type Client struct {
	base         string
	hc           *http.Client
	stepUp       StepUpFunc
	pollInterval time.Duration
	maxRetryWait time.Duration
	maxRetries   int
	raw          *api.ClientWithResponses

	mu       sync.RWMutex
	token    string
	deviceID string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTP sends requests through hc (its Transport, Timeout, …)
// instead of http.DefaultClient.
func WithHTTP(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithToken sends a session token as bearer (one obtained earlier by
// signing in). [Client.Login] sets the token itself.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithAPIKey sends an API key (sr_<env>_<lookup>_<secret>) as bearer. A key
// is accepted only where the API says so (listing the currency accounts
// with scope balances:read, the events with events:read, the realtime
// channel with events:subscribe); elsewhere the call fails with
// api_key_not_permitted.
func WithAPIKey(key string) Option { return func(c *Client) { c.token = key } }

// WithStepUp sets the callback that answers step-up challenges. Without
// one, a gated call fails with an [*Error] of type step_up_required that
// carries the challenge.
func WithStepUp(f StepUpFunc) Option { return func(c *Client) { c.stepUp = f } }

// WithStepUpPollInterval sets how often the step-up status is polled while
// the person answers in the app (default 2 s).
func WithStepUpPollInterval(d time.Duration) Option {
	return func(c *Client) { c.pollInterval = d }
}

// WithMaxRetryWait caps the wait for one retry after 429 (default 30 s): an
// answer asking to wait longer is returned as an [*Error] with RetryAfter
// set instead of waited for.
func WithMaxRetryWait(d time.Duration) Option { return func(c *Client) { c.maxRetryWait = d } }

// WithMaxRetries sets how many times one call is retried after 429, or
// after a failed connection when retrying is safe (a GET, or a request
// with an Idempotency-Key). Default 3; 0 turns retrying off.
func WithMaxRetries(n int) Option { return func(c *Client) { c.maxRetries = max(n, 0) } }

// New returns a client of the server at baseURL (for example
// "http://127.0.0.1:8080"; paths begin with /api/v1 themselves).
func New(baseURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q is not an absolute URL", baseURL)
	}
	c := &Client{
		base:         strings.TrimSuffix(baseURL, "/"),
		hc:           http.DefaultClient,
		pollInterval: DefaultStepUpPollInterval,
		maxRetryWait: DefaultMaxRetryWait,
		maxRetries:   DefaultMaxRetries,
	}
	for _, o := range opts {
		o(c)
	}
	c.raw, err = api.NewClientWithResponses(c.base, api.WithHTTPClient(doer{c}))
	if err != nil {
		return nil, err
	}
	return c, nil
}

// API is the generated low-level client (package client/api): one method
// per operation of the OpenAPI document, answering the raw response with
// its decoded bodies. Its calls go through this Client (bearer, 429,
// step-up, idempotency key); a failure answer is not an error there: turn
// it into one with [ErrorFromResponse]. Prefer the named helpers; this is
// for what they do not cover (a header of your own, say).
func (c *Client) API() *api.ClientWithResponses { return c.raw }

// Token is the bearer the client sends ("" for none).
func (c *Client) Token() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.token
}

// SetToken changes the bearer (a session token or an API key).
func (c *Client) SetToken(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.token = token
}

// DeviceID is the device of the last sign-in through this client: pass it
// as SignIn.DeviceID next time to sign in on the same device.
func (c *Client) DeviceID() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.deviceID
}

// IdempotencyKeyHeader is the header naming a payment so that a retry does
// not pay twice.
const IdempotencyKeyHeader = "Idempotency-Key"

// needsIdempotencyKey tells the requests that get a key when they have none.
func needsIdempotencyKey(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/api/v1/payments/execute")
}

// NewIdempotencyKey returns a fresh random key (32 hex digits after
// "sr-go-").
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "sr-go-" + hex.EncodeToString(b[:])
}

// noBearer marks the context of a request sent without the bearer.
type noBearer struct{}

func withoutBearer(ctx context.Context) context.Context {
	return context.WithValue(ctx, noBearer{}, true)
}

func bearerless(ctx context.Context) bool { b, _ := ctx.Value(noBearer{}).(bool); return b }

// doer is the HttpRequestDoer of the generated client: every request of
// this Client passes here.
type doer struct{ c *Client }

func (d doer) Do(req *http.Request) (*http.Response, error) {
	c := d.c
	ctx := req.Context()
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	if req.Header.Get("Authorization") == "" && !bearerless(ctx) {
		if tok := c.Token(); tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	if needsIdempotencyKey(req) && req.Header.Get(IdempotencyKeyHeader) == "" {
		req.Header.Set(IdempotencyKeyHeader, NewIdempotencyKey())
	}
	safeToResend := req.Method == http.MethodGet || req.Method == http.MethodHead || req.Header.Get(IdempotencyKeyHeader) != ""

	steppedUp := false
	retries := 0
	for {
		resp, err := c.send(req, body)
		if err != nil {
			if ctx.Err() != nil || !safeToResend || retries >= c.maxRetries {
				return nil, err
			}
			retries++
			if err := sleep(ctx, time.Duration(retries)*200*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		}
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			wait := retryAfter(resp.Header, time.Now())
			if retries >= c.maxRetries || wait > c.maxRetryWait {
				return resp, nil
			}
			retries++
			drain(resp)
			if err := sleep(ctx, wait); err != nil {
				return nil, err
			}
			continue
		case http.StatusForbidden:
			if steppedUp || c.stepUp == nil {
				return resp, nil
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				return nil, err
			}
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			var apiErr *Error
			if !errors.As(ErrorFromResponse(resp, raw), &apiErr) || apiErr.Type != TypeStepUpRequired || apiErr.StepUp == nil {
				return resp, nil
			}
			steppedUp = true
			if err := c.answerStepUp(ctx, apiErr); err != nil {
				return nil, err
			}
			continue // the gated call, once more
		}
		return resp, nil
	}
}

// send sends one attempt of req with body.
func (c *Client) send(req *http.Request, body []byte) (*http.Response, error) {
	r := req.Clone(req.Context())
	if body != nil {
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
	}
	return c.hc.Do(r)
}

func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
}

// retryAfter reads Retry-After: seconds or an HTTP date; 1 s when absent
// or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return time.Second
	}
	if s, err := strconv.Atoi(v); err == nil {
		return max(time.Duration(s)*time.Second, 0)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return time.Second
}

// sleep waits d, or less when ctx ends (then it returns ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
