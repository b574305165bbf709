// "Confirm it is you": a change of how an account signs in (a factor, recovery codes, an app's access) answers
// 403 REAUTHENTICATION_REQUIRED when the session's sign-in is not recent (docs/accounts.md#recent-authentication).
// This asks for the password (and the code, for an account with a second factor), sends it to
// POST /auth/reauthenticate and resolves to true once the service took it, false when the user cancels. Every text
// goes in as textContent; the dialog is built once, from DOM nodes.

import { node, uid } from "./dom.js";
import { t, throttled } from "./texts.js";

export const REAUTHENTICATION_REQUIRED = "REAUTHENTICATION_REQUIRED";

let pending = null;

function field(form, labelText, type, autocomplete) {
  const input = document.createElement("input");
  input.type = type;
  input.id = uid("reauth");
  input.autocomplete = autocomplete;
  input.maxLength = type === "password" ? 1024 : 32;
  const label = node("label", "field-label", labelText);
  label.htmlFor = input.id;
  const wrap = node("div", "field");
  wrap.append(label, input);
  form.append(wrap);
  return input;
}

// `send(fields)` posts the form (api.request bound by the caller, so this module needs no import of api.js).
function build(send) {
  const dialog = document.createElement("dialog");
  dialog.className = "modal";
  dialog.id = "reauth";
  const title = node("h2", "modal-title", t("Confirm it is you"));
  title.id = uid("h");
  dialog.setAttribute("aria-labelledby", title.id);
  const note = node("p", "modal-text", t("Enter your password again to make this change."));
  const form = document.createElement("form");
  form.method = "dialog";
  const password = field(form, t("Password"), "password", "current-password");
  const code = field(form, t("Code from your authenticator app or a recovery code"), "text", "one-time-code");
  code.parentElement.hidden = true;
  const error = node("p", "form-error");
  error.setAttribute("role", "alert");
  error.hidden = true;
  const submit = node("button", "btn btn-primary", t("Continue"));
  submit.type = "submit";
  const cancel = node("button", "btn", t("Back"));
  cancel.type = "button";
  form.append(error, submit, cancel);
  dialog.append(title, note, form);
  document.body.append(dialog);

  const finish = (ok) => {
    if (dialog.open) dialog.close();
    password.value = "";
    code.value = "";
    const done = pending;
    pending = null;
    if (done) done(ok);
  };
  cancel.onclick = () => finish(false);
  dialog.addEventListener("cancel", (event) => {
    event.preventDefault();
    finish(false);
  });
  form.onsubmit = async (event) => {
    event.preventDefault();
    const fields = [["password", password.value]];
    if (code.value.trim()) fields.push(["otp", code.value.trim()]);
    submit.disabled = true;
    try {
      await send(fields);
      finish(true);
    } catch (e) {
      const body = (e && e.body) || {};
      const problems = body.fields || {};
      if (problems.otp) code.parentElement.hidden = false;
      const paused = e && e.status === 429 ? throttled(e.retryAfter) : null;
      error.textContent = paused || problems.password || problems.otp || body.message || t("Wrong code.");
      error.hidden = false;
      (problems.otp ? code : password).focus();
    } finally {
      submit.disabled = false;
    }
  };
  return { dialog, password, code, error };
}

let parts = null;

// Shows the prompt (once at a time: callers that ask together share the answer).
export function confirmIdentity(send) {
  if (pending) {
    return new Promise((resolve) => {
      const earlier = pending;
      pending = (ok) => {
        earlier(ok);
        resolve(ok);
      };
    });
  }
  if (!parts) parts = build(send);
  parts.error.hidden = true;
  parts.code.parentElement.hidden = true;
  return new Promise((resolve) => {
    pending = resolve;
    parts.dialog.showModal();
    parts.password.focus();
  });
}
