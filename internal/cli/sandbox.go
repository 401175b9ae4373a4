package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
)

// The sandbox commands play what a test server stands in for: the
// person's phone (the sandbox approving app), the bank (deposits,
// settlements) and the clock. They use the sandbox helpers of the API with
// the sandbox token and, where they act for the signed-in person or their
// organization, the person's session too.

// tokenFlag adds --token, the sandbox token.
func tokenFlag(fs *flag.FlagSet) *string {
	return fs.String("token", "", "the sandbox `token` (default: $STRONGROOM_SANDBOX_TOKEN)")
}

// sandboxClient is a client of the sandbox helpers: the token of --token,
// else of STRONGROOM_SANDBOX_TOKEN.
func (e *env) sandboxClient(token string) (*client.Client, error) {
	if token == "" {
		token = strings.TrimSpace(e.getenv("STRONGROOM_SANDBOX_TOKEN"))
	}
	if token == "" {
		return nil, usagef(`strongroom %s needs the sandbox token: set STRONGROOM_SANDBOX_TOKEN (a test server prints it when it starts) or give --token`, e.cmd.path)
	}
	return e.newClient(client.WithToken(token))
}

// sandboxFailed adds to a sandbox helper's not_found what it may mean.
func (e *env) sandboxFailed(err error) error {
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusNotFound {
		fmt.Fprintln(e.errw, "(The sandbox helpers also answer not_found when the server is not in environment test or the sandbox token is not its own.)")
	}
	return err
}

func sandboxApprove(e *env, args []string) error {
	fs := e.flags("sandbox approve", "sandbox approve [APPROVAL_ID] [--match-code CODE] [--challenge ID] [--token TOKEN] [--org ORG] [-o json]")
	matchCode := fs.String("match-code", "", "the match `code` the command waiting for your phone shows (asked on stdin when needed)")
	challengeID := fs.String("challenge", "", "answer this challenge `id` of your inbox (a step-up's too) instead of a payment approval's")
	token := tokenFlag(fs)
	e.outputFlag(fs)
	e.orgFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 1 || (len(pos) == 1 && *challengeID != "") {
		return usageHelpf("sandbox approve takes one approval id, or --challenge, or neither")
	}
	approvalID := ""
	if len(pos) == 1 {
		if _, err := uuid.Parse(pos[0]); err != nil {
			return &client.InvalidIDError{What: "approval id", Value: pos[0]}
		}
		approvalID = pos[0]
	}
	if *challengeID != "" {
		if _, err := uuid.Parse(*challengeID); err != nil {
			return &client.InvalidIDError{What: "challenge id", Value: *challengeID}
		}
	}
	sbx, err := e.sandboxClient(*token)
	if err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	var approvals, all []api.Challenge
	for ch, err := range c.Challenges(e.ctx, nil) {
		if err != nil {
			return err
		}
		if len(all) == 1000 {
			break // an inbox holds a few at most: each lives 5 minutes
		}
		all = append(all, ch)
		if ch.Kind == api.ChallengeKindPaymentApproval {
			approvals = append(approvals, ch)
		}
	}
	var target *api.Challenge
	switch {
	case *challengeID != "":
		for i := range all {
			if all[i].Id.String() == *challengeID {
				target = &all[i]
			}
		}
		if target == nil {
			return &exitError{ExitNotFound, fmt.Sprintf("challenge %s is not waiting in your inbox (answered, declined and expired ones leave it)", *challengeID)}
		}
	case approvalID != "":
		for i := range approvals {
			if approvals[i].ApprovalId != nil && approvals[i].ApprovalId.String() == approvalID {
				target = &approvals[i]
			}
		}
		if target == nil {
			return e.startAndApprove(c, sbx, approvalID)
		}
	default:
		switch len(approvals) {
		case 0:
			return e.approveOnlyPending(c, sbx)
		case 1:
			target = &approvals[0]
		default:
			var ids []string
			for _, a := range approvals {
				ids = append(ids, a.ApprovalId.String()+" ("+str(a.ActionSummary)+")")
			}
			return usagef("%d payment approvals are waiting for your phone: give one's approval id:\n  %s", len(approvals), strings.Join(ids, "\n  "))
		}
	}

	answer := api.SandboxChallengeApproval{}
	if target.OriginRail != api.ChallengeOriginRailNativeApp {
		code := strings.TrimSpace(*matchCode)
		if code == "" {
			if target.ActionSummary != nil {
				e.progress("%s", *target.ActionSummary)
			}
			if code, err = e.readLine("Match code (shown by the command waiting for your phone): "); err != nil {
				return err
			}
			code = strings.TrimSpace(code)
		}
		answer.MatchCode = &code
	}
	done, err := sbx.SandboxApproveChallenge(e.ctx, target.Id.String(), answer)
	if err != nil {
		return e.sandboxFailed(err)
	}
	if e.jsonOut() {
		return e.printJSON(done)
	}
	fmt.Fprintf(e.out, "Challenge %s: %s, answered as your sandbox approving app.\n", done.Id, done.Status)
	if done.ApprovalId != nil && done.Status == api.ChallengeStatusConsumed {
		fmt.Fprintf(e.out, "Approval %s: approved.\n", done.ApprovalId)
	}
	return nil
}

// approveOnlyPending approves, when nothing waits for the phone, the
// organization's only pending approval.
func (e *env) approveOnlyPending(c, sbx *client.Client) error {
	org, err := e.orgID()
	if err != nil {
		return err
	}
	status := api.ApprovalStatusPending
	var pending []api.Approval
	for a, err := range c.Approvals(e.ctx, org, &api.ListApprovalsParams{Status: &status}) {
		if err != nil {
			return err
		}
		if len(pending) == 1000 {
			break
		}
		pending = append(pending, a)
	}
	switch len(pending) {
	case 0:
		return &exitError{ExitNotFound, `no approval is pending and none is waiting for your phone: nothing to approve ("strongroom approvals list --status all" shows them all)`}
	case 1:
		return e.startAndApprove(c, sbx, pending[0].Id.String())
	}
	var ids []string
	for _, a := range pending {
		ids = append(ids, a.Id.String())
	}
	return usagef("%d approvals are pending: give the id of the one to approve (\"strongroom approvals list\" shows them):\n  %s", len(pending), strings.Join(ids, "\n  "))
}

// startAndApprove approves a payment whose approval nothing waits for yet:
// it asks the server to approve (which answers with the approval's
// challenge and its match code) and answers that challenge as the sandbox
// approving app, as a person would on their phone.
func (e *env) startAndApprove(c, sbx *client.Client, approvalID string) error {
	e.approvalID = approvalID
	phone := func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		found := e.findChallenge(ctx, ch)
		if found == nil {
			return client.StepUpAnswer{}, fmt.Errorf("the challenge of approval %s is not in your inbox", approvalID)
		}
		e.progress("Answering challenge %s (match code %s) as your sandbox approving app…", found.Id, str(ch.MatchCode))
		if _, err := sbx.SandboxApproveChallenge(ctx, found.Id.String(), api.SandboxChallengeApproval{MatchCode: ch.MatchCode}); err != nil {
			return client.StepUpAnswer{}, e.sandboxFailed(err)
		}
		return client.StepUpAnswer{Method: client.StepUpApp}, nil
	}
	approver, err := e.newClient(client.WithToken(c.Token()), client.WithStepUp(phone))
	if err != nil {
		return err
	}
	a, err := approver.ApprovePayment(e.ctx, approvalID)
	if err != nil {
		return err
	}
	return e.printApproval(a)
}

func sandboxApprovingApp(e *env, args []string) error {
	fs := e.flags("sandbox approving-app", "sandbox approving-app [--token TOKEN] [-o json]")
	token := tokenFlag(fs)
	e.outputFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageHelpf("sandbox approving-app takes no arguments: it registers the app for you, the signed-in person")
	}
	sbx, err := e.sandboxClient(*token)
	if err != nil {
		return err
	}
	c, err := e.client()
	if err != nil {
		return err
	}
	me, err := c.Me(e.ctx)
	if err != nil {
		return err
	}
	app, err := sbx.SandboxCreateApprovingApp(e.ctx, me.User.Id.String())
	if err != nil {
		return e.sandboxFailed(err)
	}
	if e.jsonOut() {
		return e.printJSON(app)
	}
	_, err = fmt.Fprintf(e.out, "Registered a sandbox approving app for %s (device %s): \"strongroom sandbox approve\" answers your challenges with it.\n",
		me.User.Email, app.DeviceId)
	return err
}

func sandboxDeposit(e *env, args []string) error {
	fs := e.flags("sandbox deposit", "sandbox deposit --currency CUR --amount AMOUNT [--org ORG] [--token TOKEN] [-o json]")
	currency := fs.String("currency", "", "the `currency` (EUR, USD, …)")
	amount := fs.String("amount", "", "the `amount`, a decimal (1000.00)")
	token := tokenFlag(fs)
	e.outputFlag(fs)
	e.orgFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *currency == "" || *amount == "" {
		return usageHelpf("sandbox deposit needs --currency and --amount")
	}
	sbx, err := e.sandboxClient(*token)
	if err != nil {
		return err
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	tx, err := sbx.SandboxDeposit(e.ctx, org, api.SandboxDeposit{Currency: api.CurrencyCode(strings.ToUpper(*currency)), Amount: *amount})
	if err != nil {
		return e.sandboxFailed(err)
	}
	if e.jsonOut() {
		return e.printJSON(tx)
	}
	total := *amount + " " + strings.ToUpper(*currency)
	if tx.Effect != nil {
		total = money(tx.Effect.Total, string(tx.Effect.Currency))
	}
	_, err = fmt.Fprintf(e.out, "Deposited %s (transaction %s).\n", total, tx.Id)
	return err
}

func sandboxAdvance(e *env, args []string) error {
	fs := e.flags("sandbox advance", "sandbox advance SECONDS|DURATION [--token TOKEN] [-o json]")
	token := tokenFlag(fs)
	e.outputFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("sandbox advance takes how far to move the clock: seconds (30) or a duration (15m)")
	}
	seconds, err := strconv.Atoi(pos[0])
	if err != nil {
		d, derr := time.ParseDuration(pos[0])
		if derr != nil || d%time.Second != 0 {
			return usageHelpf("sandbox advance takes whole seconds (30) or a duration (15m), not %q", pos[0])
		}
		seconds = int(d / time.Second)
	}
	if seconds < 0 {
		return usagef("the clock only moves forward, not by %d seconds", seconds)
	}
	sbx, err := e.sandboxClient(*token)
	if err != nil {
		return err
	}
	clk, err := sbx.SandboxAdvanceClock(e.ctx, api.SandboxClockAdvance{Seconds: seconds})
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusConflict {
		fmt.Fprintln(e.errw, "(Only a server started with STRONGROOM_CLOCK=manual has a clock to move.)")
	}
	if err != nil {
		return e.sandboxFailed(err)
	}
	if e.jsonOut() {
		return e.printJSON(clk)
	}
	_, err = fmt.Fprintf(e.out, "The server's clock reads %s.\n", clk.Now.UTC().Format(time.RFC3339))
	return err
}

func sandboxSettle(e *env, args []string) error {
	fs := e.flags("sandbox settle", "sandbox settle PAYMENT_ID [--failed] [--token TOKEN] [-o json]")
	failed := fs.Bool("failed", false, "the bank could not pay: the payment fails and its money comes back")
	token := tokenFlag(fs)
	e.outputFlag(fs)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usageHelpf("sandbox settle takes one payment id")
	}
	sbx, err := e.sandboxClient(*token)
	if err != nil {
		return err
	}
	outcome := api.SandboxSettlementOutcomeCompleted
	if *failed {
		outcome = api.SandboxSettlementOutcomeFailed
	}
	p, err := sbx.SandboxSettlePayment(e.ctx, pos[0], api.SandboxSettlement{Outcome: outcome})
	if err != nil {
		return e.sandboxFailed(err)
	}
	if e.jsonOut() {
		return e.printJSON(p)
	}
	_, err = fmt.Fprintf(e.out, "Payment %s: %s.\n", p.Id, strings.ReplaceAll(string(p.Status), "_", " "))
	return err
}
