// API keys and webhook endpoints, for owners and admins (docs/api.md, API
// keys and Webhooks). Creating, changing and rotating a key, and creating
// an endpoint or rotating its secret, ask for a step-up, which stepup.js
// answers. A secret is shown once, in a panel that goes away when it is
// dismissed or the page is left: it is kept nowhere else.

import { ApiError, del, get, orgPath, patch, post } from "../api.js";
import { busy, dateTime, empty, formError, h, status } from "../ui.js";

export const title = "API keys & webhooks";
export const styles = true;

// The scopes a key may hold, with the lowest key role for each.
const SCOPES = [
  ["balances:read", "member", "Read the currency accounts"],
  ["events:read", "member", "Read the events"],
  ["events:subscribe", "member", "Follow events live (realtime channel)"],
  ["payment_requests:read", "member", "Read payment requests"],
  ["payment_requests:write", "member", "Propose payments (payment requests)"],
  ["payments:read", "member", "Read payments (reserved)"],
  ["transactions:read", "member", "Read transactions and statements"],
  ["refunds:write", "admin", "Refunds (reserved)"],
  ["webhooks:manage", "admin", "Manage webhook endpoints"],
];

// The event types an endpoint may receive ("*": every one).
const EVENT_TYPES = [
  ["payment.updated", "A payment changed status"],
  ["approval.updated", "An approval changed"],
  ["transaction.created", "Money arrived or left (a feed row)"],
  ["payment_request.updated", "A payment request changed"],
  ["bill.event_appended", "A bill was read, edited or paid"],
  ["invoice.updated", "An invoice changed"],
  ["card.updated", "A card changed"],
];

const SANDBOX_TOKEN_KEY = "strongroom.sandbox-token";

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  if (ctx.role !== "owner" && ctx.role !== "admin") {
    $("dev-members").hidden = false;
    return;
  }
  $("keys-section").hidden = false;
  $("hooks-section").hidden = false;
  const secrets = secretPanel($);
  await Promise.all([apiKeys(ctx, $, secrets), webhooks(ctx, $, secrets)]);
}

// secretPanel shows a secret once: show(what, secret) fills and reveals
// the panel; dismissing it forgets the secret.
function secretPanel($) {
  const panel = $("dev-secret");
  const forget = () => {
    $("dev-secret-value").textContent = "";
    $("dev-secret-what").textContent = "";
    $("dev-secret-copied").textContent = "";
    panel.hidden = true;
  };
  $("dev-secret-copy").addEventListener("click", async () => {
    const text = $("dev-secret-value").textContent;
    try {
      await navigator.clipboard.writeText(text);
      $("dev-secret-copied").textContent = "Copied.";
    } catch {
      // No clipboard here: select the text for the person to copy.
      const range = document.createRange();
      range.selectNodeContents($("dev-secret-value"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      $("dev-secret-copied").textContent = "Selected: press Ctrl+C (or ⌘C) to copy.";
    }
  });
  $("dev-secret-done").addEventListener("click", forget);
  return {
    show(title, what, secret) {
      $("dev-secret-title").textContent = title;
      $("dev-secret-what").textContent = what;
      $("dev-secret-value").textContent = secret;
      $("dev-secret-copied").textContent = "";
      panel.hidden = false;
      panel.scrollIntoView({ block: "nearest" });
      $("dev-secret-copy").focus();
    },
    forget,
  };
}

// confirmButton is a button that asks once more before doing fn: the
// first click turns it into "label?" beside a "Keep" button.
function confirmButton(label, confirmLabel, fn) {
  const wrap = h("span", { class: "row-actions" });
  const first = h("button", { type: "button" }, label);
  first.addEventListener("click", () => {
    const yes = h("button", { type: "button", class: "danger" }, confirmLabel);
    const no = h("button", { type: "button" }, "Keep");
    yes.addEventListener("click", () => busy(yes, fn));
    no.addEventListener("click", () => {
      wrap.replaceChildren(first);
      first.focus();
    });
    wrap.replaceChildren(yes, no);
    yes.focus();
  });
  wrap.append(first);
  return wrap;
}

function checkboxes(fieldset, prefix, items) {
  for (const [value, note, text] of items) {
    const id = prefix + "-" + value.replace(/[^a-z0-9]+/g, "-");
    fieldset.append(h("label", { for: id },
      h("input", { id, type: "checkbox", name: prefix === "scope" ? "scopes" : "event_types", value }),
      h("span", {}, value, " ", h("span", { class: "muted" }, "· " + text + (note === "admin" ? " (admin)" : "")))));
  }
}

const checked = (fieldset) => [...fieldset.querySelectorAll("input[type=checkbox]:checked")].map((c) => c.value);

// API keys.

async function apiKeys(ctx, $, secrets) {
  const base = orgPath(ctx.org, "/api-keys");
  const form = $("key-form");
  checkboxes($("key-scopes"), "scope", SCOPES.map(([s, role, text]) => [s, role, text]));
  let editing = null; // the key being changed, or null for a new one
  // A member key cannot hold the admin scopes: they are offered with the
  // admin role only.
  const fitScopes = () => {
    const member = $("key-role").value === "member";
    for (const [scope, role] of SCOPES) {
      if (role !== "admin") continue;
      const box = $("key-scopes").querySelector(`input[value="${scope}"]`);
      box.disabled = member;
      if (member) box.checked = false;
    }
  };
  $("key-role").addEventListener("change", fitScopes);

  const openForm = (key) => {
    editing = key;
    form.reset();
    formError(form, null);
    $("key-form-title").textContent = key ? "Change the key “" + key.name + "”" : "New API key";
    $("key-submit").textContent = key ? "Save the changes" : "Create the key";
    if (key) {
      $("key-name").value = key.name;
      $("key-role").value = key.role;
      for (const c of $("key-scopes").querySelectorAll("input")) c.checked = key.scopes.includes(c.value);
    }
    fitScopes();
    form.hidden = false;
    $("key-name").focus();
  };
  $("key-new").addEventListener("click", () => openForm(null));
  $("key-cancel").addEventListener("click", () => {
    form.hidden = true;
    $("key-new").focus();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { name: $("key-name").value.trim(), role: $("key-role").value, scopes: checked($("key-scopes")) };
    await busy(e.submitter, async () => {
      try {
        if (editing) {
          await patch(base + "/" + encodeURIComponent(editing.id), body);
        } else {
          const r = await post(base, body);
          secrets.show("Your new API key", "The key “" + r.api_key.name + "”. Programs send it as Authorization: Bearer <key>.", r.secret);
        }
      } catch (err) {
        formError(form, err);
        return;
      }
      form.hidden = true;
      await refresh();
    });
  });

  const actions = (k) => {
    if (k.revoked_at) return h("span", { class: "muted" }, "Revoked " + dateTime(k.revoked_at));
    const edit = h("button", { type: "button", "data-action": "edit" }, "Change");
    edit.addEventListener("click", () => openForm(k));
    const rotate = h("button", { type: "button", "data-action": "rotate" }, "Rotate");
    rotate.addEventListener("click", () => busy(rotate, async () => {
      try {
        const r = await post(base + "/" + encodeURIComponent(k.id) + "/rotate");
        secrets.show("The new secret of “" + k.name + "”", "The previous secret keeps working for 24 hours, so you can switch the program over.", r.secret);
        await refresh();
      } catch (err) {
        ctx.error(err);
      }
    }));
    const revoke = confirmButton("Revoke", "Revoke now", async () => {
      try {
        await post(base + "/" + encodeURIComponent(k.id) + "/revoke");
        await refresh();
      } catch (err) {
        ctx.error(err);
      }
    });
    return h("span", { class: "row-actions" }, edit, rotate, revoke);
  };

  const refresh = async () => {
    let page;
    try {
      page = await get(base + "?limit=100");
    } catch (err) {
      $("keys-loading").hidden = true;
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    $("keys-loading").hidden = true;
    const keys = page.data || [];
    if (keys.length === 0) {
      $("keys").replaceChildren(empty("No API keys yet",
        "Create a key for each program that reads your balances or events, or proposes payments. Give it only the scopes it needs."));
      return;
    }
    $("keys").replaceChildren(h("table", { class: "data", id: "keys-table" },
      h("caption", { class: "visually-hidden" }, "API keys"),
      h("thead", {}, h("tr", {}, ["Name", "Role", "Scopes", "Last used", "Status", "Actions"].map((l) => h("th", { scope: "col" }, l)))),
      h("tbody", {}, keys.map((k) => h("tr", { "data-key": k.id, "data-lookup": k.lookup },
        h("td", {}, k.name, h("br"), h("span", { class: "muted secret-hint" }, "sr_" + k.environment + "_" + k.lookup + "_…")),
        h("td", {}, k.role),
        h("td", { class: "scopes" }, k.scopes.length ? k.scopes.join(", ") : h("span", { class: "muted" }, "None")),
        h("td", {}, k.last_used_at ? dateTime(k.last_used_at) : h("span", { class: "muted" }, "Never")),
        h("td", {}, status(k.revoked_at ? "revoked" : "active")),
        h("td", {}, actions(k)))))));
  };
  await refresh();
}

// Webhook endpoints.

async function webhooks(ctx, $, secrets) {
  const base = orgPath(ctx.org, "/webhook-endpoints");
  const form = $("hook-form");
  const types = $("hook-types");
  types.append(h("label", { for: "hook-type-all" },
    h("input", { id: "hook-type-all", type: "checkbox", name: "event_types", value: "*" }),
    h("span", {}, "All events", " ", h("span", { class: "muted" }, "· every event of the organization, including new types"))));
  checkboxes(types, "hook-type", EVENT_TYPES.map(([t, text]) => [t, "", text]));
  const all = $("hook-type-all");
  all.addEventListener("change", () => {
    for (const c of types.querySelectorAll("input")) if (c !== all) c.disabled = all.checked;
  });

  $("hook-new").addEventListener("click", () => {
    form.reset();
    formError(form, null);
    for (const c of types.querySelectorAll("input")) c.disabled = false;
    form.hidden = false;
    $("hook-url").focus();
  });
  $("hook-cancel").addEventListener("click", () => {
    form.hidden = true;
    $("hook-new").focus();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const eventTypes = all.checked ? ["*"] : checked(types);
    if (eventTypes.length === 0) {
      formError(form, new ApiError(0, "invalid_request", "Choose the events to send, or All events."));
      return;
    }
    const body = { url: $("hook-url").value.trim(), event_types: eventTypes };
    const description = $("hook-description").value.trim();
    if (description) body.description = description;
    await busy(e.submitter, async () => {
      try {
        const r = await post(base, body);
        secrets.show("The signing secret of your endpoint",
          "For " + r.webhook_endpoint.url + ". Verify each delivery's webhook-signature with it (Standard Webhooks).", r.secret);
      } catch (err) {
        formError(form, err);
        return;
      }
      form.hidden = true;
      await refresh();
    });
  });

  // Deliveries of one endpoint.
  let shownFor = null;
  const deliveries = async (ep) => {
    shownFor = ep;
    $("deliveries").hidden = false;
    $("deliveries-for").textContent = "To " + ep.url + ", newest first.";
    let page;
    try {
      page = await get(base + "/" + encodeURIComponent(ep.id) + "/deliveries?limit=20");
    } catch (err) {
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted || shownFor !== ep) return;
    const refreshButton = h("button", { type: "button", id: "deliveries-refresh" }, "Refresh");
    refreshButton.addEventListener("click", () => busy(refreshButton, () => deliveries(ep)));
    const list = page.data || [];
    $("deliveries-list").replaceChildren(
      list.length === 0
        ? h("p", { class: "muted" }, "No deliveries yet. They appear here as events happen" + (ctx.environment === "test" ? ", or send a test event." : "."))
        : h("table", { class: "data", id: "deliveries-table" },
          h("caption", { class: "visually-hidden" }, "Recent deliveries"),
          h("thead", {}, h("tr", {}, ["Event", "Status", "Attempts", "Answer", "Last attempt", "Next attempt", "Actions"].map((l) => h("th", { scope: "col" }, l)))),
          h("tbody", {}, list.map((d) => {
            const retry = h("button", { type: "button", "data-action": "retry" }, "Retry");
            retry.addEventListener("click", () => busy(retry, async () => {
              try {
                await post(base + "/" + encodeURIComponent(ep.id) + "/deliveries/" + encodeURIComponent(d.id) + "/retry");
                await deliveries(ep);
              } catch (err) {
                ctx.error(err);
              }
            }));
            return h("tr", { "data-delivery": d.id, "data-status": d.status },
              h("td", {}, d.event_type),
              h("td", {}, status(d.status)),
              h("td", { class: "num" }, String(d.attempt)),
              h("td", {}, d.response_status ? "HTTP " + d.response_status : (d.error || "—")),
              h("td", {}, d.attempted_at ? dateTime(d.attempted_at) : "—"),
              h("td", {}, d.next_attempt_at ? dateTime(d.next_attempt_at) : "—"),
              h("td", {}, retry));
          }))),
      h("div", { class: "actions" }, refreshButton));
  };
  $("deliveries-close").addEventListener("click", () => {
    shownFor = null;
    $("deliveries").hidden = true;
    $("deliveries-list").replaceChildren();
  });

  // The sandbox's test event, with the sandbox token kept in this tab.
  const tokenForm = $("sandbox-token-form");
  let pingFor = null;
  const ping = async (ep, token) => {
    await post("/api/v1/sandbox/webhook-endpoints/" + encodeURIComponent(ep.id) + "/ping", undefined,
      { signedIn: false, headers: { Authorization: "Bearer " + token } });
    await deliveries(ep);
  };
  tokenForm.addEventListener("submit", async (e) => {
    e.preventDefault();
    const token = $("sandbox-token").value.trim();
    await busy(e.submitter, async () => {
      try {
        await ping(pingFor, token);
      } catch (err) {
        formError(tokenForm, err.status === 404
          ? new ApiError(404, "not_found", "The sandbox did not accept this token. Check STRONGROOM_SANDBOX_TOKEN.")
          : err);
        return;
      }
      sessionStorage.setItem(SANDBOX_TOKEN_KEY, token);
      tokenForm.hidden = true;
      tokenForm.reset();
    });
  });
  $("sandbox-token-cancel").addEventListener("click", () => {
    tokenForm.hidden = true;
  });

  const actions = (ep) => {
    const show = h("button", { type: "button", "data-action": "deliveries" }, "Deliveries");
    show.addEventListener("click", () => busy(show, () => deliveries(ep)));
    const toggle = h("button", { type: "button", "data-action": "toggle" }, ep.disabled ? "Enable" : "Disable");
    toggle.addEventListener("click", () => busy(toggle, async () => {
      try {
        await patch(base + "/" + encodeURIComponent(ep.id), { disabled: !ep.disabled });
        await refresh();
      } catch (err) {
        ctx.error(err);
      }
    }));
    const rotate = h("button", { type: "button", "data-action": "rotate-secret" }, "Rotate secret");
    rotate.addEventListener("click", () => busy(rotate, async () => {
      try {
        const r = await post(base + "/" + encodeURIComponent(ep.id) + "/rotate-secret");
        secrets.show("The new signing secret", "For " + ep.url + ". The previous secret keeps signing beside it for 24 hours.", r.secret);
      } catch (err) {
        ctx.error(err);
      }
    }));
    let test = null;
    if (ctx.environment === "test") {
      test = h("button", { type: "button", "data-action": "ping" }, "Send a test event");
      test.addEventListener("click", () => busy(test, async () => {
        pingFor = ep;
        const token = sessionStorage.getItem(SANDBOX_TOKEN_KEY);
        if (token) {
          try {
            await ping(ep, token);
            return;
          } catch (err) {
            if (err.status !== 404) {
              ctx.error(err);
              return;
            }
            sessionStorage.removeItem(SANDBOX_TOKEN_KEY);
          }
        }
        formError(tokenForm, null);
        tokenForm.hidden = false;
        $("sandbox-token").focus();
      }));
    }
    const remove = confirmButton("Delete", "Delete now", async () => {
      try {
        await del(base + "/" + encodeURIComponent(ep.id));
        if (shownFor && shownFor.id === ep.id) $("deliveries-close").click();
        await refresh();
      } catch (err) {
        ctx.error(err);
      }
    });
    return h("span", { class: "row-actions" }, show, toggle, rotate, test, remove);
  };

  const refresh = async () => {
    let page;
    try {
      page = await get(base + "?limit=100");
    } catch (err) {
      $("hooks-loading").hidden = true;
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    $("hooks-loading").hidden = true;
    const eps = page.data || [];
    if (eps.length === 0) {
      $("hooks").replaceChildren(empty("No webhook endpoints yet",
        "Add the URL of a program that should hear about payments, transactions and bills as they happen."));
      return;
    }
    $("hooks").replaceChildren(h("table", { class: "data", id: "hooks-table" },
      h("caption", { class: "visually-hidden" }, "Webhook endpoints"),
      h("thead", {}, h("tr", {}, ["URL", "Events", "Status", "Actions"].map((l) => h("th", { scope: "col" }, l)))),
      h("tbody", {}, eps.map((ep) => h("tr", { "data-endpoint": ep.id },
        h("td", {}, h("span", { class: "secret-hint" }, ep.url), ep.description ? [h("br"), h("span", { class: "muted" }, ep.description)] : null),
        h("td", { class: "scopes" }, ep.event_types.includes("*") ? "All events" : ep.event_types.join(", ")),
        h("td", {}, status(ep.disabled ? "disabled" : "enabled"), ep.disabled_reason ? [h("br"), h("span", { class: "muted" }, ep.disabled_reason)] : null),
        h("td", {}, actions(ep)))))));
  };
  await refresh();
}
