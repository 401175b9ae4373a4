// Small helpers every page uses to build its DOM. Text from outside (names,
// references, messages) only ever becomes a text node: h() cannot write
// markup.

import { ApiError } from "./api.js";
import { formatMoney } from "./money.js";

// h makes an element: props sets attributes ("class", "for", aria-*,
// data-*...), except on (an object of event listeners) and the element
// properties value, checked, disabled and hidden; children are nodes or
// strings (made text nodes), null and false skipped, arrays flattened.
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "on") {
      for (const [type, fn] of Object.entries(v)) el.addEventListener(type, fn);
    } else if (k === "value" || k === "checked" || k === "disabled" || k === "hidden") {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// money is an amount in its currency's format, right-aligned by the
// "num" class wherever it stands; data-amount keeps the exact decimal.
export function money(amount, currency, tag = "span") {
  return h(tag, { class: "num", "data-amount": amount, "data-currency": currency }, formatMoney(amount, currency));
}

const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeZone: "UTC" });

// dateTime formats an RFC 3339 time in the person's zone; date formats a
// calendar date (YYYY-MM-DD) as it is.
export function dateTime(iso) {
  return iso ? dateTimeFormat.format(new Date(iso)) : "";
}

export function date(ymd) {
  return ymd ? dateFormat.format(new Date(ymd + "T00:00:00Z")) : "";
}

// status is a status as a badge: data-status lets the style colour it.
export function status(s) {
  return h("span", { class: "badge", "data-status": s }, String(s || "").replaceAll("_", " "));
}

// empty is the empty state of a list: what it is, and what to do.
export function empty(title, text, ...actions) {
  return h("div", { class: "empty" }, h("h2", {}, title), h("p", {}, text), actions);
}

// table makes a table of rows; columns are {label, num?, cell(row) → node or string}.
export function table(caption, columns, rows) {
  return h("table", { class: "data" },
    h("caption", { class: "visually-hidden" }, caption),
    h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", class: c.num ? "num" : null }, c.label)))),
    h("tbody", {}, rows.map((r) => h("tr", {}, columns.map((c) => h("td", { class: c.num ? "num" : null }, c.cell(r)))))));
}

// busy disables button while fn runs and marks it aria-busy.
export async function busy(button, fn) {
  if (button) {
    button.disabled = true;
    button.setAttribute("aria-busy", "true");
  }
  try {
    return await fn();
  } finally {
    if (button) {
      button.disabled = false;
      button.removeAttribute("aria-busy");
    }
  }
}

// messageOf is what to tell the person about err: the envelope's message,
// with the details' messages after it.
export function messageOf(err) {
  if (!(err instanceof ApiError)) return "Something went wrong. Please try again.";
  const details = err.details.map((d) => (d.field ? d.field + ": " : "") + d.message);
  return [err.message, ...details].join(" ");
}

// formError shows err in a form: the message in its [role=alert] element,
// and each detail next to the field named like it (data-field).
export function formError(form, err) {
  for (const el of form.querySelectorAll(".field-error")) el.remove();
  for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
  const alert = form.querySelector("[role=alert]");
  if (alert) {
    alert.textContent = err ? messageOf(err) : "";
    alert.hidden = !err;
  }
  if (!(err instanceof ApiError)) return;
  for (const d of err.details) {
    const input = d.field && form.querySelector(`[name="${CSS.escape(d.field)}"]`);
    if (!input) continue;
    input.setAttribute("aria-invalid", "true");
    input.after(h("p", { class: "field-error" }, d.message));
  }
}

// uploadRow adds a row for file at the top of list: its name, a progress
// bar (progress(sent, total) moves it) and its state; done(...nodes) and
// fail(message) end it.
export function uploadRow(list, file) {
  const bar = h("progress", { max: "100", value: "0", "aria-label": "Uploading " + file.name });
  const state = h("span", { class: "upload-state" }, "Uploading…");
  const li = h("li", { class: "upload", "data-state": "sending" }, h("span", { class: "upload-name" }, file.name), bar, state);
  list.prepend(li);
  const end = (outcome, nodes) => {
    li.dataset.state = outcome;
    bar.remove();
    state.replaceChildren(...nodes);
  };
  return {
    li,
    progress(sent, total) {
      if (total) bar.value = String(Math.round((sent / total) * 100));
    },
    done: (...nodes) => end("done", nodes),
    fail: (message) => end("failed", [message]),
  };
}
