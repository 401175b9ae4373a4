package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/client"
	"github.com/strongroom/strongroom/client/api"
	"github.com/strongroom/strongroom/internal/apitest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

const (
	sbx      = apitest.SandboxToken
	password = "correct horse battery"
)

// harness runs commands against one in-process server, with a config
// directory of its own.
type harness struct {
	t   *testing.T
	s   *apitest.Server
	cfg string            // XDG_CONFIG_HOME
	env map[string]string // more variables
}

func newHarness(t *testing.T) *harness {
	return &harness{t: t, s: apitest.Start(t), cfg: t.TempDir(), env: map[string]string{}}
}

// result is what a command did.
type result struct {
	stdout, stderr string
	code           int
}

func (h *harness) getenv(k string) string {
	if v, ok := h.env[k]; ok {
		return v
	}
	switch k {
	case "STRONGROOM_URL":
		return h.s.URL
	case "XDG_CONFIG_HOME":
		return h.cfg
	}
	return ""
}

// run runs one command with stdin and waits for it.
func (h *harness) run(stdin string, args ...string) result {
	h.t.Helper()
	return <-h.start(stdin, &apitest.Buffer{}, args...)
}

// start runs a command in the background; its stderr goes to errw as it
// comes (to read a match code while the command waits).
func (h *harness) start(stdin string, errw *apitest.Buffer, args ...string) <-chan result {
	return h.startReading(strings.NewReader(stdin), errw, args...)
}

// startReading is start with stdin read from r (a pipe the test writes
// answers to as the prompts come).
func (h *harness) startReading(r io.Reader, errw *apitest.Buffer, args ...string) <-chan result {
	done := make(chan result, 1)
	go func() {
		var out bytes.Buffer
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		code := RunWith(ctx, args, h.getenv, r, &out, errw, Options{Poll: 20 * time.Millisecond, ProgressEvery: 20 * time.Millisecond})
		done <- result{out.String(), errw.String(), code}
	}()
	return done
}

// ok runs a command that must succeed and returns its stdout.
func (h *harness) ok(stdin string, args ...string) string {
	h.t.Helper()
	r := h.run(stdin, args...)
	if r.code != 0 {
		h.t.Fatalf("strongroom %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// fails runs a command that must exit with code.
func (h *harness) fails(code int, stdin string, args ...string) result {
	h.t.Helper()
	r := h.run(stdin, args...)
	if r.code != code {
		h.t.Fatalf("strongroom %s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), r.code, code, r.stdout, r.stderr)
	}
	return r
}

// --- the sandbox ---

type org struct {
	id, userID, email, secret string
}

func (h *harness) newOrg(email string) org {
	h.t.Helper()
	var out struct {
		Organization struct {
			ID string `json:"id"`
		} `json:"organization"`
		Owner struct {
			UserID     string  `json:"user_id"`
			TOTPSecret *string `json:"totp_secret"`
		} `json:"owner"`
	}
	h.s.Post(h.t, "/api/v1/sandbox/organizations", sbx, map[string]any{
		"name": "Acme Ltd", "owner": map[string]any{"email": email, "password": password, "first_name": "Ada", "last_name": "Lovelace"},
	}).ExpectStatus(h.t, http.StatusCreated).Decode(h.t, &out)
	return org{id: out.Organization.ID, userID: out.Owner.UserID, email: email, secret: *out.Owner.TOTPSecret}
}

// advance moves the server's manual clock and returns its time.
func (h *harness) advance(d time.Duration) time.Time {
	h.t.Helper()
	var out struct {
		Now time.Time `json:"now"`
	}
	h.s.Post(h.t, "/api/v1/sandbox/clock/advance", sbx, map[string]any{"seconds": int(d.Seconds())}).ExpectStatus(h.t, 200).Decode(h.t, &out)
	return out.Now
}

// code is the current code of o's authenticator app, at the server's time;
// the clock then moves to the next step, so that the next code differs.
func (h *harness) code(o org) string {
	h.t.Helper()
	c, err := totp.GenerateCode(o.secret, h.advance(0))
	if err != nil {
		h.t.Fatal(err)
	}
	return c
}

// login signs o in through the CLI.
func (h *harness) login(o org) {
	h.t.Helper()
	h.ok(password+"\n"+h.code(o)+"\n", "login", "--email", o.email)
	h.advance(30 * time.Second)
}

// token is the session token in the token file.
func (h *harness) token() string {
	h.t.Helper()
	b, err := os.ReadFile(filepath.Join(h.cfg, "strongroom", "token"))
	if err != nil {
		h.t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func (h *harness) deposit(o org, currency, amount string) {
	h.t.Helper()
	h.s.Post(h.t, "/api/v1/sandbox/organizations/"+o.id+"/deposits", sbx, map[string]any{"currency": currency, "amount": amount}).ExpectStatus(h.t, 201)
}

var matchCode = regexp.MustCompile(`match code (\d{3})`)

// waitFor waits until the command writing to errw has written something
// re matches, and returns the first submatch (or the match).
func (h *harness) waitFor(errw *apitest.Buffer, re *regexp.Regexp) string {
	h.t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if m := re.FindStringSubmatch(errw.String()); m != nil {
			return m[len(m)-1]
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("%s not shown; stderr:\n%s", re, errw.String())
		}
	}
}

// approveOnPhone waits for the command writing to errw to show a match
// code, then approves the pending challenge in the person's inbox with the
// sandbox approving app, as the person would on their phone; with decline,
// the person declines it instead.
func (h *harness) approveOnPhone(errw *apitest.Buffer) { h.answerOnPhone(errw, false) }

func (h *harness) answerOnPhone(errw *apitest.Buffer, decline bool) {
	h.t.Helper()
	code := h.waitFor(errw, matchCode)
	c, err := client.New(h.s.URL, client.WithToken(h.token()))
	if err != nil {
		h.t.Fatal(err)
	}
	sandbox, err := client.New(h.s.URL, client.WithToken(sbx))
	if err != nil {
		h.t.Fatal(err)
	}
	for ch, err := range c.Challenges(h.t.Context(), nil) {
		if err != nil {
			h.t.Fatalf("inbox: %v", err)
		}
		if ch.Status != "pending" {
			continue
		}
		if decline {
			if _, err := c.DeclineChallenge(h.t.Context(), ch.Id.String()); err != nil {
				h.t.Fatalf("decline: %v", err)
			}
			return
		}
		if _, err := sandbox.SandboxApproveChallenge(h.t.Context(), ch.Id.String(), api.SandboxChallengeApproval{MatchCode: &code}); err != nil {
			h.t.Fatalf("sandbox approve: %v", err)
		}
		return
	}
	h.t.Fatalf("no pending challenge in the inbox")
}

// --- golden files ---

var normalizers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), placeholder("uuid", 36)},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2} \d{2}:\d{2}`), placeholder("time", 16)},
	{regexp.MustCompile(`sr_test_\S+`), "<api key secret>"},
	{regexp.MustCompile(`•••• \d{4}`), "•••• <l4>"},
}

// placeholder is <name---> of width characters.
func placeholder(name string, width int) string {
	return "<" + name + strings.Repeat("-", width-len(name)-2) + ">"
}

// normalize replaces what changes from run to run by placeholders of the
// same width, so that the columns stay aligned.
func (h *harness) normalize(s string) string {
	s = strings.ReplaceAll(s, h.s.URL, "<server>")
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.with)
	}
	return s
}

// golden compares a command's stdout with testdata/<name>.golden;
// go test -update rewrites the file.
func (h *harness) golden(name, got string) {
	h.t.Helper()
	got = h.normalize(got)
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			h.t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		h.t.Fatalf("%v (run go test ./internal/cli -update to write it)", err)
	}
	if got != string(want) {
		h.t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", name, path, got, want)
	}
}

// must is v, or a panic (which fails the test) on err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func decodeJSON[T any](t *testing.T, s string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, s)
	}
	return v
}
