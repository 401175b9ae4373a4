// A list read page by page ("Show more") with the filters of a form: the
// bills, expenses and invoices pages. The page's elements are named by a
// prefix: #<prefix>-filters (the form), -rows (the tbody), -table,
// -loading, -empty (nothing yet), -none (nothing matches the filters) and
// -more (the button).

import { ApiError, get } from "./api.js";
import { busy, formError } from "./ui.js";

// filteredList wires the form and the button and returns load(append):
// path(query) is the address of a page (the filters and cursor in query),
// put(items, append) puts a page's rows in #<prefix>-rows (after the shown
// ones when append), fields are the form's filter names (values trimmed).
export function filteredList(ctx, { prefix, path, put, fields, limit }) {
  const $ = (id) => ctx.view.querySelector("#" + prefix + "-" + id);
  const form = $("filters");
  const list = { filters: {}, load };
  let cursor = null;

  async function load(append) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(list.filters)) if (v) q.set(k, v);
    if (limit) q.set("limit", String(limit));
    if (append && cursor) q.set("cursor", cursor);
    let page;
    try {
      page = await get(path(q));
    } catch (err) {
      $("loading").hidden = true;
      if (err instanceof ApiError && err.status === 400) formError(form, err);
      else ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    formError(form, null);
    $("loading").hidden = true;
    cursor = page.has_more ? page.next_cursor : null;
    put(page.data || [], append);
    const any = $("rows").children.length > 0;
    const filtered = Object.values(list.filters).some(Boolean);
    $("table").hidden = !any;
    $("empty").hidden = any || filtered;
    $("none").hidden = any || !filtered;
    $("more").hidden = !cursor;
  }

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const data = new FormData(form);
    list.filters = Object.fromEntries(fields.map((k) => [k, String(data.get(k) || "").trim()]));
    cursor = null;
    load(false);
  });
  form.addEventListener("reset", () => {
    list.filters = {};
    cursor = null;
    formError(form, null);
    load(false);
  });
  $("more").addEventListener("click", (e) => busy(e.currentTarget, () => load(true)));
  return list;
}
