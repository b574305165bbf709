// Forms on a screen: reading and writing control values, collecting an action's form, keeping typed input across
// a reload, per-field error messages, and props.requires / props.requires_one_of keeping an action disabled.

import { showDraft } from "./attachments.js";
import { dayText, dayValue, timeValue } from "./days.js";
import { node, uid } from "./dom.js";

// The view's entry of the element holding `control`.
const entryOf = (view, control) => view.nodes.get(control.closest("[data-id]").dataset.id);

const shownValue = (model) => (model.value === null || model.value === undefined ? "" : String(model.value));

// The element `formId` (the whole page without it): where an action's fields are collected.
export function formScope(view, formId) {
  if (formId) {
    const entry = view.nodes.get(formId);
    if (entry) return entry.root;
  }
  return view.root;
}

export function readControl(entry) {
  const c = entry && entry.control;
  if (!c) return undefined;
  if (c.type === "checkbox") return c.checked ? "true" : "false";
  if (c.type === "file") return entry.file || null;
  if (entry.dayFormat) return dayValue(c.value, entry.dayFormat);
  if (entry.clock) return timeValue(c.value);
  return c.value;
}

export function writeControl(entry, value) {
  const c = entry.control;
  if (c.type === "checkbox") c.checked = value === "true";
  else if (entry.dayFormat) c.value = dayText(value, entry.dayFormat);
  else if (c.type !== "file") c.value = value;
}

// The [name, value] pairs of the enabled named inputs inside the element `formId` (the whole page without it).
export function collect(view, formId) {
  const fields = [];
  for (const control of formScope(view, formId).querySelectorAll("[data-name]")) {
    if (control.disabled) continue;
    const value = readControl(entryOf(view, control));
    if (value === null || value === undefined) continue;
    fields.push([control.dataset.name, value]);
  }
  return fields;
}

// What the user typed that the page does not hold yet: {name: [modelValue, typedValue]} (a reload keeps it).
export function typedValues(view) {
  const typed = {};
  for (const entry of view.nodes.values()) {
    if (!entry.control || !entry.model.name || entry.control.type === "hidden") continue;
    const value = readControl(entry);
    if (typeof value === "string" && value !== shownValue(entry.model) && entry.control.type !== "checkbox") {
      typed[entry.model.name] = [shownValue(entry.model), value];
    } else if (entry.file) typed[entry.model.name] = [null, entry.file];
  }
  return typed;
}

// Puts typed values back into the inputs whose value the server did not change meanwhile.
export function restoreTyped(view, typed) {
  for (const entry of view.nodes.values()) {
    if (!entry.control || !entry.model.name || !(entry.model.name in typed)) continue;
    const [shown, value] = typed[entry.model.name];
    if (value instanceof Blob && entry.draft) {
      entry.file = value;
      showDraft(entry);
    } else if (shown === shownValue(entry.model)) writeControl(entry, value);
  }
}

// Shows the per-field messages of an error body on the elements with those names — inside the form the action
// sent (`formId`: a page may hold several forms with the same names, e.g. every policy's "Covered from"), else
// anywhere on the page; returns the names it placed.
export function showFieldErrors(view, fields, formId = null) {
  clearFieldErrors(view);
  const placed = [];
  let first = null;
  const scope = formScope(view, formId);
  for (const [name, message] of Object.entries(fields || {})) {
    const selector = `[data-name="${CSS.escape(name)}"]`;
    const control = scope.querySelector(selector) || view.root.querySelector(selector);
    if (!control) continue;
    const entry = entryOf(view, control);
    const m = node("p", "msg msg-error client-error", message);
    m.id = uid("error");
    (entry.messages || entry.root).append(m);
    control.setAttribute("aria-invalid", "true");
    control.setAttribute("aria-describedby", `${control.getAttribute("aria-describedby") || ""} ${m.id}`.trim());
    entry.root.classList.add("has-client-error");
    placed.push(name);
    if (!first) first = control;
  }
  if (first) first.focus();
  return placed;
}

export function clearFieldErrors(view) {
  for (const m of view.root.querySelectorAll(".client-error")) {
    const holder = m.closest("[data-id]");
    m.remove();
    if (!holder) continue;
    holder.classList.remove("has-client-error");
    const control = holder.querySelector("[data-name]");
    if (control) {
      const ids = (control.getAttribute("aria-describedby") || "").split(" ").filter((i) => i && i !== m.id);
      if (ids.length) control.setAttribute("aria-describedby", ids.join(" "));
      else control.removeAttribute("aria-describedby");
      const entry = view.nodes.get(holder.dataset.id);
      if (!entry || !entry.model.error) control.removeAttribute("aria-invalid");
    }
  }
}

// props.requires: every named input must be filled; props.requires_one_of: at least one of them.
export function requiresOf(model) {
  const props = model.props || {};
  if (!model.action) return null;
  if (Array.isArray(props.requires_one_of)) return { any: props.requires_one_of.map(String) };
  if (Array.isArray(props.requires)) return { all: props.requires.map(String) };
  return null;
}

// A control with props.requires stays disabled while one of the named inputs of its form is blank; it is checked
// again on every input and change inside that form.
export function checkRequires(view, entry) {
  const target = entry.button || entry.control;
  if (!target || entry.model.enabled === false) return;
  const scope = formScope(view, entry.model.action.form);
  const isBlank = (name) => {
    const input = scope.querySelector(`[data-name="${CSS.escape(name)}"]`);
    const value = input ? readControl(entryOf(view, input)) : "";
    if (value instanceof Blob) return false;
    return value === undefined || value === null || String(value).trim() === "";
  };
  const { all, any } = entry.requires;
  target.disabled = all ? all.some(isBlank) : !any.some((name) => !isBlank(name));
  if (!entry.requiresWired) {
    entry.requiresWired = true;
    const recheck = () => {
      const current = view.nodes.get(entry.model.id);
      if (current && current.requires) checkRequires(view, current);
    };
    scope.addEventListener("input", recheck);
    scope.addEventListener("change", recheck);
  }
}
