// Days and times in a form. A day is written the clinic's way (docs/web-app.md#dates-in-forms). The server gives the pattern in a
// Date element's props.format, in CLDR letters — "dd/MM/yyyy" (English) or "dd.MM.yyyy" (German) — and keeps the
// element's value as the API's day, YYYY-MM-DD. Only the digits move: no date arithmetic, no browser locale.

const FIELDS = /dd|MM|yyyy/g;
const ISO_DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

// "2026-11-23" → "23.11.2026"; anything else (empty, or what was typed and refused) stays as it is.
export function dayText(value, format) {
  const m = ISO_DAY.exec(value === null || value === undefined ? "" : String(value));
  if (!m) return value === null || value === undefined ? "" : String(value);
  const parts = { yyyy: m[1], MM: m[2], dd: m[3] };
  return format.replace(FIELDS, (f) => parts[f]);
}

// "23.11.2026" or "3.1.2026" → "2026-11-23" / "2026-01-03"; text not in the pattern is sent as typed, so the
// server refuses it with a message naming the format (it also refuses a day that does not exist, "31.02.2026").
export function dayValue(typed, format) {
  const written = typed.trim();
  const order = format.match(FIELDS) || [];
  const shape = format
    .split(FIELDS)
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&"))
    .reduce((re, literal, i) => re + literal + (i < order.length ? (order[i] === "yyyy" ? "(\\d{4})" : "(\\d{1,2})") : ""), "");
  const m = new RegExp(`^${shape}$`).exec(written);
  if (!m) return written;
  const parts = Object.fromEntries(order.map((f, i) => [f, m[i + 1].padStart(2, "0")]));
  return `${parts.yyyy}-${parts.MM}-${parts.dd}`;
}

// A time of day is always on the 24-hour clock (docs/web-app.md#times-in-forms): "9:30", "09.30", "14,30" and "1430"
// are read as "09:30" / "14:30"; anything else is sent as typed and the server refuses it on its field.
const CLOCK = /^(\d{1,2})\s*[:.,h]?\s*(\d{2})$/;

export function timeValue(typed) {
  const written = typed.trim();
  const m = CLOCK.exec(written);
  return m ? `${m[1].padStart(2, "0")}:${m[2]}` : written;
}
