package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

func TestLoginWhoamiLogout(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")

	r := h.run(password+"\n"+h.code(o)+"\n", "login", "--email", o.email)
	if r.code != 0 || r.stdout != "Signed in as ada@acme.test.\n" || !strings.Contains(r.stderr, "Password: ") || !strings.Contains(r.stderr, "Authenticator code: ") {
		t.Fatalf("login: %+v", r)
	}
	h.advance(30 * time.Second)
	dir := filepath.Join(h.cfg, "strongroom")
	tokenInfo := must(os.Stat(filepath.Join(dir, "token")))
	dirInfo := must(os.Stat(dir))
	if tokenInfo.Mode().Perm() != 0o600 || dirInfo.Mode().Perm() != 0o700 {
		t.Fatalf("token file %v, directory %v; want 0600 and 0700", tokenInfo.Mode(), dirInfo.Mode())
	}
	token := h.token()
	if !strings.HasPrefix(token, "srs_") || strings.Contains(r.stdout+r.stderr, token) {
		t.Fatalf("token %q kept, or printed", token)
	}
	device := must(os.ReadFile(filepath.Join(dir, "device")))

	h.golden("whoami", h.ok("", "whoami"))
	h.golden("orgs", h.ok("", "orgs"))
	me := decodeJSON[api.Me](t, h.ok("", "whoami", "-o", "json"))
	if string(me.User.Email) != o.email || len(me.Memberships) != 1 || me.Memberships[0].OrganizationId.String() != o.id {
		t.Fatalf("whoami -o json = %+v", me)
	}

	// Signing in again reuses the device.
	h.login(o)
	if again := must(os.ReadFile(filepath.Join(dir, "device"))); string(again) != string(device) {
		t.Fatalf("device %s, then %s", device, again)
	}
	c := must(client.New(h.s.URL, client.WithToken(h.token())))
	n := 0
	for _, err := range c.Devices(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("%d devices after two sign-ins on one machine", n)
	}

	// Logout signs the session out on the server and removes the file.
	token = h.token()
	if out := h.ok("", "logout"); out != "Signed out.\n" {
		t.Fatalf("logout: %q", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "token")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("token file after logout: %v", err)
	}
	r = h.fails(ExitAuth, "", "whoami")
	if !strings.Contains(r.stderr, "strongroom login") {
		t.Fatalf("not signed in: %q", r.stderr)
	}
	h.env["STRONGROOM_TOKEN"] = token
	h.fails(ExitAuth, "", "whoami") // the server ended it
	delete(h.env, "STRONGROOM_TOKEN")
	if out := h.ok("", "logout"); out != "Not signed in.\n" {
		t.Fatalf("second logout: %q", out)
	}

	// A wrong password, a wrong code.
	h.fails(ExitAuth, "wrong password\n", "login", "--email", o.email)
	h.advance(30 * time.Second)
	r = h.fails(ExitAuth, password+"\n000000\n", "login", "--email", o.email)
	if !strings.Contains(r.stderr, "code was wrong") {
		t.Fatalf("wrong code: %q", r.stderr)
	}
	// The email asked for when not given.
	h.advance(30 * time.Second)
	r = h.run(o.email+"\n"+password+"\n"+h.code(o)+"\n", "login")
	if r.code != 0 || !strings.Contains(r.stderr, "Email: ") {
		t.Fatalf("login with prompts: %+v", r)
	}
}

func TestLoginSetsUpAnAuthenticatorWithAQRCode(t *testing.T) {
	h := newHarness(t)
	var created struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
	}
	h.s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Strict Ltd", "requires_totp": true, "owner": map[string]any{"email": "boss@strict.test", "password": password},
	}).ExpectStatus(t, 201).Decode(t, &created)
	h.s.Post(t, "/api/v1/sandbox/organizations/"+created.Organization.ID+"/users", sbx, map[string]any{
		"email": "new@strict.test", "password": password, "role": "member", "totp": false,
	}).ExpectStatus(t, 201)

	// The code is typed after the key is shown: feed stdin through a pipe
	// that answers once the key appears.
	pr, pw := io.Pipe()
	errw := &apitest.Buffer{}
	done := make(chan result, 1)
	go func() {
		var out strings.Builder
		code := RunWith(t.Context(), []string{"login", "--email", "new@strict.test", "--qr"}, h.getenv, pr, &out, errw, Options{Poll: 20 * time.Millisecond})
		done <- result{out.String(), errw.String(), code}
	}()
	fmt.Fprintln(pw, password)
	var secret string
	for deadline := time.Now().Add(20 * time.Second); secret == ""; time.Sleep(10 * time.Millisecond) {
		if _, after, ok := strings.Cut(errw.String(), "key: "); ok {
			secret, _, _ = strings.Cut(after, "\n")
		}
		if time.Now().After(deadline) {
			t.Fatalf("no key shown: %s", errw.String())
		}
	}
	o := org{email: "new@strict.test", secret: secret}
	fmt.Fprintln(pw, h.code(o))
	r := <-done
	pw.Close()
	if r.code != 0 || !strings.Contains(r.stderr, "otpauth://totp/") || !strings.Contains(r.stderr, "█") {
		t.Fatalf("login with setup: %+v", r)
	}
	me := decodeJSON[api.Me](t, h.ok("", "whoami", "-o", "json"))
	if !me.User.TotpEnabled {
		t.Fatal("the authenticator was not enabled")
	}
}

func TestTokenFromTheEnvironmentAndExitCodes(t *testing.T) {
	h := newHarness(t)
	o := h.newOrg("ada@acme.test")
	h.deposit(o, "EUR", "1250.00")
	h.deposit(o, "USD", "99.95")
	c := must(client.New(h.s.URL))
	must(c.Login(t.Context(), client.Credentials{Email: o.email, Password: password, Code: func(context.Context) (string, error) { return h.code(o), nil }}))
	h.advance(30 * time.Second)

	// No token file: STRONGROOM_TOKEN is used.
	h.env["STRONGROOM_TOKEN"] = c.Token()
	h.golden("balances", h.ok("", "balances"))
	balances := decodeJSON[[]api.Balance](t, h.ok("", "balances", "-o", "json", "--org", o.id))
	if len(balances) == 0 {
		t.Fatal("no balances")
	}
	h.ok("", "balances", "--org", "acme ltd") // by name

	h.fails(ExitNotFound, "", "cards", "freeze", uuid.NewString())
	h.fails(ExitNotFound, "", "balances", "--org", uuid.NewString())
	h.fails(ExitUsage, "", "balances", "--org", "Nobody Ltd")
	h.fails(ExitUsage, "", "balances", "-o", "yaml")
	h.fails(ExitUsage, "", "no-such-command")
	h.fails(ExitUsage, "", "pay", "--amount", "1.00")
	h.fails(ExitUsage, "", "transactions", "--since", "yesterday")
	h.fails(ExitOK, "", "pay", "-h")
	h.env["STRONGROOM_TOKEN"] = "srs_not_a_session"
	r := h.fails(ExitAuth, "", "balances")
	if !strings.Contains(r.stderr, "not_authenticated") && !strings.Contains(r.stderr, "invalid") {
		t.Fatalf("bad token: %q", r.stderr)
	}
	delete(h.env, "STRONGROOM_TOKEN")
	h.fails(ExitAuth, "", "balances")
	h.env["STRONGROOM_URL"] = "not a url"
	h.fails(ExitUsage, "", "login", "--email", "x@y.z")
}

func TestExitCodesByErrorType(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{&client.Error{StatusCode: 400, Type: "invalid_request"}, ExitUsage},
		{&client.Error{StatusCode: 401, Type: "not_authenticated"}, ExitAuth},
		{&client.Error{StatusCode: 401, Type: "invalid_credentials"}, ExitAuth},
		{&client.Error{StatusCode: 403, Type: "forbidden"}, ExitForbidden},
		{&client.Error{StatusCode: 403, Type: "step_up_required"}, ExitForbidden},
		{&client.StepUpError{Status: "declined", Err: &client.Error{StatusCode: 403, Type: "step_up_required"}}, ExitForbidden},
		{&client.Error{StatusCode: 404, Type: "not_found"}, ExitNotFound},
		{&client.Error{StatusCode: 409, Type: "conflict"}, ExitRefused},
		{&client.Error{StatusCode: 422, Type: "insufficient_funds"}, ExitRefused},
		{&client.Error{StatusCode: 429, Type: "rate_limited"}, ExitRateLimited},
		{&client.Error{StatusCode: 500, Type: "internal_error"}, ExitError},
		{&client.SignInError{Status: api.SignInStatusMfaFailed}, ExitAuth},
		{fmt.Errorf("wrapped: %w", errNotSignedIn), ExitAuth},
		{usagef("bad flag"), ExitUsage},
		{errNotConfirmed, ExitError},
		{errors.New("connection refused"), ExitError},
	} {
		var errw strings.Builder
		e := &env{errw: &errw}
		if got := e.fail(tc.err); got != tc.want {
			t.Errorf("%v: exit %d, want %d", tc.err, got, tc.want)
		}
		if errw.Len() == 0 {
			t.Errorf("%v: nothing printed", tc.err)
		}
	}
}

func TestFlagsAndArgumentsInAnyOrder(t *testing.T) {
	for _, tc := range []struct {
		args []string
		pos  []string
		out  string
	}{
		{[]string{"ID", "-o", "json"}, []string{"ID"}, "json"},
		{[]string{"-o", "json", "A", "B"}, []string{"A", "B"}, "json"},
		{[]string{"A", "--", "-o", "-x"}, []string{"A", "-o", "-x"}, "table"},
	} {
		e := &env{errw: io.Discard}
		fs := e.flags("x", "x")
		e.common(fs, true)
		pos, err := e.parse(fs, tc.args)
		if err != nil || strings.Join(pos, " ") != strings.Join(tc.pos, " ") || e.output != tc.out {
			t.Errorf("parse %q = %q, -o %s, %v; want %q, -o %s", tc.args, pos, e.output, err, tc.pos, tc.out)
		}
	}
}
