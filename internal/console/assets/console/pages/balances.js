// Balances: one row per currency, refreshed when a feed row is added or a
// payment changes status (what moves a balance).

import { get, orgPath } from "../api.js";
import { h, money } from "../ui.js";

export const title = "Balances";

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  ctx.liveStatus($("live"));
  if (!ctx.org) {
    $("balances-loading").hidden = true;
    $("balances-empty").hidden = false;
    return;
  }
  const refresh = async () => {
    let list;
    try {
      list = await get(orgPath(ctx.org, "/balances"));
    } catch (err) {
      $("balances-loading").hidden = true;
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    $("balances-loading").hidden = true;
    const rows = list.data || [];
    $("balances-rows").replaceChildren(...balanceRows(rows));
    $("balances-table").hidden = rows.length === 0;
    $("balances-empty").hidden = rows.length > 0;
  };
  ctx.on(["transaction.created", "payment.updated"], ctx.debounce(refresh));
  await refresh();
}

// balanceRows makes a table row per balance: the currency, then the
// available and pending amounts (data-field says which).
export function balanceRows(balances) {
  return balances.map((b) =>
    h("tr", { "data-currency": b.currency },
      h("th", { scope: "row" }, b.currency),
      cell(b.available, b.currency, "available"),
      cell(b.pending, b.currency, "pending")));
}

function cell(amount, currency, field) {
  const td = h("td", { class: "num", "data-field": field });
  td.append(money(amount, currency));
  return td;
}
