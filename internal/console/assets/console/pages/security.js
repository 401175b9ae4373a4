// Security: the person's authenticator app (set it up, or replace it: a
// replacement asks for a step-up, which stepup.js answers), this session,
// and the devices they signed in from (docs/api.md, Authentication).

import { get, post } from "../api.js";
import { qrImage } from "../qr.js";
import { busy, dateTime, formError, h, table } from "../ui.js";

export const title = "Security";
export const styles = true;

const platforms = { web: "Web browser", ios: "iPhone app", android: "Android app", cli: "Command line" };

export async function show(ctx) {
  const $ = (id) => ctx.view.querySelector("#" + id);
  const form = $("totp-form");

  // The authenticator.
  const paintTotp = (enabled) => {
    $("totp-state").textContent = enabled
      ? "On. Signing in asks for a code from your authenticator app."
      : "Not set up. An authenticator app protects your account with a code that changes every 30 seconds.";
    $("totp-start").textContent = enabled ? "Replace your authenticator app" : "Set up an authenticator app";
    $("totp-start").hidden = false;
  };
  const closeSetup = () => {
    form.hidden = true;
    form.reset();
    formError(form, null);
    $("totp-qr").replaceChildren();
    $("totp-secret").textContent = "";
    $("totp-start").hidden = false;
  };

  $("totp-start").addEventListener("click", (e) => busy(e.currentTarget, async () => {
    $("totp-done").hidden = true;
    let setup;
    try {
      setup = await post("/api/v1/auth/totp/setup", {});
    } catch (err) {
      ctx.error(err);
      return;
    }
    if (ctx.signal.aborted) return;
    $("totp-qr").replaceChildren(qrImage(setup.uri, "QR code to add Strongroom to your authenticator app"));
    $("totp-secret").textContent = setup.secret_encoded;
    formError(form, null);
    form.hidden = false;
    $("totp-start").hidden = true;
    $("totp-code").focus();
  }));
  $("totp-cancel").addEventListener("click", closeSetup);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const code = $("totp-code").value.replace(/\s+/g, "");
    const messaging = $("totp-messaging-code").value.replace(/\s+/g, "");
    await busy(e.submitter, async () => {
      try {
        await post("/api/v1/auth/totp/activate", { code, messaging_code: messaging });
      } catch (err) {
        formError(form, err);
        $("totp-code").focus();
        return;
      }
      closeSetup();
      paintTotp(true);
      $("totp-done").textContent = "Your new authenticator app is on. Use its codes from now on.";
      $("totp-done").hidden = false;
    });
  });

  // This session.
  const session = ctx.me.session || {};
  $("session-info").textContent = "You stay signed in here until " + dateTime(session.idle_expires_at) +
    " unless you keep working (30 minutes after your last action), and at the latest until " + dateTime(session.expires_at) + ".";
  $("session-sign-out").addEventListener("click", () => document.getElementById("sign-out").click());

  // Devices, a page at a time.
  let cursor = null;
  const rows = [];
  const loadDevices = async () => {
    const page = await get("/api/v1/devices?limit=50" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
    if (ctx.signal.aborted) return;
    rows.push(...(page.data || []));
    cursor = page.has_more ? page.next_cursor : null;
    $("devices-loading").hidden = true;
    const t = table("Devices you signed in from", [
      { label: "Device", cell: (d) => [d.name || "Unnamed device", d.this_device ? [" ", h("span", { class: "badge", "data-status": "active" }, "This device")] : null] },
      { label: "Kind", cell: (d) => platforms[d.platform] || d.platform },
      { label: "First signed in", cell: (d) => dateTime(d.inserted_at) },
      { label: "Last active", cell: (d) => dateTime(d.last_seen_at) },
    ], rows);
    t.id = "devices-table";
    rows.forEach((d, i) => {
      const tr = t.tBodies[0].rows[i];
      tr.dataset.device = d.id;
      tr.dataset.thisDevice = String(Boolean(d.this_device));
    });
    $("devices").replaceChildren(t);
    $("devices-more").hidden = !cursor;
  };
  $("devices-more").addEventListener("click", (e) => busy(e.currentTarget, () => loadDevices().catch(ctx.error)));

  let me = ctx.me;
  try {
    me = await get("/api/v1/me");
  } catch (err) {
    ctx.error(err);
  }
  if (ctx.signal.aborted) return;
  paintTotp(Boolean(me.user && me.user.totp_enabled));
  try {
    await loadDevices();
  } catch (err) {
    $("devices-loading").hidden = true;
    ctx.error(err);
  }
}
