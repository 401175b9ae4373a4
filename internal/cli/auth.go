package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/skip2/go-qrcode"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
)

func cmdLogin(e *env, args []string) error {
	fs := e.flags("login", "login [--email EMAIL] [--qr] [--device-name NAME]")
	email := fs.String("email", "", "your `email` (asked when not given)")
	qr := fs.Bool("qr", false, "when the server asks you to set up an authenticator app, show its QR code in the terminal")
	deviceName := fs.String("device-name", "Strongroom CLI", "the `name` of this device in your device list")
	e.common(fs, false)
	pos, err := e.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usageHelpf("login takes no arguments")
	}
	if *email == "" {
		if *email, err = e.readLine("Email: "); err != nil {
			return err
		}
	}
	password, err := e.readSecret("Password: ")
	if err != nil {
		return err
	}
	device, err := e.readFile(deviceFile)
	if err != nil {
		return err
	}
	if _, perr := uuid.Parse(device); perr != nil {
		device = ""
	}
	c, err := e.newClient()
	if err != nil {
		return err
	}
	res, err := c.Login(e.ctx, client.Credentials{
		Email: strings.TrimSpace(*email), Password: password, DeviceID: device, DeviceName: *deviceName, Platform: "cli",
		Code: func(context.Context) (string, error) {
			code, err := e.readLine("Authenticator code: ")
			return strings.TrimSpace(code), err
		},
		SetupAuthenticator: func(_ context.Context, setup *api.SignInTotpSetup) error {
			fmt.Fprintln(e.errw, "Your account needs an authenticator app. Add this key to it:")
			fmt.Fprintf(e.errw, "  key: %s\n  uri: %s\n", setup.SecretEncoded, setup.Uri)
			if *qr {
				q, err := qrcode.New(setup.Uri, qrcode.Low)
				if err != nil {
					return err
				}
				fmt.Fprintln(e.errw, "or scan this QR code:")
				fmt.Fprint(e.errw, q.ToSmallString(false))
			} else {
				fmt.Fprintln(e.errw, `(run "strongroom login --qr" to see it as a QR code)`)
			}
			fmt.Fprintln(e.errw, "Then enter the code the app shows.")
			return nil
		},
	})
	if err != nil {
		return err
	}
	if err := e.writeFile(tokenFile, c.Token()); err != nil {
		return fmt.Errorf("keep the session token: %w", err)
	}
	if id := c.DeviceID(); id != "" {
		if err := e.writeFile(deviceFile, id); err != nil {
			return err
		}
	}
	if e.getenv("STRONGROOM_TOKEN") != "" {
		fmt.Fprintln(e.errw, "note: STRONGROOM_TOKEN is set and is used instead of this session")
	}
	if e.jsonOut() {
		return e.printJSON(res.User)
	}
	who := ""
	if res.User != nil {
		who = " as " + string(res.User.Email)
	}
	_, err = fmt.Fprintf(e.out, "Signed in%s.\n", who)
	return err
}

func cmdLogout(e *env, args []string) error {
	fs := e.flags("logout", "logout")
	e.common(fs, false)
	if _, err := e.parse(fs, args); err != nil {
		return err
	}
	c, err := e.client()
	if errors.Is(err, errNotSignedIn) {
		fmt.Fprintln(e.out, "Not signed in.")
		return nil
	}
	if err != nil {
		return err
	}
	serr := c.SignOut(e.ctx)
	var apiErr *client.Error
	if errors.As(serr, &apiErr) && apiErr.StatusCode == 401 {
		serr = nil // the session had ended already
	}
	if _, err := e.removeFile(tokenFile); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	_, err = fmt.Fprintln(e.out, "Signed out.")
	return err
}

func cmdWhoami(e *env, args []string) error {
	fs := e.flags("whoami", "whoami [-o json]")
	e.common(fs, false)
	if _, err := e.parse(fs, args); err != nil {
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
	if e.jsonOut() {
		return e.printJSON(me)
	}
	name := strings.TrimSpace(str2(me.User.FirstName) + " " + str2(me.User.LastName))
	authenticator := "no"
	if me.User.TotpEnabled {
		authenticator = "yes"
	}
	var orgs []string
	for _, m := range me.Memberships {
		orgs = append(orgs, fmt.Sprintf("%s (%s)", m.OrganizationName, m.Role))
	}
	return e.fields([][2]string{
		{"Email", string(me.User.Email)},
		{"Name", orDash(name)},
		{"Authenticator", authenticator},
		{"Organizations", orDash(strings.Join(orgs, ", "))},
		{"Session expires", when(me.Session.ExpiresAt)},
		{"Server", e.baseURL},
	})
}

func cmdOrgs(e *env, args []string) error {
	fs := e.flags("orgs", "orgs [-o json]")
	e.common(fs, false)
	if _, err := e.parse(fs, args); err != nil {
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
	if e.jsonOut() {
		return e.printJSON(me.Memberships)
	}
	var rows [][]string
	for _, m := range me.Memberships {
		rows = append(rows, []string{m.OrganizationId.String(), m.OrganizationName, string(m.Role)})
	}
	return e.table([]string{"ID", "NAME", "ROLE"}, rows)
}

// orgID is the organization of the command: --org (an id, or a name of one
// of the person's organizations), else the person's only organization.
func (e *env) orgID() (string, error) {
	c, err := e.client()
	if err != nil {
		return "", err
	}
	if _, err := uuid.Parse(e.org); err == nil {
		return e.org, nil
	}
	me, err := c.Me(e.ctx)
	var apiErr *client.Error
	if errors.As(err, &apiErr) && apiErr.Type == "api_key_not_permitted" {
		return "", usagef("with an API key, give the organization's id with --org")
	}
	if err != nil {
		return "", err
	}
	if e.org != "" {
		for _, m := range me.Memberships {
			if strings.EqualFold(m.OrganizationName, e.org) {
				return m.OrganizationId.String(), nil
			}
		}
		return "", usagef("you belong to no organization named %q (see strongroom orgs)", e.org)
	}
	switch len(me.Memberships) {
	case 0:
		return "", usagef("you belong to no organization")
	case 1:
		return me.Memberships[0].OrganizationId.String(), nil
	}
	return "", usagef("you belong to %d organizations: choose one with --org (see strongroom orgs)", len(me.Memberships))
}

func str2(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
