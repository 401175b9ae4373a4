// Transactions: the organization's feed, newest first, filtered by type
// and UTC dates as the API offers, paged by cursor ("Load more"); a row
// added while the page is shown (transaction.created) comes in at the top
// when the filters let it. Below, a statement of one currency over a
// period, downloaded as a file in the format chosen.

import { download, get, orgPath } from "../api.js";
import { formatMoney } from "../money.js";
import { busy, dateTime, formError, h } from "../ui.js";

export const title = "Transactions";
export const styles = true;

// The feed's row types, as a person reads them.
const TYPES = [
  ["deposit", "Deposit"],
  ["fiat_outgoing", "Payment"],
  ["crypto_outgoing", "Crypto payment"],
  ["crypto_incoming", "Crypto received"],
  ["card_transaction", "Card"],
  ["fee", "Fee"],
  ["reversal", "Reversal"],
  ["internal_transfer", "Internal transfer"],
];
const typeName = new Map(TYPES);

const STATEMENT_ACCEPT = { json: "application/json", csv: "text/csv", camt053: "application/xml", ofx: "application/x-ofx" };
const STATEMENT_EXT = { json: "json", csv: "csv", camt053: "xml", ofx: "ofx" };

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));

  const filterForm = $("tx-filter");
  $("tx-types").append(...TYPES.map(([value, label]) => h("label", { class: "check" },
    h("input", { type: "checkbox", name: "type", value }), " ", label)));

  // The filters the rows shown were read with; a cursor is only valid with them.
  let applied = { types: [], start: "", end: "" };
  let cursor = null;
  const shown = new Set();

  const readFilter = () => ({
    types: [...filterForm.querySelectorAll('input[name="type"]:checked')].map((i) => i.value),
    start: $("tx-date-start").value,
    end: $("tx-date-end").value,
  });
  const filtered = () => applied.types.length > 0 || applied.start !== "" || applied.end !== "";

  const query = (f, after) => {
    const q = new URLSearchParams();
    for (const t of f.types) q.append("type", t);
    if (f.start) q.set("date_start", f.start);
    if (f.end) q.set("date_end", f.end);
    q.set("limit", "50");
    if (after) q.set("cursor", after);
    return orgPath(ctx.org, "/transactions?" + q);
  };

  const paint = () => {
    const any = $("tx-rows").children.length > 0;
    $("tx-table").hidden = !any;
    $("tx-empty").hidden = any;
    if (!any) {
      $("tx-empty-title").textContent = filtered() ? "No transactions match these filters" : "No transactions yet";
      $("tx-empty-text").textContent = filtered()
        ? "Tick other types or widen the dates, or clear the filters to see every transaction."
        : "Money arriving and payments leaving are listed here, newest first. Send money to your account details (in the sandbox, make a deposit) and it appears at once.";
      $("tx-empty-clear").hidden = !filtered();
    }
    $("tx-filter-summary").textContent = filtered() ? summary(applied) : "";
  };

  // load reads the first page with the filters f (replacing the rows) or,
  // with more, the next page under the filters applied.
  const load = async (f, more) => {
    const resp = await get(query(f, more ? cursor : null));
    if (ctx.signal.aborted) return;
    if (!more) {
      applied = f;
      shown.clear();
      $("tx-rows").replaceChildren();
    }
    for (const t of resp.data || []) {
      if (shown.has(t.id)) continue;
      shown.add(t.id);
      $("tx-rows").append(row(t));
    }
    cursor = resp.has_more ? resp.next_cursor : null;
    $("tx-more").hidden = !cursor;
    $("tx-loading").hidden = true;
    paint();
  };

  const apply = async (f, button) => {
    formError(filterForm, null);
    try {
      await busy(button, () => load(f, false));
    } catch (err) {
      formError(filterForm, err);
    }
  };

  filterForm.addEventListener("submit", (e) => {
    e.preventDefault();
    apply(readFilter(), e.submitter || filterForm.querySelector('button[type="submit"]'));
  });
  const clear = (e) => {
    filterForm.reset();
    apply({ types: [], start: "", end: "" }, e.currentTarget);
  };
  $("tx-clear").addEventListener("click", clear);
  $("tx-empty-clear").addEventListener("click", clear);
  $("tx-more").addEventListener("click", async (e) => {
    try {
      await busy(e.currentTarget, () => load(applied, true));
    } catch (err) {
      ctx.error(err);
    }
  });

  // A new row goes on top when the filters applied would have listed it.
  ctx.on("transaction.created", (msg) => {
    const t = msg.data;
    if (!t || shown.has(t.id) || !$("tx-loading").hidden) return;
    if (applied.types.length > 0 && !applied.types.includes(t.type)) return;
    const d = utcDay(t.recorded_at);
    if ((applied.start && d < applied.start) || (applied.end && d > applied.end)) return;
    shown.add(t.id);
    const tr = row(t);
    tr.classList.add("fresh");
    $("tx-rows").prepend(tr);
    paint();
  });

  const statementReady = statementForm(ctx, $, params(ctx));

  try {
    await load(applied, false);
  } catch (err) {
    $("tx-loading").hidden = true;
    ctx.error(err);
  }
  await statementReady;
  if (ctx.params[0] === "statement") {
    $("statement").scrollIntoView();
    $("statement-currency").focus();
  }
}

function params(ctx) {
  return { currency: ctx.params[0] === "statement" ? ctx.params[1] || "" : "" };
}

function row(t) {
  const e = t.effect;
  const dir = e ? e.direction : "";
  return h("tr", { "data-id": t.id, "data-type": t.type, "data-direction": dir, "data-currency": e ? e.currency : "" },
    h("td", {}, h("time", { datetime: t.recorded_at }, dateTime(t.recorded_at))),
    h("td", {}, t.description,
      t.payment_id ? [" ", h("a", { href: "#/payments/" + encodeURIComponent(t.payment_id), class: "tx-link" }, "View payment")] : null),
    h("td", {}, typeName.get(t.type) || t.type),
    h("td", { "data-field": "direction" }, dir === "in" ? "Money in" : dir === "out" ? "Money out" : ""),
    h("td", { class: "num", "data-field": "amount" }, e ? signed(e) : ""));
}

// signed is the amount with its direction as a sign: + in, - out.
function signed(e) {
  return h("span", { class: "num amount", "data-direction": e.direction, "data-amount": e.total, "data-currency": e.currency },
    (e.direction === "out" ? "-" : "+") + formatMoney(e.total, e.currency));
}

function utcDay(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString().slice(0, 10);
}

function summary(f) {
  const parts = [];
  if (f.types.length) parts.push(f.types.map((t) => typeName.get(t) || t).join(", "));
  if (f.start && f.end) parts.push(f.start + " to " + f.end);
  else if (f.start) parts.push("from " + f.start);
  else if (f.end) parts.push("until " + f.end);
  return "Showing: " + parts.join("; ");
}

// statementForm fills the currencies the organization holds and downloads
// the statement asked for.
async function statementForm(ctx, $, p) {
  const form = $("statement-form");
  const today = new Date().toISOString().slice(0, 10);
  $("statement-from").value = today.slice(0, 8) + "01";
  $("statement-to").value = today;
  let currencies = [];
  try {
    const list = await get(orgPath(ctx.org, "/balances"));
    currencies = (list.data || []).map((b) => b.currency);
  } catch (err) {
    ctx.error(err);
  }
  if (ctx.signal.aborted) return;
  const select = $("statement-currency");
  select.replaceChildren(...currencies.map((c) => h("option", { value: c }, c)));
  if (currencies.length === 0) {
    select.append(h("option", { value: "" }, "No currency held yet"));
    select.disabled = true;
    $("statement-download").disabled = true;
    $("statement-status").textContent = "A statement can be made once your organization holds money.";
  }
  if (p.currency && currencies.includes(p.currency)) select.value = p.currency;
  // Money in a currency not held before makes it a statement's currency.
  ctx.on("transaction.created", (msg) => {
    const c = msg.data && msg.data.effect && msg.data.effect.currency;
    if (!c || currencies.includes(c)) return;
    if (currencies.length === 0) {
      select.replaceChildren();
      select.disabled = false;
      $("statement-download").disabled = false;
      $("statement-status").textContent = "";
    }
    currencies.push(c);
    select.append(h("option", { value: c }, c));
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(form, null);
    const currency = select.value;
    const from = $("statement-from").value;
    const to = $("statement-to").value;
    const format = $("statement-format").value;
    const q = new URLSearchParams({ currency, from, to, format });
    const name = "statement-" + currency + "-" + from + "-" + to + "." + STATEMENT_EXT[format];
    $("statement-status").textContent = "Preparing the statement…";
    try {
      await busy($("statement-download"), () =>
        download(orgPath(ctx.org, "/statements?" + q), name, STATEMENT_ACCEPT[format]));
      $("statement-status").textContent = "Downloaded " + name + ".";
    } catch (err) {
      $("statement-status").textContent = "";
      formError(form, err);
    }
  });
}
