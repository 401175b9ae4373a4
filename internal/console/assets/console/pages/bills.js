// Bills: the supplier invoices to check and pay. #/bills lists them, with
// an upload area (drop files on it, or choose them with the file input) and
// the filters listBills takes; #/bills/<id> is one bill: its extraction
// shown live, its fields to check and correct (those the text rules read are
// marked), the original document, and paying it (a payment that then waits
// for an owner's or admin's approval on the payments page).
//
// Everything read from an invoice (the supplier's name above all) is put on
// the page as text only.

import { ApiError, download, get, idempotencyKey, orgPath, patch, post, upload } from "../api.js";
import { formatMoney } from "../money.js";
import { busy, date, dateTime, empty, formError, h, messageOf, money, status, uploadRow } from "../ui.js";
import { filteredList } from "../list.js";

export const title = "Bills";
export const styles = true;

// The most an upload may carry (uploadBill answers 413 beyond it).
const MAX_BYTES = 20 * 1024 * 1024;

const FROM_TEXT_MARK = "Read from the page text — check it";

// The bill's editable fields, in the order a person checks them against
// the document. kind: text (default), date, amount, currency, code (capitals).
const INVOICE_FIELDS = [
  { name: "supplier_name", label: "Supplier", max: 140 },
  { name: "supplier_tax_id", label: "Supplier's VAT or tax number", max: 140 },
  { name: "bill_number", label: "Invoice number", max: 140 },
  { name: "issue_date", label: "Issue date", kind: "date" },
  { name: "due_date", label: "Due date", kind: "date" },
  { name: "currency", label: "Currency", kind: "currency" },
  { name: "amount", label: "Amount to pay", kind: "amount" },
  { name: "payment_reference", label: "Payment reference", max: 140, hint: "The reference the supplier asks you to quote." },
];
const BANK_FIELDS = [
  { name: "account_holder_name", label: "Account holder", max: 140 },
  { name: "iban", label: "IBAN", kind: "code", max: 42 },
  { name: "swift_code", label: "BIC (SWIFT code)", kind: "code", max: 11 },
  { name: "account_number", label: "Account number", kind: "code", max: 34 },
  { name: "sort_code", label: "Sort code", kind: "code", max: 8 },
  { name: "aba_code", label: "ABA routing number", kind: "code", max: 9 },
];
const CODE_FIELDS = [
  { name: "bank_name", label: "Bank name", max: 140 },
  { name: "bank_code", label: "Bank code", max: 140 },
  { name: "branch_code", label: "Branch code", max: 140 },
  { name: "bank_country_alpha2", label: "Bank country (2 letters)", kind: "code", max: 2 },
  { name: "bsb_code", label: "BSB code", kind: "code", max: 6 },
  { name: "ifsc_code", label: "IFSC code", kind: "code", max: 11 },
  { name: "cnaps", label: "CNAPS code", kind: "code", max: 12 },
];
const EDITABLE = [...INVOICE_FIELDS, ...BANK_FIELDS, ...CODE_FIELDS];
// Changing these makes the payment contact made from the bill stale.
const CONTACT_FIELDS = new Set(["supplier_name", "currency", ...BANK_FIELDS.map((f) => f.name), ...CODE_FIELDS.map((f) => f.name)]);

const STATUS_TEXT = {
  extracting: "being read",
  extracted: "to pay",
  payment_requested: "payment requested",
  cancelled: "cancelled",
};
const FORMAT_TEXT = {
  ubl: "a UBL e-invoice",
  cii: "a CII e-invoice",
  facturx: "the e-invoice inside the PDF (Factur-X / ZUGFeRD)",
  zugferd1: "a ZUGFeRD 1.0 e-invoice",
  pdf_text: "the text of the PDF's page, by layout rules",
};
const MEANS_TEXT = {
  credit_transfer: "Bank transfer",
  direct_debit: "Direct debit (the supplier collects it)",
  card: "Card",
  other: "Other means",
};

export async function show(ctx) {
  ctx.liveStatus(ctx.view.querySelector("#live"));
  const id = ctx.params[0];
  if (id) await showBill(ctx, id);
  else await showList(ctx);
}

// billStatus is the bill's status as a badge, worded for people.
function billStatus(s) {
  const b = status(s);
  b.textContent = STATUS_TEXT[s] || String(s).replaceAll("_", " ");
  return b;
}

function newer(a, b) {
  return !a || Date.parse(b.updated_at) >= Date.parse(a.updated_at);
}

// ---------------------------------------------------------------- the list

async function showList(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  $("bills-list-view").hidden = false;
  const rowsById = new Map();

  const row = (b) => {
    const name = b.supplier_name || (b.status === "extracting" ? "Reading the invoice…" : "Supplier not read yet");
    const notes = [];
    if (b.document_type === "credit_note") notes.push(h("span", { class: "badge note" }, "Credit note, not payable"));
    const toCheck = (b.extraction && b.extraction.from_text) || [];
    if (toCheck.length && b.status !== "cancelled") {
      notes.push(h("span", { class: "badge check" }, toCheck.length === 1 ? "1 field to check" : toCheck.length + " fields to check"));
    }
    const tr = h("tr", { "data-bill": b.id, "data-status": b.status },
      h("th", { scope: "row" },
        h("a", { href: "#/bills/" + encodeURIComponent(b.id), class: b.supplier_name ? "supplier" : "supplier unknown" }, name),
        notes.length ? h("span", { class: "row-notes" }, notes) : null),
      h("td", { "data-field": "bill_number" }, b.bill_number || "—"),
      h("td", { "data-field": "due_date" }, b.due_date ? date(b.due_date) : "—"),
      h("td", { class: "num", "data-field": "amount" }, b.amount && b.currency ? money(b.amount, b.currency) : "—"),
      h("td", { "data-field": "status" }, billStatus(b.status)));
    return tr;
  };

  const list = filteredList(ctx, {
    prefix: "bills",
    path: (q) => orgPath(ctx.org, "/bills?" + q.toString()),
    put: (bills, append) => {
      const body = $("bills-rows");
      if (!append) {
        rowsById.clear();
        body.replaceChildren();
      }
      for (const b of bills) {
        const tr = row(b);
        rowsById.set(b.id, tr);
        body.append(tr);
      }
    },
    fields: ["search", "status", "due_date_from", "due_date_to"],
    limit: 50,
  });
  const load = list.load;
  const refresh = ctx.debounce(() => load(false));

  // A bill shown is updated in place; a new one (or a change that may move
  // it in or out of the filters) reloads the first page.
  ctx.on("bill.event_appended", (msg) => {
    const b = msg.data && msg.data.bill;
    const tr = b && rowsById.get(b.id);
    if (tr && !list.filters.status) {
      const fresh = row(b);
      tr.replaceWith(fresh);
      rowsById.set(b.id, fresh);
    } else {
      refresh();
    }
  });
  ctx.on("payment.updated", (msg) => {
    if (msg.data && msg.data.bill_id) refresh();
  });


  setUpUploads(ctx, $, () => load(false));
  await load(false);
}

// setUpUploads wires the drop zone and the file input: each file is sent
// with uploadBill, with its own progress bar and outcome.
function setUpUploads(ctx, $, reload) {
  const zone = $("bills-drop");
  const input = $("bills-file");
  const list = $("bills-uploads");

  const uploadOne = async (file) => {
    const row = uploadRow(list, file);
    const fail = row.fail;
    if (file.size > MAX_BYTES) {
      fail("Not uploaded: this file is larger than 20 MB, the most a bill can be.");
      return;
    }
    if (file.size === 0) {
      fail("Not uploaded: this file is empty.");
      return;
    }
    const body = new FormData();
    body.append("file", file, file.name);
    try {
      const bill = await upload("POST", orgPath(ctx.org, "/bills/upload"), body, row.progress);
      row.li.dataset.bill = bill.id;
      row.done("Uploaded, being read. ", h("a", { href: "#/bills/" + encodeURIComponent(bill.id) }, "Check the bill"));
      reload();
    } catch (err) {
      fail("Not uploaded: " + messageOf(err));
    }
  };
  const uploadAll = (files) => {
    for (const f of Array.from(files || [])) uploadOne(f);
  };

  input.addEventListener("change", () => {
    uploadAll(input.files);
    input.value = "";
  });
  const over = (e) => {
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
    zone.dataset.state = "over";
  };
  zone.addEventListener("dragenter", over);
  zone.addEventListener("dragover", over);
  zone.addEventListener("dragleave", (e) => {
    if (!zone.contains(e.relatedTarget)) zone.dataset.state = "idle";
  });
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.dataset.state = "idle";
    uploadAll(e.dataTransfer && e.dataTransfer.files);
  });
  // A file dropped next to the zone must not make the browser leave the
  // console to open it.
  for (const type of ["dragover", "drop"]) {
    window.addEventListener(type, (e) => {
      const files = e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
      if (files && !zone.contains(e.target)) e.preventDefault();
    }, { signal: ctx.signal });
  }
}

// ---------------------------------------------------------------- one bill

async function showBill(ctx, id) {
  const $ = (x) => ctx.view.querySelector("#" + x);
  $("bills-title").textContent = "Check a bill";
  document.title = "Check a bill · Strongroom";
  $("bill-view").hidden = false;
  const form = $("bill-form");
  const inputs = new Map(); // field name → input
  const shown = new Map(); // field name → the value last put in its input
  let bill = null;
  let quote = null;
  let executeKey = null;

  // The inputs, made once.
  const field = (f) => {
    const inputId = "bill-f-" + f.name;
    const attrs = { id: inputId, name: f.name, autocomplete: "off" };
    if (f.kind === "date") attrs.type = "date";
    else attrs.type = "text";
    if (f.max) attrs.maxlength = String(f.max);
    if (f.kind === "amount") attrs.inputmode = "decimal";
    if (f.kind === "currency") {
      attrs.maxlength = "3";
      attrs.class = "short code";
    }
    if (f.kind === "code") attrs.class = "code";
    const input = h("input", attrs);
    inputs.set(f.name, input);
    const hint = f.hint ? h("p", { class: "hint", id: inputId + "-hint" }, f.hint) : null;
    return h("div", { class: "field", "data-field": f.name },
      h("div", { class: "label-row" }, h("label", { for: inputId }, f.label)),
      input, hint);
  };
  $("bill-grid-invoice").append(...INVOICE_FIELDS.map(field));
  $("bill-grid-bank").append(...BANK_FIELDS.map(field));
  $("bill-grid-codes").append(...CODE_FIELDS.map(field));

  const markFor = (name) => h("span", { class: "check-mark", id: "bill-mark-" + name }, FROM_TEXT_MARK);

  const render = () => {
    const b = bill;
    const fromText = new Set((b.extraction && b.extraction.from_text) || []);
    const locked = b.status === "payment_requested" || b.status === "cancelled";

    $("bill-loading").hidden = true;
    $("bill-body").hidden = false;
    $("bill-supplier").textContent = b.supplier_name || (b.status === "extracting" ? "Reading the invoice…" : "Supplier not read yet");
    $("bill-status").replaceChildren(billStatus(b.status));
    $("bill-doctype").replaceChildren(b.document_type === "credit_note" ? h("span", { class: "badge note" }, "Credit note, not payable") : "");

    // The extraction, as it stands.
    const ex = $("bill-extraction");
    ex.dataset.state = b.status === "extracting" ? "running" : b.extraction_failed_at ? "failed" : "done";
    if (b.status === "extracting") {
      ex.replaceChildren(h("p", {}, h("strong", {}, "Reading the invoice…"),
        " The fields fill in here as soon as it is read; there is no need to reload."),
      h("progress", { "aria-label": "Reading the invoice" }));
    } else if (b.extraction_failed_at) {
      ex.replaceChildren(h("p", {}, h("strong", {}, "The document could not be read."),
        " It is a photo or a scan without text. Fill in the fields from the original document below."),
      h("p", { class: "muted" }, "Tried " + dateTime(b.extraction_failed_at) + "."));
    } else {
      const format = b.extraction && b.extraction.format;
      const how = FORMAT_TEXT[format] || "the document";
      const lines = [h("p", {}, h("strong", {}, "Read from " + how + "."))];
      if (fromText.size) {
        lines.push(h("p", {}, fromText.size === 1 ? "1 field was read from the page text: it is marked below. Check it against the document before paying."
          : fromText.size + " fields were read from the page text: they are marked below. Check them against the document before paying."));
      } else if (format) {
        lines.push(h("p", { class: "muted" }, "Every field came from the e-invoice's data. An empty field is one to read off the document."));
      }
      ex.replaceChildren(...lines);
    }

    $("bill-credit-note").hidden = b.document_type !== "credit_note";
    $("bill-direct-debit").hidden = b.payment_means !== "direct_debit";

    // Read-only facts, marked when the text rules gave them.
    for (const [name, text] of [["document_type", b.document_type === "credit_note" ? "Credit note" : "Invoice"],
      ["payment_means", MEANS_TEXT[b.payment_means] || "Not stated"]]) {
      const el = $("bill-ro-" + name);
      el.replaceChildren(h("span", { class: "ro-value" }, text));
      if (fromText.has(name)) el.append(" ", markFor(name));
    }

    // The inputs: a value the person is changing is left alone.
    for (const f of EDITABLE) {
      const input = inputs.get(f.name);
      const value = b[f.name] == null ? "" : String(b[f.name]);
      if (!shown.has(f.name) || input.value === shown.get(f.name)) input.value = value;
      shown.set(f.name, value);
      const wrap = input.closest(".field");
      const row = wrap.querySelector(".label-row");
      const old = row.querySelector(".check-mark");
      if (old) old.remove();
      const described = [];
      const hint = wrap.querySelector(".hint");
      if (hint) described.push(hint.id);
      if (fromText.has(f.name)) {
        row.append(markFor(f.name));
        described.unshift("bill-mark-" + f.name);
        wrap.dataset.check = "true";
      } else {
        delete wrap.dataset.check;
      }
      if (described.length) input.setAttribute("aria-describedby", described.join(" "));
      else input.removeAttribute("aria-describedby");
    }
    if (CODE_FIELDS.some((f) => fromText.has(f.name) || b[f.name])) $("bill-more-codes").open = true;

    $("bill-fields").disabled = locked;
    $("bill-save").disabled = locked;
    const lockNote = $("bill-locked");
    lockNote.hidden = !locked;
    lockNote.textContent = b.status === "cancelled" ? "This bill is cancelled: it can no longer be changed or paid."
      : b.status === "payment_requested" ? "A payment for this bill is under way, so its details cannot change. If that payment is rejected or cancelled, the bill can be changed and paid again." : "";

    // Paying.
    const payable = b.status === "extracted" && b.document_type !== "credit_note";
    $("bill-pay").hidden = !payable;
    if (!payable) hideQuote();
    $("bill-payment").hidden = !(b.status === "payment_requested" && b.fiat_outgoing_id);
    if (b.fiat_outgoing_id) $("bill-payment-link").href = "#/payments/" + encodeURIComponent(b.fiat_outgoing_id);
    $("bill-cancel-box").hidden = !(b.status === "extracting" || b.status === "extracted");
    const desc = $("bill-pay-description");
    if (!desc.value) desc.value = (b.payment_reference || b.bill_number || "").slice(0, 35);
    fillSources();
  };

  const apply = (b) => {
    if (!newer(bill, b)) return;
    bill = b;
    render();
  };

  const reload = async () => {
    try {
      apply(await get("/api/v1/bills/" + encodeURIComponent(id)));
    } catch (err) {
      ctx.error(err);
    }
  };

  ctx.on("bill.event_appended", (msg) => {
    if (msg.data && msg.data.bill_id === id && msg.data.bill) apply(msg.data.bill);
  });
  ctx.on("payment.updated", (msg) => {
    if (msg.data && msg.data.bill_id === id) reload();
  });

  // Saving: only the fields changed are sent; an emptied field is cleared.
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(form, null);
    $("bill-saved").textContent = "";
    const body = changes();
    if (!body) {
      $("bill-saved").textContent = "Nothing to save: no field was changed.";
      return;
    }
    await busy($("bill-save"), async () => {
      try {
        const saved = await patch("/api/v1/bills/" + encodeURIComponent(id), body);
        for (const name of Object.keys(body)) shown.delete(name); // take the saved value
        bill = saved;
        render();
        $("bill-saved").textContent = "Saved.";
      } catch (err) {
        formError(form, err);
      }
    });
  });

  const normal = (f, v) => {
    v = v.trim();
    if (f.kind === "currency" || f.kind === "code") v = v.toUpperCase();
    if (f.name === "iban") v = v.replace(/\s+/g, "");
    return v;
  };
  const changes = () => {
    const body = {};
    for (const f of EDITABLE) {
      const v = normal(f, inputs.get(f.name).value);
      const was = bill[f.name] == null ? "" : String(bill[f.name]);
      if (v !== was) body[f.name] = v === "" ? null : v;
    }
    if ("amount" in body || "currency" in body) {
      // The amount is read at the currency's precision: send them together.
      const amount = normal(EDITABLE.find((f) => f.name === "amount"), inputs.get("amount").value);
      const currency = normal(EDITABLE.find((f) => f.name === "currency"), inputs.get("currency").value);
      body.amount = amount === "" ? null : amount;
      body.currency = currency === "" ? null : currency;
    }
    if (Object.keys(body).length === 0) return null;
    if (bill.payment_contact_id && Object.keys(body).some((k) => CONTACT_FIELDS.has(k))) {
      body.payment_contact_id = null; // made again from the corrected details when paying
    }
    return body;
  };

  // The original document.
  let file = null;
  let previewURL = "";
  const loadFile = async () => {
    if (!bill.file_id) return null;
    file = await get("/api/v1/files/" + encodeURIComponent(bill.file_id));
    return file;
  };
  $("bill-download").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    const err = $("bill-file-error");
    err.hidden = true;
    try {
      const f = await loadFile();
      if (!f || !f.download_url) throw new ApiError(0, "not_stored", "The document's bytes are not stored yet. Try again in a moment.");
      await download(f.download_url, f.file_name, f.mime_type);
    } catch (x) {
      err.textContent = messageOf(x);
      err.hidden = false;
    }
  }));
  $("bill-preview-open").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    const err = $("bill-file-error");
    err.hidden = true;
    try {
      const f = file && file.download_url ? file : await loadFile();
      const resp = await fetch(f.download_url, { credentials: "omit", cache: "no-store" });
      if (!resp.ok) throw new ApiError(resp.status, "http_" + resp.status, "The image could not be loaded. Try again.");
      previewURL = URL.createObjectURL(await resp.blob());
      $("bill-preview").replaceChildren(h("img", { src: previewURL, alt: "The invoice as uploaded" }));
      $("bill-preview").hidden = false;
      e.currentTarget.hidden = true;
    } catch (x) {
      err.textContent = messageOf(x);
      err.hidden = false;
    }
  }));
  ctx.signal.addEventListener("abort", () => {
    if (previewURL) URL.revokeObjectURL(previewURL);
  });

  // Cancelling.
  $("bill-cancel").addEventListener("click", () => {
    $("bill-cancel-confirm").hidden = false;
    $("bill-cancel").hidden = true;
    $("bill-cancel-no").focus();
  });
  $("bill-cancel-no").addEventListener("click", () => {
    $("bill-cancel-confirm").hidden = true;
    $("bill-cancel").hidden = false;
    $("bill-cancel").focus();
  });
  $("bill-cancel-yes").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    const box = $("bill-cancel-box");
    try {
      bill = await post("/api/v1/bills/" + encodeURIComponent(id) + "/cancel");
      render();
    } catch (err) {
      formError(box, err);
    }
  }));

  // Paying: the payment contact (made from the bill when it has none), a
  // quote delivering exactly the bill's amount, then the payment with the
  // bill's id, which waits for approval.
  let balances = [];
  const fillSources = () => {
    const select = $("bill-pay-source");
    const chosen = select.value;
    const codes = new Set(balances.map((x) => x.currency));
    if (bill && bill.currency) codes.add(bill.currency);
    const sorted = [...codes].sort();
    if (select.options.length === sorted.length && sorted.every((c, i) => select.options[i].value === c)) return;
    select.replaceChildren(...sorted.map((c) => {
      const bal = balances.find((x) => x.currency === c);
      return h("option", { value: c }, bal ? c + " (available " + formatMoney(bal.available, c) + ")" : c);
    }));
    select.value = chosen && codes.has(chosen) ? chosen : bill && bill.currency && codes.has(bill.currency) ? bill.currency : sorted[0] || "";
  };

  const hideQuote = () => {
    quote = null;
    $("bill-quote-box").hidden = true;
    $("bill-pay-form").hidden = false;
  };

  const payForm = $("bill-pay-form");
  payForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    formError(payForm, null);
    formError(form, null);
    if (changes()) {
      formError(payForm, new ApiError(0, "unsaved", "You have changed the bill's details: save them before paying."));
      return;
    }
    const reason = $("bill-pay-reason").value;
    const description = $("bill-pay-description").value.trim();
    if (!reason || !description) {
      formError(payForm, new ApiError(0, "incomplete", !reason ? "Choose the reason for the payment." : "Say what the supplier sees on their statement."));
      return;
    }
    await busy($("bill-quote"), async () => {
      try {
        if (!bill.amount || !bill.currency) {
          throw new ApiError(0, "incomplete", "The bill needs an amount and a currency before it can be paid: fill them in above and save.");
        }
        if (!bill.payment_contact_id) {
          try {
            bill = await post("/api/v1/bills/" + encodeURIComponent(id) + "/payment-contact");
          } catch (err) {
            formError(form, err); // names the bill's missing fields
            throw err;
          }
          render();
        }
        quote = await post("/api/v1/payments/preflight", {
          organization_id: ctx.org,
          rail: "fiat",
          payment_contact_id: bill.payment_contact_id,
          source_currency: $("bill-pay-source").value || bill.currency,
          amount: bill.amount,
          amount_side: "receive",
        });
        executeKey = idempotencyKey();
        const total = sum(quote.source.amount, quote.fee.amount);
        $("bill-quote-receive").replaceChildren(money(quote.destination.amount, quote.destination.currency));
        $("bill-quote-fee").replaceChildren(money(quote.fee.amount, quote.fee.currency));
        $("bill-quote-total").replaceChildren(total && quote.fee.currency === quote.source.currency
          ? money(total, quote.source.currency) : money(quote.source.amount, quote.source.currency));
        $("bill-quote-expiry").textContent = "This price holds until " + dateTime(quote.expires_at) + ".";
        $("bill-quote-box").hidden = false;
        payForm.hidden = true;
        $("bill-execute").focus();
      } catch (err) {
        formError(payForm, err);
      }
    });
  });
  $("bill-quote-cancel").addEventListener("click", () => {
    hideQuote();
    $("bill-quote").focus();
  });
  $("bill-execute").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    const errEl = $("bill-execute-error");
    errEl.hidden = true;
    try {
      const payment = await post("/api/v1/payments/execute", {
        quote_id: quote.id,
        payout_reason: $("bill-pay-reason").value,
        statement_description: $("bill-pay-description").value.trim(),
        bill_id: id,
      }, { headers: { "Idempotency-Key": executeKey } });
      hideQuote();
      await reload();
      $("bill-payment-link").href = "#/payments/" + encodeURIComponent(payment.id);
      $("bill-payment").hidden = false;
      $("bill-payment-link").focus();
    } catch (err) {
      errEl.textContent = messageOf(err);
      errEl.hidden = false;
      if (err.type === "quote_expired" || err.type === "quote_already_used" || err.type === "bill_mismatch") {
        errEl.textContent += " Get a new price to try again.";
      }
    }
  }));

  // Load.
  try {
    bill = await get("/api/v1/bills/" + encodeURIComponent(id));
  } catch (err) {
    $("bill-loading").hidden = true;
    if (err.status === 404) {
      $("bill-view").append(empty("No such bill", "This bill does not exist or is not your organization's.",
        h("a", { href: "#/bills" }, "See all bills")));
      return;
    }
    throw err;
  }
  if (ctx.signal.aborted) return;
  render();
  const isImage = async () => {
    try {
      const f = await loadFile();
      if (f && (f.mime_type === "image/png" || f.mime_type === "image/jpeg")) $("bill-preview-open").hidden = false;
      if (f) $("bill-file-name").textContent = f.file_name;
    } catch {
      // The download button still tries, and says what went wrong.
    }
  };
  const extras = async () => {
    try {
      const [config, bal] = await Promise.all([get(orgPath(ctx.org, "/payments/config")), get(orgPath(ctx.org, "/balances"))]);
      const reasons = $("bill-pay-reason");
      reasons.replaceChildren(h("option", { value: "" }, "Choose a reason"),
        ...(config.payout_reasons || []).map((r) => h("option", { value: r.code }, r.label)));
      balances = bal.data || [];
      fillSources();
    } catch (err) {
      ctx.error(err);
    }
  };
  await Promise.all([isImage(), extras()]);
}

// sum adds two decimal strings exactly (the fee and the amount it is
// charged on), or answers null when they do not read as decimals.
function sum(a, b) {
  const re = /^(\d+)(?:\.(\d+))?$/;
  const ma = re.exec(a);
  const mb = re.exec(b);
  if (!ma || !mb) return null;
  const scale = Math.max((ma[2] || "").length, (mb[2] || "").length);
  const big = (m) => BigInt(m[1] + (m[2] || "").padEnd(scale, "0"));
  const s = (big(ma) + big(mb)).toString().padStart(scale + 1, "0");
  return scale ? s.slice(0, -scale) + "." + s.slice(-scale) : s;
}
