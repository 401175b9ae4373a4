package cli

import (
	"bufio"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pquerna/otp/totp"

	"github.com/strongroom/strongroom/internal/apitest"
)

// The README promises a newcomer their first payment in a handful of
// commands: its two set-up commands, then the lines of "Your first payment,
// from the command line". This test starts the server as the first set-up
// command does (on an empty SQLite database, environment test), reads the
// credentials it prints, and runs the README's lines as written, against
// the demo organization the server seeded.
func TestNewcomerFirstPaymentAsTheREADMESays(t *testing.T) {
	lines := newcomerREADMELines(t)
	const setUpCommands = 2 // go run ./cmd/strongroom server; go test ./...
	if n := setUpCommands + len(lines); n > 8 {
		t.Fatalf("the README's first payment takes %d commands (with the two of set up), want at most 8: %q", n, lines)
	}

	dir := t.TempDir()
	serverEnv := map[string]string{
		"STRONGROOM_ADDR":     "127.0.0.1:0",
		"STRONGROOM_DATABASE": "sqlite:" + filepath.Join(dir, "strongroom.db"),
		"STRONGROOM_FILES":    "file:" + filepath.Join(dir, "files"),
	}
	ctx, stop := context.WithCancel(context.Background())
	var out, errs apitest.Buffer
	served := make(chan int, 1)
	go func() {
		served <- Run(ctx, []string{"server"}, func(k string) string { return serverEnv[k] }, strings.NewReader(""), &out, &errs)
	}()
	t.Cleanup(func() {
		stop()
		if code := <-served; code != ExitOK {
			t.Errorf("server: exit %d\n%s", code, errs.String())
		}
	})
	base := newcomerWaitFor(t, &errs, regexp.MustCompile(`listening on (http://\S+)`), served)
	banner := newcomerWaitFor(t, &out, regexp.MustCompile(`(?s)Next:.*sandbox approve\n`), served)
	password := newcomerField(t, out.String(), `password:\s+(\S+)`)
	uri, err := url.Parse(newcomerField(t, out.String(), `authenticator:\s+(otpauth://\S+)`))
	if err != nil {
		t.Fatal(err)
	}
	secret := uri.Query().Get("secret")
	token := newcomerField(t, out.String(), `sandbox token:\s+(\S+)`)
	if !strings.Contains(banner, base+"/console/") || !strings.Contains(banner, "strongroom login --email "+demoOwner) ||
		!strings.Contains(banner, "export STRONGROOM_SANDBOX_TOKEN="+token) {
		t.Errorf("the banner's next steps do not name the console, login and the sandbox token:\n%s", banner)
	}

	env := map[string]string{"STRONGROOM_URL": base, "XDG_CONFIG_HOME": t.TempDir()}
	getenv := func(k string) string { return env[k] }
	var outputs []string
	for _, line := range lines {
		words := newcomerWords(t, line)
		switch {
		case words[0] == "go" && len(words) > 1 && words[1] == "build":
			continue // the binary is this package, run in process
		case words[0] == "export":
			name, _, _ := strings.Cut(words[1], "=")
			if name != "STRONGROOM_SANDBOX_TOKEN" {
				t.Fatalf("the README exports %s; this test knows only the sandbox token", name)
			}
			env[name] = token
			continue
		case words[0] != "./strongroom":
			t.Fatalf("the README's line %q is not a strongroom command", line)
		}
		stdin := ""
		switch words[1] {
		case "login":
			code, err := totp.GenerateCode(secret, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			stdin = password + "\n" + code + "\n"
		case "pay":
			stdin = "y\n"
		}
		var stdout, stderr apitest.Buffer
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		code := RunWith(cctx, words[1:], getenv, strings.NewReader(stdin), &stdout, &stderr, Options{Poll: 20 * time.Millisecond})
		cancel()
		if code != ExitOK {
			t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", line, code, stdout.String(), stderr.String())
		}
		outputs = append(outputs, stdout.String())
	}
	// The last line shows the balances: the payment and its fee have left
	// the euros, the dollars are untouched.
	balances := outputs[len(outputs)-1]
	eur := regexp.MustCompile(`(?m)^EUR\s+(\S+)`).FindStringSubmatch(balances)
	if eur == nil || eur[1] == "25000.00" || !strings.HasPrefix(eur[1], "248") {
		t.Errorf("after paying 100.00 EUR the balances read:\n%s", balances)
	}
	if !regexp.MustCompile(`(?m)^USD\s+25000\.00`).MatchString(balances) {
		t.Errorf("the dollars moved:\n%s", balances)
	}
}

const demoOwner = "owner@demo.strongroom.test"

// newcomerREADMELines are the command lines of the README's first payment
// block, comments removed.
func newcomerREADMELines(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			section = line == "## Your first payment, from the command line"
		case section && strings.HasPrefix(line, "```"):
			if block {
				return lines
			}
			block = true
		case section && block:
			if i := strings.Index(line, " #"); i >= 0 && strings.Count(line[:i], `"`)%2 == 0 {
				line = line[:i]
			}
			if line = strings.TrimSpace(line); line != "" {
				lines = append(lines, line)
			}
		}
	}
	t.Fatal("README.md has no code block under \"## Your first payment, from the command line\"")
	return nil
}

// newcomerWords splits a command line into words as a shell does for the
// README's simple lines: spaces separate, double quotes group.
func newcomerWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	quoted, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quotes in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// newcomerWaitFor waits until the output b holds re and returns its first
// group (or the whole match); it fails when the server stops first.
func newcomerWaitFor(t *testing.T, b *apitest.Buffer, re *regexp.Regexp, served chan int) string {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m[len(m)-1]
		}
		select {
		case code := <-served:
			served <- code
			t.Fatalf("the server stopped (exit %d) before printing %s", code, re)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not print %s:\n%s", re, b.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func newcomerField(t *testing.T, out, pattern string) string {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the server's first start printed no %s:\n%s", pattern, out)
	}
	return m[1]
}
