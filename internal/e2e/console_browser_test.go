package e2e_test

// The console and the API reference in a real browser: headless Chromium
// (the Debian package chromium) driven over the DevTools protocol. Each
// test starts its own server, opens the pages as a person would, and runs
// axe-core on every page it sees, failing on serious or critical findings.
// On failure a screenshot of the page is saved (under -artifacts' output
// directory, or the system's temporary directory).

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/strongroom/strongroom/internal/apitest"
)

// consoleCSP is the Content-Security-Policy every console and docs response carries.
const consoleCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"

// browserWait bounds each wait for something to appear on a page.
const browserWait = 30 * time.Second

// chromium finds the browser: skipped without one, except in CI, where
// .ci/run installs it and its absence is a failure. The walks are skipped
// under the race detector, which slows their server past a person's
// patience on two cores: .ci/run runs them in a pass of their own, and
// again with the server on PostgreSQL.
func chromium(t *testing.T) string {
	t.Helper()
	if raceDetector {
		t.Skip("browser walks run without -race (.ci/run gives them their own pass)")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed (apt-get install -y chromium); the browser tests need it in CI")
	}
	t.Skip("chromium is not installed (apt-get install -y chromium)")
	return ""
}

// browser is one headless Chromium tab on a test server, with what the
// page logged.
type browser struct {
	t   *testing.T
	s   *apitest.Server
	ctx context.Context

	mu   sync.Mutex
	logs []string // console messages, log entries and uncaught exceptions
}

func newBrowser(t *testing.T, s *apitest.Server) *browser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1280, 900),
		chromedp.Flag("lang", "en-US"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(alloc)
	ctx, cancelTime := context.WithTimeout(ctx, 8*time.Minute)
	b := &browser{t: t, s: s, ctx: ctx}
	chromedp.ListenTarget(ctx, func(ev any) {
		var line string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			var args []string
			for _, a := range ev.Args {
				args = append(args, strings.Trim(string(a.Value), `"`)+a.Description)
			}
			line = fmt.Sprintf("console.%s: %s", ev.Type, strings.Join(args, " "))
		case *runtime.EventExceptionThrown:
			line = "exception: " + ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil {
				line += " " + ev.ExceptionDetails.Exception.Description
			}
		case *cdplog.EventEntryAdded:
			line = fmt.Sprintf("log %s %s: %s %s", ev.Entry.Source, ev.Entry.Level, ev.Entry.Text, ev.Entry.URL)
		default:
			return
		}
		b.mu.Lock()
		b.logs = append(b.logs, line)
		b.mu.Unlock()
	})
	// A violation is also recorded by the page itself: the listener is
	// added by the browser before any script of the page runs (the page's
	// own policy does not apply to what DevTools evaluates).
	if err := chromedp.Run(ctx, cdplog.Enable(), runtime.Enable(), chromedp.ActionFunc(func(ctx context.Context) error {
		_, err := cdppage.AddScriptToEvaluateOnNewDocument(`window.__csp = [];
			document.addEventListener("securitypolicyviolation", (e) => window.__csp.push(e.violatedDirective + " " + e.blockedURI));`).Do(ctx)
		return err
	})); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			b.screenshot("failure")
			b.mu.Lock()
			t.Logf("the page logged:\n%s", strings.Join(b.logs, "\n"))
			b.mu.Unlock()
		}
		cancelTime()
		cancelTab()
		cancelAlloc()
	})
	return b
}

// run runs actions on the tab, failing the test (with what was being done) on error.
func (b *browser) run(what string, actions ...chromedp.Action) {
	b.t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// within runs actions with the browser wait as their deadline.
func (b *browser) within(what string, actions ...chromedp.Action) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// screenshotDir is where failure screenshots go: the test's artifact
// directory when -artifacts is given, else one that outlives the test.
func screenshotDir(t *testing.T) string {
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir()
	}
	dir := filepath.Join(os.TempDir(), "strongroom-console-screenshots", strings.ReplaceAll(t.Name(), "/", "_"))
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

// screenshot saves the whole page as name.png and logs where.
func (b *browser) screenshot(name string) {
	var png []byte
	ctx, cancel := context.WithTimeout(b.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 100)); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(screenshotDir(b.t), name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot of the page: %s", p)
}

// capture saves the visible page as name.png in the directory named by
// STRONGROOM_CONSOLE_SCREENSHOTS, when set: how docs/ gets its pictures of
// the console (STRONGROOM_CONSOLE_SCREENSHOTS=$PWD/docs go test -run TestConsole ./internal/e2e/).
func (b *browser) capture(name string) {
	dir := os.Getenv("STRONGROOM_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	var png []byte
	b.run("screenshot "+name, chromedp.CaptureScreenshot(&png))
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// axeSource is axe-core, vendored for the tests.
var axeSource = sync.OnceValues(func() ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "console", "testdata", "axe-core", "axe.min.js"))
})

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any  `json:"target"`
		HTML   string `json:"html"`
	} `json:"nodes"`
}

// axe runs axe-core on the page as it is now and fails the test on any
// serious or critical violation; what names the page in the message.
func (b *browser) axe(what string) {
	b.t.Helper()
	src, err := axeSource()
	if err != nil {
		b.t.Fatal(err)
	}
	var raw string
	b.run("axe on "+what,
		chromedp.Evaluate(string(src)+"\n;0", nil),
		chromedp.Evaluate(`axe.run(document, {resultTypes: ["violations"]}).then(r => JSON.stringify(r.violations))`, &raw,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	var violations []axeViolation
	if err := json.Unmarshal([]byte(raw), &violations); err != nil {
		b.t.Fatalf("axe on %s: %v", what, err)
	}
	for _, v := range violations {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprint(n.Target))
		}
		b.t.Errorf("axe on %s: %s (%s): %s at %s", what, v.ID, v.Impact, v.Help, strings.Join(where, ", "))
	}
}

// noCSPViolations fails the test when the page recorded a violation of its
// policy or the browser logged one.
func (b *browser) noCSPViolations(what string) {
	b.t.Helper()
	var seen []string
	b.run("read the violations", chromedp.Evaluate(`window.__csp || []`, &seen))
	for _, v := range seen {
		b.t.Errorf("%s: Content-Security-Policy violation: %s", what, v)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.logs {
		if strings.Contains(l, "Content Security Policy") || strings.Contains(l, "Content-Security-Policy") {
			b.t.Errorf("%s: the browser logged %s", what, l)
		}
	}
}

// textOf waits for the selector to be visible and returns its text.
func (b *browser) textOf(sel string) string {
	b.t.Helper()
	var text string
	b.within("read "+sel, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Text(sel, &text, chromedp.ByQuery))
	return text
}

// waitText waits until the text of the element the selector matches
// contains want. The text is read in one step in the page, so a node
// redrawn meanwhile (a live row) is simply read again.
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	var text string
	deadline := time.Now().Add(browserWait)
	for {
		b.run("read "+sel, chromedp.Evaluate(`(() => { const el = document.querySelector(`+strconv.Quote(sel)+`); return el ? el.textContent : ""; })()`, &text))
		if strings.Contains(text, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("waiting for %q in %s (last text %q): timed out", want, sel, text)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// check runs axe and the policy check on the page as it is now.
func (b *browser) check(what string) {
	b.t.Helper()
	b.axe(what)
	b.noCSPViolations(what)
}

// click clicks the first element the selector matches once it is visible.
//
// A live page may draw the element again (an event updates its row) between
// finding it and clicking it; the browser then no longer knows the node it
// found, and the click is tried again on the element drawn in its place, as
// a person's second click would be.
func (b *browser) click(sel string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserWait)
	defer cancel()
	for {
		err := chromedp.Run(ctx, chromedp.WaitVisible(sel, chromedp.ByQuery), chromedp.Click(sel, chromedp.ByQuery))
		if err == nil {
			return
		}
		if !strings.Contains(err.Error(), "Could not find node with given id") || ctx.Err() != nil {
			b.t.Fatalf("click %s: %v", sel, err)
		}
	}
}

// clickUntilShown clicks sel until shown is visible. A page still settling
// (a list a filter redraws, a layout that shifts as parts load) can take
// a click at the place the element had a moment before, and nothing opens;
// a person clicks again, and so does this.
func (b *browser) clickUntilShown(sel, shown string) {
	b.t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		b.click(sel)
		ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
		err := chromedp.Run(ctx, chromedp.WaitVisible(shown, chromedp.ByQuery))
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("clicked %s: %s is not shown", sel, shown)
		}
	}
}

// typeInto replaces the value of the input sel with text, typed.
func (b *browser) typeInto(sel, text string) {
	b.t.Helper()
	b.within("type into "+sel,
		chromedp.WaitVisible(sel, chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector(`+strconv.Quote(sel)+`).value = ""; 0`, nil),
		chromedp.SendKeys(sel, text, chromedp.ByQuery),
	)
}

// openPage opens a console page through the side navigation, as a person
// does (a change of the address's hash: the console does not reload), and
// waits for ready.
func (b *browser) openPage(view, ready string) {
	b.t.Helper()
	b.within("open "+view,
		chromedp.Click(`nav a[data-view="`+view+`"]`, chromedp.ByQuery),
		chromedp.WaitVisible(ready, chromedp.ByQuery),
	)
}

// signInByMouse signs in with the form's fields and buttons.
func (b *browser) signInByMouse(email, secret string) {
	b.t.Helper()
	b.within("password step",
		chromedp.WaitVisible("#email", chromedp.ByID),
		chromedp.SendKeys("#email", email, chromedp.ByID),
		chromedp.SendKeys("#password", password, chromedp.ByID),
		chromedp.Click(`#password-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#code", chromedp.ByID),
	)
	b.axe("the code step")
	b.within("code step",
		chromedp.SendKeys("#code", code(b.t, b.s, secret), chromedp.ByID),
		chromedp.Click(`#code-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#shell", chromedp.ByID),
	)
}

func consoleOrg(t *testing.T, s *apitest.Server, email string) (org, secret string) {
	t.Helper()
	o := createOrg(t, s, email)
	return o.Organization.Id.String(), *o.Owner.TotpSecret
}

// A person signs in with password and authenticator code, sees the empty
// state, and watches a deposit arrive on the balances page without
// reloading it; every page passes axe and the policy is never violated.
func TestConsoleSignInAndLiveBalance(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	org, secret := consoleOrg(t, s, "ada@console-live.test")
	b := newBrowser(t, s)

	b.run("open the console", chromedp.Navigate(s.URL+"/"))
	b.within("the sign-in page", chromedp.WaitVisible("#password-form", chromedp.ByID))
	var loc string
	b.run("where", chromedp.Location(&loc))
	if loc != s.URL+"/console/" {
		t.Fatalf("/ led to %s, want %s/console/", loc, s.URL)
	}
	b.axe("the sign-in page")

	// A wrong password shows the envelope's message.
	b.within("a wrong password",
		chromedp.SendKeys("#email", "ada@console-live.test", chromedp.ByID),
		chromedp.SendKeys("#password", "not the password", chromedp.ByID),
		chromedp.Click(`#password-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#signin-banner", chromedp.ByID),
	)
	var refused map[string]any
	s.Post(t, "/api/v1/auth/sign-in", "", map[string]any{"email": "ada@console-live.test", "password": "not the password"}).Decode(t, &refused)
	if got, want := b.textOf("#signin-banner"), refused["error"].(map[string]any)["message"].(string); got != want {
		t.Fatalf("banner %q, want the envelope's message %q", got, want)
	}
	b.run("clear the form", chromedp.Evaluate(`document.getElementById("email").value = ""; document.getElementById("password").value = ""; 0`, nil))

	b.signInByMouse("ada@console-live.test", secret)
	b.waitText("#org", "Acme Ltd")
	b.within("the empty state", chromedp.WaitVisible("#balances-empty", chromedp.ByID))
	b.waitText("#live", "Live")
	b.axe("the empty balances page")

	// The token is in sessionStorage, nowhere else.
	var stored struct {
		Session string `json:"session"`
		Local   int    `json:"local"`
		Cookie  string `json:"cookie"`
	}
	b.run("read the storage", chromedp.Evaluate(`({session: sessionStorage.getItem("strongroom.session") || "", local: localStorage.length, cookie: document.cookie})`, &stored))
	if !strings.HasPrefix(stored.Session, "srs_") || stored.Local != 0 || stored.Cookie != "" {
		t.Fatalf("storage: session %t, localStorage %d entries, cookie %q; want the session in sessionStorage only",
			strings.HasPrefix(stored.Session, "srs_"), stored.Local, stored.Cookie)
	}

	// A deposit appears without a reload: the marker set on this page survives.
	b.run("mark the page", chromedp.Evaluate(`window.__marker = "same page"; 0`, nil))
	deposit(t, s, org, "EUR", "1234.56")
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€1,234.56")
	deposit(t, s, org, "EUR", "0.44")
	b.waitText(`#balances-rows tr[data-currency="EUR"] td[data-field="available"]`, "€1,235.00")
	deposit(t, s, org, "USD", "98000.5")
	b.waitText(`#balances-rows tr[data-currency="USD"] td[data-field="available"]`, "$98,000.50")
	b.capture("console-balances")
	var marker string
	b.run("read the marker", chromedp.Evaluate(`window.__marker || ""`, &marker))
	if marker != "same page" {
		t.Fatal("the page reloaded to show the deposit")
	}
	var align string
	b.run("the alignment", chromedp.Evaluate(`getComputedStyle(document.querySelector('#balances-rows td[data-field="available"]')).textAlign`, &align))
	if align != "right" {
		t.Fatalf("money is aligned %q, want right", align)
	}
	b.axe("the balances page")

	// Money is formatted from the decimal string, never through a float.
	var big string
	b.run("format a large amount", chromedp.Evaluate(`import("/console/money.js").then(m => m.formatMoney("12345678901234567.89", "EUR", "en-US"))`, &big,
		func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if big != "€12,345,678,901,234,567.89" {
		t.Fatalf("formatMoney of a large amount: %q, not exact", big)
	}

	// Signing out forgets the token and ends the live stream.
	b.within("sign out", chromedp.Click("#sign-out", chromedp.ByID), chromedp.WaitVisible("#password-form", chromedp.ByID))
	b.run("read the storage", chromedp.Evaluate(`({session: sessionStorage.getItem("strongroom.session") || "", local: localStorage.length, cookie: document.cookie})`, &stored))
	if stored.Session != "" {
		t.Fatal("the session token is still in sessionStorage after sign-out")
	}
	b.noCSPViolations("the console")
}

// The sign-in works with the keyboard alone: the email field has the
// focus, Tab moves to the password, Enter submits, the code field gets the
// focus, Enter submits.
func TestConsoleKeyboardOnlySignIn(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	_, secret := consoleOrg(t, s, "kay@console-keys.test")
	b := newBrowser(t, s)

	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.within("the sign-in page", chromedp.WaitVisible("#email", chromedp.ByID))
	focused := func() string {
		var id string
		b.run("the focus", chromedp.Evaluate(`document.activeElement ? document.activeElement.id : ""`, &id))
		return id
	}
	// The focus reaches the email field by itself (the page sets it).
	deadline := time.Now().Add(browserWait)
	for focused() != "email" {
		if time.Now().After(deadline) {
			t.Fatalf("focus on %q, want the email field", focused())
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.run("type the email and password",
		chromedp.KeyEvent("kay@console-keys.test"),
		chromedp.KeyEvent(kb.Tab),
		chromedp.KeyEvent(password),
		chromedp.KeyEvent(kb.Enter),
	)
	b.within("the code step", chromedp.WaitVisible("#code", chromedp.ByID))
	if f := focused(); f != "code" {
		t.Fatalf("focus on %q after the password, want the code field", f)
	}
	b.run("type the code", chromedp.KeyEvent(code(t, s, secret)), chromedp.KeyEvent(kb.Enter))
	b.within("signed in", chromedp.WaitVisible("#shell", chromedp.ByID))
	b.waitText("#balances-title", "Balances")
	// The session survives a reload of the tab (sessionStorage), and the
	// skip link is the first stop of Tab.
	b.run("reload", chromedp.Reload())
	b.within("still signed in", chromedp.WaitVisible("#balances-title", chromedp.ByID))
	b.run("tab to the skip link", chromedp.KeyEvent(kb.Tab))
	var first string
	b.run("the first stop", chromedp.Evaluate(`document.activeElement.textContent`, &first))
	if first != "Skip to content" {
		t.Fatalf("the first Tab stop is %q, want the skip link", first)
	}
	b.noCSPViolations("the console")
}

// Every console and docs response carries the policy and the two headers,
// whatever it answers.
func TestConsoleSecurityHeaders(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 10 * time.Second}
	for _, c := range []struct {
		method, path string
		status       int
		contentType  string
	}{
		{"GET", "/", http.StatusFound, ""},
		{"GET", "/console", http.StatusFound, ""},
		{"GET", "/console/", http.StatusOK, "text/html; charset=utf-8"},
		{"GET", "/console/app.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"GET", "/console/style.css", http.StatusOK, "text/css; charset=utf-8"},
		{"GET", "/console/nothing.js", http.StatusNotFound, "text/plain; charset=utf-8"},
		{"GET", "/console/../go.mod", http.StatusNotFound, "text/plain; charset=utf-8"},
		{"POST", "/console/", http.StatusMethodNotAllowed, "text/plain; charset=utf-8"},
		{"GET", "/docs", http.StatusOK, "text/html; charset=utf-8"},
		{"GET", "/docs/docs.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"GET", "/docs/swagger-ui/swagger-ui-bundle.js", http.StatusOK, "text/javascript; charset=utf-8"},
		{"GET", "/docs/swagger-ui/swagger-ui.css", http.StatusOK, "text/css; charset=utf-8"},
	} {
		req, err := http.NewRequest(c.method, s.URL+c.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		where := c.method + " " + c.path
		if resp.StatusCode != c.status {
			t.Errorf("%s → %d, want %d", where, resp.StatusCode, c.status)
		}
		if c.contentType != "" && resp.Header.Get("Content-Type") != c.contentType {
			t.Errorf("%s: Content-Type %q, want %q", where, resp.Header.Get("Content-Type"), c.contentType)
		}
		if got := resp.Header.Values("Content-Security-Policy"); len(got) != 1 || got[0] != consoleCSP {
			t.Errorf("%s: Content-Security-Policy %q, want exactly %q", where, got, consoleCSP)
		}
		if got := resp.Header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q, want nosniff", where, got)
		}
		if got := resp.Header.Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q, want no-referrer", where, got)
		}
	}
	// The API is untouched: its own 404 envelope, not a page.
	s.Get(t, "/api/v1/nothing", "").ExpectError(t, http.StatusNotFound, "not_found")
}

// /docs renders the OpenAPI document in the browser, from the binary alone,
// within the policy.
func TestConsoleDocsRendersTheReference(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	b := newBrowser(t, s)
	b.run("open the reference", chromedp.Navigate(s.URL+"/docs"))
	b.waitText("#reference", "getOpenApiDocument")
	b.axe("the API reference")
	// The operations are drawn as they scroll into view; the filter finds a tag.
	b.within("filter by tag",
		chromedp.WaitVisible("input.operation-filter-input", chromedp.ByQuery),
		chromedp.SendKeys("input.operation-filter-input", "Realtime", chromedp.ByQuery),
	)
	b.waitText("#reference", "createRealtimeTicket")
	b.waitText("#reference", "Get a ticket to open the realtime channel from a browser")
	b.clickUntilShown("#operations-Realtime-createRealtimeTicket .opblock-summary-control", "#operations-Realtime-createRealtimeTicket .opblock-body")
	b.axe("an operation of the API reference")
	b.noCSPViolations("the API reference")
}
