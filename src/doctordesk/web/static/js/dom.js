// DOM helpers shared by the renderer's modules. Server data only ever reaches the DOM through textContent,
// attribute values and form control values: `node` is the one way text enters an element here.

import { language } from "./texts.js";

let uidCounter = 0;

// A page-unique id for labels, headings and messages that other nodes point at (htmlFor, aria-*).
export const uid = (prefix) => `${prefix}-${++uidCounter}`;

export const text = (value) => (value === null || value === undefined ? "" : String(value));

// Text gets its own bidirectional isolate (dir="auto": the direction of its first strong character), so a
// bidirectional control in free text (a chat message, a reason) cannot reorder anything outside its element.
export function node(tag, className, content) {
  const n = document.createElement(tag);
  if (className) n.className = className;
  if (content !== undefined && content !== null && content !== "") {
    n.textContent = text(content);
    n.dir = "auto";
  }
  return n;
}

// A same-origin path or an http(s) URL; anything else (javascript:, data:, //host) is refused.
export function safeHref(href) {
  if (typeof href !== "string") return null;
  if (href.startsWith("/") && !href.startsWith("//")) return href;
  try {
    const url = new URL(href);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}

export function formatSize(bytes) {
  if (typeof bytes !== "number") return "";
  // Digits in the page's language: "1.5 MB" in English, "1,5 MB" in German.
  const digits = (value, places) =>
    new Intl.NumberFormat(language(), { minimumFractionDigits: places, maximumFractionDigits: places }).format(value);
  if (bytes < 1024) return `${digits(bytes, 0)} B`;
  if (bytes < 1024 * 1024) return `${digits(bytes / 1024, 0)} KB`;
  return `${digits(bytes / 1024 / 1024, 1)} MB`;
}

export function formatTime(value) {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return text(value);
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}
