// Cards: the organization's cards as the API shows them to this person
// (owners and admins every card, a member the cards they hold), newest
// first and paged by cursor. Freeze and unfreeze as the card's
// available_actions offer; owners and admins change the monthly limit.
// Changes arrive live (card.updated).

import { get, orgPath, patch, post } from "../api.js";
import { busy, formError, h, messageOf, money, status } from "../ui.js";

export const title = "Cards";
export const styles = true;

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));
  const manager = ctx.role === "owner" || ctx.role === "admin";
  if (!manager) {
    $("cards-scope").textContent = "The cards you hold. Freeze a card at once if it is lost or you suspect misuse: every purchase is then declined until you unfreeze it. An owner or admin changes a card's limit.";
    $("cards-empty-text").textContent = "You hold no card of this organization. Ask an owner or admin of your organization for one.";
  }

  let cursor = null;
  const rows = new Map(); // id → tr

  const put = (c, where) => {
    const tr = row(c);
    const old = rows.get(c.id);
    rows.set(c.id, tr);
    // A row redrawn under the person's focus keeps it on the same action.
    const focused = old && old.contains(document.activeElement) ? document.activeElement : null;
    if (old) old.replaceWith(tr);
    if (focused) {
      const same = [...tr.querySelectorAll("button")].find((b) => b.textContent === focused.textContent);
      const next = same || tr.querySelector("button");
      if (next) next.focus();
    }
    else if (where === "top") $("cards-rows").prepend(tr);
    else $("cards-rows").append(tr);
    const any = rows.size > 0;
    $("cards-table").hidden = !any;
    $("cards-empty").hidden = any;
  };

  const load = async (more) => {
    const q = new URLSearchParams({ limit: "50" });
    if (more && cursor) q.set("cursor", cursor);
    const resp = await get(orgPath(ctx.org, "/cards?" + q));
    if (ctx.signal.aborted) return;
    for (const c of resp.data || []) if (!rows.has(c.id)) put(c, "end");
    cursor = resp.has_more ? resp.next_cursor : null;
    $("cards-more").hidden = !cursor;
    $("cards-loading").hidden = true;
    $("cards-table").hidden = rows.size === 0;
    $("cards-empty").hidden = rows.size > 0;
  };
  $("cards-more").addEventListener("click", async (e) => {
    try {
      await busy(e.currentTarget, () => load(true));
    } catch (err) {
      ctx.error(err);
    }
  });

  const notice = (text, bad) => $("cards-notice").replaceChildren(text ? h("p", { class: bad ? "form-error" : "cards-ok" }, text) : "");

  const act = async (c, action, button) => {
    notice("");
    try {
      const done = await busy(button, () => post("/api/v1/cards/" + encodeURIComponent(c.id) + "/" + action));
      if (ctx.signal.aborted) return;
      put(done);
      notice(action === "freeze"
        ? "Card ending " + done.last_four + " is frozen: every purchase is declined until you unfreeze it."
        : "Card ending " + done.last_four + " is unfrozen and can be used again.");
      const again = rows.get(done.id).querySelector("button[data-action]");
      if (again && !dialog.open) again.focus();
    } catch (err) {
      notice(messageOf(err), true);
    }
  };

  // The limit dialog.
  const dialog = $("card-limit");
  const form = $("card-limit-form");
  let editing = null;
  const openLimit = (c) => {
    editing = c;
    form.reset();
    formError(form, null);
    $("card-limit-what").textContent = "Card ending " + c.last_four + (holder(c) ? ", held by " + holder(c) : "") + ".";
    $("card-limit-amount").value = String(c.limit.monthly_limit);
    dialog.showModal();
    $("card-limit-amount").select();
  };
  $("card-limit-cancel").addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    if (!editing) return;
    const c = editing;
    formError(form, null);
    // What the person typed, as a number when it reads as one: the service
    // says what is wrong with it, next to the field.
    const raw = $("card-limit-amount").value.trim();
    const value = raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : raw === "" ? null : raw;
    try {
      const done = await busy($("card-limit-save"), () => patch("/api/v1/cards/" + encodeURIComponent(c.id), { monthly_limit: value }));
      if (ctx.signal.aborted) return;
      put(done);
      dialog.close();
      editing = null;
      notice("The monthly limit of the card ending " + done.last_four + " is now " + money(String(done.limit.monthly_limit), "USD").textContent + ".");
    } catch (err) {
      formError(form, err);
    }
  });

  function row(c) {
    const shown = c.frozen && c.status === "active" ? "frozen" : c.status;
    const buttons = [];
    const label = " card ending " + c.last_four;
    for (const a of c.available_actions || []) {
      if (a === "freeze" || a === "unfreeze") {
        buttons.push(h("button", { type: "button", "data-action": a, on: { click: (e) => act(c, a, e.currentTarget) } },
          a === "freeze" ? "Freeze" : "Unfreeze", h("span", { class: "visually-hidden" }, label)));
      }
    }
    if (manager) {
      buttons.push(h("button", { type: "button", "data-action-limit": "", on: { click: () => openLimit(c) } },
        "Change limit", h("span", { class: "visually-hidden" }, " of" + label)));
    }
    return h("tr", { "data-id": c.id, "data-status": shown },
      h("td", {}, h("span", { class: "card-number" }, "•••• " + c.last_four), h("br"),
        h("span", { class: "muted" }, c.card_provider === "mastercard_issuer" ? "Mastercard" : "Visa")),
      h("td", {}, holder(c) || h("span", { class: "muted" }, "The organization")),
      h("td", { "data-field": "status" }, status(shown),
        c.frozen && c.status !== "active" ? [" ", status("frozen")] : null),
      h("td", { class: "num", "data-field": "limit" }, money(String(c.limit.monthly_limit), c.limit.currency)),
      h("td", { class: "num", "data-field": "spent" }, money(c.limit.spent_this_month, c.limit.currency), h("br"),
        h("span", { class: "muted" }, c.limit.utilization + "% of the limit")),
      h("td", {}, h("div", { class: "card-actions" }, buttons)));
  }

  ctx.on("card.updated", (msg) => {
    const c = msg.data;
    if (!c || !$("cards-loading").hidden) return;
    put(c, "top");
  });

  try {
    await load(false);
  } catch (err) {
    $("cards-loading").hidden = true;
    ctx.error(err);
  }
}

function holder(c) {
  if (c.card_holder_name) return c.card_holder_name;
  if (!c.user) return "";
  return [c.user.first_name, c.user.last_name].filter(Boolean).join(" ") || c.user.email;
}
