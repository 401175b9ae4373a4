package cli

import (
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/google/uuid"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
)

func cmdBalances(e *env, args []string) error {
	fs := e.flags("balances", "balances [--org ORG] [-o json]")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	balances, err := e.c.Balances(e.ctx, org)
	if err != nil {
		return err
	}
	if e.jsonOut() {
		return e.printJSON(balances)
	}
	var rows [][]string
	for _, b := range balances {
		rows = append(rows, []string{string(b.Currency), b.Available, b.Pending})
	}
	return e.table([]string{"CURRENCY", "AVAILABLE", "PENDING"}, rows)
}

// date is a --since/--until flag value.
func parseDate(flagName, s string) (*openapi_types.Date, error) {
	if s == "" {
		return nil, nil
	}
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		return nil, usagef("--%s must be a date YYYY-MM-DD, not %q", flagName, s)
	}
	return &openapi_types.Date{Time: t}, nil
}

// listFlag is a flag given several times or as a comma-separated list.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*l = append(*l, v)
		}
	}
	return nil
}

func cmdTransactions(e *env, args []string) error {
	fs := e.flags("transactions", "transactions [--since YYYY-MM-DD] [--until YYYY-MM-DD] [--type T] [--max N] [--org ORG] [-o json]")
	since := fs.String("since", "", "only transactions recorded on or after this `date` (YYYY-MM-DD, UTC)")
	until := fs.String("until", "", "only transactions recorded on or before this `date` (YYYY-MM-DD, UTC)")
	var types listFlag
	fs.Var(&types, "type", "only transactions of this `type` (deposit, fiat_outgoing, fee, …; repeat or comma-separate)")
	maxRows := fs.Int("max", 0, "stop after `n` transactions (default: all of them)")
	pageSize := fs.Int("page-size", 100, "transactions fetched per request, 1 to 100")
	e.common(fs, true)
	if _, err := e.parse(fs, args); err != nil {
		return err
	}
	params := api.ListTransactionsParams{Limit: pageSize}
	var err error
	if params.DateStart, err = parseDate("since", *since); err != nil {
		return err
	}
	if params.DateEnd, err = parseDate("until", *until); err != nil {
		return err
	}
	if len(types) > 0 {
		tt := make([]api.TransactionType, len(types))
		for i, t := range types {
			tt[i] = api.TransactionType(t)
		}
		params.Type = &tt
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	var all []api.Transaction
	var rows [][]string
	for tx, err := range e.c.Transactions(e.ctx, org, &params) {
		if err != nil {
			return err
		}
		all = append(all, tx)
		amount, currency := "-", ""
		if tx.Effect != nil {
			sign := "+"
			if tx.Effect.Direction == api.TransactionEffectDirectionOut {
				sign = "-"
			}
			amount, currency = sign+tx.Effect.Total, string(tx.Effect.Currency)
		}
		rows = append(rows, []string{when(tx.RecordedAt), string(tx.Type), tx.Description, amount, currency})
		if *maxRows > 0 && len(all) == *maxRows {
			break
		}
	}
	if e.jsonOut() {
		if all == nil {
			all = []api.Transaction{}
		}
		return e.printJSON(all)
	}
	return e.table([]string{"RECORDED", "TYPE", "DESCRIPTION", "AMOUNT", "CURRENCY"}, rows)
}

// account is where a contact or bill is paid: IBAN, account number or
// crypto address.
func account(iban, number, address *string) string {
	for _, s := range []*string{iban, number, address} {
		if s != nil && *s != "" {
			return *s
		}
	}
	return "-"
}

func cmdContacts(e *env, args []string) error {
	fs := e.flags("contacts", "contacts [--org ORG] [-o json]")
	e.common(fs, true)
	org, err := e.parseForOrg(fs, args)
	if err != nil {
		return err
	}
	return printList(e, e.c.PaymentContacts(e.ctx, org, nil), []string{"ID", "NAME", "RAIL", "CURRENCY", "ACCOUNT"},
		func(pc api.PaymentContact) []string {
			return []string{pc.Id.String(), pc.Name, string(pc.Rail), pc.Currency, account(pc.Iban, pc.AccountNumber, pc.CryptoAddress)}
		})
}

// contact finds a payment contact of org by id or exact name.
func (e *env) contact(org, ref string) (*api.PaymentContact, error) {
	if _, err := uuid.Parse(ref); err == nil {
		return e.c.PaymentContact(e.ctx, ref)
	}
	var found []api.PaymentContact
	for pc, err := range e.c.PaymentContacts(e.ctx, org, nil) {
		if err != nil {
			return nil, err
		}
		if strings.EqualFold(pc.Name, ref) {
			found = append(found, pc)
		}
	}
	switch len(found) {
	case 0:
		return nil, usagef("no payment contact named %q (see strongroom contacts)", ref)
	case 1:
		return &found[0], nil
	}
	return nil, usagef("%d payment contacts are named %q: give the id (see strongroom contacts)", len(found), ref)
}

func cmdPay(e *env, args []string) error {
	fs := e.flags("pay", "pay --contact ID|NAME --amount AMOUNT [--currency CUR] [--receive] [--reason PYR###] [--reference TEXT] [--yes] [--approve] [--org ORG] [-o json]")
	contactRef := fs.String("contact", "", "the payment contact, by `id or name`")
	amount := fs.String("amount", "", "the `amount`, a decimal (12.50)")
	currency := fs.String("currency", "", "the `currency` paid from (default: the contact's currency)")
	receive := fs.Bool("receive", false, "the amount is what the contact receives (default: what leaves your balance, before the fee)")
	reason := fs.String("reason", "", "the payout reason `code` (PYR###; required for a bank transfer)")
	reference := fs.String("reference", "", "the `text` on the recipient's bank statement (required for a bank transfer)")
	tag := fs.String("tag", "", "a category `tag`")
	notes := fs.String("notes", "", "internal `notes`, never sent to the recipient")
	key := fs.String("idempotency-key", "", "name the payment with this `key` so that running the command again cannot pay twice (default: a fresh one)")
	yes := fs.Bool("yes", false, "pay without asking")
	approve := fs.Bool("approve", false, "approve the payment at once, as \"strongroom approvals approve\" does (your phone is asked)")
	e.common(fs, true)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *contactRef == "" || *amount == "" {
		return usageHelpf("pay needs --contact and --amount")
	}
	org, err := e.orgID()
	if err != nil {
		return err
	}
	pc, err := e.contact(org, *contactRef)
	if err != nil {
		return err
	}
	if pc.Rail == api.RailFiat && (*reason == "" || *reference == "") {
		cfg, err := e.c.PaymentsConfig(e.ctx, org)
		if err != nil {
			return err
		}
		var codes []string
		for _, r := range cfg.PayoutReasons {
			codes = append(codes, fmt.Sprintf("  %s  %s", r.Code, r.Label))
		}
		return usageHelpf("a bank transfer needs --reason and --reference (at most %d characters); the reasons are:\n%s",
			cfg.StatementDescriptionMaxLength, strings.Join(codes, "\n"))
	}
	source := strings.ToUpper(*currency)
	if source == "" {
		source = pc.Currency
	}
	side := api.PaymentQuoteRequestAmountSideSend
	if *receive {
		side = api.PaymentQuoteRequestAmountSideReceive
	}
	q, err := e.c.CreatePaymentQuote(e.ctx, api.PaymentQuoteRequest{
		OrganizationId: uuid.MustParse(org), Rail: pc.Rail, PaymentContactId: pc.Id,
		SourceCurrency: source, Amount: *amount, AmountSide: side,
	})
	if err != nil {
		return err
	}
	// What leaves the account: the amount and the fee, in the currency
	// paid from (the fee is charged in it).
	total, err := addDecimals(q.Source.Amount, q.Fee.Amount)
	if err != nil || q.Fee.Currency != q.Source.Currency {
		return fmt.Errorf("the quote's amounts cannot be added (%s %s and a fee of %s %s)", q.Source.Amount, q.Source.Currency, q.Fee.Amount, q.Fee.Currency)
	}
	if !e.jsonOut() {
		if err := e.fields([][2]string{
			{"To", fmt.Sprintf("%s (%s)", pc.Name, account(pc.Iban, pc.AccountNumber, pc.CryptoAddress))},
			{"You send", money(q.Source.Amount, q.Source.Currency)},
			{"Fee", money(q.Fee.Amount, q.Fee.Currency)},
			{"Total debited", money(total, q.Source.Currency)},
			{"They receive", money(q.Destination.Amount, q.Destination.Currency)},
			{"Rate", q.Rate},
			{"Quote valid until", when(q.ExpiresAt)},
		}); err != nil {
			return err
		}
	}
	// Refused here when the balance is short; the server still decides
	// when the payment is approved (other payments may go first).
	if err := e.coveredBy(org, q.Source.Currency, total); err != nil {
		return err
	}
	if err := e.confirmUnless(*yes, "Pay?"); err != nil {
		return err
	}
	exec := api.PaymentExecution{QuoteId: q.Id}
	for _, f := range []struct {
		dst **string
		v   string
	}{{&exec.PayoutReason, *reason}, {&exec.StatementDescription, *reference}, {&exec.Tag, *tag}, {&exec.InternalNotes, *notes}} {
		if f.v != "" {
			v := f.v
			*f.dst = &v
		}
	}
	p, err := e.c.ExecutePayment(e.ctx, exec, &client.ExecuteOptions{IdempotencyKey: *key})
	if err != nil {
		return err
	}
	awaiting := p.ApprovalRequestId != nil && p.Status == api.PaymentStatusAwaitingApproval
	if !e.jsonOut() {
		fmt.Fprintf(e.out, "Payment %s: %s.\n", p.Id, strings.ReplaceAll(string(p.Status), "_", " "))
	}
	var approval *api.Approval
	if awaiting && *approve {
		e.approvalID = p.ApprovalRequestId.String()
		if approval, err = e.c.ApprovePayment(e.ctx, e.approvalID); err != nil {
			fmt.Fprintf(e.errw, "The payment was made and awaits approval: %s\n", e.approveHint(e.approvalID))
			return err
		}
	}
	if e.jsonOut() {
		return e.printJSON(struct {
			Quote    *api.Quote    `json:"quote"`
			Payment  *api.Payment  `json:"payment"`
			Approval *api.Approval `json:"approval,omitempty"`
		}{q, p, approval})
	}
	switch {
	case approval != nil:
		fmt.Fprintf(e.out, "Approval %s: %s.\n", approval.Id, approval.Status)
	case awaiting:
		fmt.Fprintf(e.out, "Approve it with: %s\n", e.approveHint(p.ApprovalRequestId.String()))
	}
	return nil
}

// approveHint is the command that approves an approval: in the sandbox,
// the one that answers as the sandbox approving app too.
func (e *env) approveHint(approvalID string) string {
	hint := "strongroom approvals approve " + approvalID
	if e.sandboxed(e.ctx) {
		hint += "\n(in the sandbox, \"strongroom sandbox approve " + approvalID + "\" approves it as your phone)"
	}
	return hint
}

// coveredBy refuses, before the payment is made, a total the available
// balance of currency does not cover, saying how much is available.
func (e *env) coveredBy(org, currency, total string) error {
	balances, err := e.c.Balances(e.ctx, org)
	if err != nil {
		return err
	}
	available := "0"
	for _, b := range balances {
		if string(b.Currency) == currency {
			available = b.Available
		}
	}
	short, err := lessDecimal(available, total)
	if err != nil {
		return err
	}
	if short {
		return &exitError{ExitRefused, fmt.Sprintf("insufficient funds: this payment takes %s %s (fee included) and the %s balance has %s %s available; nothing was paid",
			total, currency, currency, available, currency)}
	}
	return nil
}

// decimal reads a decimal string of the API exactly, and its number of
// decimal places.
func decimal(s string) (*big.Rat, int, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || strings.ContainsAny(s, "eE/") {
		return nil, 0, fmt.Errorf("%q is not a decimal amount", s)
	}
	places := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		places = len(frac)
	}
	return r, places, nil
}

// addDecimals is a + b, exactly, at the larger number of decimal places.
func addDecimals(a, b string) (string, error) {
	x, px, err := decimal(a)
	if err != nil {
		return "", err
	}
	y, py, err := decimal(b)
	if err != nil {
		return "", err
	}
	return new(big.Rat).Add(x, y).FloatString(max(px, py)), nil
}

// lessDecimal reports whether a < b.
func lessDecimal(a, b string) (bool, error) {
	x, _, err := decimal(a)
	if err != nil {
		return false, err
	}
	y, _, err := decimal(b)
	if err != nil {
		return false, err
	}
	return x.Cmp(y) < 0, nil
}
