// Package cli is the command line of Strongroom: the client commands of the
// strongroom binary (login, balances, pay, approvals, …), beside the server
// commands of package app, in the way of `vault server` and `vault login`.
//
// Every command speaks to the server at STRONGROOM_URL through the public Go
// client (package client). Results go to stdout, as aligned tables for
// people or, with -o json, as the API's records for scripts; prompts,
// progress lines and errors go to stderr. The exit code tells the kind of
// failure (see the usage text).
package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/app"
)

// Exit codes, by kind of failure; stable, for scripts.
const (
	ExitOK          = 0   // success
	ExitError       = 1   // any other failure (network, server error, payment not confirmed)
	ExitUsage       = 2   // bad command line, or the server answered invalid_request (400)
	ExitAuth        = 3   // not signed in: no token, session expired, wrong password or code (401)
	ExitForbidden   = 4   // not allowed (403), or a step-up declined, expired or not answered
	ExitNotFound    = 5   // no such record (404)
	ExitRefused     = 6   // refused by a rule: conflict (409), insufficient funds and other 422
	ExitRateLimited = 7   // too many requests (429)
	ExitInterrupted = 130 // interrupted (Ctrl-C)
)

// DefaultURL is the server when STRONGROOM_URL is not set.
const DefaultURL = "http://127.0.0.1:8080"

const usage = `usage: strongroom <command> [flags]

Server commands:
  server                      serve the API (applies pending migrations first)
  migrate                     apply pending migrations and exit
  migrate status              list applied and pending migrations
  backup [--force] PATH       copy the SQLite database while the server runs
  healthcheck                 exit 0 when the server is ready (containers)
  version                     print the version

Client commands (speak to the server at STRONGROOM_URL, default ` + DefaultURL + `):
  login [--email E] [--qr]    sign in; the session token is kept in a 0600 file
  logout                      sign the session out and forget the token
  whoami                      the signed-in person and their session
  orgs                        the organizations you belong to
  balances                    available and pending balance per currency
  transactions [--since D]    the transactions feed, every page (D: YYYY-MM-DD)
  contacts                    the payment contacts
  pay --contact C --amount A  quote a payment, show it, confirm, execute
  approvals list|approve ID|reject ID
                              payments waiting for approval; approving asks
                              for your phone (match code)
  requests list|accept ID|decline ID --reason R
                              payment requests programs made; accepting pays
                              in your name and asks for your phone
  keys create|list|rotate ID|revoke ID
                              API keys
  webhooks create --url URL [--event T]|list|get ID|update ID|delete ID|
           rotate-secret ID|deliveries ID|retry ID DELIVERY
                              webhook endpoints and their deliveries log
  cards list|freeze ID|unfreeze ID
                              cards
  bills upload FILE           upload an invoice, wait for extraction, print it
  events list [--type T] [--since TIME] [--until TIME]
                              the organization's events of the last 30 days
  listen --forward-to URL [--events T,…] [--secret whsec_…]
                              follow the organization's events and POST each
                              to URL signed as a webhook (Standard Webhooks)
  statements --currency C --from D --to D [--format F] [-O FILE]
                              a statement (F: json, csv, camt053, ofx)

Common flags of the client commands:
  -o table|json   output format (default table; json prints the API's records)
  --org ID|NAME   the organization (default: your only one)
  --step-up M     answer a step-up with app (your phone), totp (authenticator
                  code, asked on stdin) or email (code sent by email); default:
                  app when you have it, else totp

Environment:
  STRONGROOM_URL     the server (default ` + DefaultURL + `)
  STRONGROOM_TOKEN   a session token or API key to use instead of the token file
  XDG_CONFIG_HOME    where the token file lives (default ~/.config):
                     $XDG_CONFIG_HOME/strongroom/token

Exit codes:
  0 ok  1 other error  2 usage or invalid request  3 not signed in
  4 forbidden or step-up not completed  5 not found  6 refused (conflict,
  insufficient funds, …)  7 rate limited  130 interrupted

Run "strongroom <command> -h" for a command's flags.`

// Options are the knobs of a run that tests turn.
type Options struct {
	// Poll is how often step-ups and bill extraction are polled (default
	// 2 s and 1 s).
	Poll time.Duration
	// HTTP is the HTTP client (default: a client with a 60 s timeout).
	HTTP *http.Client
}

// Run runs the strongroom command in args (without the program name) and
// returns the process's exit code. Server commands go to package app.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, args, getenv, stdin, stdout, stderr, Options{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, opts Options) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return ExitUsage
	}
	switch args[0] {
	case "server", "migrate", "version", "backup", "healthcheck":
		if err := app.Run(ctx, args, getenv, stdout, stderr); err != nil {
			fmt.Fprintln(stderr, "strongroom:", err)
			return ExitError
		}
		return ExitOK
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return ExitOK
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "strongroom: unknown command %q\n\n%s\n", args[0], usage)
		return ExitUsage
	}
	e := &env{
		ctx: ctx, getenv: getenv, stdin: stdin, in: bufio.NewReader(stdin), out: stdout, errw: stderr,
		opts: opts, baseURL: strings.TrimSpace(getenv("STRONGROOM_URL")),
	}
	if e.baseURL == "" {
		e.baseURL = DefaultURL
	}
	if e.opts.HTTP == nil {
		e.opts.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	err := cmd(e, args[1:])
	if err == nil {
		return ExitOK
	}
	return e.fail(err)
}

// commands are the client commands by name.
var commands = map[string]func(*env, []string) error{
	"login":        cmdLogin,
	"logout":       cmdLogout,
	"whoami":       cmdWhoami,
	"orgs":         cmdOrgs,
	"balances":     cmdBalances,
	"transactions": cmdTransactions,
	"contacts":     cmdContacts,
	"pay":          cmdPay,
	"approvals":    cmdApprovals,
	"requests":     cmdRequests,
	"keys":         cmdKeys,
	"webhooks":     cmdWebhooks,
	"cards":        cmdCards,
	"bills":        cmdBills,
	"events":       cmdEvents,
	"listen":       cmdListen,
	"statements":   cmdStatements,
}

// env is one run of a client command.
type env struct {
	ctx     context.Context
	getenv  func(string) string
	stdin   io.Reader
	in      *bufio.Reader
	out     io.Writer
	errw    io.Writer
	opts    Options
	baseURL string

	// the common flags, once parsed
	output string
	org    string
	method string

	c *client.Client
}

// usageError is a wrong command line (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }

// errNotSignedIn is a command that needs a session when there is none (exit 3).
var errNotSignedIn = errors.New(`not signed in: run "strongroom login" (or set STRONGROOM_TOKEN)`)

// errNotConfirmed is a payment the person did not confirm (exit 1).
var errNotConfirmed = errors.New("not paid")

// fail prints err to stderr and returns its exit code.
func (e *env) fail(err error) int {
	var ue *usageError
	var apiErr *client.Error
	var stepErr *client.StepUpError
	var signErr *client.SignInError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		fmt.Fprintln(e.errw, "strongroom:", ue.msg)
		return ExitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(e.errw, "strongroom: interrupted")
		return ExitInterrupted
	case errors.Is(err, errNotSignedIn):
		fmt.Fprintln(e.errw, "strongroom:", err)
		return ExitAuth
	case errors.As(err, &stepErr):
		fmt.Fprintf(e.errw, "strongroom: the step-up was %s; nothing was done\n", stepErr.Status)
		return ExitForbidden
	case errors.As(err, &signErr):
		fmt.Fprintln(e.errw, "strongroom:", signInMessage(signErr.Status))
		return ExitAuth
	case errors.As(err, &apiErr):
		fmt.Fprintf(e.errw, "strongroom: %s (%s, request %s)\n", apiErr.Message, apiErr.Type, apiErr.RequestID)
		for _, d := range apiErr.Details {
			fmt.Fprintf(e.errw, "  %s: %s\n", d.Field, d.Message)
		}
		if apiErr.StatusCode == http.StatusUnauthorized && apiErr.Type != "invalid_credentials" {
			fmt.Fprintln(e.errw, `Sign in again with "strongroom login".`)
		}
		return exitCodeOf(apiErr)
	}
	fmt.Fprintln(e.errw, "strongroom:", err)
	return ExitError
}

// exitCodeOf maps an API error to its exit code.
func exitCodeOf(e *client.Error) int {
	switch {
	case e.StatusCode == http.StatusBadRequest:
		return ExitUsage
	case e.StatusCode == http.StatusUnauthorized:
		return ExitAuth
	case e.StatusCode == http.StatusForbidden:
		return ExitForbidden
	case e.StatusCode == http.StatusNotFound:
		return ExitNotFound
	case e.StatusCode == http.StatusConflict, e.StatusCode == http.StatusUnprocessableEntity:
		return ExitRefused
	case e.StatusCode == http.StatusTooManyRequests:
		return ExitRateLimited
	}
	return ExitError
}

func signInMessage(status api.SignInStatus) string {
	switch status {
	case api.SignInStatusMfaFailed:
		return "the authenticator code was wrong; sign in again"
	case api.SignInStatusChallengeExpired:
		return "the sign-in took too long; sign in again"
	}
	return fmt.Sprintf("the sign-in stopped at %s", status)
}

// flags returns a FlagSet for a command, its usage printed to stderr.
func (e *env) flags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.errw)
	fs.Usage = func() {
		fmt.Fprintf(e.errw, "usage: strongroom %s\n", synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// common adds the common flags: -o, and --org and --step-up when asked.
func (e *env) common(fs *flag.FlagSet, org bool) {
	fs.StringVar(&e.output, "o", "table", "output `format`: table or json")
	fs.StringVar(&e.method, "step-up", "", "answer a step-up with `method` app, totp or email (default: app when you have it, else totp)")
	if org {
		fs.StringVar(&e.org, "org", "", "the organization, by `id or name` (default: your only one)")
	}
}

// parseForOrg parses a command that takes no positional arguments and
// acts on one organization, and returns that organization's id.
func (e *env) parseForOrg(fs *flag.FlagSet, args []string) (string, error) {
	if _, err := e.parse(fs, args); err != nil {
		return "", err
	}
	return e.orgID()
}

// parse parses args with fs, flags and arguments in any order, and checks
// the common flags. It returns the positional arguments.
func (e *env) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			pos = append(pos, rest...) // everything after -- is an argument
			break
		}
		args = rest
		if len(args) == 0 {
			break
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	if e.output != "table" && e.output != "json" {
		return nil, usagef("-o must be table or json, not %q", e.output)
	}
	switch e.method {
	case "", client.StepUpApp, client.StepUpTOTP, client.StepUpEmail:
	default:
		return nil, usagef("--step-up must be app, totp or email, not %q", e.method)
	}
	return pos, nil
}

// client returns the client of a signed-in command: the token of
// STRONGROOM_TOKEN or of the token file, and the step-up walk-through.
func (e *env) client() (*client.Client, error) {
	if e.c != nil {
		return e.c, nil
	}
	token := strings.TrimSpace(e.getenv("STRONGROOM_TOKEN"))
	if token == "" {
		t, err := e.readToken()
		if err != nil {
			return nil, err
		}
		token = t
	}
	if token == "" {
		return nil, errNotSignedIn
	}
	c, err := e.newClient(client.WithToken(token))
	if err != nil {
		return nil, err
	}
	e.c = c
	return c, nil
}

// newClient is a client of the server, with the step-up walk-through.
func (e *env) newClient(opts ...client.Option) (*client.Client, error) {
	base := []client.Option{client.WithHTTP(e.opts.HTTP), client.WithStepUp(e.stepUp)}
	if e.opts.Poll > 0 {
		base = append(base, client.WithStepUpPollInterval(e.opts.Poll))
	}
	c, err := client.New(e.baseURL, append(base, opts...)...)
	if err != nil {
		return nil, usagef("STRONGROOM_URL: %v", err)
	}
	return c, nil
}

// stdinFile is stdin when it is a file (a terminal, say).
func (e *env) stdinFile() *os.File {
	f, _ := e.stdin.(*os.File)
	return f
}
