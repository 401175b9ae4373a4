// Sign-in: the password, then the authenticator code when asked. onSignedIn
// is called with the session token once the service says "authenticated".

import { post } from "./api.js";
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

async function submitCode(e) {
  e.preventDefault();
  const code = $("code").value.replace(/\s+/g, "");
  if (!code) {
    showSignInBanner("Enter the code from your authenticator app.");
    return;
  }
  await busy(e.submitter, async () => {
    try {
      const r = await post("/api/v1/auth/mfa", { challenge_token: challenge, code }, { signedIn: false });
      await afterSignInStep(r);
    } catch (err) {
      showSignInBanner(messageOf(err));
      $("code").select();
      $("code").focus();
    }
  });
}

async function afterSignInStep(r) {
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
      showSignInBanner("Your account needs an authenticator app before you can sign in. Set it up with the command line or the API for now.");
      return;
    default:
      showSignInBanner("This sign-in needs a step the console does not offer yet (" + r.status + ").");
  }
}

// initSignIn wires the sign-in forms; signedIn(token) enters the console.
export function initSignIn(signedIn) {
  onSignedIn = signedIn;
  $("password-form").addEventListener("submit", submitPassword);
  $("code-form").addEventListener("submit", submitCode);
  $("code-back").addEventListener("click", () => showSignIn(""));
}
