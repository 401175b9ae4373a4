package cli

import (
	"context"
	"errors"
	"flag"
	"io"
	"strings"

	"github.com/strongroom/strongroom/internal/app"
)

// command is one entry of the command table. The dispatch, the top-level
// usage, `strongroom help CMD`, `CMD --help` and the shell completion
// scripts are all made from the table, so none of them can miss a command.
//
// A leaf command has run. Its flags, synopsis and defaults come from the
// code itself: run defines its flags with e.flags and e.common, then calls
// e.parse before doing anything else; to describe a command, the table runs
// it in describe mode, where e.parse stops with errDescribed (see
// describe). A command whose flags live elsewhere (the server's) gives
// flagSet instead. A group has subs and no run; a command with both runs
// itself unless its first argument names one of its subs.
type command struct {
	name     string // as typed: "pay", or "create" under "webhooks"
	section  string // the heading of the top-level usage it is listed under (top level only)
	summary  string // one line, lower case, no final period
	synopsis string // the usage line after "strongroom " when e.flags does not give it
	example  string // one or more example lines, each a full command line
	notes    string // a paragraph more for the help, or ""
	run      func(e *env, args []string) error
	flagSet  func() *flag.FlagSet // the flags when run does not define them
	subs     []*command

	path string // "webhooks create": set by init
}

// The sections of the top-level usage, in order.
const (
	sectionServer  = "Server commands"
	sectionClient  = "Client commands (speak to the server at STRONGROOM_URL, default " + DefaultURL + ")"
	sectionSandbox = "Sandbox commands (environment test; the sandbox token in STRONGROOM_SANDBOX_TOKEN or --token)"
)

// table is every command; set by init (help and completion read it).
var table []*command

func init() {
	table = []*command{
		// Server commands: package app runs them.
		{name: "server", section: sectionServer, summary: "serve the API (applies pending migrations first)",
			synopsis: "server [flags]", run: appCommand("server"), flagSet: serverFlags("server"),
			example: "strongroom server\nSTRONGROOM_DATABASE='postgres://app@127.0.0.1:5432/strongroom' strongroom server --addr :8080",
			notes:   serverNotes},
		{name: "migrate", section: sectionServer, summary: "apply pending migrations and exit",
			synopsis: "migrate [--database DSN]", run: appCommand("migrate"), flagSet: operatorFlags("migrate"),
			example: "strongroom migrate --database sqlite:strongroom.db",
			notes: "Applies the pending migrations of the database and says how many (the server applies\n" +
				"them as it starts, too). Migrations only go forward.",
			subs: []*command{{name: "status", summary: "list applied and pending migrations",
				synopsis: "migrate status [--database DSN]", run: appCommand("migrate", "status"), flagSet: operatorFlags("migrate status"),
				example: "strongroom migrate status",
				notes: "Lists every migration this binary carries: applied (with when) or pending. Changes\n" +
					"nothing in the database but creating the version table of an empty one."}}},
		{name: "backup", section: sectionServer, summary: "copy the SQLite database to PATH while the server runs",
			synopsis: "backup [--database DSN] [--force] PATH", run: appCommand("backup"), flagSet: operatorFlags("backup"),
			example: "strongroom backup /var/backups/strongroom-$(date +%F).db",
			notes: "Writes a consistent copy of the SQLite database to PATH while the server keeps serving\n" +
				"(it holds every transaction committed before the copy began). The copy is written beside\n" +
				"PATH, checked and flushed to disk, then renamed to PATH; it is readable by its owner alone.\n" +
				"Restore by stopping the server and putting the copy in the database's place. On\n" +
				"PostgreSQL use pg_dump (the command says how)."},
		{name: "healthcheck", section: sectionServer, summary: "exit 0 when the server at STRONGROOM_ADDR is ready (containers)",
			synopsis: "healthcheck [--addr HOST:PORT]", run: appCommand("healthcheck"), flagSet: operatorFlags("healthcheck"),
			example: "strongroom healthcheck --addr 127.0.0.1:8080",
			notes:   "Exits 0 when the server answers GET /readyz with 200 (database reachable, migrations\napplied), 1 otherwise: the health check of an image without curl."},
		auditCommand,
		{name: "version", section: sectionServer, summary: "print the version (also strongroom --version)",
			run: cmdVersion, example: "strongroom version"},
		{name: "completion", section: sectionServer, summary: "print a shell completion script for bash, zsh or fish",
			run: cmdCompletion, example: "source <(strongroom completion bash)\nstrongroom completion zsh > \"${fpath[1]}/_strongroom\"\nstrongroom completion fish > ~/.config/fish/completions/strongroom.fish"},
		{name: "help", section: sectionServer, summary: "show the usage of strongroom, or of one command",
			run: cmdHelp, example: "strongroom help pay\nstrongroom help webhooks create"},

		// Client commands.
		{name: "login", section: sectionClient, summary: "sign in; the session token is kept in a 0600 file",
			run: cmdLogin, example: "strongroom login --email ada@acme.test"},
		{name: "logout", section: sectionClient, summary: "sign the session out and forget the token",
			run: cmdLogout, example: "strongroom logout"},
		{name: "whoami", section: sectionClient, summary: "the signed-in person and their session",
			run: cmdWhoami, example: "strongroom whoami"},
		{name: "orgs", section: sectionClient, summary: "the organizations you belong to",
			run: cmdOrgs, example: "strongroom orgs -o json"},
		{name: "balances", section: sectionClient, summary: "available and pending balance per currency",
			run: cmdBalances, example: "strongroom balances"},
		{name: "transactions", section: sectionClient, summary: "the transactions feed, every page",
			run: cmdTransactions, example: "strongroom transactions --since 2026-11-01 --type deposit"},
		{name: "contacts", section: sectionClient, summary: "the payment contacts",
			run: cmdContacts, example: "strongroom contacts"},
		{name: "pay", section: sectionClient, summary: "quote a payment, show what leaves the account, confirm, execute (and approve with --approve)",
			run: cmdPay, example: `strongroom pay --contact "Müller GmbH" --amount 100.00 --reason PYR002 --reference "Invoice 2026-118"` +
				"\n" + `strongroom pay --contact "Müller GmbH" --amount 100.00 --reason PYR002 --reference "Invoice 2026-118" --yes --approve`,
			notes: "Before asking, pay shows what leaves the account (the amount, the fee and the total debited, in the\n" +
				"currency paid from) and stops (exit 6) when the available balance is short of the total; the\n" +
				"server still decides when the payment is approved."},
		{name: "approvals", section: sectionClient, summary: "payments waiting for approval; approving asks for your phone", subs: []*command{
			{name: "list", summary: "the approvals of the organization, pending ones by default",
				run: approvalsList, example: "strongroom approvals list --status all"},
			{name: "approve", summary: "approve a payment: shows the match code and waits for your phone",
				run: approvalsApprove, example: "strongroom approvals approve 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60"},
			{name: "reject", summary: "reject a payment; no money moves",
				run: approvalsReject, example: `strongroom approvals reject 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60 --reason "Wrong amount"`},
		}},
		{name: "requests", section: sectionClient, summary: "payment requests programs made; accepting pays in your name", subs: []*command{
			{name: "list", summary: "the payment requests, pending ones by default",
				run: requestsList, example: "strongroom requests list --status all"},
			{name: "accept", summary: "accept a request: its payment is made in your name and your phone approves it",
				run: requestsAccept, example: "strongroom requests accept 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60"},
			{name: "decline", summary: "decline a request, with a reason for the requester",
				run: requestsDecline, example: `strongroom requests decline 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60 --reason "Already paid"`},
		}},
		{name: "keys", section: sectionClient, summary: "API keys", subs: []*command{
			{name: "create", summary: "create an API key (asks for a step-up); its secret is shown once",
				run: keysCreate, example: `strongroom keys create --name "Treasury dashboard" --scope balances:read`},
			{name: "list", summary: "the organization's API keys",
				run: keysList, example: "strongroom keys list"},
			{name: "rotate", summary: "a new secret for a key; the previous one works 24 hours more",
				run: keysRotate, example: "strongroom keys rotate 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
			{name: "revoke", summary: "revoke a key at once",
				run: keysRevoke, example: "strongroom keys revoke 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
		}},
		{name: "webhooks", section: sectionClient, summary: "webhook endpoints and their deliveries log", subs: []*command{
			{name: "create", summary: "create an endpoint; its signing secret is shown once",
				run: webhooksCreate, example: "strongroom webhooks create --url https://example.com/hooks --event payment.updated"},
			{name: "list", summary: "the organization's endpoints",
				run: webhooksList, example: "strongroom webhooks list"},
			{name: "get", summary: "one endpoint",
				run: webhooksGet, example: "strongroom webhooks get 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
			{name: "update", summary: "change an endpoint's URL, events or description, or enable or disable it",
				run: webhooksUpdate, example: "strongroom webhooks update 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f --disable"},
			{name: "delete", summary: "delete an endpoint",
				run: webhooksDelete, example: "strongroom webhooks delete 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
			{name: "rotate-secret", summary: "a new signing secret; the previous one signs beside it for 24 hours",
				run: webhooksRotate, example: "strongroom webhooks rotate-secret 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
			{name: "deliveries", summary: "an endpoint's deliveries log",
				run: webhooksDeliveries, example: "strongroom webhooks deliveries 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f"},
			{name: "retry", summary: "send a delivery again",
				run: webhooksRetry, example: "strongroom webhooks retry 0190f5ca-7a81-7c92-8e0f-1a2b3c4d5e6f 0190f5cb-1a2b-7c3d-8e4f-5a6b7c8d9e0f"},
		}},
		{name: "cards", section: sectionClient, summary: "cards", subs: []*command{
			{name: "list", summary: "the organization's cards",
				run: cardsList, example: "strongroom cards list"},
			{name: "freeze", summary: "freeze a card: it is declined until unfrozen",
				run: cardsFreeze, example: "strongroom cards freeze 0190f5cc-2b3c-7d4e-9f0a-1b2c3d4e5f60"},
			{name: "unfreeze", summary: "unfreeze a card",
				run: cardsUnfreeze, example: "strongroom cards unfreeze 0190f5cc-2b3c-7d4e-9f0a-1b2c3d4e5f60"},
		}},
		{name: "bills", section: sectionClient, summary: "bills to pay", subs: []*command{
			{name: "upload", summary: "upload an invoice, wait for its extraction, print its fields",
				run: billsUpload, example: "strongroom bills upload ~/Downloads/invoice.pdf"},
		}},
		{name: "events", section: sectionClient, summary: "the organization's events of the last 30 days", subs: []*command{
			{name: "list", summary: "the events, newest first",
				run: eventsList, example: "strongroom events list --type 'payment.*' --since 2026-11-01"},
		}},
		{name: "listen", section: sectionClient, summary: "follow the organization's events and POST each to a URL, signed as a webhook",
			run: cmdListen, example: "strongroom listen --forward-to http://localhost:3000/hooks --events 'payment.*'"},
		{name: "statements", section: sectionClient, summary: "a statement of one currency over a range of days (json, csv, camt053, ofx)",
			run: cmdStatements, example: "strongroom statements --currency EUR --from 2026-11-01 --to 2026-11-30 --format camt053 -O november.xml"},

		// Sandbox commands.
		{name: "sandbox", section: sectionSandbox, summary: "play the sandbox's phone, bank and clock", subs: []*command{
			{name: "approve", summary: "approve a payment as your sandbox approving app (your phone in the sandbox)",
				run: sandboxApprove, example: "strongroom sandbox approve\nstrongroom sandbox approve 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60\nstrongroom sandbox approve --match-code 417",
				notes: "With APPROVAL_ID and nothing waiting for it, this starts the approval and answers it (no match code\n" +
					"needed). When a command already waits for your phone (strongroom approvals approve), this answers\n" +
					"that command's challenge: give the match code it shows (--match-code, or asked on stdin). Without\n" +
					"APPROVAL_ID it answers the only payment approval waiting for your phone or, when none waits, the\n" +
					"organization's only pending approval; with several, it asks which."},
			{name: "approving-app", summary: "register a sandbox approving app for you, so that sandbox approve can answer",
				run: sandboxApprovingApp, example: "strongroom sandbox approving-app"},
			{name: "deposit", summary: "fund the organization's balance in one currency",
				run: sandboxDeposit, example: "strongroom sandbox deposit --currency EUR --amount 1000.00"},
			{name: "advance", summary: "move the server's manual clock forward (STRONGROOM_CLOCK=manual)",
				run: sandboxAdvance, example: "strongroom sandbox advance 30\nstrongroom sandbox advance 15m"},
			{name: "settle", summary: "settle a payment at the banking partner: completed, or failed with --failed",
				run: sandboxSettle, example: "strongroom sandbox settle 0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60"},
		}},
	}
	for _, c := range table {
		c.setPaths("")
	}
}

const serverNotes = "Each flag can be given by its environment variable instead (shown after each flag); the flag wins.\n" +
	"Each flag is also accepted as --strongroom-NAME (--strongroom-addr for --addr)."

func (c *command) setPaths(parent string) {
	c.path = strings.TrimSpace(parent + " " + c.name)
	for _, s := range c.subs {
		s.setPaths(c.path)
	}
}

// lookup finds a top-level command by name.
func lookup(name string) *command {
	for _, c := range table {
		if c.name == name {
			return c
		}
	}
	return nil
}

// sub finds a subcommand by name.
func (c *command) sub(name string) *command {
	for _, s := range c.subs {
		if s.name == name {
			return s
		}
	}
	return nil
}

// appCommand runs a server command of package app: words, then args.
func appCommand(words ...string) func(e *env, args []string) error {
	return func(e *env, args []string) error {
		err := app.Run(e.ctx, append(append([]string{}, words...), args...), e.getenv, e.out, e.errw)
		var ue *app.UsageError
		if errors.As(err, &ue) {
			return usageHelpf("%v", ue.Err)
		}
		if errors.Is(err, flag.ErrHelp) {
			_, err := io.WriteString(e.out, helpText(e.cmd))
			return err
		}
		if err == nil || errors.Is(err, context.Canceled) {
			return err
		}
		// As the server says it: a database it cannot reach is not the
		// client commands' server.
		return &exitError{ExitError, err.Error()}
	}
}

func serverFlags(name string) func() *flag.FlagSet {
	return func() *flag.FlagSet { return app.ConfigFlags(name) }
}

func operatorFlags(name string) func() *flag.FlagSet {
	return func() *flag.FlagSet { return app.OperatorFlags(name) }
}
