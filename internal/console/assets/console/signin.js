// Sign-in: the password, then the authenticator code when asked, or, for a
// person whose organization asks for an authenticator they have not set up
// yet, its set-up right here: the QR code of its otpauth:// URI (and the key
// as text), then a code from it, which turns it on and signs in
// (docs/api.md, Authentication; setupSignInTotp and activateSignInTotp).
// onSignedIn is called with the session token once the service says
// "authenticated".

import { post } from "./api.js";
import { qrImage } from "./qr.js";
import { busy, messageOf } from "./ui.js";

const $ = (id) => document.getElementById(id);

let challenge = null;
let onSignedIn = () => {};

function showSignInBanner(message) {
  const b = $("signin-banner");
  b.textContent = message;
  b.hidden = !message;
}

// showSignIn shows the sign-in page with message (or none).
export function showSignIn(message) {
  challenge = null;
  $("shell").hidden = true;
  $("signin").hidden = false;
  $("code-form").hidden = true;
  $("setup-form").hidden = true;
  $("setup-qr").replaceChildren();
  $("setup-secret").textContent = "";
  $("password-form").hidden = false;
  $("password").value = "";
  showSignInBanner(message || "");
  document.title = "Sign in · Strongroom";
  $("email").focus();
}

export function hideSignIn() {
  $("signin").hidden = true;
  $("password").value = "";
  $("code").value = "";
  $("setup-code").value = "";
  $("setup-qr").replaceChildren();
  $("setup-secret").textContent = "";
}

async function submitPassword(e) {
  e.preventDefault();
  const email = $("email").value.trim();
  const password = $("password").value;
  if (!email || !password) {
    showSignInBanner("Enter your email and password.");
    return;
  }
  await busy(e.submitter, async () => {
    try {
      const r = await post("/api/v1/auth/sign-in", { email, password }, { signedIn: false });
      await afterSignInStep(r);
    } catch (err) {
      showSignInBanner(messageOf(err));
      $("password").focus();
    }
  });
}

// submitCode sends the code of form (the code step, or the set-up's) to
// path with the challenge token.
function submitCode(path, input) {
  return async (e) => {
    e.preventDefault();
    const code = $(input).value.replace(/\s+/g, "");
    if (!code) {
      showSignInBanner("Enter the code from your authenticator app.");
      $(input).focus();
      return;
    }
    await busy(e.submitter, async () => {
      try {
        const r = await post(path, { challenge_token: challenge, code }, { signedIn: false });
        await afterSignInStep(r, input);
      } catch (err) {
        showSignInBanner(messageOf(err));
        $(input).select();
        $(input).focus();
      }
    });
  };
}

// startSetup asks for a new authenticator seed for the challenge and shows
// it as a QR code and as text.
async function startSetup() {
  const setup = await post("/api/v1/auth/sign-in/totp/setup", { challenge_token: challenge }, { signedIn: false });
  showSignInBanner("");
  $("password-form").hidden = true;
  $("code-form").hidden = true;
  $("setup-qr").replaceChildren(qrImage(setup.uri, "QR code to add Strongroom to your authenticator app"));
  $("setup-secret").textContent = setup.secret_encoded;
  $("setup-form").hidden = false;
  $("setup-code").value = "";
  $("setup-code").focus();
}

// afterSignInStep goes on from the service's answer; input is the code
// field that was sent, if any.
async function afterSignInStep(r, input) {
  switch (r.status) {
    case "authenticated":
      challenge = null;
      await onSignedIn(r.token);
      return;
    case "mfa_required":
      challenge = r.challenge_token;
      showSignInBanner("");
      $("password-form").hidden = true;
      $("code-form").hidden = false;
      $("code").value = "";
      $("code").focus();
      return;
    case "totp_setup_required":
    case "webauthn_required":
      challenge = r.challenge_token;
      await startSetup();
      return;
    case "mfa_failed":
      showSignInBanner("That code is not right, or was already used. Enter the code your authenticator app shows now.");
      if (input) {
        $(input).select();
        $(input).focus();
      }
      return;
    case "challenge_expired":
      showSignIn("This sign-in took too long or was ended. Please sign in again.");
      return;
    default:
      showSignInBanner("This sign-in needs a step the console does not offer (" + r.status + "). Use the command line or the API.");
  }
}

// initSignIn wires the sign-in forms; signedIn(token) enters the console.
export function initSignIn(signedIn) {
  onSignedIn = signedIn;
  $("password-form").addEventListener("submit", submitPassword);
  $("code-form").addEventListener("submit", submitCode("/api/v1/auth/mfa", "code"));
  $("setup-form").addEventListener("submit", submitCode("/api/v1/auth/sign-in/totp/activate", "setup-code"));
  $("code-back").addEventListener("click", () => showSignIn(""));
  $("setup-back").addEventListener("click", () => showSignIn(""));
}
