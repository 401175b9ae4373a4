// Package app wires Strongroom together: configuration, database, services,
// the HTTP server and the background workers, and stops them gracefully.
package app

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/strongroom/strongroom/api"
	"github.com/strongroom/strongroom/internal/apikey"
	"github.com/strongroom/strongroom/internal/bill"
	"github.com/strongroom/strongroom/internal/card"
	"github.com/strongroom/strongroom/internal/console"
	"github.com/strongroom/strongroom/internal/expense"
	"github.com/strongroom/strongroom/internal/file"
	"github.com/strongroom/strongroom/internal/flow/approving"
	"github.com/strongroom/strongroom/internal/flow/billpay"
	"github.com/strongroom/strongroom/internal/flow/binding"
	"github.com/strongroom/strongroom/internal/flow/cardspend"
	"github.com/strongroom/strongroom/internal/flow/confirming"
	"github.com/strongroom/strongroom/internal/flow/requesting"
	"github.com/strongroom/strongroom/internal/flow/statementing"
	"github.com/strongroom/strongroom/internal/httpapi"
	"github.com/strongroom/strongroom/internal/identity"
	"github.com/strongroom/strongroom/internal/invoicing"
	"github.com/strongroom/strongroom/internal/ledger"
	"github.com/strongroom/strongroom/internal/mca"
	"github.com/strongroom/strongroom/internal/onboarding"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/paymentrequest"
	"github.com/strongroom/strongroom/internal/platform/clock"
	"github.com/strongroom/strongroom/internal/platform/db"
	"github.com/strongroom/strongroom/internal/platform/event"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/platform/outbox"
	"github.com/strongroom/strongroom/internal/platform/ratelimit"
	"github.com/strongroom/strongroom/internal/sandbox"
	"github.com/strongroom/strongroom/internal/statement"
	"github.com/strongroom/strongroom/internal/stepup"
	"github.com/strongroom/strongroom/internal/webhook"
)

// Version is the build's version, set with -ldflags "-X …/internal/app.Version=…".
var Version = "0.1.0-dev"

// shutdownGrace bounds a graceful stop: in-flight requests and workers get this long.
const shutdownGrace = 10 * time.Second

// Run runs the strongroom command in args (without the program name) until
// it finishes or ctx is cancelled (SIGINT/SIGTERM).
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("no command given")
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "strongroom", Version)
		return nil
	case "migrate":
		return runMigrate(ctx, args[1:], getenv, stdout, stderr)
	case "backup":
		return runBackup(ctx, args[1:], getenv, stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, args[1:], getenv, stdout, stderr)
	case "server":
		cfg, err := loadConfig(args[1:], getenv, stderr)
		if err != nil {
			return err
		}
		return serve(ctx, cfg, stdout, stderr)
	}
	// The usage and help of every command are the command line's (package
	// cli), which calls Run for these server commands only.
	return fmt.Errorf("unknown server command %q", args[0])
}

func openDatabase(ctx context.Context, cfg Config, opts ...db.Option) (*db.DB, error) {
	d, err := db.Open(ctx, cfg.Database, opts...)
	if err != nil {
		return nil, err
	}
	if err := d.Migrate(ctx); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

func serve(ctx context.Context, cfg Config, stdout, stderr io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	warnUnknownVariables(ctx, logger)
	var clk clock.Clock = clock.System{}
	var manual *clock.Manual
	if cfg.Clock == "manual" {
		manual = clock.NewManual(time.Now().UTC().Truncate(time.Second))
		clk = manual
	}
	d, err := openDatabase(ctx, cfg, db.WithClock(clk))
	if err != nil {
		return err
	}
	defer d.Close()

	secrets, err := loadSecrets(ctx, d, cfg)
	if err != nil {
		return err
	}
	keys, err := keyring.New([]byte(secrets.root))
	if err != nil {
		return err
	}
	passkeys, err := identity.NewWebAuthn(cfg.PublicURL)
	if err != nil {
		return fmt.Errorf("STRONGROOM_PUBLIC_URL: %w", err)
	}
	// Messages reach people through the outbox; codes are sealed at rest in
	// test and never stored in live (handed to the sender after the commit).
	messages := &outbox.Outbox{DB: d, Keys: keys, Live: cfg.Env == "live", Sender: outbox.LogSender{Logger: logger}, Logger: logger}
	ids := &identity.Service{DB: d, Clock: clk, Keys: keys, WebAuthn: passkeys, Outbox: messages,
		Guard: identity.PasswordGuard{PerAddress: cfg.WrongPasswords, PerEmail: cfg.SlowSignInAfter, Delay: cfg.SlowSignInDelay}}
	stepUp := &stepup.Service{DB: d, Clock: clk, Keys: keys, Identity: ids}
	accounts := &mca.Service{DB: d, Currencies: cfg.Currencies, Partner: mca.UnconfiguredPartner{}}
	blobs, err := file.OpenBucket(ctx, cfg.Files)
	if err != nil {
		return err
	}
	defer blobs.Close()
	files := file.New(d, keys, blobs)
	bills := &bill.Service{DB: d, Files: files}
	payments := &payment.Service{DB: d, Rates: sandbox.Rates{}}
	// Approving a payment: payments says what is signed and step-up mints
	// the challenge; answering it in the app, step-up verifies it and a
	// payment approval is recorded by payments in the same transaction.
	approvals := &approving.Service{DB: d, StepUp: stepUp, Payments: payments}
	// Paying a bill: a payment that names a bill requests it, and a payment
	// that ends releases it, in the payment's transaction.
	billPay := &billpay.Service{DB: d, Payments: payments, Bills: bills}
	// Payment requests: accepting one makes its payment in the same
	// transaction; a consumer of payment events keeps their payment_status.
	requests := &paymentrequest.Service{DB: d}
	paymentRequests := &requesting.Service{DB: d, Requests: requests, Payments: payments}
	expenses := &expense.Service{DB: d, Files: files}
	cards := &card.Service{DB: d, Keys: keys, Issuer: card.UnconfiguredIssuer{}, Rates: sandbox.Rates{}}
	// An approved card purchase files its cardholder's expense in the same transaction.
	cardSpend := &cardspend.Service{DB: d, Cards: cards, Expenses: expenses}
	apiKeys := &apikey.Service{DB: d, Clock: clk, Keys: keys, Env: cfg.Env}
	// Webhook endpoints: deliveries leave through the bounded client, and
	// each body is the event as the organization's owners would read it.
	sender := newWebhookSender(ctx, cfg)
	defer sender.Close()
	webhooks := &webhook.Service{DB: d, Clock: clk, Keys: keys, Outbound: webhook.Sending{Sender: sender}}
	// A card's PIN, its wallet provisioning, API key changes and webhook
	// endpoints need a step-up.
	confirmed := &confirming.Service{StepUp: stepUp, Cards: cards, APIKeys: apiKeys, Webhooks: webhooks}
	var sandboxIssuer *sandbox.Issuer
	if cfg.Env == "test" {
		sandboxIssuer = &sandbox.Issuer{DB: d, Keys: keys}
		cards.Issuer = sandboxIssuer
	}
	var sandboxPartner *sandbox.Partner
	partnerSecret := []byte(cfg.PartnerSecret)
	if cfg.Env == "test" {
		sandboxPartner = sandbox.NewPartner()
		accounts.Partner = sandboxPartner
		if len(partnerSecret) == 0 {
			partnerSecret = []byte(hex.EncodeToString(keys.Key("partner-webhook")))
		}
	}
	// Identity checks: the sandbox provider in test; live has none configured
	// yet, so getting a token there is service_unavailable.
	kyc := &onboarding.Service{DB: d}
	var sandboxKYC *sandbox.IdentityProvider
	if cfg.Env == "test" {
		sandboxKYC = &sandbox.IdentityProvider{Keys: keys}
		kyc.Provider = sandboxKYC
	}
	// The realtime channel follows the event table while anyone listens.
	realtime := event.NewTail(d, logger, 0, 0)

	// The address and sign-in limits are shared by every instance through
	// the database; this process's own buckets in front of them refuse a
	// flood from one client without a database write per refused request,
	// and the store leases the address limit's tokens in chunks, so that a
	// passing request is not a database write either (see ratelimit.Store).
	// Request limits read the real time even under the manual clock: a
	// manual clock is each instance's own (advancing one moves no other), so
	// it cannot time a budget the instances share, and a sandbox whose clock
	// stands still would never refill, refusing at last even the helper that
	// advances the clock.
	limitClock := clock.System{}
	sharedLimits := ratelimit.NewStore(d, limitClock, keys)

	deps := httpapi.Deps{
		Logger:  logger,
		DB:      d,
		Clock:   clk,
		Keys:    keys,
		Limiter: ratelimit.Layered{Local: ratelimit.NewMemory(limitClock.Now), Shared: sharedLimits},
		Limits: httpapi.Limits{
			PerAddress:    cfg.RateLimitAddress,
			PerCredential: cfg.RateLimitCredential,
			SignIn:        cfg.RateLimitSignIn,
		},
		Identity:         ids,
		StepUp:           stepUp,
		APIKeys:          apiKeys,
		Confirming:       confirmed,
		Webhooks:         webhooks,
		CurrencyAccounts: accounts,
		Payments:         payments,
		Approving:        approvals,
		BillPay:          billPay,
		PaymentRequests:  paymentRequests,
		Cards:            cards,
		CardSpend:        cardSpend,
		Files:            files,
		Bills:            bills,
		Invoices:         &invoicing.Service{DB: d},
		Onboarding:       kyc,
		SandboxKYC:       sandboxKYC,
		Expenses:         expenses,
		Binding:          &binding.Service{DB: d, Expenses: expenses},
		SandboxIssuer:    sandboxIssuer,
		Ledger:           &ledger.Service{DB: d},
		Statements:       &statementing.Service{DB: d, Statements: &statement.Service{DB: d}},
		Partner:          sandboxPartner,
		PartnerSecret:    partnerSecret,
		OpenAPI:          api.JSON,
		Realtime:         realtime,
		RealtimePing:     cfg.RealtimePing,
		Metrics:          metricCollectors(d),
	}
	deps.LocalLimiter = ratelimit.NewMemory(limitClock.Now)
	webhooks.Render, webhooks.Delivers = httpapi.EventRenderer(deps), httpapi.WebhookEventTypes(deps)
	if cfg.Env == "test" {
		deps.Sandbox = &sandbox.Service{DB: d, Manual: manual, Keys: keys, Messages: messages}
		deps.SandboxToken = secrets.sandboxToken
		deps.ApprovingApp = &sandbox.ApprovingApp{DB: d, Keys: keys, Approving: approvals}
		if err := seedDemo(ctx, deps.Sandbox, deps.ApprovingApp, secrets, stdout); err != nil {
			return err
		}
	}
	// What start-up allocated (migrations, a first start's demo owner and
	// their 19 MiB password hash) is garbage now; hand it back to the OS
	// instead of holding it until the next collection, which an idle
	// server may not need for minutes.
	debug.FreeOSMemory()

	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{
		Handler:           console.Mount(httpapi.New(deps), cfg.Env),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// A stop ends the realtime streams at once: they would otherwise keep
	// Shutdown waiting (server-sent events) or outlive it (WebSockets).
	srv.RegisterOnShutdown(realtime.Close)

	workerCtx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWorkers()
	var workers sync.WaitGroup
	newWorkers(d, clk, logger, messages, accounts, payments, bills, requests, webhooks).start(workerCtx, &workers)
	fanOut := webhookFanOut(d, logger, webhooks)
	workers.Go(func() { fanOut.Run(workerCtx) })
	workers.Go(func() { realtime.Run(workerCtx) })
	// Payment requests follow their payments: a durable consumer of payment events.
	followPayments := event.NewConsumer(d, logger, requesting.ConsumerName, paymentRequests.Follow)
	workers.Go(func() { followPayments.Run(workerCtx) })
	workers.Go(func() { sharedLimits.Run(workerCtx, 0, logger) })

	if cfg.DebugAddr != "" {
		stopDebug, err := serveDebug(cfg.DebugAddr, logger)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	fmt.Fprintf(stderr, "listening on http://%s\n", ln.Addr())
	printNextSteps(stdout, "http://"+ln.Addr().String(), cfg.Env, secrets)
	logger.Info("server started", "addr", ln.Addr().String(), "env", cfg.Env, "database", string(d.Dialect()), "clock", cfg.Clock, "version", Version)

	select {
	case err := <-served:
		return fmt.Errorf("server stopped: %w", err)
	case <-ctx.Done():
	}
	logger.Info("stopping: finishing in-flight requests and workers")
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownGrace)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	if werr := realtime.Wait(shutdownCtx); werr != nil {
		err = errors.Join(err, fmt.Errorf("realtime connections did not end in time: %w", werr))
	}
	stopWorkers()
	done := make(chan struct{})
	go func() { workers.Wait(); close(done) }()
	select {
	case <-done:
	case <-shutdownCtx.Done():
		err = errors.Join(err, errors.New("workers did not stop in time"))
	}
	if err != nil {
		logger.Error("stopped uncleanly", "error", err.Error())
		return err
	}
	logger.Info("stopped")
	return nil
}

// secrets are the generated-once values of the test environment.
type secrets struct {
	root         string
	sandboxToken string
	// generatedSandboxToken is true on the start that created the token, so it is printed once.
	generatedSandboxToken bool
}

// loadSecrets returns the root secret and sandbox token: from the
// configuration when set, otherwise (test only) generated once and kept in
// the settings table so restarts keep sessions and cursors valid.
func loadSecrets(ctx context.Context, d *db.DB, cfg Config) (secrets, error) {
	s := secrets{root: cfg.Secret, sandboxToken: cfg.SandboxToken}
	if cfg.Env == "live" {
		return s, nil
	}
	err := d.Tx(ctx, func(tx *db.Tx) error {
		if s.root == "" {
			v, _, err := storedSetting(ctx, tx, "root_secret", func() string { return keyring.RandomToken(32) })
			if err != nil {
				return err
			}
			s.root = v
		}
		if s.sandboxToken == "" {
			v, created, err := storedSetting(ctx, tx, "sandbox_token", func() string { return "sbx_" + keyring.RandomToken(32) })
			if err != nil {
				return err
			}
			s.sandboxToken, s.generatedSandboxToken = v, created
		}
		return nil
	})
	return s, err
}

// storedSetting reads key from the settings table, storing generate() first when absent.
func storedSetting(ctx context.Context, tx *db.Tx, key string, generate func() string) (string, bool, error) {
	var v string
	err := tx.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = $1`, key).Scan(&v)
	if err == nil {
		return v, false, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, err
	}
	v = generate()
	_, err = tx.ExecContext(ctx, `INSERT INTO settings (key, value) VALUES ($1, $2)`, key, v)
	return v, true, err
}
