package app

import (
	"context"
	"fmt"
	"io"

	"github.com/skip2/go-qrcode"

	"github.com/strongroom/strongroom/internal/organization"
	"github.com/strongroom/strongroom/internal/platform/keyring"
	"github.com/strongroom/strongroom/internal/sandbox"
)

const demoEmail = "owner@demo.strongroom.test"

// seedDemo creates, on an empty test database, a demo organization and its
// owner, and prints the credentials once to stdout (never into the log).
func seedDemo(ctx context.Context, sb *sandbox.Service, s secrets, stdout io.Writer) error {
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
	first, last := "Demo", "Owner"
	created, err := sb.CreateOrganization(ctx, sandbox.NewOrganization{
		Name:  "Demo Company",
		Owner: &sandbox.Person{Email: demoEmail, Password: password, FirstName: &first, LastName: &last},
	})
	if err != nil {
		return fmt.Errorf("seed demo organization: %w", err)
	}
	uri := created.Owner.TOTPURI
	fmt.Fprintf(stdout, "Demo organization %q (%s) created. These credentials are shown once:\n", created.Organization.Name, created.Organization.ID)
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
