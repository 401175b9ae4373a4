package e2e_test

// The console's access pages in a real browser: setting up an
// authenticator from its QR code (at sign-in and on the security page),
// the step-up dialog, and API keys and webhook endpoints whose secrets are
// shown once.

import (
	"bytes"
	"encoding/base64"
	"image/gif"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/strongroom/strongroom/internal/apitest"
)

// accessQR reads the QR code image in sel: what it says it encodes, and
// checks that the image is that text's QR code (drawn again by the same
// encoder) and a real picture.
func accessQR(t *testing.T, b *browser, sel string) string {
	t.Helper()
	var got struct {
		Text  string `json:"text"`
		Src   string `json:"src"`
		Again string `json:"again"`
	}
	b.within("read the QR code", chromedp.WaitVisible(sel, chromedp.ByQuery))
	b.run("read the QR code", chromedp.Evaluate(`(async () => {
		const img = document.querySelector(`+"`"+sel+"`"+`);
		const m = await import("/console/qr.js");
		return {text: img.dataset.qrText, src: img.src, again: m.qrDataURL(img.dataset.qrText)};
	})()`, &got, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
	if got.Src != got.Again {
		t.Fatalf("the QR image is not the QR code of %q", got.Text)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(got.Src, "data:image/gif;base64,"))
	if err != nil {
		t.Fatalf("the QR image is not a GIF data URL: %v", err)
	}
	img, err := gif.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the QR image does not decode: %v", err)
	}
	if w := img.Bounds().Dx(); w < 21*3 || w != img.Bounds().Dy() {
		t.Fatalf("the QR image is %v, want a square of at least 21 modules", img.Bounds())
	}
	return got.Text
}

// accessCheckURI checks an otpauth URI for the secret shown beside it.
func accessCheckURI(t *testing.T, uri, secret string) {
	t.Helper()
	if !strings.HasPrefix(uri, "otpauth://totp/") || !strings.Contains(uri, "secret="+secret) || secret == "" {
		t.Fatalf("the QR code encodes %q, want the otpauth URI of the secret %q shown as text", uri, secret)
	}
}

// accessTypeCode types c into the input sel and submits its form.
func accessTypeCode(b *browser, what, sel, submit, c string) {
	b.t.Helper()
	b.typeInto(sel, c)
	b.within(what, chromedp.Click(submit, chromedp.ByQuery))
}

// accessGone waits until no element matches sel or none is visible (a
// closed dialog is removed from the page).
func accessGone(b *browser, what, sel string) {
	b.t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		var shown bool
		b.run(what, chromedp.Evaluate(`(() => { const el = document.querySelector(`+strconv.Quote(sel)+`); return !!el && el.getClientRects().length > 0; })()`, &shown))
		if !shown {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %s is still shown", what, sel)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// accessUntil clicks refresh until sel's text holds want (work done in
// the background shows on the next read).
func accessUntil(b *browser, what, sel, want, refresh string) {
	b.t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		var text string
		b.run(what, chromedp.Evaluate(`(() => { const el = document.querySelector(`+strconv.Quote(sel)+`); return el ? el.textContent : ""; })()`, &text))
		if strings.Contains(text, want) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%s: %q in %s, want %q", what, text, sel, want)
		}
		time.Sleep(200 * time.Millisecond)
		b.within(what, chromedp.Click(refresh, chromedp.ByQuery))
	}
}

// A new person whose organization asks for an authenticator signs in, gets
// its QR code (and key as text) on the sign-in page, turns it on with its
// code and is in; on the security page they replace it (the step-up dialog
// asks for the old one's code) with a new QR code; then they sign out and
// sign in with the new authenticator.
func TestConsoleAccessAuthenticatorFromQR(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	const email = "nia@console-access-qr.test"
	var created struct {
		Owner struct {
			UserID     string  `json:"user_id"`
			TotpSecret *string `json:"totp_secret"`
		} `json:"owner"`
	}
	s.Post(t, "/api/v1/sandbox/organizations", sbx, map[string]any{"name": "Acme Ltd", "requires_totp": true,
		"owner": map[string]any{"email": email, "password": password, "first_name": "Nia", "totp": false}}).
		ExpectStatus(t, http.StatusCreated).Decode(t, &created)
	if created.Owner.TotpSecret != nil {
		t.Fatal("the owner was given an authenticator")
	}
	b := newBrowser(t, s)

	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.within("the password step",
		chromedp.WaitVisible("#email", chromedp.ByID),
		chromedp.SendKeys("#email", email, chromedp.ByID),
		chromedp.SendKeys("#password", password, chromedp.ByID),
		chromedp.Click(`#password-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#setup-form", chromedp.ByID),
	)
	secret := b.textOf("#setup-secret")
	accessCheckURI(t, accessQR(t, b, "#setup-qr img.qr"), secret)
	b.axe("the authenticator set-up at sign-in")
	b.capture("console-authenticator-setup")

	// A wrong code keeps the set-up on screen and says so.
	right := code(t, s, secret)
	accessTypeCode(b, "a wrong code", "#setup-code", `#setup-form button[type="submit"]`, otherDigits(right))
	b.waitText("#signin-banner", "That code is not right")
	if b.textOf("#setup-secret") != secret {
		t.Fatal("a wrong code changed the key offered")
	}
	accessTypeCode(b, "the right code", "#setup-code", `#setup-form button[type="submit"]`, right)
	b.within("signed in", chromedp.WaitVisible("#shell", chromedp.ByID))
	b.waitText("#who", "Nia")
	b.noCSPViolations("the sign-in with set-up")

	// The security page: the authenticator is on, this device is listed.
	advance(t, s, 30*time.Second)
	b.within("the security page", chromedp.Click(`nav a[data-view="security"]`, chromedp.ByQuery))
	b.waitText("#totp-state", "On.")
	b.waitText("#devices-table tr[data-this-device=\"true\"]", "This device")
	b.axe("the security page")

	// Replacing it asks for a step-up: the dialog, answered with the old code.
	b.within("replace", chromedp.Click("#totp-start", chromedp.ByID), chromedp.WaitVisible("#stepup", chromedp.ByID))
	var focus string
	b.run("the focus", chromedp.Evaluate(`document.activeElement.id`, &focus))
	if focus != "stepup-totp-code" {
		t.Fatalf("the focus is on %q, want the dialog's code field", focus)
	}
	b.axe("the step-up dialog")
	accessTypeCode(b, "the step-up code", "#stepup-totp-code", `#stepup form[data-method="totp"] button[type="submit"]`, code(t, s, secret))
	accessGone(b, "the dialog closes", "#stepup")
	newSecret := b.textOf("#totp-secret")
	if newSecret == secret {
		t.Fatal("the replacement offers the same key")
	}
	accessCheckURI(t, accessQR(t, b, "#totp-qr img.qr"), newSecret)
	b.axe("the authenticator replacement")
	b.capture("console-security")
	advance(t, s, 30*time.Second)
	msgs := outboxOf(t, s, created.Owner.UserID, "totp_activation_code")
	if len(msgs) == 0 || msgs[0].Code == nil {
		t.Fatal("no messaging-app code was sent for the replacement")
	}
	b.within("activate",
		chromedp.SendKeys("#totp-code", code(t, s, newSecret), chromedp.ByID),
		chromedp.SendKeys("#totp-messaging-code", *msgs[0].Code, chromedp.ByID),
		chromedp.Click(`#totp-form button[type="submit"]`, chromedp.ByQuery),
	)
	b.waitText("#totp-done", "Your new authenticator app is on")
	b.axe("the security page after the replacement")
	b.noCSPViolations("the security page")

	// Out, and in again with the new authenticator.
	b.within("sign out", chromedp.Click("#session-sign-out", chromedp.ByID), chromedp.WaitVisible("#password-form", chromedp.ByID))
	advance(t, s, 30*time.Second)
	b.run("empty the email field", chromedp.Evaluate(`document.getElementById("email").value = ""; 0`, nil))
	b.signInByMouse(email, newSecret)
	b.waitText("#who", "Nia")
	b.noCSPViolations("the console")
}

// An owner creates an API key in the browser: the step-up dialog asks for
// an authenticator code (a wrong one is refused with the envelope's message
// and kept in the field), the secret is shown once and works against the
// API, and is gone once the page is left. A webhook endpoint's signing
// secret likewise, and its test event shows in its deliveries. Rotating is
// cancelled with Escape, then confirmed in the approving app with the match
// code the dialog shows; a change is confirmed with an emailed code. A
// member is offered none of it.
func TestConsoleAccessApiKeySecretOnce(t *testing.T) {
	t.Parallel()
	s := apitest.Start(t)
	const email = "olivia@console-access-keys.test"
	o := createOrg(t, s, email)
	org, secret, userID := o.Organization.Id.String(), *o.Owner.TotpSecret, o.Owner.UserId.String()
	b := newBrowser(t, s)
	b.run("open the console", chromedp.Navigate(s.URL+"/console/"))
	b.signInByMouse(email, secret)
	advance(t, s, 30*time.Second)

	b.within("the developers page", chromedp.Click(`nav a[data-view="developers"]`, chromedp.ByQuery))
	b.waitText("#keys", "No API keys yet")
	b.waitText("#hooks", "No webhook endpoints yet")
	b.axe("the developers page, empty")

	// A new key: name, role, scopes.
	b.within("the key form",
		chromedp.Click("#key-new", chromedp.ByID),
		chromedp.WaitVisible("#key-form", chromedp.ByID),
		chromedp.SendKeys("#key-name", "Treasury dashboard", chromedp.ByID),
		chromedp.Click("#scope-events-read", chromedp.ByID),
		chromedp.Click("#scope-balances-read", chromedp.ByID),
	)
	b.axe("the key form")
	b.within("create", chromedp.Click("#key-submit", chromedp.ByID), chromedp.WaitVisible("#stepup", chromedp.ByID))
	var parts struct {
		Match bool `json:"match"`
		Email bool `json:"email"`
	}
	b.run("the dialog's parts", chromedp.Evaluate(`({match: !!document.querySelector("#stepup-match"), email: !!document.querySelector("#stepup-email")})`, &parts))
	if parts.Match || !parts.Email {
		t.Fatalf("the dialog for a person without the app: match code shown %t, email offered %t", parts.Match, parts.Email)
	}
	b.axe("the step-up dialog")
	b.noCSPViolations("the step-up dialog")

	// A wrong code: the envelope's message, the code kept to be corrected.
	right := code(t, s, secret)
	wrong := otherDigits(right)
	accessTypeCode(b, "a wrong code", "#stepup-totp-code", `#stepup form[data-method="totp"] button[type="submit"]`, wrong)
	alert := `#stepup form[data-method="totp"] [role="alert"]`
	b.within("the refusal", chromedp.WaitVisible(alert, chromedp.ByQuery))
	var kept string
	b.run("the field", chromedp.Value("#stepup-totp-code", &kept, chromedp.ByID))
	if msg := b.textOf(alert); msg == "" || strings.Contains(msg, "Something went wrong") || kept != wrong {
		t.Fatalf("after a wrong code: message %q, field %q; want the envelope's message and the code kept", msg, kept)
	}
	b.axe("the step-up dialog with an error")
	accessTypeCode(b, "the right code", "#stepup-totp-code", `#stepup form[data-method="totp"] button[type="submit"]`, right)
	accessGone(b, "the dialog closes", "#stepup")

	// The secret, once, and it works.
	keySecret := b.textOf("#dev-secret-value")
	if !strings.HasPrefix(keySecret, "sr_test_") {
		t.Fatalf("the secret shown is %q", keySecret)
	}
	b.waitText("#dev-secret", "you will not see it again")
	lookup := strings.Split(keySecret, "_")[2]
	b.waitText(`#keys-table tr[data-lookup="`+lookup+`"]`, "Treasury dashboard")
	b.waitText(`#keys-table tr[data-lookup="`+lookup+`"]`, "balances:read, events:read")
	s.Get(t, orgPath(org, "/events"), keySecret).ExpectStatus(t, http.StatusOK)
	b.axe("the new key's secret")
	b.capture("console-api-key-secret")
	b.within("dismiss", chromedp.Click("#dev-secret-done", chromedp.ByID), chromedp.WaitNotVisible("#dev-secret", chromedp.ByID))

	// A webhook endpoint, within the step-up's window: its signing secret, once.
	const hookURL = "http://127.0.0.1:9/hook"
	b.within("the endpoint form",
		chromedp.Click("#hook-new", chromedp.ByID),
		chromedp.WaitVisible("#hook-form", chromedp.ByID),
		chromedp.SendKeys("#hook-url", hookURL, chromedp.ByID),
		chromedp.Click("#hook-type-payment-updated", chromedp.ByID),
		chromedp.Click("#hook-type-transaction-created", chromedp.ByID),
	)
	b.axe("the endpoint form")
	b.within("add", chromedp.Click(`#hook-form button[type="submit"]`, chromedp.ByQuery))
	hookSecret := b.textOf("#dev-secret-value")
	if !strings.HasPrefix(hookSecret, "whsec_") {
		t.Fatalf("the signing secret shown is %q", hookSecret)
	}
	b.waitText("#hooks-table", hookURL)
	b.waitText("#hooks-table", "payment.updated, transaction.created")
	b.axe("the endpoint's secret")
	b.noCSPViolations("the developers page")

	// A test event (a sandbox helper: the token is asked once) shows in the
	// endpoint's deliveries, with a Retry button.
	b.within("send a test event",
		chromedp.Click(`#hooks-table button[data-action="ping"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#sandbox-token", chromedp.ByID),
	)
	b.axe("the sandbox token form")
	b.within("the token", chromedp.SendKeys("#sandbox-token", sbx, chromedp.ByID),
		chromedp.Click(`#sandbox-token-form button[type="submit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#deliveries", chromedp.ByID))
	accessUntil(b, "the ping in the deliveries", `#deliveries-table tr td:first-child`, "webhook.ping", "#deliveries-refresh")
	b.within("the retry button", chromedp.WaitVisible(`#deliveries-table button[data-action="retry"]`, chromedp.ByQuery))
	b.axe("the deliveries")

	// Leaving and coming back: the secrets are nowhere.
	b.within("leave", chromedp.Click(`nav a[data-view="balances"]`, chromedp.ByQuery), chromedp.WaitVisible("#balances-title", chromedp.ByID))
	b.within("come back", chromedp.Click(`nav a[data-view="developers"]`, chromedp.ByQuery), chromedp.WaitVisible("#keys-table", chromedp.ByID))
	b.waitText("#hooks-table", hookURL)
	var page string
	b.run("read the page and the storage", chromedp.Evaluate(`document.documentElement.outerHTML + JSON.stringify(sessionStorage) + JSON.stringify(localStorage)`, &page))
	if strings.Contains(page, keySecret) || strings.Contains(page, hookSecret) {
		t.Fatal("a secret is still on the page or in the storage after leaving it")
	}
	var panelHidden bool
	b.run("the panel", chromedp.Evaluate(`document.getElementById("dev-secret").hidden`, &panelHidden))
	if !panelHidden {
		t.Fatal("the secret panel is shown again")
	}

	// Rotating after the window closed asks again; Escape cancels.
	advance(t, s, 11*time.Minute)
	rotate := `#keys-table tr[data-lookup="` + lookup + `"] button[data-action="rotate"]`
	b.within("rotate", chromedp.Click(rotate, chromedp.ByQuery), chromedp.WaitVisible("#stepup", chromedp.ByID))
	b.run("escape", chromedp.KeyEvent(kb.Escape))
	accessGone(b, "the dialog closes", "#stepup")
	b.waitText("#banner-text", "Cancelled")

	// With the approving app: the match code, entered in the app, and the
	// dialog goes on by itself.
	s.Post(t, "/api/v1/sandbox/users/"+userID+"/approving-app", sbx, nil).ExpectStatus(t, http.StatusCreated)
	web := signInFully(t, s, email, secret)
	b.within("rotate again", chromedp.Click(rotate, chromedp.ByQuery), chromedp.WaitVisible("#stepup-match", chromedp.ByID))
	match := b.textOf("#stepup-match")
	b.waitText("#stepup", "Open your approving app and enter this code")
	b.axe("the step-up dialog with the match code")
	b.capture("console-step-up")
	var challengeID string
	for _, c := range inbox(t, s, web) {
		if c.Kind == "step_up" {
			challengeID = c.Id.String()
		}
	}
	if challengeID == "" {
		t.Fatal("no step-up challenge in the app's inbox")
	}
	s.Post(t, "/api/v1/sandbox/challenges/"+challengeID+"/approve", sbx, map[string]any{"match_code": match}).ExpectStatus(t, http.StatusOK)
	accessGone(b, "the dialog closes once the app approved", "#stepup")
	rotated := b.textOf("#dev-secret-value")
	if rotated == keySecret || !strings.HasPrefix(rotated, "sr_test_"+lookup+"_") {
		t.Fatalf("the rotated secret is %q (was %q)", rotated, keySecret)
	}
	s.Get(t, orgPath(org, "/events"), rotated).ExpectStatus(t, http.StatusOK)
	b.noCSPViolations("the developers page")

	// Changing the key once the window closed: confirmed with an emailed code.
	advance(t, s, 11*time.Minute)
	b.within("dismiss", chromedp.Click("#dev-secret-done", chromedp.ByID))
	b.within("change the key",
		chromedp.Click(`#keys-table tr[data-lookup="`+lookup+`"] button[data-action="edit"]`, chromedp.ByQuery),
		chromedp.WaitVisible("#key-form", chromedp.ByID),
		chromedp.Evaluate(`document.getElementById("key-name").value = ""; 0`, nil),
		chromedp.SendKeys("#key-name", "Treasury dashboard (read only)", chromedp.ByID),
		chromedp.Click("#key-submit", chromedp.ByID),
		chromedp.WaitVisible("#stepup-email", chromedp.ByID),
		chromedp.Click("#stepup-email", chromedp.ByID),
		chromedp.WaitVisible("#stepup-email-code", chromedp.ByID),
	)
	b.axe("the step-up dialog asking for the emailed code")
	emailed := outboxOf(t, s, userID, "step_up_email_code")
	if len(emailed) == 0 || emailed[0].Code == nil {
		t.Fatal("no step-up code was emailed")
	}
	accessTypeCode(b, "the emailed code", "#stepup-email-code", `#stepup form[data-method="email"] button[type="submit"]`, *emailed[0].Code)
	accessGone(b, "the dialog closes", "#stepup")
	b.waitText(`#keys-table tr[data-lookup="`+lookup+`"]`, "Treasury dashboard (read only)")

	// A member is told whom to ask, and offered nothing they cannot do.
	_, memberSecret := addUser(t, s, org, "milo@console-access-keys.test", "member", true)
	b.within("sign out", chromedp.Click("#sign-out", chromedp.ByID), chromedp.WaitVisible("#password-form", chromedp.ByID))
	b.run("empty the email field", chromedp.Evaluate(`document.getElementById("email").value = ""; 0`, nil))
	advance(t, s, 30*time.Second)
	b.signInByMouse("milo@console-access-keys.test", memberSecret)
	b.within("the developers page", chromedp.Click(`nav a[data-view="developers"]`, chromedp.ByQuery))
	b.waitText("#dev-members", "Ask an owner or admin")
	var offered bool
	b.run("what is offered", chromedp.Evaluate(`!document.getElementById("keys-section").hidden || !document.getElementById("hooks-section").hidden`, &offered))
	if offered {
		t.Fatal("a member is offered the keys and endpoints")
	}
	b.axe("the developers page of a member")
	b.noCSPViolations("the developers page of a member")
}
