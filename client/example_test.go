package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
)

// A program holding an API key reads the organization's currency accounts.
// A key is accepted only where the API says so: this call, with scope
// balances:read.
func ExampleNew() {
	c, err := client.New(serverURL, client.WithAPIKey(apiKey))
	if err != nil {
		log.Fatal(err)
	}
	accounts, err := c.CurrencyAccounts(context.Background(), orgID)
	if err != nil {
		log.Fatal(err)
	}
	var available []string
	for _, a := range accounts {
		if a.State == api.CurrencyAccountStateAvailable {
			available = append(available, string(a.Currency))
		}
	}
	fmt.Println("available:", strings.Join(available, " "))
	// Output:
	// available: AUD CAD CHF EUR GBP HKD JPY MXN SGD USD
}

// A person signs in with their password and the code of their
// authenticator app; the client keeps the session token.
func ExampleClient_Login() {
	ctx := context.Background()
	c, err := client.New(serverURL)
	if err != nil {
		log.Fatal(err)
	}
	res, err := c.Login(ctx, client.Credentials{
		Email:    email,
		Password: password,
		// Asks the person for their app's current code.
		Code:     authenticatorCode,
		Platform: "cli",
	})
	if err != nil {
		log.Fatal(err)
	}
	me, err := c.Me(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status, me.User.Email)
	// Output:
	// authenticated ada@acme.test
}

// Transactions walks the feed page by page; the range asks for the next
// page when it needs it, and stopping it stops fetching.
func ExampleClient_Transactions() {
	c, err := client.New(serverURL, client.WithToken(token))
	if err != nil {
		log.Fatal(err)
	}
	limit := 50
	deposits := []api.TransactionType{api.TransactionTypeDeposit}
	filters := &api.ListTransactionsParams{Limit: &limit, Type: &deposits}
	for tx, err := range c.Transactions(context.Background(), orgID, filters) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(tx.Type, tx.Effect.Direction, tx.Effect.Total, tx.Effect.Currency)
	}
	// Output:
	// deposit in 1000.00 EUR
}

// A payment to a contact: a quote fixes the amounts, the execute names the
// payment with your own idempotency key (a retry with it pays once), and
// the payment waits for an owner or admin to approve it in the Strongroom
// app.
func ExampleClient_ExecutePayment() {
	ctx := context.Background()
	c, err := client.New(serverURL, client.WithToken(token))
	if err != nil {
		log.Fatal(err)
	}
	q, err := c.CreatePaymentQuote(ctx, api.PaymentQuoteRequest{
		OrganizationId:   uuid.MustParse(orgID),
		PaymentContactId: uuid.MustParse(contactID),
		Rail:             api.RailFiat,
		SourceCurrency:   "EUR",
		Amount:           "120.00",
		AmountSide:       api.PaymentQuoteRequestAmountSideSend,
	})
	if err != nil {
		log.Fatal(err)
	}
	reason, description := "PYR002", "Invoice 2026-118"
	p, err := c.ExecutePayment(ctx, api.PaymentExecution{
		QuoteId:              q.Id,
		PayoutReason:         &reason,
		StatementDescription: &description,
	}, &client.ExecuteOptions{IdempotencyKey: "acme-invoice-2026-118"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Status)

	// An approver approves it (see ExampleClient_ApprovePayment) …
	approve(ctx, p.ApprovalRequestId.String())

	// … and the payer learns the outcome.
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	p, err = c.WaitPayment(wait, p.Id.String(), time.Second)
	if err != nil {
		log.Fatal(err)
	}
	// Approved, it goes to the rail within moments: approved, then processing.
	moving := p.Status == api.PaymentStatusApproved || p.Status == api.PaymentStatusProcessing
	fmt.Println("approved and on its way:", moving)
	// Output:
	// awaiting_approval
	// approved and on its way: true
}

// An approver approves a payment. The server asks for a step-up that only
// the approving app can answer: the StepUpFunc shows the match code, the
// person enters it in the app, and the client polls until they have, then
// calls again.
func ExampleClient_ApprovePayment() {
	ctx := context.Background()
	c, err := client.New(serverURL, client.WithToken(token),
		client.WithStepUpPollInterval(100*time.Millisecond),
		client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
			fmt.Fprintf(os.Stderr, "Approve in the Strongroom app, entering %s\n", *ch.MatchCode)
			fmt.Println("step-up:", ch.Methods)
			// The person, on their phone (here the sandbox's app).
			go func() { _ = approveOnThePhone(ctx, *ch.MatchCode) }()
			return client.StepUpAnswer{Method: client.StepUpApp}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	a, err := c.ApprovePayment(ctx, approvalID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(a.Status)
	// Output:
	// step-up: [app]
	// approved
}

// A supplier's invoice becomes a bill: the server reads it in the
// background, and WaitBill waits for what it read.
func ExampleClient_UploadBill() {
	ctx := context.Background()
	c, err := client.New(serverURL, client.WithToken(token))
	if err != nil {
		log.Fatal(err)
	}
	f, err := os.Open(filepath.Join("..", "internal", "bill", "extract", "testdata", "ubl-be-invoice.xml"))
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	b, err := c.UploadBill(ctx, orgID, "ubl-be-invoice.xml", f)
	if err != nil {
		log.Fatal(err)
	}
	wait, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	b, err = c.WaitBill(wait, b.Id.String(), 100*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(b.Status, *b.SupplierName, *b.Amount, *b.Currency)
	// Output:
	// extracted Atelier Verhaegen BV 1234.63 EUR
}

// Every failure answer of the server is an *Error: branch on its Type, show
// its Message, quote its RequestID.
func ExampleError() {
	c, err := client.New(serverURL, client.WithToken(token))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Payment(context.Background(), "6f1c1b7e-0000-4000-8000-000000000000")
	var e *client.Error
	if errors.As(err, &e) {
		switch e.Type {
		case "not_found":
			fmt.Println(e.StatusCode, e.Type, e.RequestID != "")
		default:
			fmt.Println("unexpected:", e.Message)
		}
	}
	// Output:
	// 404 not_found true
}

// A terminal program answers step-ups: the app when the challenge offers
// it, otherwise a code the person types.
func ExampleWithStepUp() {
	ask := func(prompt string) string {
		fmt.Fprint(os.Stderr, prompt)
		var s string
		_, _ = fmt.Scanln(&s)
		return strings.TrimSpace(s)
	}
	c, err := client.New("https://strongroom.example", client.WithToken(os.Getenv("STRONGROOM_TOKEN")),
		client.WithStepUp(func(ctx context.Context, ch *api.StepUpChallenge) (client.StepUpAnswer, error) {
			for _, m := range ch.Methods {
				if m == client.StepUpApp {
					fmt.Fprintf(os.Stderr, "Approve in the Strongroom app, entering %s\n", *ch.MatchCode)
					return client.StepUpAnswer{Method: client.StepUpApp}, nil
				}
			}
			return client.StepUpAnswer{Method: client.StepUpTOTP, Code: ask("Authenticator code: ")}, nil
		}))
	if err != nil {
		log.Fatal(err)
	}
	_ = c // every gated call of c now steps up through the function
}
