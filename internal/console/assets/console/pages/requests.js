// Payment requests: payments proposed by programs or people, newest first
// and paged by cursor. A pending one is accepted (it becomes a payment in
// the person's name, awaiting approval on the payments page) or declined
// with a reason. Changes arrive live (payment_request.updated).

import { get, orgPath, post } from "../api.js";
import { busy, dateTime, formError, h, messageOf, money, status } from "../ui.js";

export const title = "Payment requests";
export const styles = true;

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));

  let applied = "";
  let cursor = null;
  const rows = new Map(); // id → tr

  const paint = () => {
    const any = rows.size > 0;
    $("pr-table").hidden = !any;
    $("pr-empty").hidden = any;
    $("pr-empty-title").textContent = applied ? "No payment requests in this status" : "No payment requests";
  };

  const put = (r, where) => {
    const tr = row(r);
    const old = rows.get(r.id);
    rows.set(r.id, tr);
    if (old) old.replaceWith(tr);
    else if (where === "top") $("pr-rows").prepend(tr);
    else $("pr-rows").append(tr);
  };

  const load = async (more) => {
    const q = new URLSearchParams({ limit: "50" });
    const want = more ? applied : $("pr-status").value;
    if (want) q.set("status", want);
    if (more && cursor) q.set("cursor", cursor);
    const resp = await get(orgPath(ctx.org, "/payment-requests?" + q));
    if (ctx.signal.aborted) return;
    if (!more) {
      applied = want;
      rows.clear();
      $("pr-rows").replaceChildren();
    }
    for (const r of resp.data || []) if (!rows.has(r.id)) put(r, "end");
    cursor = resp.has_more ? resp.next_cursor : null;
    $("pr-more").hidden = !cursor;
    $("pr-loading").hidden = true;
    paint();
  };

  $("pr-filter").addEventListener("submit", async (e) => {
    e.preventDefault();
    $("pr-filter-error").hidden = true;
    try {
      await busy(e.submitter, () => load(false));
    } catch (err) {
      $("pr-filter-error").textContent = messageOf(err);
      $("pr-filter-error").hidden = false;
    }
  });
  $("pr-status").addEventListener("change", () => $("pr-filter").requestSubmit());
  $("pr-more").addEventListener("click", async (e) => {
    try {
      await busy(e.currentTarget, () => load(true));
    } catch (err) {
      ctx.error(err);
    }
  });

  // Answers.
  const notice = (...parts) => $("pr-notice").replaceChildren(...parts);
  const dialog = $("pr-decline");
  const declineForm = $("pr-decline-form");
  let declining = null;

  const accept = async (r, button) => {
    notice();
    try {
      const done = await busy(button, () => post(orgPath(ctx.org, "/payment-requests/" + encodeURIComponent(r.id) + "/accept")));
      if (ctx.signal.aborted) return;
      put(done);
      notice(h("p", { class: "pr-ok" }, "Accepted: a payment of ", money(done.amount, done.currency), " to ",
        done.payment_contact ? done.payment_contact.name : "the supplier", " now awaits approval. ",
        done.payment_id ? h("a", { href: "#/payments/" + encodeURIComponent(done.payment_id) }, "Approve the payment") : null));
    } catch (err) {
      notice(h("p", { class: "form-error" }, messageOf(err)));
    }
  };

  const openDecline = (r) => {
    declining = r;
    declineForm.reset();
    formError(declineForm, null);
    $("pr-decline-what").replaceChildren("Pay ", money(r.amount, r.currency), " to ",
      r.payment_contact ? r.payment_contact.name : "", r.reference ? ", reference " + r.reference : "", ".");
    dialog.showModal();
    $("pr-decline-reason").focus();
  };
  $("pr-decline-cancel").addEventListener("click", () => dialog.close());
  declineForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!declining) return;
    const r = declining;
    formError(declineForm, null);
    try {
      const done = await busy($("pr-decline-submit"), () => post(orgPath(ctx.org, "/payment-requests/" + encodeURIComponent(r.id) + "/decline"),
        { reason: $("pr-decline-reason").value }));
      if (ctx.signal.aborted) return;
      put(done);
      dialog.close();
      declining = null;
      notice(h("p", {}, "Declined the request to pay ", money(done.amount, done.currency), ". The requester sees your reason."));
    } catch (err) {
      formError(declineForm, err);
    }
  });

  // row draws one request, with its answer buttons while it is pending.
  function row(r) {
    const contact = r.payment_contact ? r.payment_contact.name : "";
    const by = r.requested_by || {};
    const answer = [];
    if (r.status === "pending") {
      answer.push(
        h("button", { type: "button", class: "primary", on: { click: (e) => accept(r, e.currentTarget) } },
          "Accept", h("span", { class: "visually-hidden" }, " the request to pay " + contact)),
        h("button", { type: "button", on: { click: () => openDecline(r) } },
          "Decline", h("span", { class: "visually-hidden" }, " the request to pay " + contact)));
    } else if (r.payment_id) {
      answer.push(h("a", { href: "#/payments/" + encodeURIComponent(r.payment_id) },
        r.payment_status === "awaiting_approval" ? "Approve the payment" : "View the payment"));
    }
    return h("tr", { "data-id": r.id, "data-status": r.status },
      h("td", {}, h("time", { datetime: r.created_at }, dateTime(r.created_at))),
      h("td", {}, by.name || "", h("br"), h("span", { class: "muted" }, by.kind === "user" ? "person" : "program")),
      h("td", {}, contact),
      h("td", {}, r.reference || "", r.note ? [h("br"), h("span", { class: "muted" }, r.note)] : null),
      h("td", { class: "num", "data-field": "amount" }, money(r.amount, r.currency)),
      h("td", {}, r.status === "pending" ? h("time", { datetime: r.expires_at }, dateTime(r.expires_at)) : ""),
      h("td", { "data-field": "status" }, status(r.status),
        r.payment_status ? [h("br"), h("span", { class: "muted" }, "Payment: " + r.payment_status.replaceAll("_", " "))] : null,
        r.decline_reason ? [h("br"), h("span", { class: "muted" }, "Reason: " + r.decline_reason)] : null),
      h("td", {}, h("div", { class: "pr-answer" }, answer)));
  }

  ctx.on("payment_request.updated", (msg) => {
    const r = msg.data;
    if (!r || !$("pr-loading").hidden) return;
    if (rows.has(r.id)) {
      put(r);
    } else if (!applied || applied === r.status) {
      put(r, "top");
      paint();
    }
  });

  try {
    await load(false);
  } catch (err) {
    $("pr-loading").hidden = true;
    ctx.error(err);
  }
}
