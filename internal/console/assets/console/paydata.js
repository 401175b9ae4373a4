// What the payments page and the sandbox panel both read: the
// organization's recent payments, its payment contacts, and exact decimal
// sums of amounts.

import { get, orgPath } from "./api.js";

// recentPayments is the organization's payments of the last 30 days, newest
// first, as they are now: the API has no list of payments, but every
// payment's creation and change of status is a payment.updated event whose
// data is the payment as its GET renders it now (docs/api.md, Events).
// Pages are read until there are no more, or pages of them.
export async function recentPayments(org, pages = 10) {
  const byId = new Map();
  let cursor = "";
  for (let i = 0; i < pages; i++) {
    let q = "?type=payment.updated&limit=100";
    if (cursor) q += "&cursor=" + encodeURIComponent(cursor);
    const page = await get(orgPath(org, "/events" + q));
    for (const e of page.data || []) {
      if (e.data && e.data.id && !byId.has(e.data.id)) byId.set(e.data.id, e.data);
    }
    if (!page.has_more || !page.next_cursor) break;
    cursor = page.next_cursor;
  }
  return sortPayments([...byId.values()]);
}

// sortPayments orders payments newest first (by creation).
export function sortPayments(list) {
  return list.sort((a, b) => (a.inserted_at < b.inserted_at ? 1 : a.inserted_at > b.inserted_at ? -1 : a.id < b.id ? 1 : -1));
}

// contacts is the organization's payment contacts, newest first (the
// first hundred).
export async function contacts(org) {
  const page = await get(orgPath(org, "/payment-contacts?limit=100"));
  return page.data || [];
}

// addDecimal adds two decimal strings exactly (as the API writes amounts),
// keeping the larger number of decimals.
export function addDecimal(a, b) {
  const [ai, af = ""] = String(a).split(".");
  const [bi, bf = ""] = String(b).split(".");
  const places = Math.max(af.length, bf.length);
  const scaled = (i, f) => {
    const neg = i.startsWith("-");
    const v = BigInt((neg ? i.slice(1) : i) + f.padEnd(places, "0"));
    return neg ? -v : v;
  };
  let sum = scaled(ai, af) + scaled(bi, bf);
  const neg = sum < 0n;
  if (neg) sum = -sum;
  let digits = sum.toString().padStart(places + 1, "0");
  if (places > 0) digits = digits.slice(0, -places) + "." + digits.slice(-places);
  return (neg ? "-" : "") + digits;
}

// statusText is a payment or approval status in words.
export function statusText(s) {
  return String(s || "").replaceAll("_", " ");
}
