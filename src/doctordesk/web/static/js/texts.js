// The shell's texts in the language the service last sent them in (i18n.js fetches them and keeps the choice):
// the one lookup every module uses, with no dependency of its own.

let texts = {};
let current = "en";

// The text for an English msgid (the msgid itself when the catalog has none).
export const t = (msgid) => texts[msgid] || msgid;
export const language = () => current;
// The text for a msgid with {name} placeholders filled in from `values`.
export const tf = (msgid, values) => t(msgid).replace(/\{(\w+)\}/g, (m, k) => (k in values ? String(values[k]) : m));
// A whole number in the page's language (4,000 / 4.000).
export const number = (n) => new Intl.NumberFormat(current).format(n);

export function setTexts(catalog, code) {
  texts = catalog;
  current = code;
}

// Why a sign-in (or a re-authentication) is refused for now and when to try again: the service's Retry-After, in
// seconds (null when the answer had none).
export function throttled(seconds) {
  if (!seconds) return t("Too many attempts. Please wait a few minutes and try again.");
  if (seconds < 90) {
    return tf("Too many failed sign-ins: signing in is paused for your safety. Try again in {seconds} seconds.", {
      seconds,
    });
  }
  return tf("Too many failed sign-ins: signing in is paused for your safety. Try again in {minutes} minutes.", {
    minutes: Math.ceil(seconds / 60),
  });
}
