// What the payments page and the sandbox panel both read: the
// organization's payments, its payment contacts, and exact decimal sums of
// amounts.

import { get, orgPath } from "./api.js";

// paymentsPage reads one page of the organization's payments
// (listPayments), newest first, as they are now: {data, has_more,
// next_cursor}. status ("" for all) keeps one status; cursor is the
// previous page's next_cursor ("" for the first page), minted under the
// same status.
export async function paymentsPage(org, { status = "", cursor = "", limit = 100 } = {}) {
  const q = new URLSearchParams({ limit: String(limit) });
  if (status) q.set("status", status);
  if (cursor) q.set("cursor", cursor);
  return get(orgPath(org, "/payments?" + q.toString()));
}

// recentPayments is the organization's newest payments (the first page
// of a hundred), optionally only those of one status, newest first.
export async function recentPayments(org, status = "") {
  const page = await paymentsPage(org, { status });
  return page.data || [];
}

// sortPayments orders payments newest first, as the API lists them (by id:
// ids are UUIDv7, so their order is their creation's).
export function sortPayments(list) {
  return list.sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
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
