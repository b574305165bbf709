// The week view's element types (docs/week-view.md): a `Calendar` of `Day` columns holding `Event`s placed by
// their minutes. The server says where each entry sits (props.start/end: minutes from the day's local midnight,
// props.lane of props.lanes: side by side with what it overlaps); the client only turns that into CSS
// variables, so the grid needs no date arithmetic here. Text goes in through `node` (textContent) only.

import { node, uid } from "./dom.js";

const whole = (value, fallback) => (Number.isInteger(value) ? value : fallback);

function hourLabel(hour) {
  return `${String(hour % 24).padStart(2, "0")}:00`;
}

export function buildCalendar(model, { depth }) {
  const props = model.props || {};
  const first = whole(props.first_hour, 8);
  const last = Math.max(first + 1, whole(props.last_hour, 18));
  const root = node("section", "calendar");
  root.style.setProperty("--first-minute", String(first * 60));
  root.style.setProperty("--hours", String(last - first));
  if (model.label) {
    const title = node(`h${Math.min(6, depth + 2)}`, "calendar-title visually-hidden", model.label);
    title.id = uid("h");
    root.setAttribute("aria-labelledby", title.id);
    root.append(title);
  }
  const grid = node("div", "calendar-grid");
  const hours = node("div", "calendar-hours");
  hours.setAttribute("aria-hidden", "true");
  for (let hour = first; hour < last; hour += 1) hours.append(node("span", "calendar-hour", hourLabel(hour)));
  const host = node("div", "calendar-days");
  grid.append(hours, host);
  const messages = node("div", "messages");
  root.append(messages, grid);
  return { root, host, messages };
}

export function buildDay(model, { depth }) {
  const props = model.props || {};
  const root = node("section", "day");
  if (props.today === true) root.dataset.today = "true";
  const title = node(`h${Math.min(6, depth + 2)}`, "day-title", model.label);
  // A note under the day's name ("Today"), inside the heading so it is read with it.
  if (model.value !== null && model.value !== undefined) title.append(" ", node("span", "day-note", model.value));
  title.id = uid("h");
  root.setAttribute("aria-labelledby", title.id);
  const host = node("div", "day-body");
  root.append(title, host);
  return { root, host };
}

export function buildEvent(model) {
  const props = model.props || {};
  const start = whole(props.start, 0);
  const end = Math.max(start + 1, whole(props.end, start + 30));
  const lanes = Math.max(1, whole(props.lanes, 1));
  const lane = Math.min(lanes - 1, Math.max(0, whole(props.lane, 0)));
  const root = node(model.action ? "button" : "div", "event");
  if (model.action) root.type = "button";
  root.dataset.entry = typeof props.kind === "string" ? props.kind : "entry";
  for (const [name, value] of [
    ["--start", start],
    ["--end", end],
    ["--lane", lane],
    ["--lanes", lanes],
  ]) {
    root.style.setProperty(name, String(value));
  }
  const details = typeof props.details === "string" ? props.details : "";
  root.append(node("span", "event-time", model.value), document.createTextNode(" "));
  root.append(node("span", "event-who", model.label));
  if (details) root.append(document.createTextNode(" "), node("span", "event-details", details));
  root.title = [model.value, model.label, details].filter(Boolean).join(" · ");
  return model.action ? { root, button: root } : { root };
}
