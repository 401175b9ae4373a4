// The console's shell: the layout, the organization, the pages and live
// updates. Everything from outside (names, amounts, messages) is put on the
// page as text, never as markup.

import { clearSession, get, hasSession, post, setSession, whenSessionEnds } from "./api.js";
import { Live } from "./realtime.js";
import { hideSignIn, initSignIn, showSignIn } from "./signin.js";
import "./stepup.js";
import { messageOf } from "./ui.js";

const ORG_KEY = "strongroom.organization";
const $ = (id) => document.getElementById(id);

const state = { me: null, org: null, live: null, environment: "live" };

// Messages.

function showBanner(message) {
  $("banner-text").textContent = message;
  $("banner").hidden = false;
}

function hideBanner() {
  $("banner").hidden = true;
  $("banner-text").textContent = "";
}

function showError(err) {
  if (err && err.type === "not_authenticated") return; // the sign-in page says so
  showBanner(messageOf(err));
}

// The signed-in shell.

async function enter() {
  try {
    state.me = await get("/api/v1/me");
  } catch (err) {
    if (err.type !== "not_authenticated") signedOut(messageOf(err));
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
  hideSignIn();
  $("shell").hidden = false;
  hideBanner();
  if (!location.hash) location.replace("#/balances");
  await route();
  startLive();
}

function signedOut(message) {
  stopLive();
  leavePage();
  state.me = null;
  showSignIn(message);
}

async function signOut() {
  stopLive();
  try {
    await post("/api/v1/auth/sign-out");
  } catch {
    // Signed out here whatever the service says.
  }
  clearSession();
  signedOut("You have signed out.");
}

function changeOrganization() {
  state.org = $("org").value;
  sessionStorage.setItem(ORG_KEY, state.org);
  stopLive();
  route();
  startLive();
}

// Pages, by the address's hash: #/name/rest. Each page is pages/name.js
// (exports title and show(ctx), and styles: true when it has pages/name.css,
// or the names of the pages whose sheets it uses) with its markup in
// pages/name.html, ours and static; it gets a fresh section each time it
// is shown, and only its own sheets apply.

const PAGES = ["balances", "transactions", "payments", "requests", "bills", "cards", "expenses", "invoices",
  "developers", "security", "sandbox"];
const fragments = new Map();
let current = null; // the page shown: {name, controller, handlers, liveEl}

async function fragment(name) {
  if (!fragments.has(name)) {
    const resp = await fetch("/console/pages/" + name + ".html", { cache: "no-cache", credentials: "omit" });
    if (!resp.ok) throw new Error("page markup " + name + ": " + resp.status);
    fragments.set(name, await resp.text());
  }
  // The page's own static file from this binary, never data: the one
  // markup the console parses.
  const doc = new DOMParser().parseFromString(fragments.get(name), "text/html");
  const content = document.createDocumentFragment();
  content.append(...doc.body.childNodes);
  return content;
}

// useStylesheets makes the sheets of pages names the only page sheets
// that apply: each is linked once and waited for, and the others are
// switched off, so one page's rules never reach another.
function useStylesheets(names) {
  for (const link of document.querySelectorAll("link[data-page-style]")) {
    link.disabled = !names.includes(link.dataset.pageStyle);
  }
  return Promise.all(names.map((name) => {
    if (document.querySelector(`link[data-page-style="${name}"]`)) return null;
    return new Promise((resolve) => {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = "/console/pages/" + name + ".css";
      link.dataset.pageStyle = name;
      link.onload = link.onerror = () => resolve();
      document.head.append(link);
    });
  }));
}

function leavePage() {
  if (!current) return;
  current.controller.abort();
  current = null;
  $("page").replaceChildren();
}

async function route() {
  if (!state.me) return;
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  const name = parts[0] || "balances";
  const known = PAGES.includes(name) && (name !== "sandbox" || state.environment === "test");
  leavePage();
  $("view-missing").hidden = known;
  for (const link of document.querySelectorAll("nav a[data-view]")) {
    if (link.dataset.view === name) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (!known) {
    document.title = "Not found · Strongroom";
    return;
  }
  const page = { name, controller: new AbortController(), handlers: [], liveEl: null };
  current = page;
  $("page-loading").hidden = false;
  let mod, markup;
  try {
    [mod, markup] = await Promise.all([import("./pages/" + name + ".js"), fragment(name)]);
  } catch {
    if (current === page) {
      $("page-loading").hidden = true;
      showBanner("This page could not be loaded. Reload to try again.");
    }
    return;
  }
  if (current !== page) return;
  await useStylesheets(mod.styles === true ? [name] : mod.styles || []);
  $("page-loading").hidden = true;
  document.title = mod.title + " · Strongroom";
  const section = document.createElement("section");
  section.className = "page";
  section.dataset.view = name;
  section.append(markup);
  const heading = section.querySelector("h1");
  if (heading) {
    heading.id = heading.id || name + "-title";
    section.setAttribute("aria-labelledby", heading.id);
  }
  $("page").replaceChildren(section);
  try {
    await mod.show(contextFor(page, section, parts.slice(1)));
  } catch (err) {
    if (current === page) showError(err);
  }
}

// contextFor is what a page gets: its section, the organization, the
// person and their role, the rest of the address, a signal aborted when
// the page is left, and the shell's services.
function contextFor(page, view, params) {
  const membership = state.me.memberships.find((m) => m.organization_id === state.org);
  return {
    view,
    params,
    org: state.org,
    me: state.me,
    role: membership ? membership.role : null,
    environment: state.environment,
    signal: page.controller.signal,
    // on(types, fn): fn(message) for each realtime message of these types
    // ("*": every type) while the page is shown.
    on(types, fn) {
      page.handlers.push({ types: [].concat(types), fn });
    },
    // liveStatus(el): el shows whether live updates are flowing.
    liveStatus(el) {
      page.liveEl = el;
      paintLive(el);
    },
    // debounce(fn): fn once per burst of calls (after 150 ms of quiet),
    // never after the page was left.
    debounce(fn) {
      let timer = 0;
      return () => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (!page.controller.signal.aborted) fn();
        }, 150);
      };
    },
    banner: showBanner,
    error: showError,
    go(hash) {
      location.hash = hash;
    },
  };
}

// Live updates: one connection for the organization; the page shown gets
// the messages it asked for.

const liveText = { connecting: "Connecting…", live: "Live", reconnecting: "Reconnecting…", off: "Not live" };
let liveState = "connecting";

function paintLive(el) {
  if (!el) return;
  el.textContent = liveText[liveState] || liveState;
  el.dataset.state = liveState;
}

function startLive() {
  if (!state.org) return;
  state.live = new Live(state.org, onRealtime, (s) => {
    liveState = s;
    if (current) paintLive(current.liveEl);
  });
  state.live.start();
}

function stopLive() {
  if (state.live) state.live.stop();
  state.live = null;
  liveState = "connecting";
}

function onRealtime(msg) {
  if (msg.organization_id && msg.organization_id !== state.org) return;
  if (!current) return;
  for (const { types, fn } of current.handlers) {
    if (types.includes("*") || types.includes(msg.type)) fn(msg);
  }
}

// Start.

async function init() {
  initSignIn(async (token) => {
    setSession(token);
    await enter();
  });
  $("sign-out").addEventListener("click", signOut);
  $("banner-close").addEventListener("click", hideBanner);
  $("org").addEventListener("change", changeOrganization);
  window.addEventListener("hashchange", () => {
    hideBanner();
    route();
  });
  whenSessionEnds(() => signedOut("Your session has ended. Please sign in again."));
  try {
    const settings = await (await fetch("/console/settings.json", { credentials: "omit" })).json();
    state.environment = settings.environment;
  } catch {
    // Without settings the console is as in live: no sandbox panel.
  }
  $("nav-sandbox").hidden = state.environment !== "test";
  if (hasSession()) enter();
  else showSignIn("");
}

init();
