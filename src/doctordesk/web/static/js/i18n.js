// The shell's own texts (sign-in, top bar, the client's messages) in the user's language. Screens need nothing
// here: the server renders them in that language. The texts come from the server's catalog (GET /i18n/texts) in
// the language the requests ask for (api.js sends the choice as Accept-Language); English until they arrive.

import * as api from "./api.js";

let texts = {};
let current = "en";
let offered = [
  { code: "en", name: "English" },
  { code: "de", name: "Deutsch" },
];
const listeners = new Set();

// The text for an English msgid (the msgid itself when the catalog has none).
export const t = (msgid) => texts[msgid] || msgid;
export const language = () => current;
// The text for a msgid with {name} placeholders filled in from `values`.
export const tf = (msgid, values) => t(msgid).replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
// A whole number in the page's language (4,000 / 4.000).
export const number = (n) => new Intl.NumberFormat(current).format(n);

export function onChange(listener) {
  listeners.add(listener);
}

function fill(select) {
  const options = offered.map(({ code, name }) => {
    const option = document.createElement("option");
    option.value = code;
    option.textContent = name;
    option.lang = code;
    option.selected = code === current;
    return option;
  });
  select.replaceChildren(...options);
}

// Fetches the texts and writes them into the page's static nodes (data-i18n: text, data-i18n-label: aria-label).
export async function load() {
  try {
    const body = await api.request("GET", "/i18n/texts");
    texts = body.texts || {};
    current = body.language || "en";
    offered = body.languages || offered;
  } catch {
    // Unreachable service: the shell stays in the language it has; the next load tries again.
  }
  document.documentElement.lang = current;
  for (const node of document.querySelectorAll("[data-i18n]")) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll("[data-i18n-label]")) {
    node.setAttribute("aria-label", t(node.dataset.i18nLabel));
  }
  for (const select of document.querySelectorAll("select[data-language]")) fill(select);
  for (const listener of listeners) listener(current);
}

// The switch: kept in this browser, and for a signed-in user stored with the account (pushes and other devices).
export async function choose(code) {
  api.setLanguage(code);
  const session = api.currentSession();
  if (session) {
    try {
      await api.request("PUT", "/profile/language", { fields: [["language", code]] });
      api.setSession({ ...session, user: { ...session.user, language: code } });
    } catch {
      // The requests still ask for the choice (Accept-Language); the stored one follows at the next switch.
    }
  }
  await load();
}

// After sign-in: the account's stored choice wins; a choice made on the sign-in page is stored for an account
// that has none.
export async function adopt(user) {
  if (user.language && user.language !== api.chosenLanguage()) {
    api.setLanguage(user.language);
    await load();
  } else if (!user.language && api.chosenLanguage()) {
    await choose(api.chosenLanguage());
  }
}

export function wire() {
  for (const select of document.querySelectorAll("select[data-language]")) {
    select.addEventListener("change", () => choose(select.value));
  }
}
