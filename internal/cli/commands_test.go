package cli

import (
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func TestKeysCreateWalksThroughStepUpOnThePhone(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)
	h.login(o)

	// The gated call answers step_up_required: the command shows the match
	// code, waits for the phone, and creates the key once it is approved.
	errw := &apitest.Buffer{}
	running := h.start("", errw, "keys", "create", "--name", "Treasury dashboard", "--scope", "balances:read,transactions:read")
	h.approveOnPhone(errw)
	r := <-running
	if r.code != 0 || !strings.Contains(r.stderr, "waiting for approval on your phone (match code ") {
		t.Fatalf("keys create: %+v", r)
	}
	h.golden("keys-create", r.stdout)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	secret := lines[len(lines)-1]
	if !strings.HasPrefix(secret, "sr_test_") {
		t.Fatalf("secret %q", secret)
	}

	keys := decodeJSON[[]api.ApiKey](t, h.ok("", "keys", "list", "-o", "json"))
	if len(keys) != 1 || keys[0].Name != "Treasury dashboard" {
		t.Fatalf("keys = %+v", keys)
	}
	id := keys[0].Id.String()
	h.golden("keys-list", h.ok("", "keys", "list"))

	// Later, with the sudo window closed, an authenticator code answers
	// the rotation's step-up.
	h.advance(11 * time.Minute)
	code := h.code(o)
	r = h.run(code+"\n", "keys", "rotate", id, "--step-up", "totp")
	if r.code != 0 || !strings.Contains(r.stderr, "Authenticator code: ") || !strings.Contains(r.stdout, "sr_test_") || strings.Contains(r.stdout, secret) {
		t.Fatalf("keys rotate: %+v", r)
	}
	// A wrong code: refused, nothing rotated.
	h.advance(11 * time.Minute)
	r = h.fails(ExitRefused, "000000\n", "keys", "rotate", id, "--step-up", "totp")
	if !strings.Contains(r.stderr, "invalid_code") {
		t.Fatalf("wrong code: %q", r.stderr)
	}
	// --step-up with a method the challenge does not offer.
	h.fails(ExitUsage, "", "keys", "rotate", id, "--step-up", "carrier-pigeon")

	// Declined on the phone: nothing rotated, exit 4.
	h.advance(11 * time.Minute)
	errw = &apitest.Buffer{}
	running = h.start("", errw, "keys", "rotate", id)
	h.answerOnPhone(errw, true)
	if r := <-running; r.code != ExitForbidden || !strings.Contains(r.stderr, "the step-up was declined") || r.stdout != "" {
		t.Fatalf("declined: %+v", r)
	}
	// A code sent by email.
	pr, pw := io.Pipe()
	defer pw.Close()
	errw = &apitest.Buffer{}
	running = h.startReading(pr, errw, "keys", "rotate", id, "--step-up", "email")
	h.waitFor(errw, regexp.MustCompile(`Code from the email: `))
	var outbox struct {
		Data []struct {
			Code *string `json:"code"`
		} `json:"data"`
	}
	h.s.Get(t, "/api/v1/sandbox/outbox?kind=step_up_email_code&user_id="+o.userID, sbx).ExpectStatus(t, 200).Decode(t, &outbox)
	if len(outbox.Data) == 0 || outbox.Data[0].Code == nil {
		t.Fatal("no emailed code")
	}
	fmt.Fprintln(pw, *outbox.Data[0].Code)
	if r := <-running; r.code != 0 || !strings.Contains(r.stdout, "sr_test_") {
		t.Fatalf("rotate with an emailed code: %+v", r)
	}

	h.golden("keys-revoke", h.ok("", "keys", "revoke", id))
	h.fails(ExitNotFound, "", "keys", "revoke", "01a211e6-8ff2-75b2-ba90-4ce5fd7bec84")
}

func TestPayApproveAndReject(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)
	h.deposit(o, "EUR", "1000.00")
	h.login(o)
	h.s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", h.token(), map[string]any{
		"name": "Müller Maschinenbau GmbH", "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201)
	h.golden("contacts", h.ok("", "contacts"))

	payArgs := []string{"pay", "--contact", "Müller Maschinenbau GmbH", "--amount", "100.00", "--reason", "PYR002", "--reference", "Invoice 2026-118"}
	h.golden("pay", h.ok("", append(payArgs, "--yes")...))
	h.advance(time.Second) // the lists are newest first

	// Asked, and answered no: nothing paid.
	r := h.fails(ExitError, "n\n", payArgs...)
	if !strings.Contains(r.stderr, "Pay? [y/N]") || !strings.Contains(r.stderr, "not paid") || strings.Contains(r.stdout, "Payment ") {
		t.Fatalf("declined: %+v", r)
	}
	// Answered yes.
	h.advance(time.Second)
	r = h.run("y\n", "pay", "--contact", "Müller Maschinenbau GmbH", "--amount", "40.00", "--reason", "PYR002", "--reference", "Invoice 2026-119", "-o", "json")
	if r.code != 0 {
		t.Fatalf("pay -o json: %+v", r)
	}
	paid := decodeJSON[struct {
		Quote   api.Quote   `json:"quote"`
		Payment api.Payment `json:"payment"`
	}](t, r.stdout)
	if paid.Quote.Source.Amount != "40.00" || paid.Payment.Status != api.PaymentStatusAwaitingApproval || paid.Payment.ApprovalRequestId == nil {
		t.Fatalf("pay -o json = %+v", paid)
	}
	// A bank transfer without its reason lists the reasons.
	r = h.fails(ExitUsage, "", "pay", "--contact", "Müller Maschinenbau GmbH", "--amount", "1.00", "--yes")
	if !strings.Contains(r.stderr, "PYR002") {
		t.Fatalf("no reason: %q", r.stderr)
	}
	// More than the balance: refused before anything is made, saying what
	// is available (the 100.00 and 40.00 wait for approval: not yet debited).
	r = h.fails(ExitRefused, "", "pay", "--contact", "Müller Maschinenbau GmbH", "--amount", "1000.00", "--reason", "PYR002", "--reference", "x", "--yes")
	if !strings.Contains(r.stderr, "this payment takes 1002.50 EUR (fee included) and the EUR balance has 1000.00 EUR available; nothing was paid") ||
		!strings.Contains(r.stdout, "Total debited:      1002.50 EUR") || strings.Contains(r.stdout, "Payment ") {
		t.Fatalf("pay beyond the balance: %+v", r)
	}
	h.fails(ExitRefused, "", "pay", "--contact", "Müller Maschinenbau GmbH", "--amount", "1000.00", "--reason", "PYR002", "--reference", "x", "--yes", "-o", "json")

	h.golden("approvals-list", h.ok("", "approvals", "list"))
	approvals := decodeJSON[[]api.Approval](t, h.ok("", "approvals", "list", "-o", "json"))
	if len(approvals) != 2 {
		t.Fatalf("approvals = %+v", approvals)
	}
	var first, second string // the 100.00, the 40.00
	for _, a := range approvals {
		if a.TargetId == paid.Payment.Id {
			second = a.Id.String()
		} else {
			first = a.Id.String()
		}
	}

	// Approving walks through the payment's own challenge on the phone.
	errw := &apitest.Buffer{}
	running := h.start("", errw, "approvals", "approve", first)
	h.approveOnPhone(errw)
	r = <-running
	if r.code != 0 || r.stdout != fmt.Sprintf("Approval %s: approved.\n", first) {
		t.Fatalf("approve: %+v", r)
	}
	r = h.run("", "approvals", "reject", second, "--reason", "Wrong amount")
	if r.code != 0 || r.stdout != fmt.Sprintf("Approval %s: rejected.\n", second) {
		t.Fatalf("reject: %+v", r)
	}
	h.fails(ExitRefused, "", "approvals", "reject", second)
	h.golden("approvals-all", h.ok("", "approvals", "list", "--status", "all"))
	h.golden("balances-after-payment", h.ok("", "balances"))
}

func TestTransactionsFollowPages(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	for i := range 5 {
		h.deposit(o, "EUR", fmt.Sprintf("%d.00", 100+i))
		h.advance(time.Second)
	}
	h.login(o)

	out := h.ok("", "transactions", "--page-size", "2")
	h.golden("transactions", out)
	if n := strings.Count(out, "deposit"); n != 5 {
		t.Fatalf("%d rows over pages of 2, want 5:\n%s", n, out)
	}
	txs := decodeJSON[[]api.Transaction](t, h.ok("", "transactions", "--page-size", "2", "--max", "3", "-o", "json"))
	if len(txs) != 3 || txs[0].Effect.Total != "104.00" {
		t.Fatalf("--max 3 = %+v", txs)
	}
	today := h.advance(0).Format("2006-01-02")
	if out := h.ok("", "transactions", "--since", today, "--type", "deposit"); strings.Count(out, "deposit") != 5 {
		t.Fatalf("--since today:\n%s", out)
	}
	tomorrow := h.advance(0).AddDate(0, 0, 1).Format("2006-01-02")
	if out := h.ok("", "transactions", "--since", tomorrow); out != "RECORDED  TYPE  DESCRIPTION  AMOUNT  CURRENCY\n" {
		t.Fatalf("--since tomorrow:\n%q", out)
	}
	if out := h.ok("", "transactions", "--since", tomorrow, "-o", "json"); out != "[]\n" {
		t.Fatalf("empty -o json: %q", out)
	}
}

func TestCardsFreezeAndUnfreeze(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	var card struct {
		ID string `json:"id"`
	}
	h.s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx, map[string]any{"user_id": o.userID, "monthly_limit": 2500, "card_holder_name": "Ada Lovelace"}).
		ExpectStatus(t, 201).Decode(t, &card)
	h.advance(time.Second) // the list is newest first
	h.s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx, map[string]any{"monthly_limit": 500}).ExpectStatus(t, 201)
	h.login(o)

	h.golden("cards-list", h.ok("", "cards", "list"))
	h.golden("cards-freeze", h.ok("", "cards", "freeze", card.ID))
	frozen := decodeJSON[[]api.Card](t, h.ok("", "cards", "list", "-o", "json"))
	n := 0
	for _, c := range frozen {
		if c.Frozen {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d frozen cards, want 1", n)
	}
	h.golden("cards-unfreeze", h.ok("", "cards", "unfreeze", card.ID))
	r := h.fails(ExitRefused, "", "cards", "unfreeze", card.ID)
	if !strings.Contains(r.stderr, "conflict") {
		t.Fatalf("unfreeze twice: %q", r.stderr)
	}
	h.fails(ExitUsage, "", "cards", "melt", card.ID)
}

func TestBillsUploadWaitsForTheExtraction(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.login(o)
	file := filepath.Join("..", "bill", "extract", "testdata", "ubl-be-invoice.xml")

	r := h.run("", "bills", "upload", file)
	if r.code != 0 || !strings.Contains(r.stderr, "waiting for the extraction") {
		t.Fatalf("bills upload: %+v", r)
	}
	h.golden("bills-upload", r.stdout)
	b := decodeJSON[api.Bill](t, h.ok("", "bills", "upload", "-o", "json", file))
	if b.Status != api.BillStatusExtracted || b.Amount == nil || *b.Amount != "1234.63" {
		t.Fatalf("bills upload -o json = %+v", b)
	}
	h.fails(ExitUsage, "", "bills", "upload", filepath.Join(t.TempDir(), "missing.pdf"))
}
