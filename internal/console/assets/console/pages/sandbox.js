// The sandbox panel (environment test only): plays the approving app (its
// inbox, with the match code to enter), deposits, settles payments and
// moves the manual clock. The sandbox helpers take the sandbox token as
// their bearer, never the session's; the token is asked for once and kept
// in this tab's sessionStorage (never localStorage) until "Forget token".

import { call, get, orgPath, post } from "../api.js";
import { formatMoney } from "../money.js";
import { contacts as listContacts, recentPayments, sortPayments, statusText } from "../paydata.js";
import { busy, dateTime, formError, h, messageOf, money } from "../ui.js";
import { balanceRows } from "./balances.js";

export const title = "Sandbox";
export const styles = true;

const TOKEN_KEY = "strongroom.sandbox-token";
const INBOX_MS = 3000;

// sandbox calls a sandbox helper with the token.
function sandbox(token, method, path, body) {
  return call(method, path, body, { signedIn: false, stepUp: false, headers: { Authorization: "Bearer " + token } });
}

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));
  let token = sessionStorage.getItem(TOKEN_KEY) || "";
  let timer = 0;
  ctx.signal.addEventListener("abort", () => clearInterval(timer));

  const sbx = (method, path, body) => sandbox(token, method, path, body);

  // The token.

  function paint() {
    $("token-panel").hidden = Boolean(token);
    $("sandbox-tools").hidden = !token;
    clearInterval(timer);
    if (token) {
      timer = setInterval(() => refreshInbox(), INBOX_MS);
      refreshInbox();
      refreshSettle();
      refreshBalances();
      readClock();
    } else {
      $("sandbox-token").focus();
    }
  }

  $("token-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    formError(form, null);
    const given = $("sandbox-token").value.trim();
    if (!given) {
      showFormMessage(form, "Enter the sandbox token.");
      return;
    }
    // Reading the clock (advancing it by nothing) checks the token: the
    // helpers answer 404 to a wrong one, 409 when the clock is the system's.
    try {
      await busy(form.querySelector("button[type=submit]"), () => sandbox(given, "POST", "/api/v1/sandbox/clock/advance", { seconds: 0 }));
    } catch (err) {
      if (err.status === 404) {
        showFormMessage(form, "The service did not accept this sandbox token. Check it (the server's STRONGROOM_SANDBOX_TOKEN) and try again.");
        return;
      }
      if (err.status !== 409) {
        formError(form, err);
        return;
      }
    }
    token = given;
    sessionStorage.setItem(TOKEN_KEY, token);
    $("sandbox-token").value = "";
    paint();
  });

  $("forget-token").addEventListener("click", () => {
    token = "";
    sessionStorage.removeItem(TOKEN_KEY);
    inboxItems.clear();
    $("inbox").replaceChildren();
    paint();
  });

  function showFormMessage(form, text) {
    const alert = form.querySelector("[role=alert]");
    alert.textContent = text;
    alert.hidden = false;
  }

  // The approving app and its inbox.

  $("app-setup").addEventListener("click", async () => {
    const button = $("app-setup");
    $("app-result").textContent = "";
    try {
      await busy(button, () => sbx("POST", "/api/v1/sandbox/users/" + encodeURIComponent(ctx.me.user.id) + "/approving-app", {}));
    } catch (err) {
      $("app-result").textContent = messageOf(err);
      $("app-result").dataset.result = "error";
      return;
    }
    $("app-result").textContent = "Your sandbox approving app is set up. Approvals and confirmations now go to it: answer them in the inbox below.";
    $("app-result").dataset.result = "ok";
    button.textContent = "Set up the sandbox approving app again";
  });

  const inboxItems = new Map(); // challenge id → {li, done}
  let reading = false;

  async function refreshInbox() {
    if (!token || reading || ctx.signal.aborted) return;
    reading = true;
    let page;
    try {
      page = await get("/api/v1/me/challenges?limit=50");
    } catch (err) {
      if (!ctx.signal.aborted) {
        $("inbox-error").textContent = messageOf(err);
        $("inbox-error").hidden = false;
      }
      return;
    } finally {
      reading = false;
    }
    if (ctx.signal.aborted) return;
    $("inbox-error").hidden = true;
    const list = (page.data || []).filter((c) => c.status === "pending");
    const seen = new Set(list.map((c) => c.id));
    // Answered ones stay with their outcome; gone ones leave; new ones come
    // in. An item being typed into is never rebuilt.
    for (const [id, item] of inboxItems) {
      if (!seen.has(id) && !item.done) {
        item.li.remove();
        inboxItems.delete(id);
      }
    }
    const ul = $("inbox");
    for (const c of list) {
      if (inboxItems.has(c.id)) continue;
      const item = inboxItem(c);
      inboxItems.set(c.id, item);
      ul.prepend(item.li);
    }
    $("inbox-empty").hidden = inboxItems.size > 0;
  }

  function inboxItem(c) {
    const needsCode = c.origin_rail !== "native_app";
    const inputId = "code-" + c.id;
    const kind = c.kind === "payment_approval" ? "Payment approval" : "Confirm it is you";
    const what = c.action_summary || (c.kind === "step_up"
      ? "A sensitive action started on the " + railName(c.origin_rail) + " (for example an API key or a new approving device)."
      : "An approval started on the " + railName(c.origin_rail) + ".");
    const error = h("p", { class: "form-error", role: "alert", hidden: true });
    const code = needsCode ? h("input", { id: inputId, name: "match_code", inputmode: "numeric", pattern: "[0-9]*", maxlength: "3", autocomplete: "off", class: "code-input" }) : null;
    const approve = h("button", { type: "submit", class: "primary" }, "Approve");
    const decline = h("button", { type: "button", class: "danger" }, "Decline");
    const outcome = h("p", { class: "outcome", role: "status", "aria-live": "polite" });
    const form = h("form", { class: "inbox-form", novalidate: true },
      needsCode ? [h("label", { for: inputId }, "Code shown in the console"), code] : h("p", { class: "muted" }, "No code needed: it was started in the app."),
      h("div", { class: "actions" }, approve, decline));
    const li = h("li", { class: "inbox-item", "data-challenge-id": c.id, "data-kind": c.kind },
      h("p", { class: "inbox-kind" }, h("span", { class: "badge" }, kind), " ", h("span", { class: "muted" }, "expires " + dateTime(c.expires_at))),
      h("p", { class: "inbox-what" }, what),
      error, form, outcome);
    if (code) code.addEventListener("input", () => {
      error.hidden = true;
    });
    const item = { li, done: false };
    const finish = (text, result) => {
      item.done = true;
      form.remove();
      error.hidden = true;
      outcome.textContent = text;
      outcome.dataset.result = result;
    };
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      error.hidden = true;
      const body = needsCode ? { match_code: code.value.trim() } : {};
      try {
        await busy(approve, () => sbx("POST", "/api/v1/sandbox/challenges/" + encodeURIComponent(c.id) + "/approve", body));
      } catch (err) {
        error.textContent = messageOf(err);
        error.hidden = false;
        if (err.status === 409) finish(messageOf(err), "error");
        return;
      }
      finish(c.kind === "payment_approval" ? "Approved. The payment is approved and on its way." : "Approved. You can go back to what you were doing.", "approved");
    });
    decline.addEventListener("click", async () => {
      error.hidden = true;
      try {
        await busy(decline, () => post("/api/v1/me/challenges/" + encodeURIComponent(c.id) + "/decline", {}));
      } catch (err) {
        error.textContent = messageOf(err);
        error.hidden = false;
        return;
      }
      finish("Declined. Nothing was approved.", "declined");
    });
    return item;
  }

  // Deposits.

  $("deposit-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    formError(form, null);
    $("deposit-result").replaceChildren();
    let row;
    try {
      row = await busy(form.querySelector("button[type=submit]"), () => sbx("POST", "/api/v1/sandbox/organizations/" + encodeURIComponent(ctx.org) + "/deposits", {
        currency: $("deposit-currency").value.trim().toUpperCase(),
        amount: $("deposit-amount").value.trim(),
      }));
    } catch (err) {
      formError(form, err);
      return;
    }
    $("deposit-amount").value = "";
    $("deposit-result").replaceChildren("Deposited ", money(row.effect.total, row.effect.currency), ".");
  });

  // Balances: an approval here moves them, so they are shown here too.

  async function refreshBalances() {
    let list;
    try {
      list = await get(orgPath(ctx.org, "/balances"));
    } catch (err) {
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    const rows = list.data || [];
    $("sbx-balances").replaceChildren(...balanceRows(rows));
    $("sbx-balances-table").hidden = rows.length === 0;
    $("sbx-balances-empty").hidden = rows.length > 0;
  }

  // Settling.

  async function refreshSettle() {
    let approved, processing, names;
    try {
      // Only approved and processing payments can be settled: the newest
      // hundred of each.
      [approved, processing, names] = await Promise.all([recentPayments(ctx.org, "approved"), recentPayments(ctx.org, "processing"), listContacts(ctx.org)]);
    } catch (err) {
      if (!ctx.signal.aborted) formError($("settle-form"), err);
      return;
    }
    if (ctx.signal.aborted) return;
    const byId = new Map(names.map((c) => [c.id, c.name]));
    const open = sortPayments([...approved, ...processing]);
    const select = $("settle-payment");
    const was = select.value;
    select.replaceChildren(...open.map((p) => {
      const label = formatLabel(p, byId.get(p.payment_contact_id) || "a contact");
      return h("option", { value: p.id }, label);
    }));
    if (open.some((p) => p.id === was)) select.value = was;
    $("settle-empty").hidden = open.length > 0;
    select.disabled = open.length === 0;
    $("settle-form").querySelector("button[type=submit]").disabled = open.length === 0;
  }

  $("settle-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    formError(form, null);
    $("settle-result").textContent = "";
    const id = $("settle-payment").value;
    if (!id) return;
    const outcome = form.querySelector("input[name=outcome]:checked").value;
    let p;
    try {
      p = await busy(form.querySelector("button[type=submit]"), () => sbx("POST", "/api/v1/sandbox/payments/" + encodeURIComponent(id) + "/settle", { outcome }));
    } catch (err) {
      formError(form, err);
      return;
    }
    $("settle-result").textContent = "Settled: the payment is " + statusText(p.status) + ".";
    refreshSettle();
  });

  // The clock.

  async function readClock() {
    try {
      const c = await sbx("POST", "/api/v1/sandbox/clock/advance", { seconds: 0 });
      if (!ctx.signal.aborted) $("clock-now").textContent = dateTime(c.now);
    } catch (err) {
      if (!ctx.signal.aborted) $("clock-now").textContent = err.status === 409 ? "the system clock (it cannot be moved)" : messageOf(err);
    }
  }

  $("clock-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    formError(form, null);
    const raw = $("clock-seconds").value.trim();
    if (!/^\d+$/.test(raw)) {
      showFormMessage(form, "Enter a whole number of seconds, 0 or more.");
      return;
    }
    try {
      const c = await busy(form.querySelector("button[type=submit]"), () => sbx("POST", "/api/v1/sandbox/clock/advance", { seconds: Number(raw) }));
      $("clock-now").textContent = dateTime(c.now);
    } catch (err) {
      formError(form, err);
    }
  });

  ctx.on(["approval.updated"], ctx.debounce(refreshInbox));
  ctx.on(["payment.updated"], ctx.debounce(refreshSettle));
  ctx.on(["transaction.created", "payment.updated"], ctx.debounce(refreshBalances));
  paint();
}

function formatLabel(p, name) {
  return name + " · " + formatMoney(p.delivered.amount, p.delivered.currency) + " · " + statusText(p.status) + " · created " + dateTime(p.inserted_at);
}

function railName(rail) {
  return { web: "web", native_app: "app", mcp: "assistant (MCP)", whatsapp: "WhatsApp", telegram: "Telegram", email: "email" }[rail] || rail;
}
