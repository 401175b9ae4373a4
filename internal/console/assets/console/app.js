// The console's shell: sign-in, the layout, the pages and live updates.
// Everything from outside (names, amounts, messages) is put on the page as
// text (textContent), never as markup.

import { ApiError, clearSession, get, hasSession, orgPath, post, setSession, whenSessionEnds } from "./api.js";
import { formatMoney } from "./money.js";
import { Live } from "./realtime.js";

const ORG_KEY = "strongroom.organization";
const $ = (id) => document.getElementById(id);

const state = { me: null, org: null, live: null, challenge: null };

// Messages.

function showBanner(message) {
  $("banner-text").textContent = message;
  $("banner").hidden = false;
}

function hideBanner() {
  $("banner").hidden = true;
  $("banner-text").textContent = "";
}

function showSignInBanner(message) {
  const b = $("signin-banner");
  b.textContent = message;
  b.hidden = !message;
}

function messageOf(err) {
  return err instanceof ApiError ? err.message : "Something went wrong. Please try again.";
}

// Sign-in: the password, then the authenticator code when asked.

function showSignIn(message) {
  stopLive();
  state.me = null;
  $("shell").hidden = true;
  $("signin").hidden = false;
  $("code-form").hidden = true;
  $("password-form").hidden = false;
  $("password").value = "";
  showSignInBanner(message || "");
  document.title = "Sign in · Strongroom";
  $("email").focus();
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
      const r = await post("/api/v1/auth/mfa", { challenge_token: state.challenge, code }, { signedIn: false });
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
      state.challenge = null;
      setSession(r.token);
      $("password").value = "";
      $("code").value = "";
      await enter();
      return;
    case "mfa_required":
      state.challenge = r.challenge_token;
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

async function busy(button, fn) {
  if (button) button.disabled = true;
  try {
    await fn();
  } finally {
    if (button) button.disabled = false;
  }
}

// The signed-in shell.

async function enter() {
  try {
    state.me = await get("/api/v1/me");
  } catch (err) {
    if (err.type !== "not_authenticated") showSignIn(messageOf(err));
    return;
  }
  const user = state.me.user || {};
  $("who").textContent = [user.first_name, user.last_name].filter(Boolean).join(" ") || user.email || "";
  const select = $("org");
  select.replaceChildren();
  for (const m of state.me.memberships) {
    const opt = document.createElement("option");
    opt.value = m.organization_id;
    opt.textContent = m.organization_name;
    select.append(opt);
  }
  const saved = sessionStorage.getItem(ORG_KEY);
  const ids = state.me.memberships.map((m) => m.organization_id);
  state.org = ids.includes(saved) ? saved : ids[0] || null;
  if (state.org) select.value = state.org;
  select.disabled = ids.length < 2;
  $("signin").hidden = true;
  $("shell").hidden = false;
  hideBanner();
  if (!location.hash) location.replace("#/balances");
  await route();
  startLive();
}

async function signOut() {
  stopLive();
  try {
    await post("/api/v1/auth/sign-out");
  } catch {
    // Signed out here whatever the service says.
  }
  clearSession();
  showSignIn("You have signed out.");
}

function changeOrganization() {
  state.org = $("org").value;
  sessionStorage.setItem(ORG_KEY, state.org);
  stopLive();
  route();
  startLive();
}

// Pages, by the address's hash: #/balances.

const views = { balances: showBalances };

async function route() {
  if (!state.me) return;
  const name = (location.hash.replace(/^#\/?/, "").split("/")[0]) || "balances";
  const view = views[name] ? name : "missing";
  for (const section of document.querySelectorAll("main section[data-view]")) {
    section.hidden = section.dataset.view !== view;
  }
  for (const link of document.querySelectorAll("nav a[data-view]")) {
    if (link.dataset.view === view) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  document.title = (view === "missing" ? "Not found" : name[0].toUpperCase() + name.slice(1)) + " · Strongroom";
  if (views[view]) await views[view]();
}

// Balances.

let balancesLoaded = false;

async function showBalances() {
  if (!state.org) {
    $("balances-loading").hidden = true;
    $("balances-table").hidden = true;
    $("balances-empty").hidden = false;
    return;
  }
  if (!balancesLoaded) $("balances-loading").hidden = false;
  await refreshBalances();
}

async function refreshBalances() {
  const org = state.org;
  let list;
  try {
    list = await get(orgPath(org, "/balances"));
  } catch (err) {
    $("balances-loading").hidden = true;
    if (err.type !== "not_authenticated") showBanner(messageOf(err));
    return;
  }
  if (org !== state.org) return;
  balancesLoaded = true;
  $("balances-loading").hidden = true;
  const rows = list.data || [];
  const body = $("balances-rows");
  body.replaceChildren();
  for (const b of rows) {
    const tr = document.createElement("tr");
    tr.dataset.currency = b.currency;
    const cur = document.createElement("th");
    cur.scope = "row";
    cur.textContent = b.currency;
    tr.append(cur, moneyCell(b.available, b.currency, "available"), moneyCell(b.pending, b.currency, "pending"));
    body.append(tr);
  }
  $("balances-table").hidden = rows.length === 0;
  $("balances-empty").hidden = rows.length > 0;
}

function moneyCell(amount, currency, field) {
  const td = document.createElement("td");
  td.className = "num";
  td.dataset.field = field;
  td.dataset.amount = amount;
  td.textContent = formatMoney(amount, currency);
  return td;
}

// Live updates.

const liveText = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", off: "Not live" };

function startLive() {
  if (!state.org) return;
  state.live = new Live(state.org, onRealtime, (s) => {
    const el = $("live");
    el.textContent = liveText[s] || s;
    el.dataset.state = s;
  });
  state.live.start();
}

function stopLive() {
  if (state.live) state.live.stop();
  state.live = null;
}

let refreshTimer = 0;

function onRealtime(msg) {
  if (msg.organization_id && msg.organization_id !== state.org) return;
  // What moves a balance: a feed row, or a payment changing status.
  if (msg.type === "transaction.created" || msg.type === "payment.updated") {
    clearTimeout(refreshTimer);
    refreshTimer = setTimeout(refreshBalances, 150);
  }
}

// Start.

function init() {
  $("password-form").addEventListener("submit", submitPassword);
  $("code-form").addEventListener("submit", submitCode);
  $("code-back").addEventListener("click", () => showSignIn(""));
  $("sign-out").addEventListener("click", signOut);
  $("banner-close").addEventListener("click", hideBanner);
  $("org").addEventListener("change", changeOrganization);
  window.addEventListener("hashchange", route);
  whenSessionEnds(() => showSignIn("Your session has ended. Please sign in again."));
  if (hasSession()) enter();
  else showSignIn("");
}

init();
