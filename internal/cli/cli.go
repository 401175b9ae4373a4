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
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
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

// Options are the knobs of a run that tests turn.
type Options struct {
	// Poll is how often step-ups and bill extraction are polled (default
	// 2 s and 1 s).
	Poll time.Duration
	// HTTP is the HTTP client (default: a client with a 60 s timeout).
	HTTP *http.Client
	// ProgressEvery is how often the time waited for the phone is shown
	// (default: every second in place on a terminal, else every 10 s).
	ProgressEvery time.Duration
}

// Run runs the strongroom command in args (without the program name) and
// returns the process's exit code. Server commands go to package app.
func Run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunWith(ctx, args, getenv, stdin, stdout, stderr, Options{})
}

// RunWith is Run with options.
func RunWith(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer, opts Options) int {
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
	if len(args) == 0 {
		fmt.Fprint(stderr, topUsage())
		return ExitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		args = append([]string{"help"}, args[1:]...)
	case "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	cmd := lookup(args[0])
	if cmd == nil {
		fmt.Fprintf(stderr, "strongroom: unknown command %q: run \"strongroom help\" for the list of commands\n", args[0])
		return ExitUsage
	}
	if err := e.dispatch(cmd, args[1:]); err != nil {
		return e.fail(err)
	}
	return ExitOK
}

// dispatch runs cmd, or the subcommand its first argument names.
func (e *env) dispatch(cmd *command, args []string) error {
	e.cmd = cmd
	if len(cmd.subs) > 0 && len(args) > 0 {
		if sub := cmd.sub(args[0]); sub != nil {
			return e.dispatch(sub, args[1:])
		}
	}
	if cmd.run == nil { // a group without a subcommand
		if len(args) > 0 && isHelpArg(args[0]) {
			_, err := io.WriteString(e.out, helpText(cmd))
			return err
		}
		subs := strings.Join(names(cmd.subs), ", ")
		if len(args) == 0 {
			return usageHelpf("%s needs a subcommand: %s", cmd.path, subs)
		}
		return usageHelpf("%s has no subcommand %q; it has %s", cmd.path, args[0], subs)
	}
	if cmd.flagSet != nil && hasHelpFlag(args) {
		_, err := io.WriteString(e.out, helpText(cmd))
		return err
	}
	return cmd.run(e, args)
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

	cmd        *command      // the command running
	fs         *flag.FlagSet // its flags, once defined
	synopsis   string        // its usage line, as e.flags got it
	describing bool          // describe mode: e.parse stops with errDescribed
	approvalID string        // the approval being approved, to find its challenge

	// the common flags, once parsed
	output string
	org    string
	method string

	c *client.Client
}

// usageError is a wrong command line (exit 2); with help, the message
// points to the command's --help.
type usageError struct {
	msg  string
	help bool
}

func (e *usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return &usageError{msg: fmt.Sprintf(format, a...)} }

// usageHelpf is usagef for a command line that --help would have avoided.
func usageHelpf(format string, a ...any) error {
	return &usageError{msg: fmt.Sprintf(format, a...), help: true}
}

// exitError is a failure the command explains itself, with its exit code
// (a payment refused before it is made, say).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// errNotSignedIn is a command that needs a session when there is none (exit 3).
var errNotSignedIn = errors.New(`not signed in: run "strongroom login" (or set STRONGROOM_TOKEN)`)

// errNotConfirmed is a payment the person did not confirm (exit 1).
var errNotConfirmed = errors.New("not paid")

// fail prints err to stderr and returns its exit code.
func (e *env) fail(err error) int {
	var ue *usageError
	var xe *exitError
	var idErr *client.InvalidIDError
	var apiErr *client.Error
	var stepErr *client.StepUpError
	var signErr *client.SignInError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ue):
		e.errorf("%s", ue.msg)
		if ue.help && e.cmd != nil {
			fmt.Fprintf(e.errw, "Run \"strongroom %s --help\" for its usage.\n", e.cmd.path)
		}
		return ExitUsage
	case errors.As(err, &xe):
		e.errorf("%s", xe.msg)
		return xe.code
	case errors.As(err, &idErr):
		e.errorf("%s %q is not a UUID: give the id as the API shows it (0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60)", idErr.What, idErr.Value)
		return ExitUsage
	case errors.Is(err, context.Canceled):
		e.errorf("interrupted")
		return ExitInterrupted
	case errors.Is(err, errNotSignedIn):
		e.errorf("%v", err)
		return ExitAuth
	case errors.As(err, &stepErr):
		e.errorf("the step-up was %s; nothing was done", stepErr.Status)
		return ExitForbidden
	case errors.As(err, &signErr):
		e.errorf("%s", signInMessage(signErr.Status))
		return ExitAuth
	case errors.As(err, &apiErr):
		e.errorf("%s (%s, request %s)", apiErr.Message, apiErr.Type, apiErr.RequestID)
		for _, d := range apiErr.Details {
			fmt.Fprintf(e.errw, "  %s: %s\n", d.Field, d.Message)
		}
		switch {
		case apiErr.StatusCode == http.StatusUnauthorized && apiErr.Type != "invalid_credentials":
			fmt.Fprintln(e.errw, `Sign in again with "strongroom login".`)
		case apiErr.Type == "approval_credential_required":
			fmt.Fprintln(e.errw, `Approving needs the Strongroom app on your phone; in the sandbox, "strongroom sandbox approving-app" registers a sandbox one.`)
		}
		return exitCodeOf(apiErr)
	}
	if msg, ok := e.unreachable(err); ok {
		e.errorf("%s", msg)
		return ExitError
	}
	e.errorf("%v", err)
	return ExitError
}

// errorf prints one error line on stderr, "strongroom: " once: the
// prefixes of the errors it wraps (the client's own) are dropped.
func (e *env) errorf(format string, a ...any) {
	msg := strings.ReplaceAll(fmt.Sprintf(format, a...), "strongroom: ", "")
	fmt.Fprintln(e.errw, "strongroom: "+msg)
}

// unreachable is the message of a server that could not be reached: one
// line naming the URL and what to do, never the dialer's own error.
func (e *env) unreachable(err error) (string, bool) {
	var opErr *net.OpError
	var urlErr *url.Error
	reason := ""
	switch {
	case errors.As(err, &opErr) && opErr.Op == "dial":
		var dnsErr *net.DNSError
		switch {
		case errors.Is(err, syscall.ECONNREFUSED):
			reason = "connection refused"
		case errors.As(err, &dnsErr):
			reason = "no such host"
		case opErr.Timeout():
			reason = "no answer"
		default:
			reason = "cannot connect"
		}
	case errors.As(err, &urlErr) && urlErr.Timeout():
		reason = "no answer in time"
	default:
		return "", false
	}
	return fmt.Sprintf("cannot reach the server at %s (%s): start one with \"strongroom server\", or set STRONGROOM_URL to its address", e.baseURL, reason), true
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

// flags returns the FlagSet of a command; synopsis is its usage line
// after "strongroom ". Its help is the command's (helpText), printed by
// e.parse on -h or --help; the flag package itself prints nothing.
func (e *env) flags(name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	e.fs, e.synopsis = fs, synopsis
	return fs
}

// common adds the common flags: -o, and --org and --step-up when asked.
func (e *env) common(fs *flag.FlagSet, org bool) {
	e.outputFlag(fs)
	fs.StringVar(&e.method, "step-up", "", "answer a step-up with `method` app, totp or email (default: app when you have it, else totp)")
	if org {
		e.orgFlag(fs)
	}
}

// outputFlag adds -o.
func (e *env) outputFlag(fs *flag.FlagSet) {
	fs.StringVar(&e.output, "o", "table", "output `format`: table or json")
}

// orgFlag adds --org.
func (e *env) orgFlag(fs *flag.FlagSet) {
	fs.StringVar(&e.org, "org", "", "the organization, by `id or name` (default: your only one)")
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
	if e.describing {
		return nil, errDescribed
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				if e.cmd != nil {
					io.WriteString(e.out, helpText(e.cmd))
				}
				return nil, err
			}
			return nil, usageHelpf("%v", err)
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
	if e.output != "" && e.output != "table" && e.output != "json" {
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
