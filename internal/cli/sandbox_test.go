package cli

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

var (
	paymentLine  = regexp.MustCompile(`Payment (\S+): awaiting approval\.`)
	approvalLine = regexp.MustCompile(`strongroom approvals approve (\S+)`)
	challengeRe  = regexp.MustCompile(`Challenge ([0-9a-f-]{36}); it expires at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC\.`)
)

// sandboxPay pays amount EUR to Müller with --yes and returns the payment
// and approval ids.
func (h *harness) sandboxPay(amount string) (payment, approval string) {
	h.t.Helper()
	out := h.ok("", "pay", "--contact", "Müller GmbH", "--amount", amount, "--reason", "PYR002", "--reference", "Invoice "+amount, "--yes")
	p, a := paymentLine.FindStringSubmatch(out), approvalLine.FindStringSubmatch(out)
	if p == nil || a == nil {
		h.t.Fatalf("pay %s:\n%s", amount, out)
	}
	return p[1], a[1]
}

func (h *harness) approvalStatus(id string) api.ApprovalStatus {
	h.t.Helper()
	for _, a := range decodeJSON[[]api.Approval](h.t, h.ok("", "approvals", "list", "--status", "all", "-o", "json")) {
		if a.Id.String() == id {
			return a.Status
		}
	}
	h.t.Fatalf("no approval %s", id)
	return ""
}

// TestSandboxFlow is a newcomer's way on a test server: sign in, register
// the sandbox phone, fund the account, pay, and approve with "sandbox
// approve", all with the command line.
func TestSandboxFlow(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.env["STRONGROOM_SANDBOX_TOKEN"] = sbx
	h.login(o)

	out := h.ok("", "sandbox", "approving-app")
	if !strings.HasPrefix(out, "Registered a sandbox approving app for ada@acme.test (device ") {
		t.Fatalf("sandbox approving-app: %q", out)
	}
	if out := h.ok("", "sandbox", "deposit", "--currency", "eur", "--amount", "500.00"); !strings.HasPrefix(out, "Deposited 500.00 EUR (transaction ") {
		t.Fatalf("sandbox deposit: %q", out)
	}
	h.s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", h.token(), map[string]any{
		"name": "Müller GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201)

	// pay shows the total and, in the sandbox, the command that approves.
	out = h.ok("", "pay", "--contact", "Müller GmbH", "--amount", "100.00", "--reason", "PYR002", "--reference", "Invoice 1", "--yes")
	if !strings.Contains(out, "Total debited:      101.00 EUR\n") || !strings.Contains(out, `(in the sandbox, "strongroom sandbox approve `) {
		t.Fatalf("pay:\n%s", out)
	}
	paymentID, approvalID := paymentLine.FindStringSubmatch(out)[1], approvalLine.FindStringSubmatch(out)[1]
	// sandbox approve starts the approval and answers it as the phone.
	r := h.run("", "sandbox", "approve", approvalID)
	if r.code != 0 || r.stdout != "Approval "+approvalID+": approved.\n" || !strings.Contains(r.stderr, "as your sandbox approving app") {
		t.Fatalf("sandbox approve: %+v", r)
	}
	if s := h.approvalStatus(approvalID); s != api.ApprovalStatusApproved {
		t.Fatalf("approval %s", s)
	}
	if out := h.ok("", "sandbox", "approve", approvalID); out != "Approval "+approvalID+": approved.\n" { // approved already: read again
		t.Fatalf("sandbox approve again: %q", out)
	}
	if out := h.ok("", "sandbox", "settle", paymentID); out != "Payment "+paymentID+": completed.\n" {
		t.Fatalf("sandbox settle: %q", out)
	}
	if out := h.ok("", "balances"); !strings.Contains(out, "EUR       399.00") {
		t.Fatalf("balances:\n%s", out)
	}

	// pay --approve waits for the phone, showing the challenge, its
	// deadline, the time waited and the sandbox command; "sandbox approve"
	// without an id answers the only waiting approval, with the match code.
	errw := &apitest.Buffer{}
	running := h.start("", errw, "pay", "--contact", "Müller GmbH", "--amount", "50.00", "--reason", "PYR002", "--reference", "Invoice 2", "--yes", "--approve")
	code := h.waitFor(errw, matchCode)
	challenge := h.waitFor(errw, challengeRe)
	hint := h.waitFor(errw, regexp.MustCompile(`In the sandbox, approve it from another terminal: strongroom sandbox approve (\S+) --match-code `+code))
	h.waitFor(errw, regexp.MustCompile(`Waiting for your phone: \d+:\d\d elapsed; the challenge expires at `))
	h.fails(ExitNotFound, "", "sandbox", "approve", "--challenge", "0190f5c9-6f70-7b81-8d9e-0f1a2b3c4d60")
	wrong := "000"
	if code == wrong {
		wrong = "001"
	}
	r = h.fails(ExitRefused, wrong+"\n", "sandbox", "approve")
	if !strings.Contains(r.stderr, "Match code (shown by the command waiting for your phone): ") || !strings.Contains(r.stderr, "match_code_mismatch") {
		t.Fatalf("wrong match code: %+v", r)
	}
	r = h.run(code+"\n", "sandbox", "approve")
	if r.code != 0 || r.stdout != "Challenge "+challenge+": consumed, answered as your sandbox approving app.\nApproval "+hint+": approved.\n" {
		t.Fatalf("sandbox approve with the code: %+v", r)
	}
	if r := <-running; r.code != 0 || !strings.HasSuffix(r.stdout, "Approval "+hint+": approved.\n") {
		t.Fatalf("pay --approve: %+v", r)
	}

	// Two payments each within the balance, not both: pay lets each
	// through, the server refuses the second approval.
	_, first := h.sandboxPay("200.00")
	_, second := h.sandboxPay("200.00")
	h.ok("", "sandbox", "approve", first)
	r = h.fails(ExitRefused, "", "sandbox", "approve", second)
	if !strings.Contains(r.stderr, "insufficient_funds") {
		t.Fatalf("second approval: %+v", r)
	}
	// Still pending: without an id, sandbox approve takes the only pending
	// approval, and the server refuses it again.
	r = h.fails(ExitRefused, "", "sandbox", "approve")
	if !strings.Contains(r.stderr, "insufficient_funds") {
		t.Fatalf("the only pending approval: %+v", r)
	}
	h.ok("", "approvals", "reject", second)

	// Nothing waiting, then two waiting: sandbox approve without an id says
	// which to give.
	r = h.fails(ExitNotFound, "", "sandbox", "approve")
	if !strings.Contains(r.stderr, "no approval is pending and none is waiting for your phone") {
		t.Fatalf("none waiting: %+v", r)
	}
	h.s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/deposits", sbx, map[string]any{"currency": "EUR", "amount": "1000.00"}).ExpectStatus(t, 201)
	_, a1 := h.sandboxPay("10.00")
	_, a2 := h.sandboxPay("20.00")
	r = h.fails(ExitUsage, "", "sandbox", "approve")
	if !strings.Contains(r.stderr, "2 approvals are pending: give the id") || !strings.Contains(r.stderr, a1) || !strings.Contains(r.stderr, a2) {
		t.Fatalf("two pending: %+v", r)
	}
	errw1, errw2 := &apitest.Buffer{}, &apitest.Buffer{}
	run1 := h.start("", errw1, "approvals", "approve", a1)
	run2 := h.start("", errw2, "approvals", "approve", a2)
	code1, code2 := h.waitFor(errw1, matchCode), h.waitFor(errw2, matchCode)
	// approvals approve names the challenge and the sandbox command before it blocks.
	h.waitFor(errw1, challengeRe)
	h.waitFor(errw1, regexp.MustCompile(`strongroom sandbox approve `+a1+` --match-code `+code1))
	r = h.fails(ExitUsage, "", "sandbox", "approve")
	if !strings.Contains(r.stderr, "2 payment approvals are waiting for your phone") || !strings.Contains(r.stderr, a1) || !strings.Contains(r.stderr, a2) {
		t.Fatalf("two waiting: %+v", r)
	}
	h.ok("", "sandbox", "approve", a2, "--match-code", code2)
	h.ok(code1+"\n", "sandbox", "approve", a1)
	for _, run := range []<-chan result{run1, run2} {
		if r := <-run; r.code != 0 || !strings.Contains(r.stdout, ": approved.") {
			t.Fatalf("approvals approve: %+v", r)
		}
	}

	// The clock, and a failed settlement.
	if out := h.ok("", "sandbox", "advance", "30"); !strings.HasPrefix(out, "The server's clock reads ") {
		t.Fatalf("sandbox advance: %q", out)
	}
	before := h.advance(0)
	h.ok("", "sandbox", "advance", "15m")
	if after := h.advance(0); after.Sub(before) != 15*time.Minute {
		t.Fatalf("advance 15m moved the clock %v", after.Sub(before))
	}
	h.fails(ExitUsage, "", "sandbox", "advance", "soon")
	h.fails(ExitUsage, "", "sandbox", "settle")
	failedID, _ := h.sandboxPay("5.00")
	h.fails(ExitRefused, "", "sandbox", "settle", failedID) // not approved yet
	// A wrong sandbox token: not_found, and what it may mean.
	r = h.fails(ExitNotFound, "", "sandbox", "advance", "1", "--token", "sbx_wrong")
	if !strings.Contains(r.stderr, "not in environment test or the sandbox token is not its own") {
		t.Fatalf("wrong token: %+v", r)
	}
}

// TestSandboxApproveWithoutTheApp: a person without a sandbox approving
// app is told the command that registers one.
func TestSandboxApproveWithoutTheApp(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.deposit(o, "EUR", "100.00")
	h.login(o)
	h.s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", h.token(), map[string]any{
		"name": "Müller GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201)
	_, approval := h.sandboxPay("10.00")
	r := h.fails(ExitUsage, "", "sandbox", "approve", approval)
	if !strings.Contains(r.stderr, "STRONGROOM_SANDBOX_TOKEN") {
		t.Fatalf("no token: %+v", r)
	}
	r = h.fails(ExitRefused, "", "sandbox", "approve", approval, "--token", sbx)
	if !strings.Contains(r.stderr, "approval_credential_required") || !strings.Contains(r.stderr, `"strongroom sandbox approving-app" registers`) {
		t.Fatalf("no approving app: %+v", r)
	}
	r = h.fails(ExitRefused, "", "approvals", "approve", approval)
	if !strings.Contains(r.stderr, `"strongroom sandbox approving-app" registers`) {
		t.Fatalf("approvals approve without an app: %+v", r)
	}
	h.ok("", "sandbox", "approving-app", "--token", sbx)
	h.ok("", "sandbox", "approve", approval, "--token", sbx)
}
