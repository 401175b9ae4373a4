package client_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// The examples (example_test.go) run against one real server started here,
// holding an organization whose owner can sign in, with money, a payment
// contact and an API key. The tests start servers of their own.

// What the examples read: in a program these come from its configuration.
var (
	serverURL string // the server, "https://strongroom.example" say
	orgID     string // the organization's id
	apiKey    string // an API key of the organization with scope balances:read
	email     string // the owner's email (password: the constant password)
	token     string // a session token of the owner
	contactID string // a payment contact of the organization
	// approvalID is the approval of a payment waiting for it.
	approvalID string
	// totpSecret is the owner's authenticator app, used by authenticatorCode.
	totpSecret string
	// sandbox calls the examples' server as the sandbox would: the
	// approving app on the owner's phone, the clock.
	sandbox *client.Client
)

func TestMain(m *testing.M) {
	tb := &mainTB{}
	code := func() int {
		defer tb.cleanup()
		world(tb)
		return m.Run()
	}()
	if tb.Failed() && code == 0 {
		code = 1
	}
	os.Exit(code)
}

// world starts the examples' server and fills the variables above, through
// the client's own sandbox helpers.
func world(tb *mainTB) {
	s := apitest.Start(tb)
	ctx := context.Background()
	serverURL = s.URL
	sandbox = s.Client(tb, sbx)
	email = "ada@acme.test"
	pw := password
	created, err := sandbox.SandboxCreateOrganization(ctx, api.SandboxNewOrganization{
		Name: "Acme Ltd", Owner: api.SandboxPerson{Email: email, Password: &pw},
	})
	if err != nil {
		tb.Fatal(err)
	}
	orgID, totpSecret = created.Organization.Id.String(), *created.Owner.TotpSecret
	if _, err := sandbox.SandboxCreateApprovingApp(ctx, created.Owner.UserId.String()); err != nil {
		tb.Fatal(err)
	}
	if _, err := sandbox.SandboxDeposit(ctx, orgID, api.SandboxDeposit{Currency: "EUR", Amount: "1000.00"}); err != nil {
		tb.Fatal(err)
	}
	owner := s.Client(tb, "", client.WithStepUp(func(ctx context.Context, _ *api.StepUpChallenge) (client.StepUpAnswer, error) {
		code, err := authenticatorCode(ctx)
		return client.StepUpAnswer{Method: client.StepUpTOTP, Code: code}, err
	}))
	if _, err := owner.Login(ctx, client.Credentials{Email: email, Password: password, Code: authenticatorCode}); err != nil {
		tb.Fatal(err)
	}
	token = owner.Token()
	key, err := owner.CreateAPIKey(ctx, orgID, api.ApiKeyCreation{
		Name: "Dashboard", Role: api.ApiKeyRequestedRoleMember, Scopes: []api.ApiKeyScope{api.ApiKeyScopeBalancesRead},
	})
	if err != nil {
		tb.Fatal(err)
	}
	apiKey = key.Secret
	iban, bic := "DE89 3704 0044 0532 0130 00", "COBADEFFXXX"
	contact, err := owner.CreatePaymentContact(ctx, orgID, api.PaymentContactCreation{
		Name: "Müller Maschinenbau GmbH", Currency: "EUR", Rail: api.RailFiat, Iban: &iban, SwiftCode: &bic,
	})
	if err != nil {
		tb.Fatal(err)
	}
	contactID = contact.Id.String()
	q, err := owner.CreatePaymentQuote(ctx, api.PaymentQuoteRequest{OrganizationId: created.Organization.Id, PaymentContactId: contact.Id,
		Rail: api.RailFiat, SourceCurrency: "EUR", Amount: "10.00", AmountSide: api.PaymentQuoteRequestAmountSideSend})
	if err != nil {
		tb.Fatal(err)
	}
	reason, description := "PYR002", "Invoice 2026-117"
	p, err := owner.ExecutePayment(ctx, api.PaymentExecution{QuoteId: q.Id, PayoutReason: &reason, StatementDescription: &description}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	approvalID = p.ApprovalRequestId.String()
}

// approve approves the payment approval approvalID as the owner, in the
// Strongroom app on their phone (ExampleClient_ApprovePayment shows how).
func approve(ctx context.Context, approvalID string) {
	var c *client.Client
	c, err := client.New(serverURL, client.WithToken(token), client.WithStepUpPollInterval(20*time.Millisecond),
		client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
			return client.StepUpAnswer{Method: client.StepUpApp}, approveOnThePhone(ctx, *ch.MatchCode)
		}))
	if err == nil {
		_, err = c.ApprovePayment(ctx, approvalID)
	}
	if err != nil {
		fmt.Println("approve:", err)
	}
}

// authenticatorCode is what the owner's authenticator app shows: a code for
// the server's manual clock, which it moves on by one 30-second step first
// because a code is accepted once.
func authenticatorCode(ctx context.Context) (string, error) {
	clock, err := sandbox.SandboxAdvanceClock(ctx, api.SandboxClockAdvance{Seconds: 30})
	if err != nil {
		return "", err
	}
	return totp.GenerateCode(totpSecret, clock.Now)
}

// approveOnThePhone approves, with the owner's sandbox approving app, the
// pending challenge whose match code is matchCode, as the owner would in
// the Strongroom app.
func approveOnThePhone(ctx context.Context, matchCode string) error {
	c, err := client.New(serverURL, client.WithToken(token))
	if err != nil {
		return err
	}
	for ch, err := range c.Challenges(ctx, nil) {
		if err != nil {
			return err
		}
		if ch.Status == "pending" && ch.ApprovalId != nil {
			_, err := sandbox.SandboxApproveChallenge(ctx, ch.Id.String(), api.SandboxChallengeApproval{MatchCode: &matchCode})
			return err
		}
	}
	return fmt.Errorf("no pending approval challenge")
}

// mainTB lets TestMain start a server with apitest, which wants a
// testing.TB: it fails the run on an error and stops it on a fatal one.
// The embedded TB is nil; a method apitest starts to use that is not
// written here panics, visibly.
type mainTB struct {
	testing.TB
	mu       sync.Mutex
	failed   bool
	cleanups []func()
	dirs     []string
}

func (tb *mainTB) Helper()                      {}
func (tb *mainTB) Name() string                 { return "TestMain" }
func (tb *mainTB) Context() context.Context     { return context.Background() }
func (tb *mainTB) Log(args ...any)              { fmt.Fprintln(os.Stderr, args...) }
func (tb *mainTB) Logf(format string, a ...any) { fmt.Fprintf(os.Stderr, format+"\n", a...) }
func (tb *mainTB) Error(args ...any)            { tb.Log(args...); tb.fail() }
func (tb *mainTB) Errorf(f string, a ...any)    { tb.Logf(f, a...); tb.fail() }
func (tb *mainTB) Fatal(args ...any)            { tb.Log(args...); tb.stop(1) }
func (tb *mainTB) Fatalf(f string, a ...any)    { tb.Logf(f, a...); tb.stop(1) }
func (tb *mainTB) Skip(args ...any)             { tb.Log(args...); tb.stop(0) }
func (tb *mainTB) Skipf(f string, a ...any)     { tb.Logf(f, a...); tb.stop(0) }

func (tb *mainTB) Failed() bool {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return tb.failed
}

func (tb *mainTB) fail() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.failed = true
}

// stop ends the run: a skip (no PostgreSQL configured) skips the whole
// package, as each of its tests would.
func (tb *mainTB) stop(code int) {
	tb.cleanup()
	os.Exit(code)
}

func (tb *mainTB) Cleanup(f func()) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.cleanups = append(tb.cleanups, f)
}

func (tb *mainTB) cleanup() {
	tb.mu.Lock()
	fs := tb.cleanups
	tb.cleanups = nil
	tb.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		fs[i]()
	}
	for _, d := range tb.dirs {
		_ = os.RemoveAll(d)
	}
	tb.dirs = nil
}

func (tb *mainTB) TempDir() string {
	d, err := os.MkdirTemp("", "strongroom-client-example-")
	if err != nil {
		tb.Fatal(err)
	}
	tb.mu.Lock()
	defer tb.mu.Unlock()
	tb.dirs = append(tb.dirs, d)
	return d
}
