// Money as the API gives it: decimal strings, formatted in the currency's
// format without ever becoming a binary float. Intl.NumberFormat formats a
// numeric string as the exact decimal it spells.

const DECIMAL = /^-?\d+(\.\d+)?$/;

export function formatMoney(amount, currency, locale) {
  if (typeof amount !== "string" || !DECIMAL.test(amount)) {
    return String(amount) + " " + currency;
  }
  const decimals = (amount.split(".")[1] || "").length;
  try {
    const min = new Intl.NumberFormat(locale, { style: "currency", currency }).resolvedOptions().minimumFractionDigits;
    return new Intl.NumberFormat(locale, {
      style: "currency",
      currency,
      minimumFractionDigits: min,
      maximumFractionDigits: Math.max(min, decimals),
    }).format(amount);
  } catch {
    // Not an ISO 4217 code (a crypto asset): the number, then the code.
    return new Intl.NumberFormat(locale, {
      minimumFractionDigits: Math.min(decimals, 2),
      maximumFractionDigits: Math.max(decimals, 2),
    }).format(amount) + " " + currency;
  }
}
