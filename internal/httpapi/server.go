// Package httpapi is Strongroom's HTTP surface: routes.go lists every route;
// handlers decode requests, call feature services and encode records or the
// error envelope. Business rules live in the feature packages, not here.
package httpapi

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/flow/approving"
	"github.com/strongroom/strongroom/internal/flow/billpay"
	"github.com/strongroom/strongroom/internal/flow/binding"
	"github.com/strongroom/strongroom/internal/flow/cardspend"
	"github.com/strongroom/strongroom/internal/flow/confirming"
	"github.com/strongroom/strongroom/internal/flow/requesting"
	"github.com/strongroom/strongroom/internal/flow/statementing"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/apierr"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/page"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
	"github.com/strongroom/strongroom/internal/sandbox"
	"github.com/strongroom/strongroom/internal/stepup"
	"github.com/strongroom/strongroom/internal/webhook"
)

// Limits are the rate-limit rules the server enforces.
type Limits struct {
	// PerAddress applies to every request by client IP address.
	PerAddress ratelimit.Rule
	// PerCredential applies to every authenticated request by its session or key.
	PerCredential ratelimit.Rule
	// SignIn applies to the sign-in family by client IP address, on top of
	// PerAddress. Wrong passwords are bounded by the identity service itself
	// (identity.PasswordGuard), per email and client address.
	SignIn ratelimit.Rule
}

// Deps is everything the handlers need, by tier: the platform, the core
// every feature stands on, the features, the flows that span them, and the
// sandbox (test only).
type Deps struct {
	// The platform.
	Logger *slog.Logger
	DB     *db.DB
	Clock  clock.Clock
	Keys   *keyring.Keyring
	// Limiter keeps the address and sign-in limits, shared by every
	// instance on the database so that N instances grant the budget of one.
	Limiter ratelimit.Limiter
	// LocalLimiter keeps this process's own buckets: the per-credential
	// limit (an authenticated client's share, not a guessing budget) and the
	// operational endpoints, which must answer while the database does not
	// and which a load balancer probes on every instance.
	LocalLimiter ratelimit.Limiter
	Limits       Limits
	// OpenAPI returns the OpenAPI document as JSON, served at
	// /api/v1/openapi.json (api.JSON: converted on first use).
	OpenAPI func() ([]byte, error)
	// Realtime follows the domain events for the organizations' realtime channels.
	Realtime *event.Tail
	// RealtimePing is how often an idle realtime connection gets a
	// keep-alive and its access is checked again (default 25 s).
	RealtimePing time.Duration
	// Metrics are the series /metrics exports beside the HTTP requests'
	// and the Go runtime's (app: the domain's events, the database's
	// state, the connection pools).
	Metrics []prometheus.Collector

	// The core.
	// Identity signs people in and resolves session tokens.
	Identity *identity.Service
	// Ledger reads balances and the transactions feed.
	Ledger *ledger.Service
	// Files keeps uploaded files.
	Files *file.Service

	// The features.
	// APIKeys manages and authenticates API keys.
	APIKeys *apikey.Service
	// CurrencyAccounts runs multi-currency receiving accounts.
	CurrencyAccounts *mca.Service
	// PartnerSecret is the HMAC key partner webhooks are signed with.
	PartnerSecret []byte
	// Payments moves money out after a person approves.
	Payments *payment.Service
	// Cards runs cards.
	Cards *card.Service
	// Bills turns supplier invoices into bills.
	Bills *bill.Service
	// Invoices runs billing invoices, their contacts, crypto deposits and allocations.
	Invoices *invoicing.Service
	// Onboarding runs questionnaire options, the subscription
	// acknowledgement and identity checks.
	Onboarding *onboarding.Service
	// Expenses runs expenses, their bindings and receipts.
	Expenses *expense.Service
	// StepUp gates sensitive operations on a person being present.
	StepUp *stepup.Service
	// Webhooks runs webhook endpoints and their deliveries.
	Webhooks *webhook.Service

	// The flows.
	// Approving asks for payment approvals and answers challenges from the
	// approving app.
	Approving *approving.Service
	// Binding binds transactions to expenses.
	Binding *binding.Service
	// CardSpend decides the authorizations the card network asks for,
	// filing a held card's purchases as expenses.
	CardSpend *cardspend.Service
	// Confirming runs the card and API key operations a step-up confirms.
	Confirming *confirming.Service
	// BillPay runs what touches a payment and the bill it pays: executing,
	// cancelling, rejecting and settling payments, and a bill's payment
	// contact.
	BillPay *billpay.Service
	// PaymentRequests runs payment requests: making, answering and
	// accepting them (which makes their payment), and following it.
	PaymentRequests *requesting.Service
	// Statements opens account statements with their payments' parties.
	Statements *statementing.Service

	// The sandbox (test only): nil in live, where its routes and pages do
	// not exist.
	Sandbox *sandbox.Service
	// SandboxToken is the bearer the sandbox helpers accept.
	SandboxToken string
	// Partner is the sandbox banking partner the sandbox helpers control.
	Partner *sandbox.Partner
	// SandboxIssuer is the sandbox card network, whose token service keys
	// the sandbox hands out.
	SandboxIssuer *sandbox.Issuer
	// SandboxKYC is the sandbox identity-verification provider, whose page
	// decides checks.
	SandboxKYC *sandbox.IdentityProvider
	// ApprovingApp is the sandbox's software approving app.
	ApprovingApp *sandbox.ApprovingApp
}

type server struct {
	Deps
	logger  *slog.Logger
	metrics *metrics
	cursors sync.Map // list name → *page.Signer
	// renderersMap is realtimeRenderers, made once (renderers).
	renderersOnce sync.Once
	renderersMap  map[string]realtimeRenderer
}

// pages returns the cursor signer of one list. Each list signs with its own
// key, so a cursor of one list is refused by every other.
func (s *server) pages(list string) *page.Signer {
	if p, ok := s.cursors.Load(list); ok {
		return p.(*page.Signer)
	}
	p, _ := s.cursors.LoadOrStore(list, page.NewSigner(s.Keys.Key("page-cursor/"+list)))
	return p.(*page.Signer)
}

// New returns the API's root handler.
func New(d Deps) http.Handler {
	s := &server{Deps: d, logger: d.Logger, metrics: newMetrics(d.Metrics)}
	mux := http.NewServeMux()
	for _, rt := range s.routes() {
		if rt.auth == authSandbox && d.Sandbox == nil || rt.auth == authSandboxPage && d.SandboxKYC == nil {
			continue // live: the sandbox helpers and pages do not exist
		}
		mux.Handle(rt.method+" "+rt.path, s.wrap(rt))
	}
	return s.observe(s.dispatch(mux))
}

// handlerFunc is a handler that returns its error instead of writing it, so
// every failure takes the same path to the envelope.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

type authKind int

const (
	authNone         authKind = iota // operational endpoints and the sign-in family
	authSandbox                      // the sandbox token
	authSession                      // a person's session token
	authSessionOrKey                 // a session token, or an API key (the operations for programs)
	authSandboxPage                  // a sandbox web page (test only) whose link carries its own permission
	authRealtime                     // authSessionOrKey, or a realtime ticket in the query instead of a bearer
)

type limitClass int

const (
	limitDefault limitClass = iota
	limitSignIn
)

type route struct {
	method, path string
	auth         authKind
	limit        limitClass
	handle       handlerFunc
}

// wrap applies the per-route layers: route name for logs and metrics, rate
// limits, authentication, the text check of path values and query
// parameters, then the handler.
func (s *server) wrap(rt route) http.Handler {
	pattern := rt.method + " " + rt.path
	names := wildcards(rt.path)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoOf(r).route = pattern
		limiter, address := s.Limiter, identity.AddressBucket(clientAddress(r))
		if !strings.HasPrefix(rt.path, "/api/") && rt.auth == authNone {
			limiter = s.LocalLimiter // /healthz, /readyz, /metrics
		}
		err := s.limit(r, limiter, policyAddress, address, s.Limits.PerAddress)
		if err == nil && rt.limit == limitSignIn {
			err = s.limit(r, limiter, policySignIn, address, s.Limits.SignIn)
		}
		if err == nil {
			switch rt.auth {
			case authSandbox:
				err = s.authenticateSandbox(r)
			case authSession, authSessionOrKey:
				r, err = s.authenticate(r, rt.auth == authSessionOrKey)
			case authRealtime:
				r, err = s.authenticateRealtime(r)
			case authNone, authSandboxPage:
				err = s.refuseAPIKey(r, rt.path)
			}
		}
		if err == nil && strings.HasPrefix(rt.path, "/api/") {
			err = checkRequestText(r, names) // NUL or invalid UTF-8 in a path value or query parameter
		}
		setRateLimitHeaders(w.Header(), infoOf(r).limits)
		if err == nil {
			err = rt.handle(w, withAuditOrigin(r, rt.auth))
		}
		if err != nil {
			writeError(w, r, s.logger, err)
		}
	})
}

// limit takes one token from rule's bucket for key in limiter (buckets are
// per rule name). A limiter that cannot decide refuses: an unreachable
// database must not lift the limits. What the bucket tells is kept for the
// RateLimit headers under the name policy.
func (s *server) limit(r *http.Request, limiter ratelimit.Limiter, policy, key string, rule ratelimit.Rule) error {
	if limiter == nil {
		return nil
	}
	d, err := limiter.Allow(r.Context(), key, rule)
	if err != nil {
		if r.Context().Err() == nil {
			s.logger.ErrorContext(r.Context(), "rate limit undecided: request refused",
				"request_id", infoOf(r).id, "route", infoOf(r).route, "rule", rule.Name, "error", err.Error())
		}
		e := apierr.New(apierr.RateLimited, "The service cannot check its request limits right now. Please try again shortly.")
		e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(undecidedRetry)
		return e
	}
	if rule.On() {
		info := infoOf(r)
		info.limits = append(info.limits, limitSeen{policy: policy, rule: rule, decision: d})
	}
	if d.Allowed {
		return nil
	}
	e := apierr.New(apierr.RateLimited, "Too many requests. Please wait before trying again.")
	e.RetryAfterSeconds = ratelimit.RetryAfterSeconds(d.RetryAfter)
	return e
}

// undecidedRetry is the Retry-After of a request refused because its limit
// could not be checked: long enough not to hammer a struggling database.
const undecidedRetry = 5 * time.Second

// Operations lists every route as "METHOD /path", for the test that keeps
// routes.go and the OpenAPI document in step.
func Operations() []string {
	s := &server{}
	var ops []string
	for _, rt := range s.routes() {
		ops = append(ops, rt.method+" "+rt.path)
	}
	return ops
}
