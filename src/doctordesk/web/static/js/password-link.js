// The page behind an admin's one-time link (#/set-password/<token>): the user sets their own password, then signs
// in with it. The token stays in the fragment, which the browser never sends to a server, and leaves the address
// bar once read.

import * as api from "./api.js";
import { t } from "./texts.js";

const PREFIX = "#/set-password/";
const $ = (id) => document.getElementById(id);

export function linkToken() {
  return location.hash.startsWith(PREFIX) ? location.hash.slice(PREFIX.length) : null;
}

export function showSetPassword(token, { onDone }) {
  history.replaceState(null, "", location.pathname);
  document.title = `${t("Set your password")} · doctordesk`;
  for (const id of ["topbar", "main-screen", "panel", "login"]) $(id).hidden = true;
  // The form lives in a template until needed, so the sign-in form stays the page's only password form; its
  // words are the shell's (the texts have arrived before this page is shown).
  const page = $("set-password-template").content.cloneNode(true);
  for (const text of page.querySelectorAll("[data-i18n]")) text.textContent = t(text.dataset.i18n);
  $("main").prepend(page);
  document.body.dataset.view = "login";
  const form = $("set-password-form");
  const error = $("set-password-error");
  const submit = $("set-password-submit");
  const fail = (text) => {
    error.textContent = text;
    error.hidden = false;
    $("set-password-new").focus();
  };
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const password = $("set-password-new").value;
    if (password.length < 8) return fail(t("At least 8 characters."));
    if (password !== $("set-password-again").value) return fail(t("The two passwords differ."));
    submit.disabled = true;
    try {
      const body = await api.request("POST", "/auth/password-link", {
        fields: [
          ["token", token],
          ["password", password],
        ],
      });
      error.hidden = true;
      $("set-password").remove();
      onDone(body.username, t("Your password is set. Sign in with it."));
    } catch (e) {
      submit.disabled = false;
      if (!(e instanceof api.ApiError)) return fail(t("The service cannot be reached. Please try again."));
      const field = e.body && e.body.fields && e.body.fields.password;
      fail(field || (e.body && e.body.message) || e.message);
    }
  });
  $("set-password-new").focus();
}
