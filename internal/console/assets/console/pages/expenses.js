// Expenses: what people spent for the organization. #/expenses lists them
// (with the filters listExpenses takes) and records a new one; #/expenses/<id>
// is one expense: its fields to complete, its receipts (uploaded with
// progress), and the moves its status and the person's role allow.

import { del, get, orgPath, patch, post, upload } from "../api.js";
import { busy, date, empty, formError, h, messageOf, money, status, uploadRow } from "../ui.js";
import { filteredList } from "../list.js";

export const title = "Expenses";
// The bills page's panels, filters, grids and upload lists, then its own.
export const styles = ["bills", "expenses"];

const MAX_BYTES = 20 * 1024 * 1024;

const CATEGORIES = {
  accommodation: "Accommodation", atm_withdrawal: "Cash withdrawal", finance: "Finance", logistics: "Logistics",
  marketing: "Marketing", meals: "Meals", miscellaneous: "Miscellaneous", office: "Office", professional: "Professional services",
  retail: "Retail", technology: "Technology", transport: "Transport", utilities: "Utilities",
};
const STATUS_TEXT = { working: "being completed", paid: "paid back" };
const EDITABLE_STATUSES = new Set(["draft", "pending", "working", "rejected"]);
const FIELDS = ["category", "business_name", "business_tax_id", "receipt_number", "transaction_date",
  "bill_amount", "bill_currency", "local_amount", "local_currency", "description"];

export async function show(ctx) {
  ctx.liveStatus(ctx.view.querySelector("#live"));
  for (const select of ctx.view.querySelectorAll("select[data-categories]")) {
    select.append(h("option", { value: "" }, "No category yet"),
      ...Object.entries(CATEGORIES).map(([v, label]) => h("option", { value: v }, label)));
  }
  if (ctx.params[0]) await showExpense(ctx, ctx.params[0]);
  else await showList(ctx);
}

function expenseStatus(s) {
  const b = status(s);
  if (STATUS_TEXT[s]) b.textContent = STATUS_TEXT[s];
  return b;
}

function personName(p) {
  return p ? [p.first_name, p.last_name].filter(Boolean).join(" ") : "";
}

// fieldsOf reads the form's fields: trimmed text, "" as null, codes in capitals.
function fieldsOf(form, names) {
  const data = new FormData(form);
  const out = {};
  for (const n of names) {
    if (!data.has(n)) continue;
    let v = String(data.get(n) || "");
    if (n !== "description") v = v.trim();
    if (n.endsWith("_currency")) v = v.toUpperCase();
    out[n] = v === "" ? null : v;
  }
  return out;
}

// ---------------------------------------------------------------- the list

async function showList(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  $("expenses-list-view").hidden = false;

  const row = (x) => {
    const totals = (x.totals && x.totals.bill) || [];
    const amount = totals.length ? totals.map((m, i) => [i ? ", " : "", money(m.amount, m.currency)])
      : x.bill_amount && x.bill_currency ? money(x.bill_amount, x.bill_currency) : "—";
    return h("tr", { "data-expense": x.id },
      h("th", { scope: "row" }, h("a", { href: "#/expenses/" + encodeURIComponent(x.id) }, x.business_name || x.description || "Expense without a merchant")),
      h("td", {}, x.transaction_date ? date(x.transaction_date) : "—"),
      h("td", {}, x.category ? CATEGORIES[x.category] || x.category : "—"),
      h("td", {}, personName(x.created_by)),
      h("td", { class: "num" }, amount),
      h("td", {}, expenseStatus(x.status)));
  };

  const { load } = filteredList(ctx, {
    prefix: "expenses",
    path: (q) => orgPath(ctx.org, "/expenses?" + q.toString()),
    put: (items, append) => {
      const body = $("expenses-rows");
      if (!append) body.replaceChildren();
      body.append(...items.map(row));
    },
    fields: ["search", "status", "transaction_date_from", "transaction_date_to"],
  });
  ctx.on("card.updated", ctx.debounce(() => load(false))); // a card purchase files an expense

  const newForm = $("expense-new-form");
  newForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(newForm, null);
    const body = fieldsOf(newForm, FIELDS);
    for (const k of Object.keys(body)) if (body[k] === null) delete body[k];
    await busy($("expense-create"), async () => {
      try {
        const x = await post(orgPath(ctx.org, "/expenses"), body);
        ctx.go("#/expenses/" + encodeURIComponent(x.id));
      } catch (err) {
        formError(newForm, err);
      }
    });
  });

  await load(false);
}

// ---------------------------------------------------------------- one expense

async function showExpense(ctx, id) {
  const $ = (x) => ctx.view.querySelector("#" + x);
  $("expenses-title").textContent = "Expense";
  document.title = "Expense · Strongroom";
  $("expense-view").hidden = false;
  const path = "/api/v1/expenses/" + encodeURIComponent(id);
  const form = $("expense-form");
  const manager = ctx.role === "owner" || ctx.role === "admin";
  let expense = null;

  const render = () => {
    const x = expense;
    const editable = EDITABLE_STATUSES.has(x.status);
    const mine = x.created_by && ctx.me.user && x.created_by.id === ctx.me.user.id;
    $("expense-loading").hidden = true;
    $("expense-body").hidden = false;
    $("expense-business").textContent = x.business_name || "Expense without a merchant";
    $("expense-who").textContent = personName(x.created_by) ? "by " + personName(x.created_by) : "";
    $("expense-status").replaceChildren(expenseStatus(x.status));
    const rejected = $("expense-rejected");
    rejected.hidden = x.status !== "rejected";
    rejected.textContent = x.status === "rejected" ? "Rejected" + (x.rejection_reason ? ": " + x.rejection_reason : ".") + " Correct it and submit it again." : "";

    for (const n of FIELDS) {
      const input = form.elements.namedItem(n);
      if (input) input.value = x[n] == null ? "" : String(x[n]);
    }
    $("expense-fields").disabled = !editable;
    $("expense-save").hidden = !editable;
    $("expense-locked").hidden = editable;

    const totals = [...((x.totals && x.totals.bill) || [])];
    $("expense-totals").replaceChildren(...(totals.length ? totals.map((m) => h("li", {}, money(m.amount, m.currency)))
      : [h("li", { class: "muted" }, "No amount yet: enter the amount on the bill above.")]),
    ...((x.totals && x.totals.local) || []).map((m) => h("li", { class: "muted" }, "In your currency: ", money(m.amount, m.currency))));

    // Receipts.
    const receipts = x.receipts || [];
    $("expense-receipts-empty").hidden = receipts.length > 0;
    $("expense-receipts").replaceChildren(...receipts.map((r) => h("li", { class: "receipt" },
      r.thumbnail_url ? h("img", { src: r.thumbnail_url, alt: "Receipt " + r.file_name, class: "thumb" }) : null,
      h("a", { href: r.url, download: r.file_name }, r.file_name),
      h("span", { class: "muted" }, " " + sizeOf(r.file_size)),
      editable ? h("button", { type: "button", class: "link", on: { click: (e) => removeReceipt(e.currentTarget, r) } }, "Remove " + r.file_name) : null)));
    $("expense-receipt-add").hidden = !editable;

    // Moves.
    const moves = [];
    let next = "";
    if (EDITABLE_STATUSES.has(x.status)) {
      if (mine) {
        moves.push(moveButton("Submit for approval", "submit", true));
        next = "When the category, date and a receipt are in, submit it: an owner or admin approves it.";
      } else {
        next = "Only " + (personName(x.created_by) || "the person who recorded it") + " can submit it.";
      }
      if (x.status === "draft" && mine) moves.push(h("button", { type: "button", class: "danger", on: { click: (e) => removeDraft(e.currentTarget) } }, "Delete this draft"));
    } else if (x.status === "submitted") {
      next = manager ? "Approve it or reject it with a reason." : "Waiting for an owner or admin to approve it.";
      if (manager) {
        moves.push(moveButton("Approve", "approve", true));
        moves.push(h("button", { type: "button", on: { click: () => { $("expense-reject-box").hidden = false; $("expense-reject-reason").focus(); } } }, "Reject…"));
      }
    } else if (x.status === "approved") {
      next = manager ? "Once it is paid back, mark it paid." : "Approved: it will be paid back.";
      if (manager) moves.push(moveButton("Mark as paid back", "mark-paid", true));
    } else if (x.status === "paid") {
      next = "Paid back. Nothing more to do.";
    }
    $("expense-next").textContent = next;
    $("expense-moves").replaceChildren(...moves);
    if (x.status !== "submitted") $("expense-reject-box").hidden = true;
  };

  const moveError = (err) => {
    const el = $("expense-move-error");
    el.textContent = err ? messageOf(err) : "";
    el.hidden = !err;
  };
  const moveButton = (label, action, primary) => h("button", { type: "button", class: primary ? "primary" : null, on: {
    click: (e) => busy(e.currentTarget, async () => {
      moveError(null);
      try {
        expense = await post(path + "/" + action);
        render();
      } catch (err) {
        moveError(err);
      }
    }),
  } }, label);

  $("expense-reject-no").addEventListener("click", () => { $("expense-reject-box").hidden = true; });
  $("expense-reject-yes").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    moveError(null);
    try {
      const reason = $("expense-reject-reason").value.trim();
      expense = await post(path + "/reject", reason ? { reason } : {});
      render();
    } catch (err) {
      moveError(err);
    }
  }));

  const removeDraft = (button) => busy(button, async () => {
    moveError(null);
    try {
      await del(path);
      ctx.go("#/expenses");
    } catch (err) {
      moveError(err);
    }
  });

  const removeReceipt = (button, r) => busy(button, async () => {
    moveError(null);
    try {
      expense = await del(path + "/receipts/" + encodeURIComponent(r.id));
      render();
    } catch (err) {
      moveError(err);
    }
  });

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(form, null);
    $("expense-saved").textContent = "";
    const values = fieldsOf(form, FIELDS);
    const body = {};
    for (const [k, v] of Object.entries(values)) if (v !== (expense[k] == null ? null : String(expense[k]))) body[k] = v;
    // An amount goes with its currency.
    for (const [a, c] of [["bill_amount", "bill_currency"], ["local_amount", "local_currency"]]) {
      if (a in body || c in body) {
        body[a] = values[a];
        body[c] = values[c];
      }
    }
    if (Object.keys(body).length === 0) {
      $("expense-saved").textContent = "Nothing to save: no field was changed.";
      return;
    }
    await busy($("expense-save"), async () => {
      try {
        expense = await patch(path, body);
        render();
        $("expense-saved").textContent = "Saved.";
      } catch (err) {
        formError(form, err);
      }
    });
  });

  // Receipts: the file is created, its bytes PUT to its upload URL (with
  // progress), then attached.
  const list = $("expense-uploads");
  const addReceipt = async (file) => {
    const row = uploadRow(list, file);
    const fail = (message) => row.fail("Not added: " + message);
    if (file.size > MAX_BYTES) return fail("this file is larger than 20 MB, the most a receipt can be.");
    const mime = mimeOf(file);
    if (!mime) return fail("a receipt is a PDF, PNG or JPEG file.");
    try {
      const created = await post(orgPath(ctx.org, "/files"), { file_name: file.name, mime_type: mime, size: file.size });
      await upload("PUT", created.upload_url, file, row.progress);
      expense = await post(path + "/receipts", { file_id: created.id });
      row.done("Added.");
      render();
    } catch (err) {
      fail(messageOf(err));
    }
  };
  const input = $("expense-receipt-file");
  input.addEventListener("change", () => {
    for (const f of Array.from(input.files || [])) addReceipt(f);
    input.value = "";
  });

  try {
    expense = await get(path);
  } catch (err) {
    $("expense-loading").hidden = true;
    if (err.status === 404) {
      $("expense-view").append(empty("No such expense", "This expense does not exist, or it is not one you can see.",
        h("a", { href: "#/expenses" }, "See all expenses")));
      return;
    }
    throw err;
  }
  if (!ctx.signal.aborted) render();
}

function mimeOf(file) {
  if (["application/pdf", "image/png", "image/jpeg"].includes(file.type)) return file.type;
  const ext = file.name.toLowerCase().split(".").pop();
  return { pdf: "application/pdf", png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg" }[ext] || "";
}

function sizeOf(n) {
  if (n >= 1024 * 1024) return (n / (1024 * 1024)).toFixed(1) + " MB";
  if (n >= 1024) return Math.round(n / 1024) + " KB";
  return n + " bytes";
}
