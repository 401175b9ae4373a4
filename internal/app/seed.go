package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/skip2/go-qrcode"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/payment"
	"github.com/strongroom/strongroom/internal/platform/bankdetails"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/sandbox"
)

const demoEmail = "owner@demo.strongroom.test"

// demoSupplier is the payment contact the demo organization starts with,
// the one the README's first payment pays.
const demoSupplier = "Müller GmbH"

// demo is the scene a newcomer starts from: money in two currencies, a
// supplier to pay and a sandbox approving app for the owner, so that
// `strongroom login` then `strongroom pay` works at once.
func demo(password string) sandbox.Demo {
	first, last, iban := "Demo", "Owner", "DE89370400440532013000"
	return sandbox.Demo{
		Organization: sandbox.NewOrganization{
			Name:  "Demo Company",
			Owner: &sandbox.Person{Email: demoEmail, Password: password, FirstName: &first, LastName: &last},
		},
		Deposits: []sandbox.DepositRequest{{Currency: "EUR", Amount: "25000.00"}, {Currency: "USD", Amount: "25000.00"}},
		Supplier: payment.ContactRequest{Name: demoSupplier, Currency: "EUR", Rail: payment.RailFiat,
			Account: bankdetails.Account{IBAN: &iban}},
	}
}

// seedDemo creates, on an empty test database, the demo organization, and
// prints the owner's credentials once to stdout (never into the log).
func seedDemo(ctx context.Context, sb *sandbox.Service, app *sandbox.ApprovingApp, s secrets, stdout io.Writer) error {
	exists, err := organization.Any(ctx, sb.DB.Reader())
	if err != nil {
		return err
	}
	if exists {
		if s.generatedSandboxToken {
			fmt.Fprintf(stdout, "Sandbox token (shown once): %s\n", s.sandboxToken)
		}
		return nil
	}
	password := keyring.RandomToken(12)
	scene := demo(password)
	seeded, err := sb.SeedDemo(ctx, app, scene)
	if err != nil {
		return fmt.Errorf("seed demo organization: %w", err)
	}
	uri := seeded.Owner.TOTPURI
	var funds []string
	for _, d := range scene.Deposits {
		funds = append(funds, d.Amount+" "+d.Currency)
	}
	fmt.Fprintf(stdout, "Demo organization %q (%s) created, with %s, the supplier %q and a sandbox approving app for its owner.\n",
		seeded.Organization.Name, seeded.Organization.ID, strings.Join(funds, " and "), demoSupplier)
	fmt.Fprintf(stdout, "These credentials are shown once:\n")
	fmt.Fprintf(stdout, "  email:         %s\n  password:      %s\n  authenticator: %s\n", demoEmail, password, uri)
	if s.generatedSandboxToken {
		fmt.Fprintf(stdout, "  sandbox token: %s\n", s.sandboxToken)
	}
	if qr, err := qrcode.New(uri, qrcode.Low); err == nil {
		fmt.Fprintln(stdout, "Scan this with your authenticator app:")
		fmt.Fprint(stdout, qr.ToSmallString(false))
	}
	return nil
}

// printNextSteps ends the start banner with what to do next, once the
// server accepts connections at url.
func printNextSteps(stdout io.Writer, url, env string, s secrets) {
	fmt.Fprintf(stdout, "\nNext:\n")
	fmt.Fprintf(stdout, "  1. Open the console: %s/console/ (the API reference: %s/docs)\n", url, url)
	fmt.Fprintf(stdout, "  2. Or the command line, in another terminal: go build -o strongroom ./cmd/strongroom\n")
	fmt.Fprintf(stdout, "     export STRONGROOM_URL=%s; ./strongroom login --email %s\n", url, demoEmail)
	if env != "test" {
		return
	}
	token := "<the sandbox token printed at the first start>"
	if s.generatedSandboxToken {
		token = s.sandboxToken
	}
	fmt.Fprintf(stdout, "  3. The sandbox token plays the world outside (deposits, the clock, the phone that approves):\n")
	fmt.Fprintf(stdout, "     export STRONGROOM_SANDBOX_TOKEN=%s; after ./strongroom pay, ./strongroom sandbox approve\n", token)
}
