// Payments: the organization's payments with their live status (a page
// at a time, "Show more", and a status filter), a new payment (contact,
// quote, confirm, execute), the approvals the person can decide (approve
// in the approving app with the match code shown here, or reject), and one
// payment's details and history at #/payments/<id>.

import { ApiError, get, idempotencyKey, orgPath, post } from "../api.js";
import { addDecimal, contacts as listContacts, paymentsPage, sortPayments, statusText } from "../paydata.js";
import { busy, dateTime, formError, h, messageOf, money, status } from "../ui.js";

export const title = "Payments";
export const styles = true;

// The approval being waited for outlives the page: leave it to answer in
// the sandbox panel and come back, and the wait goes on (it is the
// session's step-up, which the service keeps).
// {approvalId, paymentId, stepUp: {id, match_code, expires_at}, what, outcome}
let waiting = null;

const POLL_MS = 2000;

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));
  const canDecide = ctx.role === "owner" || ctx.role === "admin";
  const myId = ctx.me && ctx.me.user ? ctx.me.user.id : "";
  const state = { payments: new Map(), contacts: new Map(), approvals: [], config: null };
  // The list as read: its status filter ("" for all), the cursor of its
  // next page (null when none), and floor, the id of the oldest payment
  // read while more remain (null once every one is read): the list shows
  // the payments from the newest down to floor, the ones read and the
  // ones the realtime channel brought. read: the first page was read.
  const list = { status: "", cursor: null, floor: null, read: false };
  const detailId = ctx.params[0] || "";

  // Names and amounts.

  const contactName = (id) => {
    const c = state.contacts.get(id);
    return c ? c.name : "a contact";
  };
  const describe = (p) => {
    const span = h("span", {}, "Pay ", money(p.delivered.amount, p.delivered.currency), " to ", contactName(p.payment_contact_id));
    if (p.fee) span.append(" (", money(p.debited.amount, p.debited.currency), " debited, fee included)");
    return span;
  };
  const paymentOfApproval = (a) => [...state.payments.values()].find((p) => p.approval_request_id === a.id) ||
    (a.kind === "payment" ? state.payments.get(a.target_id) : null);

  async function loadContacts() {
    for (const c of await listContacts(ctx.org)) state.contacts.set(c.id, c);
  }

  async function loadApprovals() {
    if (!canDecide) {
      state.approvals = [];
      return;
    }
    const page = await get(orgPath(ctx.org, "/approvals?status=pending&limit=100"));
    state.approvals = page.data || [];
    // An approval of a payment this list has not seen yet (older than the
    // pages read): fetch it.
    await Promise.all(state.approvals.filter((a) => a.kind === "payment" && !paymentOfApproval(a)).map(async (a) => {
      try {
        const p = await get("/api/v1/payments/" + encodeURIComponent(a.target_id));
        state.payments.set(p.id, p);
      } catch {
        // Shown without its amount.
      }
    }));
  }

  // The approval box: the match code, the wait, the outcome.

  let timer = 0;
  let checking = false;
  ctx.signal.addEventListener("abort", () => {
    clearInterval(timer);
    // An outcome is told once: it is not shown again on the next page.
    if (waiting && waiting.outcome) waiting = null;
  });

  function paintApproval() {
    const box = $("approval-box");
    if (!waiting) {
      box.hidden = true;
      return;
    }
    box.hidden = false;
    $("approval-what").replaceChildren(waiting.what ? waiting.what.cloneNode(true) : "");
    const pending = !waiting.outcome;
    $("approval-waiting").hidden = !pending;
    $("approval-code").textContent = waiting.stepUp ? waiting.stepUp.match_code || "" : "";
    $("approval-expires").textContent = waiting.stepUp && waiting.stepUp.expires_at ? " (until " + dateTime(waiting.stepUp.expires_at) + ")" : "";
    $("approval-outcome").hidden = pending;
    $("approval-outcome").textContent = waiting.outcome ? waiting.outcome.text : "";
    $("approval-outcome").dataset.result = waiting.outcome ? waiting.outcome.result : "";
    $("approval-box-title").textContent = pending ? "Approve in your approving app" : "Approval";
  }

  function conclude(result, text) {
    if (!waiting) return;
    clearInterval(timer);
    waiting.outcome = { result, text };
    paintApproval();
    refreshSoon();
  }

  // check asks the service how the step-up stands; once the app answered
  // it, approve is called again and answers the approval as recorded.
  async function check() {
    if (!waiting || waiting.outcome || checking) return;
    checking = true;
    const w = waiting;
    try {
      const st = await get("/api/v1/auth/step-up/" + encodeURIComponent(w.stepUp.id));
      if (w !== waiting || ctx.signal.aborted) return;
      if (st.status === "active") await approveAgain(w);
      else if (st.status === "declined") conclude("declined", "The approval was declined in the approving app. Nothing was approved and no money moved.");
      else if (st.status === "expired") conclude("expired", "The code expired before it was entered in the approving app. Nothing was approved; choose Approve again for a new code.");
    } catch (err) {
      if (w === waiting && err.status === 404) {
        conclude("expired", "This approval can no longer be followed from here. Its status is in the list below.");
      }
      // Other errors: the next poll tries again.
    } finally {
      checking = false;
    }
  }

  async function approveAgain(w) {
    try {
      const a = await post("/api/v1/approvals/" + encodeURIComponent(w.approvalId) + "/approve", {}, { stepUp: false });
      if (w === waiting) decided(a.status);
    } catch (err) {
      if (w !== waiting) return;
      if (err.type === "step_up_required" && err.body && err.body.error.step_up) {
        waiting = { ...w, stepUp: err.body.error.step_up };
        paintApproval();
        return;
      }
      conclude("error", messageOf(err));
    }
  }

  function decided(st) {
    if (st === "approved") conclude("approved", "Approved. The money has left your available balance and the payment is on its way.");
    else if (st === "rejected") conclude("rejected", "The payment was rejected. No money moved.");
    else if (st === "cancelled") conclude("cancelled", "The payment was cancelled. No money moved.");
  }

  function follow() {
    clearInterval(timer);
    paintApproval();
    if (!waiting || waiting.outcome) return;
    timer = setInterval(check, POLL_MS);
    check();
  }

  async function startApproval(approval, button) {
    const p = paymentOfApproval(approval);
    const what = p ? describe(p) : h("span", {}, approval.kind === "payment_batch" ? "Approve a batch of payments" : "Approve a payment");
    if (waiting && waiting.approvalId === approval.id && !waiting.outcome) {
      follow();
      return;
    }
    try {
      const a = await busy(button, () => post("/api/v1/approvals/" + encodeURIComponent(approval.id) + "/approve", {}, { stepUp: false }));
      waiting = { approvalId: approval.id, paymentId: p ? p.id : "", stepUp: null, what, outcome: null };
      decided(a.status);
    } catch (err) {
      if (err.type === "step_up_required" && err.body && err.body.error.step_up) {
        waiting = { approvalId: approval.id, paymentId: p ? p.id : "", stepUp: err.body.error.step_up, what, outcome: null };
        follow();
        $("approval-box").scrollIntoView({ block: "nearest" });
        return;
      }
      waiting = { approvalId: approval.id, paymentId: p ? p.id : "", stepUp: null, what, outcome: { result: "error", text: messageOf(err) } };
      paintApproval();
    }
  }

  $("approval-close").addEventListener("click", () => {
    clearInterval(timer);
    waiting = null;
    paintApproval();
  });

  // Rejecting, with a reason.

  let rejecting = null;
  function startReject(approval) {
    rejecting = approval;
    const p = paymentOfApproval(approval);
    $("reject-what").replaceChildren(p ? describe(p) : "A batch of payments");
    formError($("reject-form"), null);
    $("reject-reason").value = "";
    $("reject-panel").hidden = false;
    $("reject-reason").focus();
  }
  $("reject-cancel").addEventListener("click", () => {
    rejecting = null;
    $("reject-panel").hidden = true;
  });
  $("reject-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!rejecting) return;
    const form = e.currentTarget;
    const reason = $("reject-reason").value.trim();
    try {
      await busy(form.querySelector("button[type=submit]"), () =>
        post("/api/v1/approvals/" + encodeURIComponent(rejecting.id) + "/reject", reason ? { reason } : {}));
    } catch (err) {
      formError(form, err);
      return;
    }
    rejecting = null;
    $("reject-panel").hidden = true;
    notice("The payment was rejected. No money moved.");
    refreshSoon();
  });

  function notice(text) {
    const el = $("payments-notice");
    if (!el) return;
    el.textContent = text;
    el.hidden = !text;
  }

  function approvalButtons(a) {
    const approve = h("button", { type: "button", class: "primary", "data-action": "approve", "data-approval-id": a.id }, "Approve");
    approve.addEventListener("click", () => startApproval(a, approve));
    const reject = h("button", { type: "button", class: "danger", "data-action": "reject", "data-approval-id": a.id }, "Reject");
    reject.addEventListener("click", () => startReject(a));
    return [approve, reject];
  }

  // The list.

  function renderList() {
    const shown = sortPayments([...state.payments.values()].filter((p) =>
      (!list.status || p.status === list.status) && (list.floor === null || p.id >= list.floor)));
    $("payments-loading").hidden = true;
    $("payments-empty").hidden = shown.length > 0 || list.status !== "";
    $("payments-none").hidden = shown.length > 0 || list.status === "";
    $("payments-table").hidden = shown.length === 0;
    $("payments-more").hidden = !list.cursor;
    // Rows are kept and changed in place, so a status that changes live
    // does not rebuild the table under the reader.
    const body = $("payments-rows");
    const rows = shown.map((p) => {
      const cells = [
        h("td", {}, dateTime(p.inserted_at)),
        h("td", {}, h("a", { href: "#/payments/" + encodeURIComponent(p.id) }, contactName(p.payment_contact_id))),
        h("td", { "data-field": "status" }, status(p.status)),
        h("td", { class: "num", "data-field": "amount" }, money(p.delivered.amount, p.delivered.currency)),
        h("td", { class: "num", "data-field": "debited" }, money(p.debited.amount, p.debited.currency)),
      ];
      let tr = body.querySelector(`tr[data-payment-id="${CSS.escape(p.id)}"]`);
      if (!tr) tr = h("tr", { "data-payment-id": p.id });
      const fresh = h("tr", {}, cells);
      if (tr.textContent !== fresh.textContent || !tr.firstChild) tr.replaceChildren(...cells);
      return tr;
    });
    rows.forEach((tr, i) => {
      if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
    });
    while (body.children.length > rows.length) body.lastElementChild.remove();
  }

  let approvalsShown = null;
  function renderApprovals() {
    const wrap = $("approvals");
    // Unchanged approvals are left as they are (a button being pressed
    // stays the same button).
    const shown = JSON.stringify(state.approvals.map((a) => {
      const p = paymentOfApproval(a);
      return [a.id, p ? p.id : "", p ? contactName(p.payment_contact_id) : ""];
    }));
    if (shown === approvalsShown && wrap.firstChild) return;
    approvalsShown = shown;
    $("approvals-note").hidden = canDecide;
    if (!canDecide) {
      wrap.replaceChildren();
      return;
    }
    if (state.approvals.length === 0) {
      wrap.replaceChildren(h("p", { class: "muted", id: "approvals-none" }, "Nothing waits for your approval. Payments you or others create appear here until an owner or admin decides them."));
      return;
    }
    wrap.replaceChildren(h("table", { class: "data", id: "approvals-table" },
      h("caption", { class: "visually-hidden" }, "Approvals waiting for a decision"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Requested"), h("th", { scope: "col" }, "Payment"),
        h("th", { scope: "col", class: "num" }, "Debited with fee"), h("th", { scope: "col" }, "Decide"))),
      h("tbody", {}, state.approvals.map((a) => {
        const p = paymentOfApproval(a);
        return h("tr", { "data-approval-id": a.id },
          h("td", {}, dateTime(a.inserted_at)),
          h("td", {}, p ? h("a", { href: "#/payments/" + encodeURIComponent(p.id) }, contactName(p.payment_contact_id)) : a.kind === "payment_batch" ? "A batch of payments" : "A payment"),
          h("td", { class: "num" }, p ? money(p.debited.amount, p.debited.currency) : ""),
          h("td", {}, h("div", { class: "row-actions" }, approvalButtons(a))));
      }))));
  }

  // The new payment: contact, amount, reference; a quote; confirm.

  let pending = null; // {quote, contact, body, key}: the quote shown and its confirmation's key

  function fillContacts(selected) {
    const select = $("pay-contact");
    const list = [...state.contacts.values()];
    select.replaceChildren(
      ...list.map((c) => h("option", { value: c.id }, c.name + " · " + c.currency + (c.rail === "crypto" ? " · crypto" : ""))),
      h("option", { value: "new" }, "A new contact…"));
    select.value = selected || (list.length ? list[0].id : "new");
    contactChosen();
  }

  function contactChosen() {
    const id = $("pay-contact").value;
    const isNew = id === "new";
    $("new-contact").hidden = !isNew;
    const c = state.contacts.get(id);
    if (c) $("pay-currency").value = c.currency;
    const rail = isNew ? $("contact-rail").value : c ? c.rail : "fiat";
    $("pay-fiat").hidden = rail !== "fiat";
  }

  function railChosen() {
    const fiat = $("contact-rail").value === "fiat";
    $("contact-bank").hidden = !fiat;
    $("contact-crypto").hidden = fiat;
    contactChosen();
  }

  $("pay-contact").addEventListener("change", contactChosen);
  $("contact-rail").addEventListener("change", railChosen);
  $("contact-currency").addEventListener("change", () => {
    if ($("pay-contact").value === "new") $("pay-currency").value = $("contact-currency").value.trim().toUpperCase();
  });
  $("contact-routing-kind").addEventListener("change", () => {
    $("contact-routing").name = $("contact-routing-kind").value;
  });

  async function openNewPayment() {
    notice("");
    $("new-payment-panel").hidden = false;
    $("payment-form").hidden = false;
    $("quote").hidden = true;
    formError($("payment-form"), null);
    if (!state.config) {
      try {
        state.config = await get(orgPath(ctx.org, "/payments/config"));
      } catch (err) {
        formError($("payment-form"), err);
        return;
      }
      $("pay-reason").replaceChildren(...state.config.payout_reasons.map((r) => h("option", { value: r.code }, r.label)));
      $("pay-reference").maxLength = state.config.statement_description_max_length || 35;
    }
    fillContacts($("pay-contact").value && $("pay-contact").value !== "new" ? $("pay-contact").value : "");
    ($("pay-contact").value === "new" ? $("contact-name") : $("pay-amount")).focus();
  }

  function closeNewPayment() {
    pending = null;
    $("new-payment-panel").hidden = true;
    $("payment-form").reset();
    $("new-payment").focus();
  }

  $("new-payment").addEventListener("click", openNewPayment);
  $("pay-cancel").addEventListener("click", closeNewPayment);

  function newContactBody() {
    const v = (id) => $(id).value.trim();
    const rail = $("contact-rail").value;
    const body = { name: v("contact-name"), currency: v("contact-currency").toUpperCase(), rail };
    const put = (field, value) => {
      if (value) body[field] = value;
    };
    if (rail === "fiat") {
      put("iban", v("contact-iban"));
      put("swift_code", v("contact-swift").toUpperCase());
      put("account_number", v("contact-account"));
      put($("contact-routing-kind").value, v("contact-routing"));
      put("bank_country_alpha2", v("contact-country").toUpperCase());
    } else {
      put("network", $("contact-network").value);
      put("crypto_address", v("contact-address"));
    }
    return body;
  }

  $("payment-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget;
    formError(form, null);
    await busy(form.querySelector("button[type=submit]"), async () => {
      let contact = state.contacts.get($("pay-contact").value);
      try {
        if (!contact) {
          // A new contact is saved first; a later retry then uses it.
          contact = await post(orgPath(ctx.org, "/payment-contacts"), newContactBody());
          state.contacts.set(contact.id, contact);
          fillContacts(contact.id);
          $("contact-name").value = "";
        }
        const quote = await post("/api/v1/payments/preflight", {
          organization_id: ctx.org,
          rail: contact.rail,
          payment_contact_id: contact.id,
          source_currency: $("pay-currency").value.trim().toUpperCase(),
          amount: $("pay-amount").value.trim(),
          amount_side: "send",
        });
        const body = { quote_id: quote.id };
        if (contact.rail === "fiat") {
          body.payout_reason = $("pay-reason").value;
          body.statement_description = $("pay-reference").value.trim();
        }
        const notes = $("pay-notes").value.trim();
        if (notes) body.internal_notes = notes;
        // One key for this confirmation: a retry of it (after a network
        // error) sends the same key and cannot pay twice.
        pending = { quote, contact, body, key: idempotencyKey() };
        showQuote();
      } catch (err) {
        formError(form, err);
      }
    });
  });

  function showQuote() {
    const { quote, contact, body } = pending;
    $("quote-to").textContent = contact.name;
    $("quote-source").replaceChildren(money(quote.source.amount, quote.source.currency));
    $("quote-fee").replaceChildren(money(quote.fee.amount, quote.fee.currency));
    $("quote-total").replaceChildren(quote.fee.currency === quote.source.currency
      ? money(addDecimal(quote.source.amount, quote.fee.amount), quote.source.currency)
      : h("span", {}, money(quote.source.amount, quote.source.currency), " + ", money(quote.fee.amount, quote.fee.currency)));
    const dest = money(quote.destination.amount, quote.destination.currency);
    $("quote-destination").replaceChildren(quote.destination.currency !== quote.source.currency
      ? h("span", {}, dest, h("span", { class: "muted" }, " (rate " + quote.rate + ")"))
      : dest);
    $("quote-reference").textContent = body.statement_description || "—";
    $("quote-expires").textContent = dateTime(quote.expires_at);
    $("quote-error").hidden = true;
    $("payment-form").hidden = true;
    $("quote").hidden = false;
    $("quote-confirm").focus();
  }

  $("quote-back").addEventListener("click", () => {
    pending = null;
    $("quote").hidden = true;
    $("payment-form").hidden = false;
    $("pay-amount").focus();
  });

  $("quote-confirm").addEventListener("click", async () => {
    if (!pending) return;
    const p = pending;
    $("quote-error").hidden = true;
    let payment;
    try {
      payment = await busy($("quote-confirm"), () => post("/api/v1/payments/execute", p.body, { headers: { "Idempotency-Key": p.key } }));
    } catch (err) {
      $("quote-error").textContent = messageOf(err) + (err.type === "quote_expired" || err.type === "quote_already_used"
        ? " Choose “Change the payment” and get a new quote." : "");
      $("quote-error").hidden = false;
      return;
    }
    state.payments.set(payment.id, payment);
    closeNewPayment();
    notice("Payment to " + p.contact.name + " created. It waits for an owner or admin to approve it" + (canDecide ? ": choose Approve below." : "."));
    renderList();
    refreshSoon();
  });

  // Loading, live changes.

  // readPayments reads the list's first page (more false) or its next one
  // (more true) into state.payments. A first page read again keeps how far
  // "Show more" went: the payments below it are still held.
  async function readPayments(more) {
    const status = list.status;
    const page = await paymentsPage(ctx.org, { status, cursor: more ? list.cursor : "" });
    if (ctx.signal.aborted || status !== list.status) return;
    const data = page.data || [];
    for (const p of data) state.payments.set(p.id, p);
    const last = data.length ? data[data.length - 1].id : null;
    if (more || !list.read) {
      list.cursor = page.has_more ? page.next_cursor : null;
      list.floor = page.has_more ? last : null;
      list.read = true;
    }
  }

  async function refreshList() {
    await readPayments(false);
    if (ctx.signal.aborted) return;
    await loadApprovals();
    if (ctx.signal.aborted) return;
    renderList();
    renderApprovals();
  }

  const refreshSoon = ctx.debounce(async () => {
    try {
      if (detailId) await showDetail();
      else await refreshList();
    } catch (err) {
      ctx.error(err);
    }
  });

  ctx.on(["payment.updated"], (msg) => {
    const p = msg.data;
    if (!p || !p.id) return;
    state.payments.set(p.id, p);
    if (detailId) {
      if (p.id === detailId) refreshSoon();
      return;
    }
    renderList();
  });
  ctx.on(["approval.updated"], (msg) => {
    const a = msg.data;
    if (a && waiting && !waiting.outcome && a.id === waiting.approvalId && a.status !== "pending") decided(a.status);
    refreshSoon();
  });
  ctx.on(["transaction.created"], (msg) => {
    if (detailId && msg.data && msg.data.payment_id === detailId) refreshSoon();
  });

  // The detail of one payment.

  async function showDetail() {
    const p = await get("/api/v1/payments/" + encodeURIComponent(detailId));
    if (ctx.signal.aborted) return;
    state.payments.set(p.id, p);
    await loadApprovals();
    const history = await historyOf(p);
    if (ctx.signal.aborted) return;
    const name = contactName(p.payment_contact_id);
    $("payments-title").textContent = "Payment to " + name;
    document.title = "Payment to " + name + " · Strongroom";
    $("detail-status").replaceChildren(status(p.status));
    const facts = [
      ["To", name],
      ["Amount", money(p.delivered.amount, p.delivered.currency)],
      ["Fee", money(p.fee.amount, p.fee.currency)],
      ["Debited", money(p.debited.amount, p.debited.currency)],
      ["Reference", p.statement_description || "—"],
      ["Reason", reasonLabel(p.payout_reason)],
      ["Internal note", p.internal_notes || "—"],
      ["Created", dateTime(p.inserted_at)],
      ["Last change", dateTime(p.updated_at)],
    ];
    $("detail-facts").replaceChildren(...facts.flatMap(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
    const actions = [];
    const approval = state.approvals.find((a) => a.id === p.approval_request_id);
    if (approval && canDecide) actions.push(...approvalButtons(approval));
    if (!p.payment_batch_id && ((p.status === "awaiting_approval" && p.created_by_id === myId) || p.cancellable)) {
      const cancel = h("button", { type: "button", id: "detail-cancel" }, "Cancel this payment");
      cancel.addEventListener("click", async () => {
        $("detail-error").hidden = true;
        try {
          await busy(cancel, () => post("/api/v1/payments/" + encodeURIComponent(p.id) + "/cancel", {}));
        } catch (err) {
          $("detail-error").textContent = messageOf(err);
          $("detail-error").hidden = false;
          return;
        }
        refreshSoon();
      });
      actions.push(cancel);
    }
    if (p.status === "awaiting_approval" && !canDecide) actions.push(h("p", { class: "muted" }, "An owner or admin approves this payment in their approving app."));
    $("detail-actions").replaceChildren(...actions);
    $("detail-history").replaceChildren(...history.map((x) =>
      h("li", {}, h("time", { datetime: x.at }, dateTime(x.at)), " ", h("span", { class: "history-what" }, x.what))));
    $("detail-loading").hidden = true;
    $("detail-body").hidden = false;
  }

  function reasonLabel(code) {
    if (!code) return "—";
    const r = state.config && state.config.payout_reasons.find((x) => x.code === code);
    return r ? r.label + " (" + code + ")" : code;
  }

  // historyOf reads the events about the payment (its changes of status,
  // its approval's, its rows in the feed) since it was created. An event
  // carries the record as it is now, not as it was, so a change of status
  // is named by its place in the payment's course (awaiting approval,
  // approved, processing, then the outcome), which the API fixes.
  async function historyOf(p) {
    const from = new Date(Date.parse(p.inserted_at) - 1000).toISOString();
    const events = [];
    let cursor = "";
    for (let i = 0; i < 10; i++) {
      let q = "?type=payment.updated&type=approval.updated&type=transaction.created&limit=100&occurred_from=" + encodeURIComponent(from);
      if (cursor) q += "&cursor=" + encodeURIComponent(cursor);
      const page = await get(orgPath(ctx.org, "/events" + q));
      for (const e of page.data || []) {
        const d = e.data || {};
        if ((e.type === "payment.updated" && d.id === p.id) ||
          (e.type === "approval.updated" && d.id && d.id === p.approval_request_id) ||
          (e.type === "transaction.created" && d.payment_id === p.id)) events.push(e);
      }
      if (!page.has_more || !page.next_cursor) break;
      cursor = page.next_cursor;
    }
    events.reverse(); // oldest first
    const changes = events.filter((e) => e.type === "payment.updated");
    const course = courseOf(changes.length, p.status);
    const approvals = events.filter((e) => e.type === "approval.updated");
    return events.map((e) => {
      if (e.type === "payment.updated") {
        const st = course[changes.indexOf(e)];
        return { at: e.occurred_at, what: st ? statusLine(st) : "Its status changed" };
      }
      if (e.type === "approval.updated") {
        const first = approvals.indexOf(e) === 0;
        return { at: e.occurred_at, what: first && approvals.length > 1 ? "Approval requested"
          : first && e.data.status === "pending" ? "Approval requested" : "Approval " + statusText(e.data.status) };
      }
      const t = e.data;
      return { at: e.occurred_at, what: h("span", {}, t.description + ": ", money((t.effect.direction === "out" ? "-" : "") + t.effect.total, t.effect.currency)) };
    });
  }

  if (detailId) {
    $("payment-detail").hidden = false;
    try {
      state.config = await get(orgPath(ctx.org, "/payments/config"));
    } catch {
      // The reason is then shown as its code.
    }
    await loadContacts();
    await showDetail();
  } else {
    $("payments-list-view").hidden = false;
    const filters = $("payments-filters");
    $("payments-status").addEventListener("change", async (e) => {
      list.status = e.currentTarget.value;
      list.cursor = list.floor = null;
      list.read = false;
      formError(filters, null);
      $("payments-loading").hidden = false;
      try {
        await readPayments(false);
      } catch (err) {
        $("payments-loading").hidden = true;
        if (err instanceof ApiError && err.status === 400) formError(filters, err);
        else ctx.error(err);
        return;
      }
      if (!ctx.signal.aborted) renderList();
    });
    filters.addEventListener("submit", (e) => e.preventDefault());
    $("payments-more").addEventListener("click", (e) => busy(e.currentTarget, async () => {
      try {
        await readPayments(true);
      } catch (err) {
        ctx.error(err);
        return;
      }
      if (!ctx.signal.aborted) renderList();
    }));
    await loadContacts();
    await refreshList();
  }
  follow();
}

// courseOf names n changes of a payment now in status current, oldest
// first, from the course the API fixes: awaiting_approval, then approved,
// then processing, then the outcome. null where it cannot be told.
function courseOf(n, current) {
  if (n === 0) return [];
  const steps = ["awaiting_approval", "approved", "processing"];
  if (n === 1) return current === "awaiting_approval" ? [current] : [null];
  if (n > 4) return new Array(n).fill(null);
  const course = steps.slice(0, n - 1);
  course.push(current);
  return course;
}

function statusLine(st) {
  return {
    awaiting_approval: "Created; awaiting approval",
    approved: "Approved; the money left the available balance",
    processing: "Handed to the payment rail (processing)",
    completed: "Completed: delivered to the recipient",
    failed: "Failed: the rail returned it; the money came back",
    rejected: "Rejected; no money moved",
    cancelled: "Cancelled; no money moved",
  }[st] || "Now " + statusText(st);
}
