// Invoices: the organization's own invoices to its customers. #/invoices
// lists them (filters of listInvoices) and creates a draft (a customer,
// lines, currency, dates); #/invoices/<id> is one invoice with the moves its
// state allows (submit, send, approve, return, mark settled, undo the
// allocations), kept current by invoice.updated messages.

import { ApiError, get, orgPath, post } from "../api.js";
import { busy, date, dateTime, empty, formError, h, messageOf, money, status } from "../ui.js";
import { filteredList } from "../list.js";

export const title = "Invoices";
// The bills page's panels, filters, grids and upload lists, then its own.
export const styles = ["bills", "invoices"];

const STATE_TEXT = { awaiting_approval: "awaiting approval", finalized: "settled" };

// The moves, by the state they lead to from a given state.
const MOVES = {
  draft: [
    { to: "awaiting_approval", action: "submit", label: "Submit for approval", anyone: true },
    { to: "sent", action: "send", label: "Send to the customer" },
  ],
  awaiting_approval: [
    { to: "sent", action: "approve", label: "Approve and send" },
    { to: "draft", action: "return", label: "Return to draft" },
  ],
  sent: [{ to: "finalized", action: "finalize", label: "Mark as settled outside Strongroom" }],
  paid: [{ to: "sent", action: "deallocate", label: "Undo the payments allocated" }],
};
const NEXT_TEXT = {
  draft: "A draft: send it to the customer, or submit it for approval by an owner or admin.",
  awaiting_approval: "Waiting for an owner or admin to approve it, or return it to draft.",
  sent: "Sent to the customer. It is paid when crypto deposits are allocated to it; mark it settled if it was paid another way.",
  paid: "Paid by the deposits allocated to it.",
  finalized: "Settled. Nothing more to do.",
};

export async function show(ctx) {
  ctx.liveStatus(ctx.view.querySelector("#live"));
  if (ctx.params[0]) await showInvoice(ctx, ctx.params[0]);
  else await showList(ctx);
}

function invoiceState(s) {
  const b = status(s);
  if (STATE_TEXT[s]) b.textContent = STATE_TEXT[s];
  return b;
}

function overdue(inv) {
  return inv.is_overdue ? h("span", { class: "badge overdue" }, "Overdue") : "";
}

function today() {
  return new Date().toISOString().slice(0, 10);
}

function inDays(n) {
  return new Date(Date.now() + n * 86400000).toISOString().slice(0, 10);
}

// ---------------------------------------------------------------- the list

async function showList(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  $("invoices-list-view").hidden = false;
  let contacts = [];

  const fillContacts = (chosen) => {
    const pick = $("invoice-customer");
    pick.replaceChildren(h("option", { value: "" }, contacts.length ? "Choose a customer" : "Add a customer below first"),
      ...contacts.map((c) => h("option", { value: c.id }, c.company_name)));
    if (chosen) pick.value = chosen;
    const filter = $("invoices-customer");
    const was = filter.value;
    filter.replaceChildren(h("option", { value: "" }, "Any customer"), ...contacts.map((c) => h("option", { value: c.id }, c.company_name)));
    filter.value = was;
  };
  const loadContacts = async (chosen) => {
    const all = [];
    let next = null;
    do {
      const page = await get(orgPath(ctx.org, "/billing-contacts?limit=100" + (next ? "&cursor=" + encodeURIComponent(next) : "")));
      all.push(...(page.data || []));
      next = page.has_more ? page.next_cursor : null;
    } while (next && all.length < 1000);
    contacts = all;
    fillContacts(chosen);
  };

  const row = (inv) => h("tr", { "data-invoice": inv.id },
    h("th", { scope: "row" }, h("a", { href: "#/invoices/" + encodeURIComponent(inv.id) }, (inv.billing_contact && inv.billing_contact.company_name) || "Customer")),
    h("td", {}, date(inv.issue_date)),
    h("td", {}, date(inv.due_date), inv.is_overdue ? [" ", overdue(inv)] : null),
    h("td", { class: "num" }, money(inv.due_amount, inv.currency)),
    h("td", {}, invoiceState(inv.state)));

  const { load } = filteredList(ctx, {
    prefix: "invoices",
    path: (q) => orgPath(ctx.org, "/invoices?" + q.toString()),
    put: (items, append) => {
      const body = $("invoices-rows");
      if (!append) body.replaceChildren();
      body.append(...items.map(row));
    },
    fields: ["state", "billing_contact_id", "overdue"],
  });
  ctx.on("invoice.updated", ctx.debounce(() => load(false)));

  // A new invoice: its lines are rows of inputs named line-<field>.
  const lines = $("invoice-lines");
  let lineCount = 0;
  const addLine = () => {
    lineCount++;
    const n = lineCount;
    const cell = (field, label, attrs = {}) => h("td", { class: field === "description" ? "desc" : "num" },
      h("label", { for: `invoice-line-${n}-${field}`, class: "visually-hidden" }, label + ", line " + n),
      h("input", { id: `invoice-line-${n}-${field}`, "data-line-field": field, ...attrs }));
    const tr = h("tr", { "data-line": String(n) },
      cell("description", "Description", { maxlength: "500" }),
      cell("price", "Unit price", { inputmode: "decimal" }),
      cell("quantity", "Quantity", { inputmode: "decimal", value: "1" }),
      cell("tax_percentage", "Tax percentage", { inputmode: "decimal", value: "0" }),
      h("td", {}, h("button", { type: "button", class: "link", on: { click: () => {
        if (lines.children.length > 1) tr.remove();
      } } }, "Remove line " + n)));
    lines.append(tr);
    return tr;
  };
  addLine();
  $("invoice-add-line").addEventListener("click", () => addLine().querySelector("input").focus());
  $("invoice-issue").value = today();
  $("invoice-due").value = inDays(30);

  const newForm = $("invoice-new-form");
  newForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(newForm, null);
    const data = new FormData(newForm);
    const body = {
      billing_contact_id: String(data.get("billing_contact_id") || ""),
      currency: String(data.get("currency") || "").trim().toUpperCase(),
      issue_date: String(data.get("issue_date") || ""),
      due_date: String(data.get("due_date") || ""),
      line_items: [...lines.children].map((tr) => {
        const v = (f) => tr.querySelector(`[data-line-field="${f}"]`).value.trim();
        return { description: v("description"), price: v("price"), quantity: v("quantity"), tax_percentage: v("tax_percentage") };
      }),
    };
    const comments = String(data.get("comments") || "").trim();
    if (comments) body.comments = comments;
    if (!body.billing_contact_id) {
      formError(newForm, new ApiError(0, "incomplete", "Choose the customer, or add one below."));
      return;
    }
    await busy($("invoice-create"), async () => {
      try {
        const inv = await post(orgPath(ctx.org, "/invoices"), body);
        ctx.go("#/invoices/" + encodeURIComponent(inv.id));
      } catch (err) {
        formError(newForm, err);
      }
    });
  });

  const customerForm = $("customer-new-form");
  customerForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(customerForm, null);
    const name = $("customer-name").value.trim();
    const email = $("customer-email").value.trim();
    await busy($("customer-create"), async () => {
      try {
        const c = await post(orgPath(ctx.org, "/billing-contacts"), email ? { company_name: name, emails: [email] } : { company_name: name });
        customerForm.reset();
        await loadContacts(c.id);
        $("invoice-customer").focus();
      } catch (err) {
        formError(customerForm, err);
      }
    });
  });

  try {
    await loadContacts();
  } catch (err) {
    ctx.error(err);
  }
  await load(false);
}

// ---------------------------------------------------------------- one invoice

async function showInvoice(ctx, id) {
  const $ = (x) => ctx.view.querySelector("#" + x);
  $("invoices-title").textContent = "Invoice";
  document.title = "Invoice · Strongroom";
  $("invoice-view").hidden = false;
  const path = orgPath(ctx.org, "/invoices/" + encodeURIComponent(id));
  const manager = ctx.role === "owner" || ctx.role === "admin";
  let inv = null;

  const moveError = (err) => {
    const el = $("invoice-move-error");
    el.textContent = err ? messageOf(err) : "";
    el.hidden = !err;
  };

  const render = () => {
    $("invoice-loading").hidden = true;
    $("invoice-body").hidden = false;
    const c = inv.billing_contact || {};
    $("invoice-customer-name").textContent = (c.company_name || "Customer") + (c.deleted_at ? " (deleted customer)" : "");
    $("invoice-state").replaceChildren(invoiceState(inv.state));
    $("invoice-overdue").replaceChildren(overdue(inv));
    $("invoice-dates").textContent = "Issued " + date(inv.issue_date) + ", due " + date(inv.due_date) + ".";
    $("invoice-line-rows").replaceChildren(...(inv.line_items || []).map((l) => h("tr", {},
      h("td", {}, l.description),
      h("td", { class: "num" }, money(l.price, inv.currency)),
      h("td", { class: "num" }, l.quantity),
      h("td", { class: "num" }, l.tax_percentage + " %"),
      h("td", { class: "num" }, money(l.total, inv.currency)))));
    $("invoice-due-amount").replaceChildren(money(inv.due_amount, inv.currency));
    const accepted = $("invoice-accepted");
    accepted.hidden = !inv.accepted_amount;
    accepted.replaceChildren(...(inv.accepted_amount ? ["Paid by allocations: ", money(inv.accepted_amount, inv.currency),
      inv.completed_at ? " on " + dateTime(inv.completed_at) : ""] : []));
    const comments = $("invoice-comments-shown");
    comments.hidden = !inv.comments;
    comments.textContent = inv.comments ? "Note to the customer: " + inv.comments : "";

    const valid = new Set(inv.next_valid_states || []);
    const moves = (MOVES[inv.state] || []).filter((m) => valid.has(m.to) && (m.anyone || manager));
    $("invoice-next").textContent = NEXT_TEXT[inv.state] || "";
    $("invoice-moves").replaceChildren(...moves.map((m, i) => h("button", { type: "button", class: i === 0 ? "primary" : null,
      "data-action": m.action, on: { click: (e) => busy(e.currentTarget, async () => {
        moveError(null);
        try {
          inv = await post(path + "/" + m.action);
          render();
        } catch (err) {
          moveError(err);
        }
      }) } }, m.label)));
  };

  ctx.on("invoice.updated", (msg) => {
    if (msg.data && msg.data.id === id) {
      inv = msg.data;
      render();
    }
  });

  try {
    inv = await get(path);
  } catch (err) {
    $("invoice-loading").hidden = true;
    if (err.status === 404) {
      $("invoice-view").append(empty("No such invoice", "This invoice does not exist or is not your organization's.",
        h("a", { href: "#/invoices" }, "See all invoices")));
      return;
    }
    throw err;
  }
  if (!ctx.signal.aborted) render();
}
