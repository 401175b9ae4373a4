// Step-up in the browser: when an operation answers 403 step_up_required,
// a dialog asks the person to confirm it is them (docs/api.md, Step-up and
// the approving app), in the ways error.step_up.methods offers:
//   app:   the 3-digit match code to enter in the approving app, while the
//          dialog polls the step-up until it is answered;
//   totp:  the code of their authenticator app;
//   email: a code sent on request ("Email me a code").
// Once the step-up is active the dialog resolves and api.js sends the
// original call once more; Cancel (or Escape) rejects with an ApiError of
// type "step_up_cancelled" whose message is "Cancelled". One dialog at a
// time: a second challenge while one is shown waits for the same answer.

import { ApiError, get, post, whenStepUpNeeded } from "./api.js";
import { busy, formError, h } from "./ui.js";

const POLL_MS = 1500;
const CHALLENGE_LIFE_MS = 5 * 60 * 1000;

let shown = null; // the promise of the dialog on screen

whenStepUpNeeded((challenge) => {
  if (!shown) {
    shown = confirmStepUp(challenge).finally(() => {
      shown = null;
    });
  }
  return shown;
});

// cancelled is what a person who gave up gets.
function cancelled() {
  return new ApiError(0, "step_up_cancelled", "Cancelled");
}

// deadlineOf bounds the wait for the app: the challenge's expiry, read
// against the service's clock as far as the page can tell, and never
// beyond the challenge's five minutes from now.
function deadlineOf(challenge) {
  const left = Date.parse(challenge.expires_at || "") - Date.now();
  return Date.now() + (left > 0 && left <= CHALLENGE_LIFE_MS ? left : CHALLENGE_LIFE_MS);
}

function confirmStepUp(challenge) {
  return new Promise((resolve, reject) => {
    const methods = challenge.methods || [];
    const stop = new AbortController();
    let settled = false;

    const status = h("p", { id: "stepup-status", class: "stepup-status", role: "status", "aria-live": "polite" });
    const finish = (ok, err) => {
      if (settled) return;
      settled = true;
      stop.abort();
      dialog.close();
      dialog.remove();
      if (ok) resolve();
      else reject(err);
    };
    const cancel = () => {
      if (settled) return;
      // Drop the pending challenge so the app no longer offers it.
      post("/api/v1/auth/step-up/exit", { id: challenge.id }, { stepUp: false }).catch(() => {});
      finish(false, cancelled());
    };

    // The approving app: the match code, and a poll of the step-up.
    let appPart = null;
    if (methods.includes("app")) {
      appPart = h("section", { class: "stepup-app", "aria-labelledby": "stepup-app-title" },
        h("h3", { id: "stepup-app-title" }, "Open your approving app and enter this code"),
        h("p", { id: "stepup-match", class: "match-code", "aria-describedby": "stepup-app-title" }, challenge.match_code || "—"),
        h("p", { class: "muted" }, "This window continues by itself once you approve in the app."));
    }

    // Codes: the authenticator's, and the emailed one once asked for.
    const codeForm = (method, label, help) => {
      const id = "stepup-" + method + "-code";
      const form = h("form", { class: "stepup-code", "data-method": method, novalidate: true },
        h("label", { for: id }, label),
        help ? h("p", { id: id + "-help", class: "muted" }, help) : null,
        h("input", { id, name: "code", type: "text", inputmode: "numeric", autocomplete: "one-time-code",
          maxlength: "8", required: true, "aria-describedby": help ? id + "-help" : null }),
        h("div", { class: "form-error", role: "alert", hidden: true }),
        h("button", { type: "submit", class: "primary" }, "Confirm"));
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        const input = form.querySelector("input");
        const code = input.value.replace(/\s+/g, "");
        if (!code) {
          formError(form, new ApiError(0, "invalid_request", "Enter the code."));
          input.focus();
          return;
        }
        await busy(e.submitter, async () => {
          try {
            const r = await post("/api/v1/auth/step-up/complete",
              { sudo_session_id: challenge.id, method, code }, { stepUp: false });
            if (r && r.status === "active") finish(true);
            else formError(form, new ApiError(0, "step_up_" + (r && r.status), "This confirmation is no longer open. Cancel and try the action again."));
          } catch (err) {
            if (err.type === "not_authenticated") {
              finish(false, err); // the sign-in page says so
              return;
            }
            // The envelope's message (422 invalid_code and friends); the
            // code stays in the field to be corrected.
            formError(form, err);
            input.select();
            input.focus();
          }
        });
      });
      return form;
    };

    const totpForm = methods.includes("totp")
      ? codeForm("totp", "Authenticator code", "The 6-digit code your authenticator app shows now.")
      : null;

    let emailPart = null;
    if (methods.includes("email")) {
      const emailForm = codeForm("email", "Code from the email", "We sent a 6-digit code to your email address. It works for 5 minutes.");
      emailForm.hidden = true;
      const ask = h("button", { type: "button", id: "stepup-email" }, "Email me a code");
      const sent = h("p", { class: "muted", role: "status" });
      ask.addEventListener("click", () => busy(ask, async () => {
        try {
          await post("/api/v1/auth/step-up/fallback",
            { step_up_authentication_id: challenge.step_up_authentication_id, method: "email" }, { stepUp: false });
          sent.textContent = "Code sent. Check your email.";
          ask.textContent = "Email me another code";
          emailForm.hidden = false;
          formError(emailForm, null);
          emailForm.querySelector("input").focus();
        } catch (err) {
          sent.textContent = "";
          status.textContent = err.message;
        }
      }));
      emailPart = h("div", { class: "stepup-email" }, h("div", { class: "actions" }, ask, sent), emailForm);
    }

    const cancelButton = h("button", { type: "button", id: "stepup-cancel" }, "Cancel");
    cancelButton.addEventListener("click", cancel);

    const dialog = h("dialog", { id: "stepup", class: "stepup", "aria-labelledby": "stepup-title", "aria-describedby": "stepup-why" },
      h("h2", { id: "stepup-title" }, "Confirm it's you"),
      h("p", { id: "stepup-why" }, "This action changes how your organization is protected, so it needs a fresh confirmation."),
      appPart,
      appPart && (totpForm || emailPart) ? h("p", { class: "stepup-or" }, "Or confirm with a code") : null,
      totpForm,
      emailPart,
      status,
      h("div", { class: "actions" }, cancelButton));
    // Escape closes a modal dialog: here it cancels.
    dialog.addEventListener("cancel", (e) => {
      e.preventDefault();
      cancel();
    });
    // An earlier message (such as a cancelled step-up's) is stale now.
    const banner = document.getElementById("banner");
    if (banner) banner.hidden = true;
    document.body.append(dialog);
    dialog.showModal();
    const first = totpForm ? totpForm.querySelector("input") : dialog.querySelector("#stepup-email") || cancelButton;
    first.focus();

    if (appPart) poll(challenge, stop.signal, status, finish);
  });
}

// poll asks for the step-up's state every POLL_MS until it is no longer
// pending, the challenge expires, or the dialog is closed.
async function poll(challenge, signal, status, finish) {
  const deadline = deadlineOf(challenge);
  status.textContent = "Waiting for your approval…";
  while (!signal.aborted) {
    await new Promise((r) => setTimeout(r, POLL_MS));
    if (signal.aborted) return;
    if (Date.now() > deadline) {
      status.textContent = "This confirmation expired. Cancel and try the action again.";
      return;
    }
    let s;
    try {
      s = await get("/api/v1/auth/step-up/" + encodeURIComponent(challenge.id), { stepUp: false });
    } catch (err) {
      if (err.type === "not_authenticated") {
        finish(false, err);
        return;
      }
      continue; // a passing failure: ask again
    }
    if (signal.aborted) return;
    switch (s.status) {
      case "active":
        finish(true);
        return;
      case "declined":
        status.textContent = "The request was declined in the app. Cancel, and try again if it was you.";
        return;
      case "expired":
        status.textContent = "This confirmation expired. Cancel and try the action again.";
        return;
    }
  }
}
