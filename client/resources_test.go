package client_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

// collect drains an iterator, failing t on its error.
func collect[T any](t *testing.T, seq func(func(T, error) bool)) []T {
	t.Helper()
	var out []T
	for v, err := range seq {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func deposit(t *testing.T, s *apitest.Server, o org, currency, amount string) {
	t.Helper()
	s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/deposits", sbx, map[string]any{"currency": currency, "amount": amount}).ExpectStatus(t, 201)
}

func newContact(t *testing.T, s *apitest.Server, c *client.Client, o org, name string) string {
	t.Helper()
	var contact struct {
		ID string `json:"id"`
	}
	s.Post(t, "/api/v1/organizations/"+o.id+"/payment-contacts", c.Token(), map[string]any{
		"name": name, "currency": "EUR", "rail": "fiat", "iban": "DE89 3704 0044 0532 0130 00", "swift_code": "COBADEFFXXX",
	}).ExpectStatus(t, 201).Decode(t, &contact)
	return contact.ID
}

// pay quotes and executes a payment of amount EUR to contact.
func pay(t *testing.T, c *client.Client, o org, contact, amount string) *api.Payment {
	t.Helper()
	q, err := c.CreatePaymentQuote(t.Context(), api.PaymentQuoteRequest{OrganizationId: uuid.MustParse(o.id), Rail: api.RailFiat,
		PaymentContactId: uuid.MustParse(contact), SourceCurrency: "EUR", Amount: amount, AmountSide: api.PaymentQuoteRequestAmountSideSend})
	if err != nil {
		t.Fatal(err)
	}
	reason, description := "PYR002", "Invoice 2026-118"
	p, err := c.ExecutePayment(t.Context(), api.PaymentExecution{QuoteId: q.Id, PayoutReason: &reason, StatementDescription: &description}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestBalancesContactsQuoteAndPayment(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	deposit(t, s, o, "EUR", "1000.00")
	c, _ := login(t, s, o)
	ctx := t.Context()

	balances, err := c.Balances(ctx, o.id)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(balances, func(b api.Balance) bool { return b.Currency == "EUR" })
	if i < 0 || balances[i].Available != "1000.00" || balances[i].Pending != "0.00" {
		t.Fatalf("balances = %+v", balances)
	}

	var ids []string
	for _, name := range []string{"Müller Maschinenbau GmbH", "Atelier Verhaegen", "Nordic Paper AB"} {
		ids = append(ids, newContact(t, s, c, o, name))
	}
	limit := 2
	contacts := collect(t, c.PaymentContacts(ctx, o.id, &api.ListPaymentContactsParams{Limit: &limit}))
	var got []string
	for _, x := range contacts {
		got = append(got, x.Id.String())
	}
	slices.Sort(got)
	slices.Sort(ids)
	if !slices.Equal(got, ids) {
		t.Fatalf("contacts %v, want %v over two pages", got, ids)
	}
	one, err := c.PaymentContact(ctx, ids[0])
	if err != nil || one.Id.String() != ids[0] || one.Iban == nil || *one.Iban != "DE89370400440532013000" {
		t.Fatalf("contact = %+v, %v", one, err)
	}

	cfg, err := c.PaymentsConfig(ctx, o.id)
	if err != nil || len(cfg.PayoutReasons) == 0 || cfg.StatementDescriptionMaxLength != 35 {
		t.Fatalf("payments config = %+v, %v", cfg, err)
	}

	q, err := c.CreatePaymentQuote(ctx, api.PaymentQuoteRequest{OrganizationId: uuid.MustParse(o.id), Rail: api.RailFiat,
		PaymentContactId: uuid.MustParse(ids[0]), SourceCurrency: "EUR", Amount: "100.00", AmountSide: api.PaymentQuoteRequestAmountSideSend})
	if err != nil {
		t.Fatal(err)
	}
	if q.Source.Amount != "100.00" || q.Source.Currency != "EUR" || q.Destination.Currency != "EUR" || q.Rate != "1" || q.Fee.Amount == "" {
		t.Fatalf("quote = %+v", q)
	}
	p := pay(t, c, o, ids[0], "100.00")
	again, err := c.Payment(ctx, p.Id.String())
	if err != nil || again.Status != api.PaymentStatusAwaitingApproval || again.ApprovalRequestId == nil {
		t.Fatalf("payment = %+v, %v", again, err)
	}
	if _, err := c.Payment(ctx, uuid.NewString()); asError(t, err).Type != "not_found" {
		t.Fatalf("unknown payment: %v", err)
	}
}

func TestApprovalsApprovedInTheAppOrRejected(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	s.Post(t, "/api/v1/sandbox/users/"+o.userID+"/approving-app", sbx, nil).ExpectStatus(t, 201)
	deposit(t, s, o, "EUR", "1000.00")

	var c *client.Client
	approved := make(chan error, 1)
	var methods []api.StepUpMethod
	c, _ = login(t, s, o, client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
		methods = ch.Methods
		// The phone: the payment-approval challenge in the person's inbox.
		r, err := c.API().ListChallengesWithResponse(ctx, nil)
		if err != nil {
			return client.StepUpAnswer{}, err
		}
		for _, x := range r.JSON200.Data {
			if x.ApprovalId != nil && x.Status == "pending" {
				go func() { approved <- sandboxApprove(s.URL, x.Id.String(), *ch.MatchCode) }()
				return client.StepUpAnswer{Method: client.StepUpApp}, nil
			}
		}
		return client.StepUpAnswer{}, fmt.Errorf("no payment-approval challenge in %s", r.Body)
	}))
	contact := newContact(t, s, c, o, "Müller Maschinenbau GmbH")
	first := pay(t, c, o, contact, "100.00")
	second := pay(t, c, o, contact, "50.00")

	limit := 1
	pending := api.ApprovalStatusPending
	list := collect(t, c.Approvals(t.Context(), o.id, &api.ListApprovalsParams{Status: &pending, Limit: &limit}))
	if len(list) != 2 || list[0].Kind != api.ApprovalKindPayment {
		t.Fatalf("pending approvals = %+v", list)
	}

	a, err := c.ApprovePayment(t.Context(), first.ApprovalRequestId.String())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-approved; err != nil {
		t.Fatal(err)
	}
	if a.Status != api.ApprovalStatusApproved || a.TargetId != first.Id || !slices.Equal(methods, []api.StepUpMethod{client.StepUpApp}) {
		t.Fatalf("approval = %+v, methods %v", a, methods)
	}
	if p, _ := c.Payment(t.Context(), first.Id.String()); p.Status == api.PaymentStatusAwaitingApproval {
		t.Fatalf("approved payment still %s", p.Status)
	}

	r, err := c.RejectPayment(t.Context(), second.ApprovalRequestId.String(), "Wrong amount")
	if err != nil || r.Status != api.ApprovalStatusRejected {
		t.Fatalf("reject = %+v, %v", r, err)
	}
	if p, _ := c.Payment(t.Context(), second.Id.String()); p.Status != api.PaymentStatusRejected {
		t.Fatalf("rejected payment is %s", p.Status)
	}
	if left := collect(t, c.Approvals(t.Context(), o.id, &api.ListApprovalsParams{Status: &pending})); len(left) != 0 {
		t.Fatalf("pending after deciding both: %+v", left)
	}
	if _, err := c.RejectPayment(t.Context(), uuid.NewString(), ""); asError(t, err).Type != "not_found" {
		t.Fatalf("unknown approval: %v", err)
	}
}

func TestAPIKeysListedRotatedAndRevoked(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	calls := 0
	c, _ := login(t, s, o, client.WithStepUp(byAuthenticator(t, s, o, &calls)))
	ctx := t.Context()

	var created []string
	for range 3 {
		k, err := c.CreateAPIKey(ctx, o.id, memberKey())
		if err != nil {
			t.Fatal(err)
		}
		created = append(created, k.ApiKey.Id.String())
	}
	limit := 2
	keys := collect(t, c.APIKeys(ctx, o.id, &api.ListApiKeysParams{Limit: &limit}))
	if len(keys) != 3 {
		t.Fatalf("%d keys listed, want 3 over two pages", len(keys))
	}

	old := created[0]
	rotated, err := c.RotateAPIKey(ctx, o.id, old)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.ApiKey.Id.String() != old || !strings.HasPrefix(rotated.Secret, "sr_test_") || rotated.ApiKey.RotatedAt == nil || calls != 1 {
		t.Fatalf("rotated = %+v after %d step-ups (the sudo window serves the rotation)", rotated.ApiKey, calls)
	}
	program, _ := newClient(t, s, client.WithAPIKey(rotated.Secret))
	if _, err := program.CurrencyAccounts(ctx, o.id); err != nil {
		t.Fatalf("the rotated secret: %v", err)
	}

	revoked, err := c.RevokeAPIKey(ctx, o.id, old)
	if err != nil || revoked.RevokedAt == nil {
		t.Fatalf("revoke = %+v, %v", revoked, err)
	}
	if _, err := program.CurrencyAccounts(ctx, o.id); err == nil {
		t.Fatal("a revoked key still works")
	}
	if _, err := c.RevokeAPIKey(ctx, o.id, uuid.NewString()); asError(t, err).Type != "not_found" {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestCardsFrozenAndUnfrozen(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	var ids []string
	for i := range 3 {
		var card struct {
			ID string `json:"id"`
		}
		s.Post(t, "/api/v1/sandbox/organizations/"+o.id+"/cards", sbx, map[string]any{"user_id": o.userID, "monthly_limit": 1000 * (i + 1)}).
			ExpectStatus(t, 201).Decode(t, &card)
		ids = append(ids, card.ID)
	}
	c, _ := login(t, s, o)
	ctx := t.Context()

	limit := 2
	cards := collect(t, c.Cards(ctx, o.id, &api.ListCardsParams{Limit: &limit}))
	if len(cards) != 3 {
		t.Fatalf("%d cards, want 3 over two pages", len(cards))
	}
	frozen, err := c.FreezeCard(ctx, ids[1])
	if err != nil || !frozen.Frozen || frozen.Id.String() != ids[1] {
		t.Fatalf("freeze = %+v, %v", frozen, err)
	}
	yes := true
	if f := collect(t, c.Cards(ctx, o.id, &api.ListCardsParams{Frozen: &yes})); len(f) != 1 || f[0].Id.String() != ids[1] {
		t.Fatalf("frozen cards = %+v", f)
	}
	thawed, err := c.UnfreezeCard(ctx, ids[1])
	if err != nil || thawed.Frozen {
		t.Fatalf("unfreeze = %+v, %v", thawed, err)
	}
	if _, err := c.UnfreezeCard(ctx, ids[1]); asError(t, err).Type != "conflict" {
		t.Fatalf("unfreezing a card that is not frozen: %v", err)
	}
}

func TestUploadBillAndWaitForTheExtraction(t *testing.T) {
	s := apitest.Start(t)
	o := newOrg(t, s, "ada@acme.test")
	c, _ := login(t, s, o)
	ctx := t.Context()

	f, err := os.Open(filepath.Join("..", "internal", "bill", "extract", "testdata", "ubl-be-invoice.xml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := c.UploadBill(ctx, o.id, "ubl-be-invoice.xml", f)
	if err != nil {
		t.Fatal(err)
	}
	if b.Status != api.BillStatusExtracting || b.FileId == nil {
		t.Fatalf("uploaded bill = %+v", b)
	}
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done, err := c.WaitBill(wait, b.Id.String(), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if done.Status != api.BillStatusExtracted || done.ExtractionFailedAt != nil || deref(done.SupplierName) != "Atelier Verhaegen BV" ||
		deref(done.BillNumber) != "BE-2026-000318" || deref(done.Currency) != "EUR" || deref(done.Amount) != "1234.63" || done.DueDate == nil {
		t.Fatalf("extracted bill = %+v (supplier %q, number %q, amount %q)", done, deref(done.SupplierName), deref(done.BillNumber), deref(done.Amount))
	}

	// The wait between polls ends with its context (unless the second bill
	// was read before the first poll).
	f2, _ := os.Open(f.Name())
	defer f2.Close()
	b2, err := c.UploadBill(ctx, o.id, "again.xml", f2)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	began := time.Now()
	got, err := c.WaitBill(short, b2.Id.String(), time.Minute)
	if (err == nil && got.Status == api.BillStatusExtracting) || (err != nil && !errors.Is(err, context.DeadlineExceeded)) || time.Since(began) > 5*time.Second {
		t.Fatalf("wait past its context: %+v, %v after %v", got, err, time.Since(began))
	}
	if _, err := c.UploadBill(ctx, o.id, "notes.txt", strings.NewReader("just some text")); asError(t, err).StatusCode/100 != 4 {
		t.Fatalf("a text file: %v", err)
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
